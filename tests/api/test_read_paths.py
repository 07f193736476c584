"""The heavy read routes (issue 32) run on the event loop on an SQLite store, in the thread pool on
PostgreSQL; and their pages, read through statements compiled once, page as before.

Each request records the thread of every store read it makes: anyio's worker threads carry the name
``AnyIO worker thread``, the loop's thread another.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from svc_api.community import feed_queries
from svc_api.core.store import Store
from tests.api.conftest import Api

WORKER = "AnyIO worker thread"


@pytest.fixture
def threads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the threads that open store reads, in order."""
    seen: list[str] = []
    original = Store.read

    @contextmanager
    def read(self: Store) -> Iterator[Any]:
        seen.append(threading.current_thread().name)
        with original(self) as conn:
            yield conn

    monkeypatch.setattr(Store, "read", read)
    return seen


def _expected(api: Api) -> bool:
    """True: the reads stay on the loop (SQLite file); False: they go to the thread pool."""
    return api.app.state.services.store.dialect == "sqlite"


def _on_loop(api: Api, threads: list[str]) -> list[bool]:
    """For each read of the request, whether the loop's thread made it (the app's background
    workers, which read on their own threads, are left out)."""
    loop = api.portal.call(lambda: threading.current_thread().name)
    return [name == loop for name in threads if name in (loop, WORKER)]


@pytest.mark.parametrize(
    ("family", "request_type"),
    [
        ("tradingdata", "community_chat"),
        ("tradingdata", "community_posts"),
        ("tradingdata", "marketplace_browse"),
        ("user", "active_signals"),
        ("user", "backtest_history"),
    ],
)
def test_read_routes_skip_the_thread_hop_on_sqlite(
    api: Api, threads: list[str], family: str, request_type: str
) -> None:
    token = api.register()["session_token"]
    threads.clear()
    if family == "user":
        reply = api.user(request_type, {}, token=token)
    else:
        reply = api.get("/tradingdata", params={"request_type": request_type})
    assert reply.status_code == 200, reply.text
    on_loop = _on_loop(api, threads)
    assert on_loop, "the route read the store"
    assert on_loop == [_expected(api)] * len(on_loop)


def test_backtest_history_with_a_coin_filter_keeps_the_thread_pool(api: Api, threads: list[str]) -> None:
    # the coin is looked up in the data catalog (files) first: that is no work for the event loop
    token = api.register()["session_token"]
    threads.clear()
    reply = api.user("backtest_history", {"coin": "BTC"}, token=token)
    assert reply.status_code in (200, 400, 404), reply.text
    assert WORKER in threads


@pytest.mark.parametrize("path", ["/education/v1/catalog", "/education/v1/products/pr_nope"])
def test_education_catalog_reads_skip_the_thread_hop_on_sqlite(
    api: Api, threads: list[str], path: str
) -> None:
    threads.clear()
    reply = api.get(path)
    assert reply.status_code == (200 if path.endswith("catalog") else 404), reply.text
    on_loop = _on_loop(api, threads)
    assert on_loop, "the route read the store"
    assert on_loop == [_expected(api)] * len(on_loop)


def test_chat_and_feed_pages_follow_their_keys(api: Api) -> None:
    store = api.app.state.services.store
    a, b = api.register()["svc_id"], api.register()["svc_id"]
    with store.write() as conn:
        for t, who in [(100, a), (100, b), (101, a), (99, b)]:
            feed_queries.insert_chat(
                conn,
                channel="global",
                sort_key=f"{t}#{t}_{who}",
                msg_id=f"{t}_{who}",
                svc_id=who,
                message="m",
                created_at=t,
            )
    hi, lo = max(a, b), min(a, b)
    with store.read() as conn:
        first = feed_queries.chat_before(conn, "global", limit=2, before=None)
        after = feed_queries.chat_before(conn, "global", limit=5, before=(100, f"100_{hi}"))
        other = feed_queries.chat_before(conn, "leader_x", limit=5, before=None)
        posts = feed_queries.feed_after(conn, limit=5, after=None)
    assert [r.msg_id for r in first] == [f"101_{a}", f"100_{hi}"]
    assert [r.msg_id for r in after] == [f"100_{lo}", f"99_{b}"]
    assert (other, posts) == ([], [])
