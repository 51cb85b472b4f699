"""What ``goti endgames build`` and ``goti endgames verify`` run (the arguments: goti.cli)."""

from __future__ import annotations

import argparse
import resource
import time
from pathlib import Path

from goti.ai.endgames.building import TableReport, build
from goti.ai.endgames.storage import SHIPPED
from goti.ai.endgames.verifying import verify
from goti.rules.variants import ENGLISH, RUSSIAN, Variant


def _variants(name: str) -> list[Variant]:
    return [ENGLISH, RUSSIAN] if name == "both" else [ENGLISH if name == "english" else RUSSIAN]


def _print_table(report: TableReport) -> None:
    print(
        f"  {report.material.name:<10} {report.positions:>10,} positions  "
        f"{report.wins:>9,} won {report.losses:>9,} lost {report.draws:>9,} drawn  "
        f"longest {report.longest:>3} plies  {report.bytes_on_disk:>9,} bytes",
        flush=True,
    )


def _cpu_seconds() -> float:
    """CPU time of this process and of its ended children (a build's worker processes)."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def run_build(args: argparse.Namespace) -> int:
    """Build the tables of each chosen variant, printing each table as it is done."""
    out: Path = SHIPPED if args.out is None else args.out
    for variant in _variants(args.variant):
        print(f"{variant.title}: tables of 2 to {args.pieces} pieces into {out / variant.name}")
        started_cpu = _cpu_seconds()
        started = time.monotonic()
        _, reports = build(variant, args.pieces, out, on_table=_print_table, jobs=args.jobs)
        seconds = _cpu_seconds() - started_cpu
        positions = sum(r.positions for r in reports)
        size = sum(r.bytes_on_disk for r in reports)
        print(
            f"{variant.name}: {len(reports)} tables, {positions:,} positions, "
            f"{size:,} bytes on disk, built in {seconds:.1f} s CPU "
            f"({time.monotonic() - started:.1f} s wall, {args.jobs} process"
            f"{'es' if args.jobs > 1 else ''})"
        )
    return 0


def run_verify(args: argparse.Namespace) -> int:
    """Verify the stored tables of each chosen variant; status 1 when anything is wrong."""
    status = 0
    for variant in _variants(args.variant):
        started = _cpu_seconds()
        report = verify(variant, args.dir, args.pieces, jobs=args.jobs)  # no --dir: shipped
        seconds = _cpu_seconds() - started
        verdict = "ok" if not report.problem_count else f"{report.problem_count} problems"
        print(
            f"{variant.name}: {report.tables} tables, {report.positions:,} positions checked "
            f"in {seconds:.1f} s CPU: {verdict}"
        )
        for problem in report.problems:
            print(f"  {problem}")
        if report.problem_count:
            status = 1
    return status
