"""Reviews of listings: by present or past subscribers only, one per user and listing, never one's
own. The review id is an HMAC of the reviewer and the listing under the service's secret key: stable
(a second review by the same user is a 409 on it) and not traceable to the reviewer without the key.

Example:
    >>> comment_of("great signals, thank you")
    'great signals, thank you'
    >>> comment_of("see www.example.com please")
    Traceback (most recent call last):
    ...
    svc_api.core.errors.Invalid: comment must not contain links (http://, https://, www.)
"""

from __future__ import annotations

import hashlib
import hmac
import re
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from svc_api.core.errors import Conflict, Forbidden, Invalid
from svc_api.marketplace import queries
from svc_api.marketplace.listings import find

_MARKUP = re.compile(r"<[^>]*>|&[a-zA-Z#0-9]+;|\[/?[a-z]+[^\]]*\]")
_LINK = re.compile(r"https?://|www\.", re.IGNORECASE)


def review_id_of(secret: bytes, svc_id: str, listing_id: str) -> str:
    """The keyed, untraceable id of a user's review of a listing.

    Example:
        >>> review_id_of(b"k" * 32, "AB12CD", "lst_1") == review_id_of(b"k" * 32, "AB12CD", "lst_1")
        True
    """
    return "rev_" + hmac.new(secret, f"{svc_id}|{listing_id}".encode(), hashlib.sha256).hexdigest()[:32]


def comment_of(value: Any) -> str:
    """A review comment: 10-500 characters, no links, no markup (empty when not given)."""
    if value is None or value == "":
        return ""
    if not isinstance(value, str):
        raise Invalid("comment must be a string")
    text = value.strip()
    if len(text) < 10 or len(text) > 500:
        raise Invalid("comment must be 10-500 characters")
    if _LINK.search(text):
        raise Invalid("comment must not contain links (http://, https://, www.)")
    if _MARKUP.search(text):
        raise Invalid("comment must not contain markup")
    return text


def review(
    conn: Connection, svc_id: str, listing_id: str, rating: int, comment: str, *, secret: bytes, now: int
) -> dict[str, Any]:
    """``marketplace_review`` in the caller's transaction (``rating`` and ``comment`` checked)."""
    row = find(conn, listing_id)
    if row.svc_id == svc_id:
        raise Invalid("you cannot review your own listing")
    if not queries.ever_subscribed(conn, svc_id, row.listing_id):
        raise Forbidden("only subscribers (present or past) can review a listing")
    values = {
        "review_id": review_id_of(secret, svc_id, row.listing_id),
        "listing_id": row.listing_id,
        "rating": rating,
        "comment": comment,
        "created_at": now,
    }
    try:
        with conn.begin_nested():
            queries.insert_review(conn, values)
    except sa.exc.IntegrityError:
        raise Conflict("you have already reviewed this listing") from None
    avg, count = queries.rating(conn, row.listing_id)
    return {
        "listing_id": row.listing_id,
        "rating": rating,
        "avg_rating": round(avg, 2),
        "review_count": count,
    }


def entry_of(row: Any) -> dict[str, Any]:
    """The review resource (the reviewer is never returned)."""
    return {
        "review_id": row.review_id,
        "rating": int(row.rating),
        "comment": row.comment,
        "timestamp": int(row.created_at),
    }
