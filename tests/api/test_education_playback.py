"""Watched time is the server's: a property test over crafted event streams, and progress carried
over a revision adoption."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from svc_api.education.learning import playback

DURATION = 600.0

_event = st.one_of(
    st.fixed_dictionaries(
        {
            "type": st.sampled_from(["heartbeat", "pause", "seek"]),
            "position": st.floats(0, 5_000, allow_nan=False),
        }
    ),
    st.fixed_dictionaries({"type": st.just("rate"), "rate": st.floats(playback.MIN_RATE, playback.MAX_RATE)}),
)
_batch = st.tuples(st.floats(0, 120, allow_nan=False), st.lists(_event, min_size=1, max_size=30))


@settings(max_examples=400, deadline=None)
@given(st.lists(_batch, min_size=1, max_size=25))
def test_no_event_stream_yields_more_watched_time_than_the_wall_clock_allows(batches: list) -> None:
    position, rate, watched, wall = 0.0, 1.0, [], 0.0
    for elapsed, events in batches:
        checked = playback.check_events(events)
        batch = playback.account(checked, position=position, rate=rate, elapsed=elapsed, duration=DURATION)
        position, rate = batch.position, batch.rate
        watched.extend(batch.intervals)
        wall += elapsed
        assert all(0 <= a <= b <= DURATION for a, b in batch.intervals)
    assert playback.watched(watched) <= wall * playback.MAX_RATE + 1e-6
    assert playback.watched(watched) <= DURATION + 1e-9


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.tuples(st.floats(0, 3_600, allow_nan=False), st.floats(0, 5_000, allow_nan=False)),
        min_size=1,
        max_size=40,
    )
)
def test_seeks_alone_never_complete_a_lesson(seeks: list) -> None:
    position, watched = 0.0, []
    for elapsed, target in seeks:
        batch = playback.account(
            [{"type": "seek", "position": target}],
            position=position,
            rate=1.0,
            elapsed=elapsed,
            duration=DURATION,
        )
        position = batch.position
        watched.extend(batch.intervals)
    assert watched == [] and not playback.complete(playback.watched(watched), DURATION)


def test_a_batch_credits_at_most_elapsed_times_rate_and_overlaps_count_once() -> None:
    fast = playback.account(
        [{"type": "rate", "rate": 2.0}, {"type": "heartbeat", "position": 500.0}],
        position=0.0,
        rate=1.0,
        elapsed=30.0,
        duration=DURATION,
    )
    assert fast.intervals == [(0.0, 60.0)] and fast.rate == 2.0
    again = playback.account(
        [{"type": "seek", "position": 10.0}, {"type": "heartbeat", "position": 40.0}],
        position=60.0,
        rate=1.0,
        elapsed=30.0,
        duration=DURATION,
    )
    assert playback.watched([*fast.intervals, *again.intervals]) == 60.0
    assert playback.complete(540.0, DURATION) and not playback.complete(539.9, DURATION)
