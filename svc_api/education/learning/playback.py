"""Watched time from playback events, decided by the server alone.

A batch of events moves a play head. ``heartbeat`` and ``pause`` report where the head is; the
stretch from the previous head to that point counts as watched, ``seek`` moves the head and counts
nothing, ``rate`` changes the playback rate (0.25-2.0). Whatever the events claim, one batch credits
at most the wall-clock seconds since the previous batch times the highest rate in effect during it
(the *budget*); the head never counts backwards, and stretches are clipped to the lesson. The
wall clock is the student's, not the session's: a batch's seconds start at the latest batch of any
of the student's sessions of the lesson, so parallel sessions share one budget
(:func:`svc_api.education.learning.sessions.events`). Watched
stretches are kept as merged intervals, so watching a part twice counts once. A lesson is complete
when :data:`COMPLETION_SHARE` of it has been watched. Percentages sent by clients are never read.

Example:
    >>> batch = [{"type": "heartbeat", "position": 30}, {"type": "seek", "position": 500},
    ...          {"type": "heartbeat", "position": 520}]
    >>> result = account(batch, position=0.0, rate=1.0, elapsed=40.0, duration=600.0)
    >>> result.intervals, result.position
    ([(0.0, 30.0), (500.0, 510.0)], 520.0)
    >>> merge([(0, 10), (5, 20), (30, 40)]), watched([(0, 10), (5, 20)])
    ([(0, 20), (30, 40)], 20)
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from svc_api.core.errors import Invalid

KINDS = ("heartbeat", "seek", "pause", "rate")
FIELDS = {"heartbeat": "position", "seek": "position", "pause": "position", "rate": "rate"}
"""The one field of each event type besides ``type``: anything else (``percent``) is a 400."""
MIN_RATE, MAX_RATE = 0.25, 2.0
MAX_EVENTS = 200
COMPLETION_SHARE = 0.9
"""Share of a video lesson that must have been watched for it to count as complete."""

Interval = tuple[float, float]


@dataclass(frozen=True)
class Batch:
    """What one batch did: where the head and rate ended, and the newly watched stretches."""

    position: float
    rate: float
    intervals: list[Interval]


def _number(event: dict[str, Any], name: str, index: int) -> float:
    value = event.get(name)
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise Invalid(f"events[{index}].{name} must be a finite number")
    return float(value)


def check_events(events: object) -> list[dict[str, Any]]:
    """The events of a batch, validated: a list of 1-200 objects of a known type with their fields
    (400 naming the first broken one).

    Example:
        >>> check_events([{"type": "jump", "position": 1}])
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: events[0].type must be one of heartbeat, seek, pause, rate
    """
    if not isinstance(events, list) or not 1 <= len(events) <= MAX_EVENTS:
        raise Invalid(f"events must be a list of 1-{MAX_EVENTS} events")
    checked = []
    for i, event in enumerate(events):
        if not isinstance(event, dict) or event.get("type") not in KINDS:
            raise Invalid(f"events[{i}].type must be one of {', '.join(KINDS)}")
        unknown = sorted(set(event) - {"type", FIELDS[event["type"]]})
        if unknown:
            raise Invalid(
                f"events[{i}] has the unknown field {unknown[0]!r}: a {event['type']} event takes "
                f"type and {FIELDS[event['type']]} only"
            )
        if event["type"] == "rate":
            rate = _number(event, "rate", i)
            if not MIN_RATE <= rate <= MAX_RATE:
                raise Invalid(f"events[{i}].rate must be between {MIN_RATE} and {MAX_RATE}")
            checked.append({"type": "rate", "rate": rate})
        else:
            position = _number(event, "position", i)
            if position < 0:
                raise Invalid(f"events[{i}].position must be at least 0")
            checked.append({"type": event["type"], "position": position})
    return checked


def account(
    events: Sequence[dict[str, Any]], *, position: float, rate: float, elapsed: float, duration: float
) -> Batch:
    """Apply one validated batch (see the module docstring); ``elapsed``: wall-clock seconds since
    the previous batch (or the session's start)."""
    peak = max([rate, *(e["rate"] for e in events if e["type"] == "rate")])
    budget = max(0.0, elapsed) * peak
    head, intervals = min(position, duration), []
    for event in events:
        if event["type"] == "rate":
            rate = event["rate"]
            continue
        target = min(float(event["position"]), duration)
        if event["type"] != "seek" and target > head and budget > 0:
            stretch = min(target - head, budget)
            intervals.append((head, head + stretch))
            budget -= stretch
        head = target
    return Batch(head, rate, intervals)


def merge(intervals: Iterable[Sequence[float]]) -> list[Interval]:
    """Overlapping or touching intervals joined, in order."""
    out: list[list[float]] = []
    for start, end in sorted((a, b) for a, b in intervals):
        if end <= start:
            continue
        if out and start <= out[-1][1]:
            out[-1][1] = max(out[-1][1], end)
        else:
            out.append([start, end])
    return [(a, b) for a, b in out]


def watched(intervals: Iterable[Sequence[float]]) -> float:
    """Seconds covered by the intervals, overlaps once."""
    return sum(b - a for a, b in merge(intervals))


def complete(watched_seconds: float, duration: float) -> bool:
    """Whether enough of a video lesson has been watched."""
    return duration > 0 and watched_seconds >= COMPLETION_SHARE * duration - 1e-9
