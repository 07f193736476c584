"""A store rooted at s3://bucket/prefix, against moto's S3 server on 127.0.0.1."""

from __future__ import annotations

from collections.abc import Iterator

import polars as pl
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from svc_engine.data import Catalog, DataStore, load_klines, to_arrays
from svc_engine.data.importers import import_paths

moto_server = pytest.importorskip("moto.server")
pytest.importorskip("fsspec")
boto3 = pytest.importorskip("boto3")

H = 3_600_000
T0 = 1_704_067_200_000  # 2024-01-01 00:00 UTC


@pytest.fixture(scope="module")
def endpoint() -> Iterator[str]:
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    url = f"http://{host}:{port}"
    with pytest.MonkeyPatch.context() as mp:
        for name, value in {
            "AWS_ACCESS_KEY_ID": "test",
            "AWS_SECRET_ACCESS_KEY": "test",
            "AWS_REGION": "us-east-1",
            "AWS_ENDPOINT_URL": url,
        }.items():
            mp.setenv(name, value)
        yield url
    server.stop()


@pytest.fixture
def store(endpoint: str, request: pytest.FixtureRequest) -> DataStore:
    bucket = "klines-" + request.node.name.replace("_", "-").lower()[:40].strip("-")
    boto3.client("s3", endpoint_url=endpoint).create_bucket(Bucket=bucket)
    return DataStore(f"s3://{bucket}/store")


def hours(n: int, start: int = T0) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "open_time": [start + i * H for i in range(n)],
            "open": [10.0 + i for i in range(n)],
            "high": [12.0 + i for i in range(n)],
            "low": [9.0 + i for i in range(n)],
            "close": [11.0 + i for i in range(n)],
            "volume": [1.0] * n,
        }
    )


def test_write_then_load_a_range(store):
    assert store.write_klines("crypto", "BTCUSDT", "1h", hours(48)) == 48
    assert store.write_klines("crypto", "BTCUSDT", "1h", hours(48)) == 0
    assert store.path("crypto", "BTCUSDT", "1h") == f"{store.root}/crypto/BTCUSDT/1h.parquet"
    df = load_klines("BTCUSDT", "1h", (T0 + 10 * H) // 1000, (T0 + 12 * H) // 1000, warmup=2, store=store)
    assert df["open_time"].dt.epoch("ms").to_list() == [T0 + i * H for i in range(8, 13)]
    assert to_arrays(df)["close"].tolist() == [19.0, 20.0, 21.0, 22.0, 23.0]


def test_polars_pyarrow_and_duckdb_read_the_objects(store):
    store.write_klines("crypto", "ETHUSDT", "1h", hours(5))
    url = store.path("crypto", "ETHUSDT", "1h")
    assert pl.read_parquet(url, storage_options=store.remote.storage_options()).height == 5
    key_path = url.removeprefix("s3://")
    assert pq.read_table(key_path, filesystem=store.remote.fs).num_rows == 5
    with store.remote.duckdb() as con:
        assert con.execute("SELECT count(*), max(close) FROM read_parquet(?)", [url]).fetchone() == (5, 15.0)


def test_catalog_over_s3(store):
    store.write_klines("crypto", "BTCUSDT", "1h", hours(30))
    store.write_klines("forex", "EURUSD", "1h", hours(3, start=T0 + 24 * H))
    cat = Catalog(store)
    assert cat.entries().select("market", "symbol", "timeframe", "dataset_key", "total_candles").rows() == [
        ("crypto", "BTCUSDT", "1h", "crypto/BTCUSDT/1h.parquet", 30),
        ("forex", "EURUSD", "1h", "forex/EURUSD/1h.parquet", 3),
    ]
    assert cat.data_range("BTCUSDT", "1h") == {
        "first_ts": T0 // 1000,
        "last_ts": (T0 + 29 * H) // 1000,
        "first_date": "2024-01-01",
        "last_date": "2024-01-02",
        "total_candles": 30,
    }
    assert cat.data_range("BTCUSDT", "4h")["total_candles"] == 7  # complete buckets: 28 of the 30 hours


def test_resample_cache_lives_beside_the_series_and_follows_the_source(store):
    store.write_klines("crypto", "BTCUSDT", "1h", hours(8))
    assert load_klines("BTCUSDT", "4h", store=store)["volume"].to_list() == [4.0, 4.0]
    assert "crypto/BTCUSDT/.cache/4h.parquet" in store.remote.list_keys()
    store.write_klines("crypto", "BTCUSDT", "1h", hours(2, start=T0 + 8 * H))
    assert load_klines("BTCUSDT", "4h", store=store)["volume"].to_list() == [4.0, 4.0]  # 8:00 open
    store.write_klines("crypto", "BTCUSDT", "1h", hours(2, start=T0 + 10 * H))
    assert load_klines("BTCUSDT", "4h", store=store)["volume"].to_list() == [4.0, 4.0, 4.0]


def test_import_and_cli_on_s3(store, tmp_path):
    src = tmp_path / "BTCUSDT-1m-2024-01-01.csv"
    src.write_text(
        "1704067200000,1,2,0.5,1.5,10,1704067259999,15,3,5,7.5,0\n"
        "1704067260000,1.5,2,1,1.2,4,1704067319999,5,3,2,2.5,0\n"
    )
    assert import_paths([src], store=store)[0].rows_added == 2
    assert import_paths([src], store=store)[0].rows_added == 0
    from svc_api.cli.data import command

    res = CliRunner().invoke(command, ["--data-dir", str(store.root), "list"])
    assert res.exit_code == 0, res.output
    assert "crypto/BTCUSDT/1m.parquet" in res.output
    ok = CliRunner().invoke(command, ["--data-dir", str(store.root), "validate", "BTCUSDT"])
    assert ok.exit_code == 0 and ok.output.startswith(f"ok {store.root}/crypto/BTCUSDT/1m.parquet: 2 candles")


def test_live_appends_keep_their_tail_on_local_disk_and_compact_into_the_object(store, tmp_path):
    live = DataStore(str(store.root), tail_dir=tmp_path / "tails")
    live.write_klines("crypto", "BTCUSDT", "1h", hours(4))
    assert live.append_klines("crypto", "BTCUSDT", "1h", hours(2, start=T0 + 4 * H)) == 2
    assert live.tail_path("crypto/BTCUSDT/1h.parquet").is_file()  # the tail is local
    assert load_klines("BTCUSDT", "1h", store=live).height == 6
    assert Catalog(live).data_range("BTCUSDT", "1h")["total_candles"] == 6
    assert live.compact("crypto", "BTCUSDT", "1h") == 2
    assert load_klines("BTCUSDT", "1h", store=store).height == 6  # in the S3 object now, for any reader
