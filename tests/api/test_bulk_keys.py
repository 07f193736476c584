"""Bulk key statements on both backends: ``key_filters`` selects exactly the rows of its keys (past
one chunk of an ``IN`` list, with keys that need escaping), ``insert_rows`` counts what it inserted."""

from __future__ import annotations

from pathlib import Path

import sqlalchemy as sa

from svc_api.core.bulk import IN_CHUNK, insert_rows, key_filters

_t = sa.Table(
    "bulk_probe", sa.MetaData(), sa.Column("k", sa.String(40), primary_key=True), sa.Column("n", sa.Integer)
)


def test_key_filters_select_exactly_their_keys_and_insert_rows_counts(database_url: str) -> None:
    if database_url.startswith("sqlite"):
        Path(database_url.removeprefix("sqlite:///")).parent.mkdir(parents=True, exist_ok=True)
    engine = sa.create_engine(database_url)
    keys = [f"k{i}" for i in range(3 * IN_CHUNK)] + ["o'hara", 'quo"te', "back\\slash", "{brace}"]
    with engine.begin() as conn:
        _t.create(conn)
        assert insert_rows(conn, _t, [{"k": k, "n": i} for i, k in enumerate(keys)]) == len(keys)
        assert insert_rows(conn, _t, [{"k": "k0", "n": 0}, {"k": "new", "n": -1}], skip_existing=True) == 1
        wanted = [*keys[1::2], "absent", "o'hara"]
        found = [
            r.k for f in key_filters(conn, _t.c.k, wanted) for r in conn.execute(sa.select(_t.c.k).where(f))
        ]
        assert sorted(found) == sorted(set(wanted) - {"absent"})
        moved = sum(
            conn.execute(sa.update(_t).where(f).values(n=_t.c.n + 1000)).rowcount
            for f in key_filters(conn, _t.c.k, ["k3", "{brace}", "nope"])
        )
        assert moved == 2
        assert list(key_filters(conn, _t.c.k, [])) == []
    engine.dispose()
