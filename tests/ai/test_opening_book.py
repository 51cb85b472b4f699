"""The opening book: built by Goti's own searches over the standard openings, every move in
it legal, played by the timed levels with some variety, and left behind once the game is out
of it, where the search goes on."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from goti.ai import Level, choose_move
from goti.ai.book_building import book_moves, book_positions, build_book, openings_of
from goti.ai.opening_book import OpeningBook, book_path, shipped_book
from goti.rules.game import Game
from goti.rules.position import Position
from goti.rules.variants import find_variant

OPENINGS = Path(__file__).parents[2] / "bench" / "openings.json"
VARIANTS = ["english", "russian"]


@pytest.mark.parametrize("variant", VARIANTS)
def test_every_book_move_is_legal_where_it_stands(variant: str) -> None:
    book = shipped_book(variant)
    assert len(book) > 400
    for fen, moves in book.items():
        position = Position.from_fen(fen, variant)
        assert len(position.legal_moves) > 1, fen
        assert 1 <= len(moves) <= 2, fen
        legal = {position.notation(move) for move in position.legal_moves}
        for move in moves:
            assert move.notation in legal, (fen, move)
            assert move.depth >= 8, (fen, move)
            assert abs(move.score) < 2000, (fen, move)
        if len(moves) == 2:
            assert moves[0].notation != moves[1].notation


@pytest.mark.parametrize("variant", VARIANTS)
def test_the_book_holds_every_opening_and_every_reply_to_it(variant: str) -> None:
    rules = find_variant(variant)
    book = shipped_book(variant)
    for moves in openings_of(OPENINGS, rules):
        position = Position.initial(rules)
        for text in moves:
            position = position.push(position.parse_move(text))
        for there in [position, *(position.push(move) for move in position.legal_moves)]:
            if len(there.legal_moves) > 1:
                assert book.moves(there), (moves, there.fen())


@pytest.mark.parametrize("variant", VARIANTS)
def test_hard_plays_from_the_book_with_variety_then_searches(variant: str) -> None:
    rules = find_variant(variant)
    book = shipped_book(variant)
    start = Position.initial(rules)
    allowed = {move.notation for move in book.moves(start)}
    assert allowed
    first_moves = set()
    for seed in range(12):
        result = choose_move(Game(rules).state(), Level.HARD, seed=seed)
        assert result.nodes == 0  # no search: the book's move
        assert result.notation in allowed
        first_moves.add(result.notation)
    if len(allowed) == 2:
        assert first_moves == allowed
    # The game goes on past the book: Hard against Hard, every move legal, until the search
    # takes over (a position not in the book) and plays on from there.
    game = Game(rules)
    searched = 0
    for ply in range(16):
        result = choose_move(game.state(), Level.HARD, seed=ply, time_budget=0.02)
        in_book = bool(book.moves(game.position))
        assert (result.nodes == 0) == in_book
        searched += not in_book
        game.play(result.notation)
    assert searched >= 4


def test_easy_and_normal_do_not_play_from_the_book() -> None:
    start = Game(find_variant("english")).state()
    for level in (Level.EASY, Level.NORMAL):
        assert choose_move(start, level, seed=1).nodes > 0


def test_a_book_built_reads_back_the_same(tmp_path: Path) -> None:
    rules = find_variant("english")
    positions = book_positions(rules, openings_of(OPENINGS, rules)[:1])
    # The ballot 9-13 21-17 5-9 leaves White to move; the book holds it, its replies and
    # the positions on the way from the start.
    fens = {position.fen() for position in positions}
    assert Position.initial(rules).fen() in fens
    assert len(positions) >= 5
    book = build_book(rules, positions[:3], 0.02)
    path = book_path(tmp_path, rules)
    book.write(path, ["a test build"])
    again = OpeningBook.read(path, rules)
    assert again.items() == sorted(book.items())
    assert path.read_text().startswith("# a test build\n")


def test_a_book_line_that_is_not_one_is_named(tmp_path: Path) -> None:
    path = tmp_path / "english.book"
    path.write_text("# header\nW:W21-32:B1-12\t11-15 3\n")
    with pytest.raises(ValueError, match=r"english.book:2: '11-15 3' is not"):
        OpeningBook.read(path, find_variant("english"))


def test_a_second_move_is_kept_only_close_to_the_first() -> None:
    position = Position.initial(find_variant("english"))
    moves = book_moves(position, 0.05)
    assert moves[0].notation in {position.notation(move) for move in position.legal_moves}
    if len(moves) == 2:
        assert moves[1].score >= moves[0].score - 6
        assert moves[1].depth == moves[0].depth


def test_book_build_says_what_to_do_without_an_openings_file(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "goti.cli", "book", "build", "--openings", str(tmp_path / "x")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2
    assert "no openings file" in done.stderr and "--openings" in done.stderr


def test_the_openings_file_is_the_shared_one() -> None:
    # The book is built over the standard sets: 156 English ballots, 150 Russian openings.
    table = json.loads(OPENINGS.read_text())
    assert [len(table[v]["openings"]) for v in VARIANTS] == [156, 150]
