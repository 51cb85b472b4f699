"""The ``goti`` command: one console script with a subcommand per job.

Bad arguments print one line on stderr and exit with status 2, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NoReturn

from goti.rules.color import Color
from goti.rules.errors import InvalidFenError
from goti.rules.game import Game
from goti.rules.perft import divide, perft
from goti.rules.position import Position
from goti.rules.variants import Variant, find_variant
from goti.settings import Settings, SettingsError, help_text

USAGE_ERROR = 2
READER_GONE = 141
"""The status of a command whose output pipe closed early: 128 + SIGPIPE, as a shell reports
a command that signal ended."""


class UsageError(Exception):
    """A bad command line: reported as one line on stderr, exit status 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


def _variant(text: str) -> Variant:
    try:
        return find_variant(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _depth(text: str) -> int:
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"depth must be a whole number 0 or more, not {text!r}")
    return int(text)


def _position(variant: Variant, fen: str | None) -> Position:
    if fen is None:
        return Position.initial(variant)
    try:
        return Position.from_fen(fen, variant)
    except InvalidFenError as error:
        raise UsageError(f"--fen: {error}") from None


def _run_perft(args: argparse.Namespace) -> int:
    position = _position(args.variant, args.fen)
    started = time.process_time()
    counts: dict[str, int] | None = None
    if args.divide and args.depth > 0:
        counts = divide(position, args.depth, unique=args.unique)
        nodes = sum(counts.values())
    else:
        nodes = perft(position, args.depth, unique=args.unique)
    seconds = time.process_time() - started
    rate = nodes / seconds if seconds > 0 else 0.0
    if args.json:
        report: dict[str, object] = {
            "variant": position.variant.name,
            "fen": position.fen(),
            "depth": args.depth,
            "nodes": nodes,
            "seconds": round(seconds, 6),
            "nodes_per_second": round(rate),
        }
        if counts is not None:
            report["divide"] = counts
        print(json.dumps(report))
        return 0
    if counts is not None:
        for notation, count in counts.items():
            print(f"{notation:>12}  {count}")
    print(f"perft({args.depth}) = {nodes}  ({seconds:.2f} s CPU, {rate:,.0f} nodes/s)")
    return 0


def _run_moves(args: argparse.Namespace) -> int:
    position = _position(args.variant, args.fen)
    moves = list(position.legal_moves)
    if args.json:
        print(
            json.dumps(
                {
                    "variant": position.variant.name,
                    "fen": position.fen(),
                    "side_to_move": position.turn.value,
                    "must_capture": position.must_capture,
                    "moves": [
                        {
                            "notation": position.notation(move),
                            "path": list(move.path),
                            "captured": list(move.captured),
                            "crowned": move.crowned,
                            "fen_after": position.push(move).fen(),
                        }
                        for move in moves
                    ],
                }
            )
        )
        return 0
    print(position)
    print(f"{position.turn.value} to move, {len(moves)} legal move{'s' if len(moves) != 1 else ''}")
    if position.must_capture:
        print("must capture with: " + ", ".join(map(str, position.must_capture)))
    for move in moves:
        print("  " + position.notation(move))
    return 0


def _run_demo(args: argparse.Namespace) -> int:
    """Play a short game that shows the engine at work (until the services run)."""
    game = Game(args.variant)
    print(f"Goti {game.variant.title}: the start position, {game.turn.value} to move\n")
    print(game.position, "\n")
    # A tiny greedy player: capture the most, else keep men back; deterministic.
    while not game.is_over and game.ply < args.plies:
        moves = game.legal_moves
        move = max(moves, key=lambda m: (len(m.captured), m.crowned, -m.origin))
        record = game.play(move)
        print(f"{record.ply + 1:>3}. {record.side.value:<5} {record.notation}")
    print()
    print(game.position)
    print(
        f"\n{len(game.moves)} plies; captured by white {game.captured(Color.WHITE)}, "
        f"by black {game.captured(Color.BLACK)}"
    )
    if game.outcome is not None:
        print(f"result {game.outcome.result} ({game.outcome.termination.value})")
    return 0


def _port(text: str) -> int:
    if not (text.isascii() and text.isdigit()) or int(text) > 65535:
        raise argparse.ArgumentTypeError(f"port must be 0-65535 (0: any free port), not {text!r}")
    return int(text)


# `goti serve SERVICE`: the gRPC libraries load only when a service starts, so the other
# subcommands stay quick.


def _serve_referee(settings: Settings, args: argparse.Namespace) -> None:
    from goti import serving  # noqa: PLC0415
    from goti.referee.servicer import RefereeService  # noqa: PLC0415

    service = RefereeService()
    serving.run_service("referee", service.bind, settings, port=args.port, drain=service.drain)


def _serve_tables(settings: Settings, args: argparse.Namespace) -> None:
    from goti.tables.__main__ import run  # noqa: PLC0415

    run(settings, port=args.port)


def _serve_ai(settings: Settings, args: argparse.Namespace) -> None:
    from goti.ai.__main__ import run  # noqa: PLC0415

    run(settings, port=args.port, workers=args.workers)


SERVICES: dict[str, Callable[[Settings, argparse.Namespace], None]] = {
    "ai": _serve_ai,
    "referee": _serve_referee,
    "tables": _serve_tables,
}
"""What ``goti serve`` can run, by name: each serves until Ctrl-C or SIGTERM."""


def _run_serve(args: argparse.Namespace) -> int:
    try:
        if args.service is None:
            from goti.backend import backend_settings  # noqa: PLC0415

            settings = backend_settings()
        else:
            settings = Settings.from_env()
    except SettingsError as error:
        print(f"goti serve: bad configuration:\n{error}", file=sys.stderr)
        return USAGE_ERROR
    if args.service is None:
        if args.port is not None or args.workers is not None:
            raise UsageError(
                "--port and --workers go with one service (goti serve tables|referee|ai); "
                "the whole backend takes its ports from GOTI_*_PORT"
            )
        from goti.backend import run_backend  # noqa: PLC0415

        return run_backend(settings)
    if args.workers is not None and args.service != "ai":
        raise UsageError("--workers is for goti serve ai")
    SERVICES[args.service](settings, args)
    return 0


def _workers(text: str) -> int:
    if not (text.isascii() and text.isdigit()) or int(text) < 1:
        raise argparse.ArgumentTypeError(f"workers must be a whole number 1 or more, not {text!r}")
    return int(text)


DEFAULT_PLAY_SERVER = "localhost:50051"


def _run_play(args: argparse.Namespace) -> int:
    # Textual loads only here: the services never import the terminal client.
    try:
        from goti_client.terminal import Language, play  # noqa: PLC0415
        from goti_client.terminal.terminal_theme import Brightness  # noqa: PLC0415
    except ImportError as error:
        print(f"goti play: the terminal client cannot start: {error}", file=sys.stderr)
        return USAGE_ERROR
    return play(
        server=args.server or os.environ.get("GOTI_SERVER") or DEFAULT_PLAY_SERVER,
        variant=args.variant,
        language=Language(args.lang) if args.lang else None,
        brightness=None if args.theme == "auto" else Brightness(args.theme),
    )


def _run_engine(args: argparse.Namespace) -> int:
    from goti.ai import engine  # noqa: PLC0415 - the search loads only when it runs

    return engine.main()


def _run_endgames(args: argparse.Namespace) -> int:
    # The tables' code loads only when it runs, as the search does.
    from goti.ai.endgames import command  # noqa: PLC0415

    return command.run_build(args) if args.action == "build" else command.run_verify(args)


def _run_book(args: argparse.Namespace) -> int:
    # The search loads only when it runs.
    from goti.ai import book_command  # noqa: PLC0415

    return book_command.run_build(args)


def _endgame_pieces(text: str) -> int:
    if not (text.isascii() and text.isdigit()) or not 2 <= int(text) <= 6:
        raise argparse.ArgumentTypeError(f"pieces must be 2 to 6, not {text!r}")
    return int(text)


def _positive_int(text: str) -> int:
    if not (text.isascii() and text.isdigit()) or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of 1 or more, not {text!r}")
    return int(text)


def _add_variant(parser: argparse.ArgumentParser, help_line: str = "english or russian") -> None:
    parser.add_argument("--variant", type=_variant, default="english", help=help_line)


def _add_perft(commands: argparse._SubParsersAction[_Parser]) -> None:
    perft_parser = commands.add_parser("perft", help="count the move tree to a depth")
    _add_variant(perft_parser)
    perft_parser.add_argument("--fen", help="start from this PDN FEN (default: the start position)")
    perft_parser.add_argument("--depth", type=_depth, required=True, help="plies to count")
    perft_parser.add_argument(
        "--unique", action="store_true", help="count capture orders with the same result once"
    )
    perft_parser.add_argument("--divide", action="store_true", help="split the count by first move")
    perft_parser.add_argument("--json", action="store_true", help="print one JSON object")
    perft_parser.set_defaults(run=_run_perft)


def _add_moves(commands: argparse._SubParsersAction[_Parser]) -> None:
    moves_parser = commands.add_parser("moves", help="list the legal moves of a position")
    _add_variant(moves_parser)
    moves_parser.add_argument("--fen", required=True, help="the position, as PDN FEN")
    moves_parser.add_argument("--json", action="store_true", help="print one JSON object")
    moves_parser.set_defaults(run=_run_moves)


def _add_demo(commands: argparse._SubParsersAction[_Parser]) -> None:
    demo_parser = commands.add_parser("demo", help="play a short demonstration game")
    _add_variant(demo_parser)
    demo_parser.add_argument("--plies", type=_depth, default=200, help="stop after this many plies")
    demo_parser.set_defaults(run=_run_demo)


def _add_engine(commands: argparse._SubParsersAction[_Parser]) -> None:
    engine_parser = commands.add_parser(
        "engine",
        help="answer positions on stdin with moves, one line each (the engine line protocol)",
        description="Reads lines '<english|russian> <FEN>[ movetime=<ms>][ level=<easy|normal|"
        "hard|master|quick>]' and answers each with the chosen move, every landing square written; "
        "'quit' ends it. Only the position is known: no game history, so no repetitions.",
    )
    engine_parser.set_defaults(run=_run_engine)


def _add_variant_or_both(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--variant",
        choices=["english", "russian", "both"],
        default="both",
        help="english, russian or both (default: both)",
    )


def _add_endgames(commands: argparse._SubParsersAction[_Parser]) -> None:
    endgames_parser = commands.add_parser(
        "endgames",
        help="build or verify the endgame tables",
        description="Solve every position of up to N pieces by retrograde analysis (win, loss "
        "or draw, with the plies to conversion), or check stored tables move by move.",
    )
    actions = endgames_parser.add_subparsers(dest="action", required=True, parser_class=_Parser)
    build_parser = actions.add_parser("build", help="solve the tables and write them")
    verify_parser = actions.add_parser("verify", help="check stored tables move by move")
    for parser in (build_parser, verify_parser):
        _add_variant_or_both(parser)
        parser.set_defaults(run=_run_endgames)
    build_parser.add_argument(
        "--pieces", type=_endgame_pieces, default=4, help="the most pieces (default: 4)"
    )
    verify_parser.add_argument(
        "--pieces", type=_endgame_pieces, help="check only tables of up to this many pieces"
    )
    build_parser.add_argument(
        "--jobs",
        type=_positive_int,
        default=1,
        help="processes solving the tables of one level at once (default: 1)",
    )
    verify_parser.add_argument(
        "--jobs",
        type=_positive_int,
        default=1,
        help="processes checking tables at once (default: 1)",
    )
    shipped = "(default: the tables shipped with Goti)"
    build_parser.add_argument("--out", type=Path, help=f"the folder to write to {shipped}")
    verify_parser.add_argument("--dir", type=Path, help=f"the folder to check {shipped}")


def _add_book(commands: argparse._SubParsersAction[_Parser]) -> None:
    book_parser = commands.add_parser(
        "book",
        help="build the opening book",
        description="Search the positions of the standard openings deeply and write the "
        "opening book the timed levels play from.",
    )
    actions = book_parser.add_subparsers(dest="action", required=True, parser_class=_Parser)
    build_parser = actions.add_parser("build", help="search the openings and write the book")
    _add_variant_or_both(build_parser)
    build_parser.add_argument(
        "--seconds", type=float, default=0.6, help="CPU seconds a position (default: 0.6)"
    )
    build_parser.add_argument(
        "--openings",
        type=Path,
        default=Path("bench/openings.json"),
        help="the openings file (default: bench/openings.json)",
    )
    build_parser.add_argument(
        "--out", type=Path, help="the folder to write to (default: the book shipped with Goti)"
    )
    build_parser.add_argument("--jobs", type=int, default=1, help="processes (default: 1)")
    build_parser.add_argument(
        "--limit", type=int, help="only the first N openings of each variant (a quick build)"
    )
    build_parser.set_defaults(run=_run_book)


def _add_serve(commands: argparse._SubParsersAction[_Parser]) -> None:
    serve_parser = commands.add_parser(
        "serve",
        help="run Goti (all of it, or one service) until Ctrl-C or SIGTERM",
        description="Run the whole Goti backend on this machine, or one service, until Ctrl-C "
        "or SIGTERM, which stop it gracefully.",
        epilog=help_text(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    serve_parser.add_argument(
        "service",
        nargs="?",
        choices=sorted(SERVICES),
        help="the one service to run; without it, the whole backend on this machine "
        "(Redis, referee, AI, tables)",
    )
    serve_parser.add_argument(
        "--port",
        type=_port,
        help="gRPC port (default: the service's GOTI_*_PORT; 0: any free port, logged)",
    )
    serve_parser.add_argument(
        "--workers",
        type=_workers,
        help="goti serve ai: search processes (default: GOTI_AI_WORKERS, else one per CPU)",
    )
    serve_parser.set_defaults(run=_run_serve)


def _add_play(commands: argparse._SubParsersAction[_Parser]) -> None:
    play_parser = commands.add_parser(
        "play",
        help="play checkers in this terminal",
        description="Play Goti in this terminal: the computer, a friend online, or two "
        "players at one keyboard; browse the lobby or watch a table.",
    )
    play_parser.add_argument(
        "--server",
        help=f"the Goti server, host:port (default: $GOTI_SERVER, else {DEFAULT_PLAY_SERVER})",
    )
    play_parser.add_argument(
        "--lang",
        choices=["en", "ne"],
        help="English or Nepali (default: from LC_ALL, LC_MESSAGES or LANG)",
    )
    _add_variant(play_parser, help_line="english (default) or russian")
    play_parser.add_argument(
        "--theme",
        choices=["auto", "light", "dark"],
        default="auto",
        help="colours for a light or dark terminal (default: ask the terminal)",
    )
    play_parser.set_defaults(run=_run_play)


def build_parser() -> argparse.ArgumentParser:
    """The ``goti`` argument parser with every subcommand."""
    parser = _Parser(prog="goti", description="Goti: checkers tables, rules and engine.")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    # In the order ``goti --help`` lists them.
    for add_subcommand in (
        _add_perft,
        _add_moves,
        _add_demo,
        _add_engine,
        _add_endgames,
        _add_book,
        _add_serve,
        _add_play,
    ):
        add_subcommand(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``goti`` command; returns the exit status."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        run: Callable[[argparse.Namespace], int] = args.run
        status = run(args)
        # Flushed here, so that a reader gone early is seen below, not at exit.
        sys.stdout.flush()
    except UsageError as error:
        print(f"goti: error: {error}", file=sys.stderr)
        return USAGE_ERROR
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return _reader_gone()
    return status


def _reader_gone() -> int:
    """The end of a command whose reader stopped reading (``goti moves --json | head``):
    quietly, as a command killed by SIGPIPE, with no traceback."""
    # What is still buffered for stdout would fail again at exit: let it go nowhere.
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    return READER_GONE


if __name__ == "__main__":
    sys.exit(main())
