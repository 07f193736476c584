"""Signed keyset cursors and page sizes: round trips and every way a client can get them wrong."""

from __future__ import annotations

import base64
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from svc_api.core import cursors
from svc_api.core.cursors import MAX_CURSOR_LENGTH, decode_cursor, encode_cursor, page_size
from svc_api.core.errors import ApiError

SECRET = b"s3cret-key-for-tests-0123456789"
ROWS = [{"ts": 1700000000 - i, "id": f"tx{i:03d}"} for i in range(7)]


def b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def test_round_trip_preserves_position():
    position = {"ts": 1700000123, "id": "tx_ü", "nested": [1, 2.5, None, True]}
    cursor = encode_cursor(position, SECRET)
    assert decode_cursor(cursor, SECRET) == position
    assert set(cursor) <= set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.")


def test_encoding_is_deterministic_and_str_secret_equals_bytes():
    assert encode_cursor({"b": 1, "a": 2}, SECRET) == encode_cursor({"a": 2, "b": 1}, SECRET.decode())


@settings(max_examples=50, deadline=None)
@given(st.dictionaries(st.text(max_size=8), st.integers() | st.text(max_size=12), max_size=4))
def test_round_trip_property(position):
    assert decode_cursor(encode_cursor(position, SECRET), SECRET) == position


def _expect_invalid(cursor: object, secret: bytes = SECRET) -> ApiError:
    with pytest.raises(ApiError) as info:
        decode_cursor(cursor, secret)  # type: ignore[arg-type]
    assert info.value.status == 400 and info.value.error == "invalid_cursor"
    return info.value


def test_tampered_payload_is_rejected():
    cursor = encode_cursor({"ts": 1700000000, "id": "tx001"}, SECRET)
    signature = cursor.split(".")[1]
    forged = b64(json.dumps({"id": "tx001", "ts": 1}, separators=(",", ":")).encode())
    assert "signature" in _expect_invalid(f"{forged}.{signature}").extra["message"]


@pytest.mark.parametrize("position", range(0, 40, 7))
def test_every_flipped_signature_character_is_rejected(position):
    cursor = encode_cursor({"ts": 1700000000}, SECRET)
    i = cursor.index(".") + 1 + position % 20
    flipped = cursor[:i] + ("A" if cursor[i] != "A" else "B") + cursor[i + 1 :]
    _expect_invalid(flipped)


def test_wrong_secret_is_rejected():
    _expect_invalid(encode_cursor({"ts": 1}, b"another-secret"))


def test_valid_mac_over_non_json_or_non_object_is_rejected():
    # Correctly signed but not a position (a future format, a leaked secret): still a clean 400.
    for raw in (b"\xff\xfe", b"[1,2]", b"not json"):
        payload = b64(raw)
        signed = f"{payload}.{b64(cursors._mac(payload, SECRET))}"
        assert "malformed" in _expect_invalid(signed).extra["message"]


@pytest.mark.parametrize(
    "cursor",
    [
        "",
        "abc",
        "abc.",
        ".abc",
        "a.b.c",
        "!!!!.@@@@",
        "eyJ0cyI6MX0 .AAAA",
        "x" * (MAX_CURSOR_LENGTH + 1),
        None,
        12345,
    ],
)
def test_malformed_cursors_are_400(cursor):
    _expect_invalid(cursor)


def test_stray_characters_in_signature_are_not_ignored():
    cursor = encode_cursor({"ts": 1}, SECRET)
    _expect_invalid(cursor + "!")
    _expect_invalid(cursor + "=")


def test_empty_secret_is_a_programming_error():
    with pytest.raises(ValueError, match="secret"):
        encode_cursor({"ts": 1}, b"")


@pytest.mark.parametrize(
    ("value", "expected"),
    [(None, 25), (1, 1), (100, 100), ("1", 1), ("100", 100), (" 42 ", 42), ("+7", 7)],
)
def test_page_size_accepts_integers_in_range(value, expected):
    assert page_size(value, 25, 1, 100) == expected


@pytest.mark.parametrize("value", ["abc", "1.5", "", " ", "1e3", "0x10", 1.5, 25.0, True, [25], "9" * 40])
def test_page_size_rejects_non_integers(value):
    with pytest.raises(ApiError) as info:
        page_size(value, 25, 1, 100)
    assert info.value.status == 400 and info.value.error == "invalid_page_size"
    assert "must be an integer" in info.value.extra["message"]


@pytest.mark.parametrize("value", [0, -1, 101, "101", "0"])
def test_page_size_out_of_range_is_400(value):
    with pytest.raises(ApiError) as info:
        page_size(value, 25, 1, 100, name="page_size")
    assert info.value.extra["message"] == f"page_size must be between 1 and 100, got {int(value)}"


def test_page_size_clamp_only_clamps_above():
    assert page_size(51, 50, 1, 50, clamp=True) == 50
    assert page_size("5000", 50, 1, 50, clamp=True) == 50
    with pytest.raises(ApiError):
        page_size(0, 50, 1, 50, clamp=True)


# --- a paginated list through HTTP: walks every row once, never restarts at page one -------------------


async def listing(request: Request) -> JSONResponse:
    size = page_size(request.query_params.get("limit"), 3, 1, 5)
    raw = request.query_params.get("cursor")
    rows = ROWS
    if raw is not None:
        after = decode_cursor(raw, SECRET)
        rows = [r for r in ROWS if (r["ts"], r["id"]) < (after["ts"], after["id"])]
    page, more = rows[:size], len(rows) > size
    cursor = encode_cursor(page[-1], SECRET) if more else None
    return JSONResponse({"items": [r["id"] for r in page], "has_more": more, "next_cursor": cursor})


@pytest.mark.anyio
async def test_paging_through_http(build_app, connect):
    app = build_app([Route("/list", listing)], auth=False)
    async with connect(app) as client:
        seen, cursor = [], None
        while True:
            params = {"limit": "3"} | ({"cursor": cursor} if cursor else {})
            body = (await client.get("/list", params=params)).json()
            seen += body["items"]
            cursor = body["next_cursor"]
            if not body["has_more"]:
                break
        bad_cursor = await client.get("/list", params={"cursor": "garbage.cursor"})
        bad_size = await client.get("/list", params={"limit": "1.5"})
    assert seen == [r["id"] for r in ROWS] and cursor is None
    assert bad_cursor.status_code == 400 and bad_cursor.json()["error"] == "invalid_cursor"
    assert bad_size.json() == {"error": "invalid_page_size", "message": "limit must be an integer, got '1.5'"}


@pytest.mark.parametrize("ts", range(8))
def test_another_spelling_of_the_same_signature_is_refused(ts: int) -> None:
    # 16 bytes take 22 characters; the last one carries 2 bits, so 16 characters decode alike.
    cursor = encode_cursor({"ts": ts, "id": "up_1"}, SECRET)
    payload, signature = cursor.split(".")
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    twins = [
        signature[:-1] + ch
        for ch in alphabet
        if ch != signature[-1]
        and base64.urlsafe_b64decode(signature[:-1] + ch + "==") == base64.urlsafe_b64decode(signature + "==")
    ]
    assert len(twins) == 15
    for twin in twins:
        with pytest.raises(ApiError) as err:
            decode_cursor(f"{payload}.{twin}", SECRET)
        assert err.value.status == 400
