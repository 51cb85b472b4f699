"""The move generator against published perft figures (sources in perft_reference.json)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from goti.rules.perft import divide, perft
from goti.rules.position import Position

REFERENCE = json.loads((Path(__file__).parent / "perft_reference.json").read_text())
CI_DEPTH = 8
SLOW_DEPTH = {"english": 11, "russian": 10}


def _cases(*, slow: bool) -> list[tuple[str, str, int, int]]:
    cases = []
    for variant in ("english", "russian"):
        for convention in ("keep", "drop"):
            for depth_text, nodes in REFERENCE[variant][convention].items():
                depth = int(depth_text)
                if (depth <= CI_DEPTH) != slow and depth <= SLOW_DEPTH[variant]:
                    cases.append((variant, convention, depth, nodes))
    return cases


@pytest.mark.parametrize(("variant", "convention", "depth", "nodes"), _cases(slow=False))
def test_perft_matches_published_figures(
    variant: str, convention: str, depth: int, nodes: int
) -> None:
    start = Position.from_fen(REFERENCE[variant]["fen"], variant)
    assert start == Position.initial(variant)
    assert perft(start, depth, unique=convention == "drop") == nodes


@pytest.mark.slow
@pytest.mark.parametrize(("variant", "convention", "depth", "nodes"), _cases(slow=True))
def test_deep_perft_matches_published_figures(
    variant: str, convention: str, depth: int, nodes: int
) -> None:
    assert perft(Position.initial(variant), depth, unique=convention == "drop") == nodes


def test_divide_adds_up_to_perft() -> None:
    start = Position.initial("english")
    counts = divide(start, 4)
    assert len(counts) == 7
    assert sum(counts.values()) == REFERENCE["english"]["keep"]["4"]


def test_perft_of_depth_zero_is_one_and_negative_depth_is_refused() -> None:
    assert perft(Position.initial(), 0) == 1
    with pytest.raises(ValueError, match="depth"):
        perft(Position.initial(), -1)
