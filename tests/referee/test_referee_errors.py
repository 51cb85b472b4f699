"""Every way a call to the referee can be refused, through a real server: the status code, the
ErrorInfo reason, and its metadata (the field at fault, the legal moves, the moves to wait)."""

from __future__ import annotations

import grpc

from goti.api.error_status import ErrorStatus
from goti.api.v1 import game_pb2, referee_pb2
from goti.rules.color import Color
from goti.rules.game import Game
from goti.rules.variants import RUSSIAN

from .referee_calls import CALL_TIMEOUT, Referee, game_after, refusal, state_of

INVALID = grpc.StatusCode.INVALID_ARGUMENT
PRECONDITION = grpc.StatusCode.FAILED_PRECONDITION


def apply(
    state: game_pb2.GameState | None = None,
    *,
    side: int = game_pb2.COLOR_UNSPECIFIED,
    notation: str | None = None,
    path: list[int] | None = None,
    action: int | None = None,
) -> referee_pb2.ApplyRequest:
    # Any number, as a client may send one: ValueType is int at run time.
    request = referee_pb2.ApplyRequest(side=game_pb2.Color.ValueType(side))
    if state is not None:
        request.state.CopyFrom(state)
    if notation is not None:
        request.move_notation = notation
    if path is not None:
        request.move_path.squares.extend(path)
    if action is not None:
        request.game_action = referee_pb2.GameAction.ValueType(action)
    return request


# -- illegal moves ------------------------------------------------------------------------


async def test_an_illegal_move_lists_the_legal_ones(referee: Referee) -> None:
    game = Game()
    for request in (apply(state_of(game), notation="11-18"), apply(state_of(game), path=[11, 18])):
        status = await refusal(referee.Apply(request, timeout=CALL_TIMEOUT))
        assert (status.code, status.reason) == (INVALID, "ILLEGAL_MOVE")
        legal = [game.notation(move) for move in game.legal_moves]
        assert status.metadata == {"legalMoves": ",".join(legal)}


async def test_a_missed_capture_says_capture_required(referee: Referee) -> None:
    game = game_after([], fen="B:W18:B1,14")
    status = await refusal(referee.Apply(apply(state_of(game), path=[1, 5]), timeout=CALL_TIMEOUT))
    assert (status.code, status.reason) == (INVALID, "CAPTURE_REQUIRED")
    assert status.metadata == {"legalMoves": "14x23"}


async def test_a_capture_stopped_short_says_incomplete(referee: Referee) -> None:
    game = game_after([], RUSSIAN, fen="B:W6,14:B1")
    status = await refusal(
        referee.Apply(apply(state_of(game), notation="b8:d6"), timeout=CALL_TIMEOUT)
    )
    assert (status.code, status.reason) == (INVALID, "INCOMPLETE_CAPTURE")
    assert status.metadata == {"legalMoves": "b8:d6:b4"}


async def test_a_long_list_of_legal_moves_comes_whole_in_the_metadata(referee: Referee) -> None:
    # Flying kings with 86 capture orders: over 2,000 characters of legal moves.
    game = game_after(
        [], RUSSIAN, fen="W:WKb8,Kh8,Ka7,Ka3,Kh2,Kc1,Kg1:Bc7,e7,e5,c3,e3,g3,Kg7,Kc5,Kg5"
    )
    legal = ",".join(game.notation(move) for move in game.legal_moves)
    assert len(legal) > 2000
    status = await refusal(
        referee.Apply(apply(state_of(game), notation="b8-a7"), timeout=CALL_TIMEOUT)
    )
    assert (status.code, status.reason) == (INVALID, "CAPTURE_REQUIRED")
    assert status.metadata == {"legalMoves": legal}
    # The message, for people, is cut short to keep the trailers within what clients accept.
    assert len(status.message) <= 400
    assert status.message.endswith("…")


async def test_a_short_capture_that_fits_two_moves_lists_both(referee: Referee) -> None:
    game = game_after([], fen="W:WK30:B17,18,25,26")
    for request in (apply(state_of(game), notation="30x30"), apply(state_of(game), path=[30, 30])):
        status = await refusal(referee.Apply(request, timeout=CALL_TIMEOUT))
        assert (status.code, status.reason) == (INVALID, "AMBIGUOUS_MOVE")
        assert set(status.metadata["candidates"].split(",")) == {
            "30x23x14x21x30",
            "30x21x14x23x30",
        }


async def test_what_is_not_a_move_at_all_names_the_field(referee: Referee) -> None:
    state = state_of(Game())
    cases = [
        (apply(state, notation="hello"), "move_notation"),
        (apply(state, notation=""), "move_notation"),
        (apply(state, notation="11-33"), "move_notation"),
        # Arabic-Indic digits: decimal digits to Python, but no squares.
        (apply(state, notation="\u0661\u0661-\u0661\u0665"), "move_notation"),
        (apply(state, path=[11]), "move_path.squares"),
        (apply(state, path=[]), "move_path.squares"),
        (apply(state, path=[11, 0]), "move_path.squares"),
        (apply(state, path=[11, 2**32 - 1]), "move_path.squares"),
        (apply(state, path=[11, 15] * 7), "move_path.squares"),
    ]
    for request, field in cases:
        status = await refusal(referee.Apply(request, timeout=CALL_TIMEOUT))
        assert (status.code, status.reason, status.metadata) == (
            INVALID,
            "INVALID_MOVE",
            {"field": field},
        ), request


async def test_move_text_over_64_bytes_is_too_large(referee: Referee) -> None:
    # 33 characters of 2 bytes each: short enough in characters, too long in bytes.
    for text in ["11-15" + " " * 60, "\u0661" * 33]:
        status = await refusal(
            referee.Apply(apply(state_of(Game()), notation=text), timeout=CALL_TIMEOUT)
        )
        assert (status.code, status.reason) == (INVALID, "REQUEST_TOO_LARGE")
        assert status.metadata == {"field": "move_notation", "limit": "64"}


# -- turns, the end of the game, draw offers, take-backs ---------------------------------


async def test_acting_out_of_turn(referee: Referee) -> None:
    state = state_of(Game())
    for request in (
        apply(state, side=game_pb2.COLOR_WHITE, notation="22-18"),
        apply(state, side=game_pb2.COLOR_WHITE, action=referee_pb2.GAME_ACTION_RESIGN),
        apply(state, side=game_pb2.COLOR_WHITE, action=referee_pb2.GAME_ACTION_OFFER_DRAW),
    ):
        status = await refusal(referee.Apply(request, timeout=CALL_TIMEOUT))
        assert (status.code, status.reason, status.metadata) == (PRECONDITION, "NOT_YOUR_TURN", {})


async def test_acting_after_the_end(referee: Referee) -> None:
    game = game_after(["11-15", "23-19"])
    game.resign(Color.BLACK)
    state = state_of(game)
    for request in (
        apply(state, notation="8-11"),
        apply(state, side=game_pb2.COLOR_BLACK, path=[8, 11]),
        apply(state, side=game_pb2.COLOR_BLACK, action=referee_pb2.GAME_ACTION_RESIGN),
        apply(state, side=game_pb2.COLOR_WHITE, action=referee_pb2.GAME_ACTION_TAKE_BACK),
        apply(state, side=game_pb2.COLOR_BLACK, action=referee_pb2.GAME_ACTION_OFFER_DRAW),
    ):
        status = await refusal(referee.Apply(request, timeout=CALL_TIMEOUT))
        assert (status.code, status.reason) == (PRECONDITION, "GAME_OVER")


async def test_a_draw_offer_too_soon_says_how_many_moves_to_wait(referee: Referee) -> None:
    game = game_after(["11-15", "23-19", "8-11"])
    game.offer_draw(Color.WHITE)
    game.play("22-17")
    game.decline_draw(Color.BLACK)
    game.play("9-13")
    status = await refusal(
        referee.Apply(
            apply(
                state_of(game), side=game_pb2.COLOR_WHITE, action=referee_pb2.GAME_ACTION_OFFER_DRAW
            ),
            timeout=CALL_TIMEOUT,
        )
    )
    assert (status.code, status.reason) == (PRECONDITION, "DRAW_OFFER_TOO_SOON")
    assert status.metadata == {"movesToWait": "4"}


async def test_the_other_draw_offer_refusals(referee: Referee) -> None:
    offer, accept, decline = (
        referee_pb2.GAME_ACTION_OFFER_DRAW,
        referee_pb2.GAME_ACTION_ACCEPT_DRAW,
        referee_pb2.GAME_ACTION_DECLINE_DRAW,
    )
    black, white = game_pb2.COLOR_BLACK, game_pb2.COLOR_WHITE
    opening = game_after(["11-15"])
    offered = game_after(["11-15", "23-19", "8-11"])
    offered.offer_draw(Color.WHITE)
    answered = game_after(["11-15", "23-19", "8-11"])
    answered.offer_draw(Color.WHITE)
    answered.play("22-17")
    cases = [
        (apply(state_of(opening), side=white, action=offer), "DRAW_OFFER_BEFORE_BOTH_MOVED"),
        (apply(state_of(offered), side=white, action=offer), "DRAW_ALREADY_OFFERED"),
        (apply(state_of(offered), side=white, action=accept), "NO_DRAW_OFFER"),
        (apply(state_of(answered), side=black, action=offer), "DRAW_OFFER_PENDING"),
        (apply(state_of(opening), side=white, action=accept), "NO_DRAW_OFFER"),
        (apply(state_of(opening), side=white, action=decline), "NO_DRAW_OFFER"),
    ]
    for request, reason in cases:
        status = await refusal(referee.Apply(request, timeout=CALL_TIMEOUT))
        assert (status.code, status.reason, status.metadata) == (PRECONDITION, reason, {})


async def test_nothing_to_take_back(referee: Referee) -> None:
    take_back = referee_pb2.GAME_ACTION_TAKE_BACK
    for game, side in [
        (Game(), game_pb2.COLOR_BLACK),
        (game_after(["11-15"]), game_pb2.COLOR_WHITE),
        (game_after(["22-18"], fen="W:W21-32:B1-12"), game_pb2.COLOR_BLACK),
    ]:
        status = await refusal(
            referee.Apply(apply(state_of(game), side=side, action=take_back), timeout=CALL_TIMEOUT)
        )
        assert (status.code, status.reason) == (PRECONDITION, "NOTHING_TO_TAKE_BACK")


# -- malformed requests -------------------------------------------------------------------


async def test_a_request_without_what_it_needs_names_the_field(referee: Referee) -> None:
    state = state_of(Game())
    cases = [
        (apply(None, notation="11-15"), "state"),
        (apply(state), "action"),
        (apply(state, action=referee_pb2.GAME_ACTION_RESIGN), "side"),
        (apply(state, side=7, notation="11-15"), "side"),
        (apply(state, side=-1, action=referee_pb2.GAME_ACTION_RESIGN), "side"),
        (apply(state, side=game_pb2.COLOR_BLACK, action=0), "game_action"),
        (apply(state, side=game_pb2.COLOR_BLACK, action=99), "game_action"),
    ]
    for request, field in cases:
        status = await refusal(referee.Apply(request, timeout=CALL_TIMEOUT))
        assert (status.code, status.reason, status.metadata) == (
            INVALID,
            "INVALID_REQUEST",
            {"field": field},
        ), request
    for call in (
        referee.DescribeGame(referee_pb2.DescribeGameRequest(), timeout=CALL_TIMEOUT),
        referee.ListLegalMoves(referee_pb2.ListLegalMovesRequest(), timeout=CALL_TIMEOUT),
        referee.ExportPdn(referee_pb2.ExportPdnRequest(), timeout=CALL_TIMEOUT),
    ):
        status = await refusal(call)
        assert (status.reason, status.metadata) == ("INVALID_REQUEST", {"field": "state"})


async def test_bytes_that_are_no_request_are_refused(channel: grpc.aio.Channel) -> None:
    for method in ("StartGame", "DescribeGame", "ListLegalMoves", "Apply", "ExportPdn"):
        call: grpc.aio.UnaryUnaryMultiCallable[bytes, bytes] = channel.unary_unary(
            f"/goti.api.v1.RefereeService/{method}"
        )
        status = await refusal(call(b"\xff\xff\xff", timeout=CALL_TIMEOUT))
        assert (status.code, status.reason, status.metadata) == (
            INVALID,
            "INVALID_REQUEST",
            {"field": ""},
        )
        assert f"goti.api.v1.{method}Request" in status.message


async def test_a_bad_start(referee: Referee) -> None:
    status = await refusal(
        referee.StartGame(referee_pb2.StartGameRequest(fen="W:W40:B1"), timeout=CALL_TIMEOUT)
    )
    assert (status.code, status.reason) == (INVALID, "INVALID_FEN")
    assert status.metadata == {"field": "fen", "token": "40"}

    status = await refusal(
        referee.StartGame(referee_pb2.StartGameRequest(fen="W:W²:B1"), timeout=CALL_TIMEOUT)
    )
    assert (status.reason, status.metadata["token"]) == ("INVALID_FEN", "²")

    status = await refusal(
        referee.StartGame(
            referee_pb2.StartGameRequest(fen="W:W1-32" + " " * 250), timeout=CALL_TIMEOUT
        )
    )
    assert (status.code, status.reason) == (INVALID, "REQUEST_TOO_LARGE")
    assert status.metadata == {"field": "fen", "limit": "256"}

    status = await refusal(
        referee.StartGame(
            referee_pb2.StartGameRequest(variant=game_pb2.Variant.ValueType(3)),
            timeout=CALL_TIMEOUT,
        )
    )
    assert (status.reason, status.metadata) == ("INVALID_REQUEST", {"field": "variant"})


# -- game states the rules could not have produced ----------------------------------------


async def state_refusal(referee: Referee, state: game_pb2.GameState) -> ErrorStatus:
    """The status of every RPC that takes a state, which must be the same for all four."""
    statuses = [
        await refusal(call)
        for call in (
            referee.Apply(apply(state, side=game_pb2.COLOR_BLACK, action=2), timeout=CALL_TIMEOUT),
            referee.DescribeGame(
                referee_pb2.DescribeGameRequest(state=state), timeout=CALL_TIMEOUT
            ),
            referee.ListLegalMoves(
                referee_pb2.ListLegalMovesRequest(state=state), timeout=CALL_TIMEOUT
            ),
            referee.ExportPdn(referee_pb2.ExportPdnRequest(state=state), timeout=CALL_TIMEOUT),
        )
    ]
    assert all(status == statuses[0] for status in statuses), statuses
    assert statuses[0].code is INVALID
    return statuses[0]


async def test_malformed_and_impossible_states_name_the_field(referee: Referee) -> None:
    game = game_after(["11-15", "23-19", "8-11", "22-17"])
    good = state_of(game)

    def changed(**fields: object) -> game_pb2.GameState:
        state = game_pb2.GameState()
        state.CopyFrom(good)
        for name, value in fields.items():
            target: object = state
            *parents, last = name.split("__")
            for parent in parents:
                target = getattr(target, parent)
            setattr(target, last, value)
        return state

    missing_position = game_pb2.GameState()
    missing_position.CopyFrom(good)
    missing_position.ClearField("position")
    cases = [
        (changed(variant=0), "state.variant"),
        (changed(variant=9), "state.variant"),
        (missing_position, "state.position"),
        (changed(position__turn=0), "state.position.turn"),
        (changed(position__turn=game_pb2.COLOR_WHITE), "state.position"),
        (changed(position__kings=1 << 13), "state.position.kings"),
        (changed(position__black=good.position.black | (1 << 31)), "state.position.black"),
        # Squares 13, 14, 16 and 18 are empty: sixteen black pieces.
        (changed(position__black=good.position.black | 0x2B000), "state.position.black"),
        (changed(captured_by_white=3), "state.captured_by_white"),
        (changed(captured_by_black=12), "state.captured_by_black"),
        (changed(quiet_plies=9), "state.quiet_plies"),
        (changed(quiet_plies=1), "state.repetition"),
        (changed(draw_offer=game_pb2.COLOR_WHITE), "state.draw_offer"),
        (changed(black_last_offer_ply=50), "state.black_last_offer_ply"),
        (changed(outcome__termination=9), "state.outcome.termination"),
        (
            changed(outcome__termination=game_pb2.TERMINATION_AGREEMENT, outcome__winner=1),
            "state.outcome.winner",
        ),
    ]
    for state, field in cases:
        status = await state_refusal(referee, state)
        assert (status.reason, status.metadata) == ("INVALID_GAME_STATE", {"field": field}), (
            field,
            status,
        )


async def test_an_outcome_that_disagrees_with_the_position_is_refused(referee: Referee) -> None:
    def with_outcome(
        game: Game, termination: game_pb2.Termination.ValueType, winner: int
    ) -> game_pb2.GameState:
        state = state_of(game)
        state.outcome.CopyFrom(
            game_pb2.Outcome(termination=termination, winner=game_pb2.Color.ValueType(winner))
        )
        return state

    over = game_after([], fen="W:W:B1")
    unfinished_but_over = state_of(over)
    unfinished_but_over.ClearField("outcome")
    blocked = game_after([], fen="W:W29:B25,22")
    stalled = state_of(blocked)
    stalled.ClearField("outcome")
    opening = game_after(["11-15"])
    cases = [
        (unfinished_but_over, "state.outcome"),
        (stalled, "state.outcome"),
        (
            with_outcome(opening, game_pb2.TERMINATION_NO_PIECES, game_pb2.COLOR_BLACK),
            "state.outcome.termination",
        ),
        (
            with_outcome(opening, game_pb2.TERMINATION_THREEFOLD_REPETITION, 0),
            "state.outcome.termination",
        ),
        (
            with_outcome(opening, game_pb2.TERMINATION_RESIGNATION, game_pb2.COLOR_WHITE),
            "state.outcome.winner",
        ),
        (
            with_outcome(over, game_pb2.TERMINATION_RESIGNATION, game_pb2.COLOR_BLACK),
            "state.outcome.termination",
        ),
    ]
    for state, field in cases:
        status = await state_refusal(referee, state)
        assert (status.reason, status.metadata) == ("INVALID_GAME_STATE", {"field": field}), (
            field,
            status,
        )


async def test_a_repetition_window_no_king_moves_could_make_is_refused(referee: Referee) -> None:
    game = game_after(["29-25", "4-8", "25-29"], fen="W:WK29,22:BK4,10")
    state = state_of(game)
    assert len(state.repetition) == 3
    # The white man moves from 22 to 18 in the middle of the window and back again.
    state.repetition[1].white ^= 1 << 21 | 1 << 17
    status = await state_refusal(referee, state)
    assert (status.reason, status.metadata) == (
        "INVALID_GAME_STATE",
        {"field": "state.repetition[1]"},
    )


async def test_a_move_list_that_does_not_lead_to_the_position_is_refused_where_it_is_read(
    referee: Referee,
) -> None:
    game = game_after(["11-15", "23-19", "8-11", "22-17"])
    take_back = apply(side=game_pb2.COLOR_BLACK, action=referee_pb2.GAME_ACTION_TAKE_BACK)
    cases = [
        (["11-15", "23-19", "8-11", "22-18"], "state.position"),
        (["11-15", "23-19", "8-12", "22-17"], "state.moves[2]"),
        (["11-15", "23-19", "hello", "22-17"], "state.moves[2]"),
        (["11-15", "23x19", "8-11", "22-17"], "state.moves[1]"),
        (["f6-e5", "23-19", "8-11", "22-17"], "state.moves[0]"),
    ]
    for moves, field in cases:
        state = state_of(game)
        del state.moves[:]
        state.moves.extend(moves)
        take_back.state.CopyFrom(state)
        for call in (
            referee.Apply(take_back, timeout=CALL_TIMEOUT),
            referee.ExportPdn(referee_pb2.ExportPdnRequest(state=state), timeout=CALL_TIMEOUT),
        ):
            status = await refusal(call)
            assert (status.reason, status.metadata) == (
                "INVALID_GAME_STATE",
                {"field": field},
            ), moves


async def test_a_move_list_longer_than_any_game_is_refused(referee: Referee) -> None:
    game = game_after(["11-15", "23-19", "8-11", "22-17"])
    state = state_of(game)
    # 16,002 plies bring Black back to move, so that only the length is wrong.
    state.moves.extend(["22-17"] * 15_998)
    status = await state_refusal(referee, state)
    assert (status.reason, status.metadata) == ("INVALID_GAME_STATE", {"field": "state.moves"})


# -- PDN tags -----------------------------------------------------------------------------


async def test_pdn_tags_are_checked(referee: Referee) -> None:
    state = state_of(game_after(["11-15"]))
    cases: list[tuple[dict[str, str], str, dict[str, str]]] = [
        (
            {f"Tag{n}": "x" for n in range(33)},
            "REQUEST_TOO_LARGE",
            {"field": "tags", "limit": "32"},
        ),
        ({"Bad Name": "x"}, "INVALID_REQUEST", {"field": "tags"}),
        ({"": "x"}, "INVALID_REQUEST", {"field": "tags"}),
        ({"N" * 33: "x"}, "INVALID_REQUEST", {"field": "tags"}),
        (
            {"Event": "é" * 129},
            "REQUEST_TOO_LARGE",
            {"field": "tags.Event", "limit": "256"},
        ),
        ({"White": "two\nlines"}, "INVALID_REQUEST", {"field": "tags.White"}),
        ({"Date": "30.11.2026"}, "INVALID_REQUEST", {"field": "tags.Date"}),
    ]
    for tags, reason, metadata in cases:
        status = await refusal(
            referee.ExportPdn(
                referee_pb2.ExportPdnRequest(state=state, tags=tags), timeout=CALL_TIMEOUT
            )
        )
        assert (status.code, status.reason, status.metadata) == (INVALID, reason, metadata), tags
