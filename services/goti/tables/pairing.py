"""Who is paired with whom in a pool: pure decisions over the seekers waiting there.

The rule, after lichess's pools (seekers of a pool paired in waves, the rating gap accepted
widening with the wait; lichess's ``lila`` source, ``modules/pool``): a seeker accepts
opponents within :data:`FIRST_RANGE` rating points at first, :data:`WIDENING_STEP` more
every :data:`WIDENING_EVERY_MS` waited, and anyone once it has waited :data:`ANYONE_AFTER_MS`.
Two seekers may be paired when each is within the other's range.  A round pairs the closest
ratings first (greedily, the longer wait first among equal gaps); two players whose last seeks
paired them together come after every other couple: they meet again at once only when,
the others paired, neither has anyone else left.  Every round ends with nobody free beside a
compatible seeker (the pairing is maximal).

>>> accepted_range(0), accepted_range(12_000), accepted_range(ANYONE_AFTER_MS)
(100, 200, None)
>>> ann, bob = Seeker("ann", 1500.0, 0), Seeker("bob", 1580.0, 0)
>>> [(a.player_id, b.player_id) for a, b in pairs([ann, bob, Seeker("cy", 1900.0, 0)], 0)]
[('ann', 'bob')]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

FIRST_RANGE: Final = 100
"""Rating points either side a seeker accepts as soon as it starts waiting."""
WIDENING_STEP: Final = 50
WIDENING_EVERY_MS: Final = 5_000
ANYONE_AFTER_MS: Final = 60_000
"""From this wait on, a seeker accepts any rating: nobody waits forever in a pool with
someone else in it."""


@dataclass(frozen=True, slots=True)
class Seeker:
    """One player waiting in a pool."""

    player_id: str
    rating: float
    entered_ms: int
    """When its wait began (a resumed seek keeps the time it had waited)."""
    last_opponent: str = ""
    """Whom its last seek paired it with, if anyone."""


def accepted_range(waited_ms: int) -> int | None:
    """The rating points either side a seeker accepts after waiting ``waited_ms``; None for
    any rating."""
    if waited_ms >= ANYONE_AFTER_MS:
        return None
    return FIRST_RANGE + WIDENING_STEP * (max(waited_ms, 0) // WIDENING_EVERY_MS)


def _within(gap: float, accepted: int | None) -> bool:
    return accepted is None or gap <= accepted


def compatible(first: Seeker, second: Seeker, now_ms: int) -> bool:
    """Whether each of two seekers is within the other's range now (never a seeker with
    itself)."""
    if first.player_id == second.player_id:
        return False
    gap = abs(first.rating - second.rating)
    return _within(gap, accepted_range(now_ms - first.entered_ms)) and _within(
        gap, accepted_range(now_ms - second.entered_ms)
    )


def _candidates(seekers: Sequence[Seeker], now_ms: int) -> list[tuple[Seeker, Seeker]]:
    """Every compatible couple, closest ratings first, the longer-waiting first among equals."""
    ordered = sorted(seekers, key=lambda seeker: (seeker.rating, seeker.player_id))
    found: list[tuple[float, int, Seeker, Seeker]] = []
    for index, low in enumerate(ordered):
        low_range = accepted_range(now_ms - low.entered_ms)
        for high in ordered[index + 1 :]:
            gap = high.rating - low.rating
            if not _within(gap, low_range):
                break  # sorted by rating: everyone further up is further away
            if compatible(low, high, now_ms):
                found.append((gap, min(low.entered_ms, high.entered_ms), low, high))
    found.sort(key=lambda couple: (couple[0], couple[1], couple[2].player_id))
    return [(low, high) for _, _, low, high in found]


def _rematch(first: Seeker, second: Seeker) -> bool:
    return first.last_opponent == second.player_id or second.last_opponent == first.player_id


def pairs(seekers: Sequence[Seeker], now_ms: int) -> list[tuple[Seeker, Seeker]]:
    """The couples to pair in one round, each seeker in at most one, closest first.

    A seeker listed twice counts once.  Couples who just played each other come last: they
    are paired only when, the other couples made, neither has anyone else left.
    """
    unique = list({seeker.player_id: seeker for seeker in seekers}.values())
    candidates = _candidates(unique, now_ms)
    taken: set[str] = set()
    chosen: list[tuple[Seeker, Seeker]] = []
    for allow_rematch in (False, True):
        for first, second in candidates:
            if first.player_id in taken or second.player_id in taken:
                continue
            if _rematch(first, second) and not allow_rematch:
                continue
            taken.update((first.player_id, second.player_id))
            chosen.append((first, second))
    return chosen
