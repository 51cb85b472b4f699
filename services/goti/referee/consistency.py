"""The checks a game state must pass before the referee acts on it, beyond the cheap ones.

:meth:`Game.from_state` (run by :func:`goti.api.convert.game_state_from_proto`) checks what
costs nothing: counters, clocks, draw offers.  The referee also needs the outcome to agree
with the position — a game the rules have ended must say so, and a game said to be over must
be over for a reason the rules give — and the repetition window to hold only positions that
quiet moves could connect.  :func:`check_game` does both, for the price of generating the
legal moves of the current position, which every call needs anyway and the position caches.

Replaying the move list is the one expensive check; :func:`replay` does it only for the
actions that read the moves (taking back, writing PDN), never on the way to a move.

Errors are :class:`InvalidGameStateError` whose ``field`` is the wire path of the culprit
(``state.outcome``), under the ``field`` the caller names.

>>> from goti.rules.game import Game
>>> game = Game()
>>> _ = game.play("11-15")
>>> check_game(game)
>>> replay(game.state()).moves
('11-15',)
"""

from __future__ import annotations

from typing import Final

from goti.rules.game import (
    MOVE_LIMIT_PLIES,
    REPETITION_DRAW_COUNT,
    Game,
    GameState,
    InvalidGameStateError,
    Outcome,
    Termination,
    position_key,
)

DECIDED_BY_PLAYERS: Final = frozenset({Termination.RESIGNATION, Termination.AGREEMENT})
"""Endings that come from a player's action rather than from the position."""

MAX_PLIES: Final = 16_000
"""More plies than any game can last.  Between two captures or man moves come at most 80
quiet plies, and a game has at most 192 of those: 24 men advance at most 7 rows each, and at
most 24 pieces are taken.  A longer move list is forged, and replaying it would only waste
time."""


def outcome_by_rule(state: GameState) -> Outcome | None:
    """How the rules end the game in this state by themselves; None when it goes on."""
    position = state.position
    if not position.pieces(position.turn):
        return Outcome(Termination.NO_PIECES, position.turn.opponent)
    if not position.legal_moves:
        return Outcome(Termination.NO_MOVES, position.turn.opponent)
    if state.repetition.count(position_key(position)) >= REPETITION_DRAW_COUNT:
        return Outcome(Termination.THREEFOLD_REPETITION, None)
    if state.quiet_plies >= MOVE_LIMIT_PLIES:
        return Outcome(Termination.MOVE_LIMIT, None)
    return None


def check_game(game: Game, *, field: str = "state") -> None:
    """Raise :class:`InvalidGameStateError` unless the game's outcome agrees with its
    position and its repetition window could have been played."""
    state = game.state()
    if state.ply > MAX_PLIES:
        raise InvalidGameStateError(
            f"{field}.moves has {state.ply} moves: no game lasts more than {MAX_PLIES} plies",
            field=f"{field}.moves",
        )
    _check_quiet_window(state, field)
    by_rule = outcome_by_rule(state)
    outcome = state.outcome
    if outcome is None:
        if by_rule is not None:
            raise InvalidGameStateError(
                f"{field}.outcome is unset, but the rules have ended this game "
                f"({by_rule.termination.name})",
                field=f"{field}.outcome",
            )
        return
    if outcome.termination in DECIDED_BY_PLAYERS:
        if by_rule is not None:
            raise InvalidGameStateError(
                f"{field}.outcome: the game ended by {by_rule.termination.name} before anyone "
                f"could end it by {outcome.termination.name}",
                field=f"{field}.outcome.termination",
            )
        turn = state.position.turn
        if outcome.termination is Termination.RESIGNATION and outcome.winner is not turn.opponent:
            raise InvalidGameStateError(
                f"{field}.outcome: only the side to move ({turn.value}) can have resigned",
                field=f"{field}.outcome.winner",
            )
        return
    if outcome != by_rule:
        found = "nothing" if by_rule is None else by_rule.termination.name
        raise InvalidGameStateError(
            f"{field}.outcome is {outcome.termination.name}, but the rules find {found} here",
            field=f"{field}.outcome.termination",
        )


def _check_quiet_window(state: GameState, field: str) -> None:
    # Between a capture or man move and now only kings moved: the same men stood on the same
    # squares and each side had as many kings.
    white, black, kings, _ = state.repetition[-1]
    men = (white & ~kings, black & ~kings)
    counts = (white.bit_count(), black.bit_count())
    for index, (white_then, black_then, kings_then, _) in enumerate(state.repetition[:-1]):
        if (white_then & ~kings_then, black_then & ~kings_then) != men or (
            white_then.bit_count(),
            black_then.bit_count(),
        ) != counts:
            raise InvalidGameStateError(
                f"{field}.repetition[{index}] cannot lead to the current position by king "
                "moves alone (its men or piece counts differ)",
                field=f"{field}.repetition[{index}]",
            )


def replay(state: GameState, *, field: str = "state") -> Game:
    """The game replayed from its start through its move list, checked against ``state``.

    Every move must be legal in turn and written as Goti writes it, and the replay must
    arrive at the state's position, clocks and counts.  The replayed game knows nothing of
    draw offers, which the move list does not record.
    """
    game = Game(state.variant, start=state.start)
    for index, text in enumerate(state.moves):
        where = f"{field}.moves[{index}]"
        try:
            record = game.play(text)
        except ValueError as error:
            raise InvalidGameStateError(
                f"{where}: {text!r} cannot be played: {error}", field=where
            ) from None
        if record.notation != text:
            raise InvalidGameStateError(
                f"{where}: {text!r} is written {record.notation!r} in full", field=where
            )
    replayed = game.state()
    comparisons = (
        (replayed.position == state.position, "position"),
        (replayed.quiet_plies == state.quiet_plies, "quiet_plies"),
        (replayed.repetition == state.repetition, "repetition"),
        (replayed.captured[0] == state.captured[0], "captured_by_white"),
        (replayed.captured[1] == state.captured[1], "captured_by_black"),
    )
    for agrees, name in comparisons:
        if not agrees:
            raise InvalidGameStateError(
                f"{field}.{name} is not what the moves played lead to", field=f"{field}.{name}"
            )
    if replayed.outcome is not None and replayed.outcome != state.outcome:
        raise InvalidGameStateError(
            f"{field}.outcome: the moves played end the game by "
            f"{replayed.outcome.termination.name}",
            field=f"{field}.outcome",
        )
    return game
