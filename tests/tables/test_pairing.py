"""The pairing rule, pure: the widening range, closest ratings first, nobody with themself,
nobody left free beside a compatible seeker, rematches last."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from goti.tables.pairing import (
    ANYONE_AFTER_MS,
    Seeker,
    accepted_range,
    compatible,
    pairs,
)


def test_the_range_starts_at_a_hundred_and_widens_by_fifty_every_five_seconds() -> None:
    assert [accepted_range(ms) for ms in (0, 4_999, 5_000, 10_000, 55_000, 59_999)] == [
        100,
        100,
        150,
        200,
        650,
        650,
    ]
    assert accepted_range(ANYONE_AFTER_MS) is None
    assert accepted_range(10 * ANYONE_AFTER_MS) is None


def test_each_must_be_within_the_others_range() -> None:
    patient = Seeker("patient", 1500.0, entered_ms=0)
    eager = Seeker("eager", 1700.0, entered_ms=30_000)
    # At 30 s the patient one accepts 400 points, the eager one (just arrived) 100.
    assert not compatible(patient, eager, 30_000)
    # Twenty seconds on the eager one accepts 300 too.
    assert compatible(patient, eager, 50_000)


def test_the_closest_ratings_are_paired_first() -> None:
    seekers = [Seeker("a", 1500.0, 0), Seeker("b", 1560.0, 0), Seeker("c", 1580.0, 0)]
    assert [(x.player_id, y.player_id) for x, y in pairs(seekers, 0)] == [("b", "c")]


def test_the_last_opponents_meet_again_only_when_nobody_else_is_left_for_them() -> None:
    ann = Seeker("ann", 1500.0, 0, last_opponent="bob")
    bob = Seeker("bob", 1500.0, 0, last_opponent="ann")
    cy = Seeker("cy", 1540.0, 0)
    # Ann and Bob are closest, but Cy is free for Ann: Bob waits.
    assert [(x.player_id, y.player_id) for x, y in pairs([ann, bob, cy], 0)] == [("ann", "cy")]
    # With nobody else they meet again.
    assert [(x.player_id, y.player_id) for x, y in pairs([ann, bob], 0)] == [("ann", "bob")]


def test_a_seeker_listed_twice_is_never_paired_with_itself() -> None:
    ann = Seeker("ann", 1500.0, 0)
    assert pairs([ann, ann], 0) == []


seekers_lists = st.lists(
    st.builds(
        Seeker,
        player_id=st.sampled_from([f"p{index}" for index in range(30)]),
        rating=st.floats(800, 2400),
        entered_ms=st.integers(0, 90_000),
        last_opponent=st.sampled_from(["", "p1", "p2", "p3"]),
    ),
    max_size=40,
)


@given(seekers_lists, st.integers(90_000, 100_000))
def test_every_round_pairs_each_at_most_once_within_the_rule_and_leaves_none_compatible(
    seekers: list[Seeker], now_ms: int
) -> None:
    chosen = pairs(seekers, now_ms)
    paired = [seeker.player_id for couple in chosen for seeker in couple]
    assert len(paired) == len(set(paired))
    for first, second in chosen:
        assert first.player_id != second.player_id
        assert compatible(first, second, now_ms)
    unique = {seeker.player_id: seeker for seeker in seekers}
    free = [seeker for seeker in unique.values() if seeker.player_id not in paired]
    for index, first in enumerate(free):
        for second in free[index + 1 :]:
            assert not compatible(first, second, now_ms)
