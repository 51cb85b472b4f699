"""What ``goti book build`` runs (the arguments: goti.cli)."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

from goti.ai.book_building import book_positions, build_book, build_header, openings_of
from goti.ai.opening_book import SHIPPED, book_path
from goti.rules.variants import ENGLISH, RUSSIAN


def _progress_from_now() -> Callable[[int, int], None]:
    started = time.monotonic()

    def progress(done: int, total: int) -> None:
        if done % 100 == 0 or done == total:
            print(f"  {done}/{total} in {time.monotonic() - started:.0f} s", flush=True)

    return progress


def run_build(args: argparse.Namespace) -> int:
    """Build the book of each chosen variant, saying how far it is as it goes."""
    source: Path = args.openings
    if not source.exists():
        print(
            f"goti book build: no openings file at {source}: run it from Goti's source tree "
            "or name one with --openings",
            file=sys.stderr,
        )
        return 2
    out: Path = SHIPPED if args.out is None else args.out
    variants = (
        [ENGLISH, RUSSIAN]
        if args.variant == "both"
        else [ENGLISH if args.variant == "english" else RUSSIAN]
    )
    for variant in variants:
        openings = openings_of(source, variant)[: args.limit]
        positions = book_positions(variant, openings)
        print(
            f"{variant.title}: {len(openings)} openings, {len(positions)} positions, "
            f"{args.seconds:g} s each over {args.jobs} process(es)",
            flush=True,
        )
        book = build_book(
            variant, positions, args.seconds, jobs=args.jobs, on_progress=_progress_from_now()
        )
        path = book_path(out, variant)
        book.write(path, build_header(variant, len(positions), args.seconds, source))
        print(f"{variant.name}: {len(book)} positions written to {path}", flush=True)
    return 0
