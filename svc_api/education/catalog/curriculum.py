"""The lesson tree of a product revision: sections of lessons, each a ``video`` (with its duration),
a ``pdf`` or an ``article`` (with its number of pages), marked ``preview`` or not.

Stored as JSON in the revision; :func:`check` is the one validation of a tree, :func:`lessons`
flattens it, :func:`preview` shapes the public view (preview lessons playable, others locked, never
a media key).

Example:
    >>> tree = {"sections": [{"section_id": "s1", "title": "Basics", "lessons": [
    ...     {"lesson_id": "l1", "title": "Candles", "kind": "video", "duration_seconds": 600,
    ...      "preview": True, "media_key": "media/x.mp4"}]}]}
    >>> check(tree)["sections"][0]["lessons"][0]["kind"]
    'video'
    >>> preview(tree)["sections"][0]["lessons"][0]["locked"]
    False
"""

from __future__ import annotations

import re
from typing import Any

from svc_api.core.errors import Invalid

KINDS = ("video", "pdf", "article")
MAX_SECTIONS = 50
MAX_LESSONS = 500
_ID = re.compile(r"[A-Za-z0-9_-]{1,40}")


def _text(value: object, where: str, hi: int) -> str:
    if not isinstance(value, str) or not 1 <= len(value.strip()) <= hi:
        raise Invalid(f"{where} must be a string of 1-{hi} characters")
    return value.strip()


def _count(value: object, where: str, lo: int, hi: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise Invalid(f"{where} must be an integer between {lo} and {hi}")
    return value


def _lesson(raw: object, where: str) -> dict[str, Any]:
    if not isinstance(raw, dict):
        raise Invalid(f"{where} must be an object")
    lesson_id = raw.get("lesson_id")
    if not isinstance(lesson_id, str) or not _ID.fullmatch(lesson_id):
        raise Invalid(f"{where}.lesson_id must be 1-40 letters, digits, '_' or '-'")
    kind = raw.get("kind")
    if kind not in KINDS:
        raise Invalid(f"{where}.kind must be one of {', '.join(KINDS)}")
    lesson: dict[str, Any] = {
        "lesson_id": lesson_id,
        "title": _text(raw.get("title"), f"{where}.title", 160),
        "kind": kind,
        "preview": bool(raw.get("preview", False)),
    }
    if kind == "video":
        lesson["duration_seconds"] = _count(
            raw.get("duration_seconds"), f"{where}.duration_seconds", 1, 86_400
        )
    else:
        lesson["pages"] = _count(raw.get("pages"), f"{where}.pages", 1, 10_000)
    if raw.get("media_key") is not None:
        lesson["media_key"] = _text(raw.get("media_key"), f"{where}.media_key", 512)
    if raw.get("upload_id") is not None:
        lesson["upload_id"] = _text(raw.get("upload_id"), f"{where}.upload_id", 40)
    return lesson


def check(tree: object) -> dict[str, Any]:
    """The tree, normalised; 400 naming the first broken rule (shape, kinds, unique lesson ids,
    at least one lesson, bounds).

    Example:
        >>> check({"sections": []})
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: a curriculum needs at least one section
    """
    if not isinstance(tree, dict) or not isinstance(tree.get("sections"), list):
        raise Invalid("curriculum must be an object {sections: [...]}")
    raw_sections = tree["sections"]
    if not raw_sections:
        raise Invalid("a curriculum needs at least one section")
    if len(raw_sections) > MAX_SECTIONS:
        raise Invalid(f"a curriculum has at most {MAX_SECTIONS} sections")
    sections, seen = [], set()
    for i, raw in enumerate(raw_sections):
        where = f"sections[{i}]"
        if not isinstance(raw, dict) or not isinstance(raw.get("lessons"), list) or not raw["lessons"]:
            raise Invalid(f"{where} must be an object with a non-empty lessons list")
        section_id = raw.get("section_id")
        if not isinstance(section_id, str) or not _ID.fullmatch(section_id):
            raise Invalid(f"{where}.section_id must be 1-40 letters, digits, '_' or '-'")
        lessons = [_lesson(item, f"{where}.lessons[{j}]") for j, item in enumerate(raw["lessons"])]
        for lesson in lessons:
            if lesson["lesson_id"] in seen:
                raise Invalid(f"lesson_id {lesson['lesson_id']!r} appears twice")
            seen.add(lesson["lesson_id"])
        sections.append(
            {
                "section_id": section_id,
                "title": _text(raw.get("title"), f"{where}.title", 160),
                "lessons": lessons,
            }
        )
    if len(seen) > MAX_LESSONS:
        raise Invalid(f"a curriculum has at most {MAX_LESSONS} lessons")
    return {"sections": sections}


def lessons(tree: dict[str, Any]) -> list[dict[str, Any]]:
    """Every lesson of the tree, in order.

    Example:
        >>> tree = {"sections": [{"lessons": [{"lesson_id": "a"}, {"lesson_id": "b"}]}]}
        >>> [item["lesson_id"] for item in lessons(tree)]
        ['a', 'b']
    """
    return [lesson for section in tree["sections"] for lesson in section["lessons"]]


def lesson(tree: dict[str, Any], lesson_id: str) -> dict[str, Any] | None:
    """The lesson ``lesson_id`` of the tree, or None."""
    return next((item for item in lessons(tree) if item["lesson_id"] == lesson_id), None)


def totals(tree: dict[str, Any]) -> tuple[int, int]:
    """(number of lessons, seconds of video)."""
    items = lessons(tree)
    return len(items), sum(int(item.get("duration_seconds", 0)) for item in items)


def public_lesson(item: dict[str, Any], *, unlocked: bool) -> dict[str, Any]:
    """A lesson as clients see it: never its media key or upload; ``locked`` unless previewable or owned."""
    shown = {key: value for key, value in item.items() if key not in ("media_key", "upload_id")}
    shown["locked"] = not (unlocked or item["preview"])
    return shown


def preview(tree: dict[str, Any], *, owned: bool = False) -> dict[str, Any]:
    """The tree with each lesson public: preview lessons (all lessons for an owner) unlocked."""
    return {
        "sections": [
            {
                "section_id": section["section_id"],
                "title": section["title"],
                "lessons": [public_lesson(item, unlocked=owned) for item in section["lessons"]],
            }
            for section in tree["sections"]
        ]
    }
