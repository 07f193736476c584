"""Importers: Binance dumps (ms and µs, header or not, CSV or ZIP), generic CSV, Parquet; idempotence."""

from __future__ import annotations

import zipfile
from pathlib import Path

import polars as pl
import pytest

from svc_engine.data import SCHEMA, DataStore, KlineValidationError, load_klines
from svc_engine.data.importers import ImportResult, import_paths
from svc_engine.data.times import TIME

M = 60_000
T0 = 1_704_067_200_000  # 2024-01-01 00:00 UTC
HEADER = (
    "open_time,open,high,low,close,volume,close_time,quote_volume,count,taker_buy_volume,"
    "taker_buy_quote_volume,ignore"
)
EXPECTED = [
    (T0, 42283.58, 42298.62, 42261.02, 42298.61, 35.92724),
    (T0 + M, 42298.62, 42320.0, 42298.61, 42320.0, 21.79866),
    (T0 + 2 * M, 42319.99, 42331.54, 42304.0, 42306.72, 40.7866),
]


def dump_lines(unit: int = 1, rows: list[tuple[int, float, float, float, float, float]] = EXPECTED) -> str:
    lines = [
        f"{t * unit},{o},{h},{lo},{c},{v},{(t + M - 1) * unit},{v * c:.4f},100,{v / 2},{v * c / 2:.4f},0"
        for t, o, h, lo, c, v in rows
    ]
    return "\n".join(lines) + "\n"


def stored(store: DataStore, symbol: str = "BTCUSDT", timeframe: str = "1m") -> list[tuple]:
    """Rows of the loaded series, ``open_time`` back in Unix ms (after checking it is ``TIME``)."""
    df = load_klines(symbol, timeframe, store=store)
    assert df.schema == pl.Schema(SCHEMA) and df.schema["open_time"] == TIME
    return df.with_columns(pl.col("open_time").dt.epoch("ms")).rows()


@pytest.mark.parametrize("unit", [1, 1000], ids=["milliseconds", "microseconds"])
@pytest.mark.parametrize("header", [False, True], ids=["bare", "header"])
def test_binance_csv_round_trip(tmp_path, unit, header):
    src = tmp_path / "BTCUSDT-1m-2024-01-01.csv"
    src.write_text((HEADER + "\n" if header else "") + dump_lines(unit))
    store = DataStore(tmp_path / "store")
    assert import_paths([src], store=store) == [ImportResult("crypto", "BTCUSDT", "1m", 1, 3, 3)]
    assert stored(store) == EXPECTED


@pytest.mark.parametrize("unit", [1, 1000], ids=["milliseconds", "microseconds"])
def test_binance_monthly_zip_round_trip(tmp_path, unit):
    src = tmp_path / "BTCUSDT-1m-2024-01.zip"
    with zipfile.ZipFile(src, "w") as z:
        z.writestr("BTCUSDT-1m-2024-01.csv", dump_lines(unit))
    store = DataStore(tmp_path / "store")
    assert import_paths([src], store=store)[0].rows_added == 3
    assert stored(store) == EXPECTED


def test_daily_zips_of_both_units_merge_into_one_series(tmp_path):
    # 2024 dumps in ms, 2025 in µs: one directory imports into one series
    for i, unit in ((0, 1), (1, 1000)):
        with zipfile.ZipFile(tmp_path / f"BTCUSDT-1m-2024-01-0{i + 1}.zip", "w") as z:
            z.writestr(f"BTCUSDT-1m-2024-01-0{i + 1}.csv", dump_lines(unit, [EXPECTED[i]]))
    store = DataStore(tmp_path / "store")
    assert import_paths([tmp_path], store=store) == [ImportResult("crypto", "BTCUSDT", "1m", 2, 2, 2)]
    assert stored(store) == EXPECTED[:2]


def test_importing_the_same_file_twice_changes_nothing(tmp_path):
    src = tmp_path / "BTCUSDT-1m-2024-01-01.csv"
    src.write_text(dump_lines())
    store = DataStore(tmp_path / "store")
    import_paths([src], store=store)
    target = store.path("crypto", "BTCUSDT", "1m")
    before = (target.read_bytes(), target.stat().st_mtime_ns)
    assert import_paths([src], store=store)[0].rows_added == 0
    assert (target.read_bytes(), target.stat().st_mtime_ns) == before


def test_overrides_and_names(tmp_path):
    src = tmp_path / "anything.csv"
    src.write_text(dump_lines())
    store = DataStore(tmp_path / "store")
    with pytest.raises(ValueError, match="cannot tell the symbol and timeframe from the file name"):
        import_paths([src], store=store)
    import_paths([src], store=store, market="crypto_futures", symbol="btcusdt", timeframe="1m")
    assert stored(store)[0] == EXPECTED[0]
    assert store.markets() == ["crypto_futures"]


def test_a_bad_dump_row_is_refused_naming_file_and_row(tmp_path):
    rows = [*EXPECTED[:2], (T0 + 2 * M, 42319.99, 42300.0, 42304.0, 42306.72, 40.7866)]  # high < open
    src = tmp_path / "BTCUSDT-1m-2024-01-01.csv"
    src.write_text(dump_lines(1, rows))
    store = DataStore(tmp_path / "store")
    with pytest.raises(KlineValidationError) as info:
        import_paths([src], store=store)
    assert str(info.value) == f"{src}: row 2: high_below_open_close: high < max(open, close)"
    assert store.markets() == []


def test_a_csv_with_the_wrong_width_is_refused(tmp_path):
    src = tmp_path / "BTCUSDT-1m-2024-01-01.zip"
    with zipfile.ZipFile(src, "w") as z:
        z.writestr("x.csv", "1,2,3\n")
    with pytest.raises(KlineValidationError, match=r"x\.csv: format: expected the 12 columns .* found 3"):
        import_paths([src], store=DataStore(tmp_path / "store"))


def test_generic_csv_with_a_mapping_and_iso_dates(tmp_path):
    src = tmp_path / "GOLD-1d.csv"
    src.write_text(
        "Day,Px Open,Px High,Px Low,Px Close\n"
        "2024-01-02,2063.5,2078.1,2056.2,2072.3\n2024-01-03,2072.3,2073.0,2030.5,2041.0\n"
    )
    store = DataStore(tmp_path / "store")
    mapping = {"open_time": "Day", "open": "Px Open", "high": "Px High", "low": "Px Low", "close": "Px Close"}
    res = import_paths([src], store=store, market="commodities", mapping=mapping)
    assert res == [ImportResult("commodities", "GOLD", "1d", 1, 2, 2)]
    assert stored(store, "GOLD", "1d") == [
        (T0 + 86_400_000, 2063.5, 2078.1, 2056.2, 2072.3, 0.0),
        (T0 + 2 * 86_400_000, 2072.3, 2073.0, 2030.5, 2041.0, 0.0),
    ]


def test_generic_csv_iso_times_with_an_offset_become_utc(tmp_path):
    src = tmp_path / "X-1h.csv"
    src.write_text("datetime,open,high,low,close,volume\n2024-01-01T02:00:00+02:00,1,2,0.5,1.5,3\n")
    store = DataStore(tmp_path / "store")
    import_paths([src], store=store, market="crypto")
    assert stored(store, "X", "1h") == [(T0, 1.0, 2.0, 0.5, 1.5, 3.0)]


def test_generic_csv_mixed_time_formats_are_refused_in_one_line(tmp_path):
    src = tmp_path / "X-1d.csv"
    src.write_text("date,open,high,low,close\n2024-01-02,1,2,0.5,1.5\n2024-01-03T00:00:00Z,1,2,0.5,1.5\n")
    with pytest.raises(KlineValidationError) as info:
        import_paths([src], store=DataStore(tmp_path / "store"), market="crypto")
    assert str(info.value).startswith(f"{src}: format: column 'date' is not a time in auto: ")
    assert "\n" not in str(info.value)


@pytest.mark.parametrize(
    ("unit", "scale"),
    [("s", 1 / 1000), ("ms", 1), ("us", 1000), ("ns", 10**6), ("auto", 1 / 1000), ("auto", 1000)],
)
def test_generic_csv_numeric_time_units(tmp_path, unit, scale):
    src = tmp_path / "X-1m.csv"
    src.write_text(
        "timestamp,open,high,low,close,volume\n"
        f"{int(T0 * scale)},1,2,0.5,1.5,3\n{int((T0 + M) * scale)},1.5,2,1,1.2,4\n"
    )
    store = DataStore(tmp_path / "store")
    import_paths([src], store=store, market="crypto", time_unit=unit)
    assert [r[0] for r in stored(store, "X", "1m")] == [T0, T0 + M]


def test_generic_csv_missing_column_is_named(tmp_path):
    src = tmp_path / "X-1h.csv"
    src.write_text("time,open,high,close\n1704067200,1,2,1.5\n")
    with pytest.raises(
        KlineValidationError,
        match=r"no column for low; the file has \['time', 'open', "
        r"'high', 'close'\] \(map one with low=<column>\)",
    ):
        import_paths([src], store=DataStore(tmp_path / "store"), market="crypto")


def test_parquet_in_the_schema_infers_market_symbol_timeframe(tmp_path):
    (tmp_path / "crypto").mkdir()
    src = tmp_path / "crypto" / "ETHUSDT-1h.parquet"
    frame = pl.DataFrame(EXPECTED, schema=list(SCHEMA), orient="row")
    frame.with_columns(pl.Series("open_time", [T0, T0 + 3_600_000, T0 + 7_200_000])).write_parquet(src)
    store = DataStore(tmp_path / "store")
    assert import_paths([src], store=store) == [ImportResult("crypto", "ETHUSDT", "1h", 1, 3, 3)]
    assert import_paths([src], store=store)[0].rows_added == 0


def test_shared_parquet_file_imports_and_reads_back_equal(tmp_path, shared_datasets):
    src: Path = shared_datasets / "crypto" / "BTCUSDT-1h.parquet"
    store = DataStore(tmp_path)
    res = import_paths([src], store=store)
    assert res == [ImportResult("crypto", "BTCUSDT", "1h", 1, 72_540, 72_540)]
    raw = pl.read_parquet(src)
    assert raw.schema["open_time"] == pl.Int64  # the shared datasets hold Int64 Unix ms
    loaded = load_klines("BTCUSDT", "1h", store=store)
    assert loaded.schema["open_time"] == TIME
    assert loaded.equals(raw.with_columns(pl.col("open_time").cast(TIME)))
    assert loaded.with_columns(pl.col("open_time").dt.epoch("ms")).equals(raw)


def test_unknown_format_and_missing_path(tmp_path):
    with pytest.raises(ValueError, match="unknown format 'xml'"):
        import_paths([tmp_path], format="xml")
    with pytest.raises(FileNotFoundError, match=r"no \.csv, \.zip or \.parquet file"):
        import_paths([tmp_path], store=DataStore(tmp_path / "s"))
