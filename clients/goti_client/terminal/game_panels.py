"""What the game screen's panels say: the seats, whose turn, the notices, the move list, the
turn timer, the streak, which buttons show and the board's marks, each worked out from the
table's state alone, so the screen only puts them on its widgets."""

from __future__ import annotations

from datetime import UTC, datetime

from goti.rules import GameWarning, Square, Variant, square_name
from goti_client.tables import Me, Rating, Role, Seat, TableStatus
from goti_client.terminal.board import BoardMarks
from goti_client.terminal.labels import Labels
from goti_client.terminal.selection import MoveEntry
from goti_client.terminal.table_state import TableState, plies_before_first


def square_label(variant: Variant, square: Square) -> str:
    """A square as the variant's players name it: ``c3`` in Russian, ``22`` in English.

    >>> from goti.rules import ENGLISH, RUSSIAN
    >>> square_label(RUSSIAN, Square(22)), square_label(ENGLISH, Square(22))
    ('c3', '22')
    """
    return square_name(square) if variant.algebraic else str(square)


def format_clock(seconds: float) -> str:
    """Seconds left as ``m:ss``.

    >>> format_clock(75.2)
    '1:16'
    """
    whole = max(0, int(seconds + 0.999))
    return f"{whole // 60}:{whole % 60:02d}"


def rated_name(labels: Labels, name: str, rating: Rating | None) -> str:
    """A player's name with their rating beside it, when they have one (``1500?`` while
    provisional)."""
    if rating is None:
        return name
    return labels.rated_name.format(name=name, rating=rating)


def table_header(state: TableState, labels: Labels) -> str:
    """The table's variant and code, whether its game is rated, and whether this is a
    spectator's view."""
    table = state.table
    code = table.code or table.table_id
    header = labels.table_header.format(variant=labels.variant(table.variant), code=code)
    if table.rated:
        header += f" · {labels.rated}"
    if table.role is Role.SPECTATOR:
        header += f" · {labels.watching}"
    return header


def seat_line(state: TableState, labels: Labels, seat: Seat) -> str:
    """Who sits in a seat, whether it is the player's, what it captured and whether it moves."""
    table = state.table
    if seat.computer_level is not None:
        name = labels.computer_seat.format(level=labels.levels[seat.computer_level])
    elif seat.player is None:
        name = labels.open_seat
    else:
        name = rated_name(labels, seat.player.display_name, seat.rating)
    mine = table.role.holds(seat.color) and table.role is not Role.BOTH
    you = f" ({labels.you})" if mine else ""
    captured = labels.captured.format(count=state.captured_by(seat.color))
    to_move = state.turn is not None and state.turn.side is seat.color
    marker = "▶ " if to_move else "  "
    return f"{marker}{labels.color(seat.color)}: {name}{you} · {captured}"


def status_text(state: TableState, labels: Labels) -> str:
    """The waiting table's code and link, the result, or whose move it is."""
    table = state.table
    game = state.game
    if table.status is TableStatus.WAITING:
        return "\n".join(
            (
                labels.waiting_for_opponent,
                labels.share_code.format(code=table.code),
                labels.share_link.format(link=table.join_url),
            )
        )
    outcome = game.outcome
    if outcome is not None:
        why = labels.terminations[outcome.termination]
        if outcome.winner is None:
            return labels.draw_result.format(why=why)
        result = labels.wins.format(side=labels.color(outcome.winner), why=why)
        if table.role in (Role.WHITE, Role.BLACK):
            mine = table.role.holds(outcome.winner)
            result = (labels.you_won if mine else labels.you_lost).format(result=result)
        return result
    turn = state.turn
    if turn is None:
        return ""
    if state.my_turn is not None and table.role is not Role.BOTH:
        return labels.your_move
    if table.seat(turn.side).is_computer:
        return labels.thinking
    return labels.side_to_move.format(side=labels.color(turn.side))


def notices(state: TableState, labels: Labels) -> list[str]:
    """The warnings of the moment: a capture owed, the game's warnings, draw and rematch offers."""
    game = state.game
    table = state.table
    turn = state.my_turn
    lines = []
    if turn is not None and turn.must_capture:
        lines.append(labels.must_capture)
    for warning in sorted(game.warnings, key=lambda w: w.value):
        text = labels.warnings[warning]
        if warning is GameWarning.MOVE_LIMIT_NEAR:
            text = text.format(count=state.moves_before_move_limit)
        lines.append(text)
    offer = game.draw_offer
    if offer is not None:
        side = labels.color(offer)
        if turn is not None and turn.side is offer.opponent:
            lines.append(labels.draw_offered.format(side=side))
        elif table.role.holds(offer) and table.role is not Role.BOTH:
            lines.append(labels.you_offered_draw)
        else:
            lines.append(labels.draw_offer_open.format(side=side))
    asked = table.rematch_offered_by
    if table.status is TableStatus.FINISHED and asked is not None:
        if table.role.holds(asked) and table.role is not Role.BOTH:
            lines.append(labels.you_asked_rematch)
        else:
            lines.append(labels.rematch_offered.format(side=labels.color(asked)))
    return lines


def move_list(state: TableState) -> str:
    """The moves so far, a numbered line per move of both sides."""
    game = state.game
    lines = []
    plies = ["…"] * plies_before_first(game) + list(game.moves)
    for index in range(0, len(plies), 2):
        pair = plies[index : index + 2]
        lines.append(f"{index // 2 + 1:>3}. " + "  ".join(f"{move:<9}" for move in pair))
    return "\n".join(lines)


def shown_buttons(state: TableState) -> dict[str, bool]:
    """Each button's id, and whether it shows: only what the player may do now."""
    table = state.table
    game = state.game
    turn = state.my_turn
    playing = table.status is TableStatus.PLAYING
    return {
        "offer-draw": turn is not None and turn.may_offer_draw and game.draw_offer is None,
        "accept-draw": turn is not None and game.draw_offer is turn.side.opponent,
        "decline-draw": turn is not None and game.draw_offer is turn.side.opponent,
        "resign": turn is not None,
        "take-back": playing and table.opponent.is_computer and bool(game.moves),
        "rematch": table.status is TableStatus.FINISHED
        and table.role is not Role.SPECTATOR
        and table.rematch_table_id is None,
        "leave": True,
    }


def timer_text(state: TableState, labels: Labels) -> str:
    """The time left for the move, while a turn timer runs; else empty."""
    deadline = state.table.turn_deadline
    if deadline is None or state.turn is None:
        return ""
    left = (deadline - datetime.now(UTC)).total_seconds()
    return "⏱ " + labels.time_left.format(time=format_clock(left))


def streak_text(state: TableState, labels: Labels, me: Me | None) -> str:
    """The win streak against the computer, at a table against the computer; else empty."""
    if me is None or not state.table.opponent.is_computer:
        return ""
    return labels.win_streak.format(streak=me.win_streak, best=me.best_streak)


def board_marks(
    state: TableState, entry: MoveEntry | None, pending: tuple[Square, ...] = ()
) -> BoardMarks:
    """What the board highlights: a move on its way to the server, else the move being
    entered, and always the last move."""
    turn = state.my_turn
    if pending:
        return BoardMarks(path=pending, last_move=state.last_move)
    if entry is not None and turn is not None:
        return BoardMarks(
            must_capture=frozenset(turn.must_capture),
            path=entry.path,
            targets=entry.targets,
            jumped=entry.jumped,
            last_move=state.last_move,
        )
    return BoardMarks(last_move=state.last_move)
