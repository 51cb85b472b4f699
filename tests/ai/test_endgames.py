"""The endgame tables: built here, verified, probed, and checked against independent play.

The tables of up to three pieces are built once for the module (a few seconds each
variant) into a temporary folder; the shipped tables must equal them.
"""

from __future__ import annotations

import shutil
import zlib
from itertools import combinations
from pathlib import Path

import pytest

from goti.ai.endgames import EndgameTables, Material, Outcome, Probe, probe
from goti.ai.endgames.building import build
from goti.ai.endgames.storage import SHIPPED, read_table, stored_materials, table_path
from goti.ai.endgames.verifying import verify
from goti.cli import main
from goti.rules import movegen
from goti.rules.color import Color
from goti.rules.position import Position
from goti.rules.squares import BIT_OF_SQUARE
from goti.rules.variants import ENGLISH, RUSSIAN, Variant


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("endgames")
    for variant in (ENGLISH, RUSSIAN):
        build(variant, 3, out)
    return out


def _tables(variant: Variant, directory: Path) -> EndgameTables:
    return EndgameTables(variant, directory)


@pytest.mark.parametrize("variant", [ENGLISH, RUSSIAN], ids=["english", "russian"])
def test_built_tables_pass_verification(built: Path, variant: Variant) -> None:
    report = verify(variant, built)
    assert report.problems == []
    assert report.tables == 16
    assert report.positions == 199_520


def test_verification_finds_a_changed_result(built: Path, tmp_path: Path) -> None:
    two_pieces = [m for m in stored_materials(built, "english") if m.pieces == 2]
    for stored in two_pieces:
        target = table_path(tmp_path, "english", stored)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(table_path(built, "english", stored), target)
    material = Material(0, 1, 0, 1)
    path = table_path(tmp_path, "english", material)
    table = bytearray(read_table(path, "english", material))
    table[100] = 0 if table[100] else 1
    header, _, _ = path.read_bytes().partition(b"\n")
    path.write_bytes(header + b"\n" + zlib.compress(bytes(table)))
    report = verify(ENGLISH, tmp_path)
    assert report.problem_count >= 1
    assert any(p.startswith("0m1k-0m1k: position 100 ") for p in report.problems)


@pytest.mark.parametrize("variant", [ENGLISH, RUSSIAN], ids=["english", "russian"])
def test_shipped_tables_are_what_a_build_writes(built: Path, variant: Variant) -> None:
    shipped = stored_materials(SHIPPED, variant.name)
    small = [m for m in shipped if m.pieces <= 3]
    assert len(small) == 16
    for material in small:
        assert read_table(table_path(SHIPPED, variant.name, material), variant.name, material) == (
            read_table(table_path(built, variant.name, material), variant.name, material)
        ), material.name


@pytest.mark.parametrize("variant", [ENGLISH, RUSSIAN], ids=["english", "russian"])
def test_verify_passes_on_the_shipped_two_piece_tables(variant: Variant) -> None:
    report = verify(variant, None, max_pieces=2)
    assert (report.problems, report.tables, report.positions) == ([], 4, 3_488)


def _entry(built: Path, fen: str, variant: Variant = ENGLISH) -> Probe | None:
    return _tables(variant, built).lookup(Position.from_fen(fen, variant))


def test_a_side_with_no_legal_move_has_lost(built: Path) -> None:
    """Black's man on 28 (h2) can only step to 32 (g1), where White's man stands, and a jump
    over it would leave the board: Black, to move, has no move and has lost."""
    position = Position.from_fen("B:W32:B28", ENGLISH)
    assert not position.legal_moves
    assert _entry(built, "B:W32:B28") == Probe(Outcome.LOSS, 0)


def test_an_immediate_capture_of_the_last_piece_wins(built: Path) -> None:
    """White's king on 22 (c3) and Black's on 18 (d4) touch, with 15 (e5) behind Black's
    and 25 (b2) behind White's both empty: whoever moves jumps the other's last piece."""
    assert _entry(built, "W:WK22:BK18") == Probe(Outcome.WIN, 1)
    assert _entry(built, "B:WK22:BK18") == Probe(Outcome.WIN, 1)


def test_a_king_in_the_single_corner_is_lost_to_a_king_two_squares_out(built: Path) -> None:
    """White's king on 4 (h8, the single corner) has one move, to 8 (g7), and cannot jump
    Black's king on 11 (f6), which is not next to it.  After 4-8 Black jumps 11x4 over g7
    onto the square White left: a loss in two plies."""
    assert _entry(built, "W:WK4:BK11") == Probe(Outcome.LOSS, 2)
    assert probe(Position.from_fen("W:WK4:BK11", ENGLISH)) is Outcome.LOSS


def test_a_man_crowned_mid_capture_carries_on_as_a_king_in_russian(built: Path) -> None:
    """White's man on b6 (square 9) jumps Black's man on c7 (6) and lands on d8 (2), its
    crowning row.  In Russian it carries on at once as a flying king along d8-h4 over the
    black king on f6 (11) to g5 or h4: Black has nothing left, a win in one ply.  In
    English the man stops on d8 and the black king on f6 lives on."""
    fen = "W:Wb6:Bc7,Kf6"
    russian = Position.from_fen(fen, RUSSIAN)
    assert {move.captured for move in russian.legal_moves} == {(6, 11)}
    assert _entry(built, fen, RUSSIAN) == Probe(Outcome.WIN, 1)
    english = Position.from_fen("W:W9:B6,K11", ENGLISH)
    assert {move.captured for move in english.legal_moves} == {(6,)}


def test_probe_covers_only_what_the_tables_hold(built: Path) -> None:
    tables = _tables(ENGLISH, built)
    assert tables.max_pieces == 3
    assert tables.probe(Position.initial(ENGLISH)) is None
    assert tables.probe(Position.from_fen("W:WK1,K2:BK30,K31", ENGLISH)) is None
    assert tables.probe(Position.from_fen("W:WK22:B", ENGLISH)) is None
    assert tables.probe(Position.from_fen("W:WK22:BK18", RUSSIAN)) is None
    assert tables.probe_sides(BIT_OF_SQUARE[22], BIT_OF_SQUARE[18], 0, True) is Outcome.WIN


def _independent_values(variant: Variant, white_kings: int) -> dict[Position, Outcome]:
    """Kings only, White with ``white_kings`` against one black king, either side to move,
    solved by plain fixed-point iteration on Positions: none of the tables' code."""
    positions = []
    for count in range(1, white_kings + 1):
        for whites in combinations(range(1, 33), count):
            for black in range(1, 33):
                if black in whites:
                    continue
                white = sum(BIT_OF_SQUARE[s] for s in whites)
                kings = white | BIT_OF_SQUARE[black]
                for turn in Color:
                    positions.append(Position(variant, white, BIT_OF_SQUARE[black], kings, turn))
    children: dict[Position, list[Position | None]] = {}
    for position in positions:
        mine, theirs = position.sides()
        found: list[Position | None] = []
        for raw in position.raw_moves():
            mine_after, theirs_after, kings = movegen.play(mine, theirs, position.kings, raw)
            if not theirs_after:
                found.append(None)  # the opponent has no piece left: it has lost
                continue
            white, black = (
                (mine_after, theirs_after) if position.white_to_move else (theirs_after, mine_after)
            )
            found.append(Position(variant, white, black, kings, position.turn.opponent))
        children[position] = found
    value: dict[Position, Outcome] = {}
    changed = True
    while changed:
        changed = False
        for position, after in children.items():
            if position in value:
                continue
            results = [Outcome.LOSS if c is None else value.get(c) for c in after]
            if Outcome.LOSS in results:
                value[position] = Outcome.WIN
            elif all(r is Outcome.WIN for r in results):
                value[position] = Outcome.LOSS
            else:
                continue
            changed = True
    return {p: value.get(p, Outcome.DRAW) for p in positions}


@pytest.mark.parametrize("variant", [ENGLISH, RUSSIAN], ids=["english", "russian"])
def test_kings_endings_agree_with_an_independent_solver(built: Path, variant: Variant) -> None:
    tables = _tables(variant, built)
    independent = _independent_values(variant, 2)
    assert {p: tables.probe(p) for p in independent} == independent


def test_two_kings_beat_one_in_english(built: Path) -> None:
    """Two kings to move against one never lose and win from all but 34 of the 14,880
    placements: the draws are tactical accidents (mostly the lone king forking both kings,
    so that every move lets it capture one), which the independent solver above confirms."""
    tables = _tables(ENGLISH, built)
    outcomes = []
    for whites in combinations(range(1, 33), 2):
        for black in range(1, 33):
            if black not in whites:
                kings = "".join(f"K{s}," for s in whites)
                fen = f"W:W{kings[:-1]}:BK{black}"
                outcomes.append(tables.probe(Position.from_fen(fen, ENGLISH)))
    assert len(outcomes) == 14_880
    assert outcomes.count(Outcome.WIN) == 14_846
    assert outcomes.count(Outcome.DRAW) == 34


def test_one_king_cannot_beat_one_king_in_russian(built: Path) -> None:
    """Flying kings: king against king is a draw unless it is decided within three plies.
    Either the side to move captures at once (a win in one ply), or the kings stand on a1
    and h8, the two ends of the long diagonal, where the side to move can only move along
    it and is taken wherever it stops (a loss in two plies; a king on the long diagonal
    against a king in its corner wins in three by going to the other corner)."""
    tables = _tables(RUSSIAN, built)
    for white, black in combinations(range(1, 33), 2):
        position = Position.from_fen(f"W:WK{white}:BK{black}", RUSSIAN)
        found = tables.lookup(position)
        assert found is not None
        assert found.outcome is Outcome.DRAW or found.plies <= 3, position
    assert _entry(built, "W:WKh8:BKa1", RUSSIAN) == Probe(Outcome.LOSS, 2)
    assert _entry(built, "W:WKd4:BKa1", RUSSIAN) == Probe(Outcome.WIN, 3)


def test_the_command_builds_and_verifies(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert (
        main(["endgames", "build", "--variant", "english", "--pieces", "2", "--out", str(tmp_path)])
        == 0
    )
    built_text = capsys.readouterr().out
    assert "english: 4 tables, 3,488 positions" in built_text
    assert len(list((tmp_path / "english").glob("*.egdb"))) == 4
    assert main(["endgames", "verify", "--variant", "english", "--dir", str(tmp_path)]) == 0
    assert "english: 4 tables, 3,488 positions checked" in capsys.readouterr().out
    (tmp_path / "english" / "0m1k-0m1k.egdb").write_bytes(b"not a table\n")
    assert main(["endgames", "verify", "--variant", "english", "--dir", str(tmp_path)]) == 1
    assert "0m1k-0m1k.egdb: not a Goti english table of 0m1k-0m1k" in capsys.readouterr().out
