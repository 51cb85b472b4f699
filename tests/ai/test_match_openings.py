"""The match's spread of openings: a shifted spread plays openings the first one did not."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPOSITORY = Path(__file__).resolve().parents[2]
TABLE = json.loads((REPOSITORY / "bench" / "openings.json").read_text())


def _spread(variant: str, count: int, shift: int) -> list[str]:
    """The opening ids ``bench/match.py`` plays, read from its own ``openings``."""
    code = (
        "import json, sys\n"
        "from bench.match import openings\n"
        f"json.dump([o['id'] for o in openings({variant!r}, {count}, {shift})], sys.stdout)\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", code], cwd=REPOSITORY, capture_output=True, text=True, check=True
    )
    ids: list[str] = json.loads(run.stdout)
    return ids


@pytest.mark.parametrize("variant", ["english", "russian"])
def test_a_spread_shifted_by_half_its_spacing_holds_none_of_the_first(variant: str) -> None:
    table_ids = [opening["id"] for opening in TABLE[variant]["openings"]]
    first = _spread(variant, 20, 0)
    again = _spread(variant, 20, 4)
    assert first == [table_ids[int(i * len(table_ids) / 20)] for i in range(20)]
    assert len(set(first)) == len(set(again)) == 20
    assert not set(first) & set(again)
    assert set(again) <= set(table_ids)
