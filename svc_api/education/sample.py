"""The sample catalog a fresh install shows (``make run``): three products of a sample instructor,
marked ``sample``, loaded into an empty catalog only; their video lessons get small placeholder
media objects so that playback credentials point at something real.

Example:
    >>> from svc_api.core.store import Store
    >>> import tempfile
    >>> from svc_api.core.objectstore import LocalObjectStore
    >>> objects = LocalObjectStore(tempfile.mkdtemp())
    >>> fill_sample_if_empty(store, objects, now=1_790_000_000), fill_sample_if_empty(store, objects, now=1)
    (3, 0)
"""

from __future__ import annotations

from typing import Any

from svc_api.accounts import service as accounts
from svc_api.core.store import Store
from svc_api.education.catalog import service as catalog

SAMPLE_LEADER = "_EDU_S"
TOPICS = {"price-action": "Price action", "risk": "Risk management", "indicators": "Indicators"}


def _video(lesson_id: str, title: str, seconds: int, preview: bool = False) -> dict[str, Any]:
    return {
        "lesson_id": lesson_id,
        "title": title,
        "kind": "video",
        "duration_seconds": seconds,
        "preview": preview,
        "media_key": f"education/sample/{lesson_id}.bin",
    }


PRODUCTS: list[dict[str, Any]] = [
    {
        "kind": "course",
        "title": "Price action from zero",
        "subtitle": "Candles, levels and trends",
        "description": "A first course on reading a chart without indicators.",
        "language": "en",
        "level": "beginner",
        "price_minor": 2900,
        "topics": ["price-action"],
        "curriculum": {
            "sections": [
                {
                    "section_id": "intro",
                    "title": "Start here",
                    "lessons": [
                        _video("pa-1", "What a candle tells you", 420, preview=True),
                        _video("pa-2", "Support and resistance", 780),
                    ],
                },
                {
                    "section_id": "practice",
                    "title": "Practice",
                    "lessons": [
                        {
                            "lesson_id": "pa-3",
                            "title": "Workbook",
                            "kind": "pdf",
                            "pages": 12,
                            "preview": False,
                        }
                    ],
                },
            ]
        },
    },
    {
        "kind": "course",
        "title": "RSI and moving averages in practice",
        "subtitle": "Two indicators, done well",
        "description": "How RSI and moving averages behave, and the setups traders build on them.",
        "language": "en",
        "level": "intermediate",
        "price_minor": 4900,
        "topics": ["indicators"],
        "curriculum": {
            "sections": [
                {
                    "section_id": "rsi",
                    "title": "RSI",
                    "lessons": [
                        _video("ind-1", "RSI, the idea", 600, preview=True),
                        _video("ind-2", "Crossovers", 900),
                    ],
                }
            ]
        },
    },
    {
        "kind": "publication",
        "title": "The position sizing handbook",
        "subtitle": "Risk first",
        "description": "Sizing by risk, stop distance and what a losing streak does to an account.",
        "language": "en",
        "level": "beginner",
        "price_minor": 0,
        "topics": ["risk"],
        "curriculum": {
            "sections": [
                {
                    "section_id": "book",
                    "title": "Handbook",
                    "lessons": [
                        {
                            "lesson_id": "risk-1",
                            "title": "The handbook",
                            "kind": "article",
                            "pages": 8,
                            "preview": True,
                        }
                    ],
                }
            ]
        },
    },
]


def fill_sample_if_empty(store: Store, objects: Any, *, now: int, currency: str = "USD") -> int:
    """Load the sample catalog into an empty one; how many products were added."""
    with store.write() as conn:
        if catalog.count_products(conn):
            return 0
        accounts.ensure_system_account(conn, SAMPLE_LEADER, "education-sample@platform.invalid", now=now)
        for topic_id, name in TOPICS.items():
            catalog.add_topic(conn, topic_id, name)
        for fields in PRODUCTS:
            catalog.publish_product(
                conn, SAMPLE_LEADER, {**fields, "currency": currency, "sample": True}, now=now
            )
    for fields in PRODUCTS:
        for lesson in catalog.lessons(fields["curriculum"]):
            if lesson.get("media_key"):
                objects.put(lesson["media_key"], f"sample media of lesson {lesson['lesson_id']}\n".encode())
    return len(PRODUCTS)
