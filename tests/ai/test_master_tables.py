"""Larger endgame tables for Master alone: built in several processes, checked to be a whole
set, read by Master while the other levels keep the shipped ones, and named by the AI service
at start (or refused, when the folder holds only part of a set).

The tables here are of up to three pieces (seconds to build) standing in for the five-piece
ones that an operator builds in minutes: the code paths do not depend on the count.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import sys
import zlib
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from service_ports import service_ports
from serving.logging_process import LoggingProcess

from goti.ai.endgame_moves import TableVerdict, table_choice
from goti.ai.endgames import Outcome
from goti.ai.endgames.building import build, levels
from goti.ai.endgames.indexing import Material, materials
from goti.ai.endgames.probing import IncompleteTablesError, complete_tables
from goti.ai.endgames.storage import SHIPPED, stored_materials, table_path
from goti.ai.endgames.values import DRAW_BYTE, win
from goti.ai.levels import Level
from goti.ai.player import choose_move, level_tables, use_master_tables
from goti.api import convert
from goti.api.v1 import ai_pb2, ai_pb2_grpc
from goti.cli import main
from goti.rules.color import Color
from goti.rules.game import Game
from goti.rules.position import Position
from goti.rules.variants import ENGLISH, RUSSIAN

SMALL = 3
"""The pieces of the sets built here."""
WON_ENDING = "W:Wc3,Ka1:Bh6"
"""Russian: a man and a king against a man, won in seven plies to conversion."""


@pytest.fixture(scope="module")
def serial(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("serial")
    build(RUSSIAN, SMALL, out)
    return out


@pytest.fixture
def master_reads_shipped() -> Iterator[None]:
    """Whatever a test gives Master, the next test starts from the shipped tables."""
    use_master_tables(None)
    yield
    use_master_tables(None)


def _files(folder: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(folder.glob("*.egdb"))}


def test_a_build_in_two_processes_writes_what_one_process_writes(
    serial: Path, tmp_path: Path
) -> None:
    build(RUSSIAN, SMALL, tmp_path, jobs=2)
    written = _files(tmp_path / "russian")
    assert len(written) == len(stored_materials(serial, "russian")) > 0
    assert written == _files(serial / "russian")


def _exits(material: Material) -> list[Material]:
    """The materials a move can lead out of ``material`` to, in the mover's frame: captures
    of any of the other side's pieces but the last, with or without the mover crowning."""
    found = []
    for crowned in range(min(material.mover_men, 1) + 1):
        for men_taken in range(material.other_men + 1):
            for kings_taken in range(material.other_kings + 1):
                left = material.other_men - men_taken + material.other_kings - kings_taken
                if (crowned or men_taken or kings_taken) and left:
                    found.append(
                        Material(
                            material.mover_men - crowned,
                            material.mover_kings + crowned,
                            material.other_men - men_taken,
                            material.other_kings - kings_taken,
                        )
                    )
    return found


def test_a_level_only_leads_into_the_levels_before_it() -> None:
    solved: set[Material] = set()
    for level in levels(5):
        in_level = {material for unit in level for material in unit}
        for material in in_level:
            for reached in _exits(material):
                assert reached in solved, (material, reached)
        solved |= in_level
    assert solved == set(materials(5))


def test_a_build_in_processes_needs_a_folder() -> None:
    with pytest.raises(ValueError, match="needs a folder"):
        build(ENGLISH, 2, None, jobs=2)


def test_the_command_builds_in_processes_and_its_tables_verify(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    arguments = ["endgames", "build", "--variant", "english", "--pieces", "2"]
    assert main([*arguments, "--jobs", "2", "--out", str(tmp_path)]) == 0
    said = capsys.readouterr().out
    assert "english: 4 tables, 3,488 positions" in said and "2 processes" in said
    checking = ["endgames", "verify", "--variant", "english", "--dir", str(tmp_path)]
    assert main([*checking, "--jobs", "2"]) == 0
    assert "english: 4 tables, 3,488 positions checked" in capsys.readouterr().out
    # A wrong byte found by a worker process is reported as one process reports it.
    path = tmp_path / "english" / "0m1k-0m1k.egdb"
    header, _, body = path.read_bytes().partition(b"\n")
    values = bytearray(zlib.decompress(body))
    values[0] = DRAW_BYTE if values[0] != DRAW_BYTE else win(1)
    path.write_bytes(header + b"\n" + zlib.compress(bytes(values)))
    assert main([*checking, "--jobs", "2"]) == 1
    assert "0m1k-0m1k: position 0 holds" in capsys.readouterr().out
    assert main([*arguments, "--jobs", "0", "--out", str(tmp_path)]) == 2
    assert "expected a whole number of 1 or more, not '0'" in capsys.readouterr().err


def test_a_folder_missing_a_table_is_refused_with_the_command_that_completes_it(
    serial: Path, tmp_path: Path
) -> None:
    shutil.copytree(serial / "russian", tmp_path / "russian")
    missing = table_path(tmp_path, "russian", Material(1, 0, 0, 2))
    missing.unlink()
    with pytest.raises(IncompleteTablesError) as refused:
        complete_tables(RUSSIAN, tmp_path)
    message = str(refused.value)
    assert "1m0k-0m2k is missing" in message
    assert f"goti endgames build --variant russian --pieces 3 --out {tmp_path}" in message
    assert complete_tables(ENGLISH, tmp_path) is None  # no English table at all
    assert complete_tables(RUSSIAN, serial) is not None


def test_master_reads_the_folder_and_the_other_levels_the_shipped_tables(
    serial: Path, tmp_path: Path, master_reads_shipped: None
) -> None:
    shutil.copytree(serial / "russian", tmp_path / "russian")
    assert use_master_tables(tmp_path) == {"english": 4, "russian": SMALL}
    assert level_tables(Level.MASTER, RUSSIAN).directory == tmp_path
    assert level_tables(Level.MASTER, ENGLISH).directory == SHIPPED
    for level in (Level.HARD, Level.QUICK):
        assert level_tables(level, RUSSIAN).directory == SHIPPED

    # Master then plays a won ending of the folder's out to the end against the longest
    # defence the folder's tables know.
    tables = level_tables(Level.MASTER, RUSSIAN)
    start = Position.from_fen(WON_ENDING, "russian")
    found = tables.lookup(start)
    assert found is not None and found.outcome is Outcome.WIN and found.plies == 7
    game = Game("russian", start=start)
    master_moves = 0
    while not game.is_over and game.ply < 120:
        if game.position.turn is Color.WHITE:
            game.play(choose_move(game.state(), "master", time_budget=0.05).move.path)
            master_moves += 1
        else:
            choice = table_choice(game.position, tables)
            assert choice is not None and choice.verdict is TableVerdict.LOSS
            game.play(list(game.position.legal_moves)[choice.moves[0]].path)
    assert game.outcome is not None and game.outcome.winner is Color.WHITE, game.moves
    assert master_moves >= 4

    # A folder holding part of a set changes nothing; None goes back to the shipped tables.
    (tmp_path / "russian" / "0m1k-0m1k.egdb").unlink()
    with pytest.raises(IncompleteTablesError):
        use_master_tables(tmp_path)
    assert level_tables(Level.MASTER, RUSSIAN).max_pieces == SMALL
    assert use_master_tables(None) == {"english": 4, "russian": 4}
    assert level_tables(Level.MASTER, RUSSIAN).directory == SHIPPED


async def _start_ai(port: int, master_endgames: Path) -> asyncio.subprocess.Process:
    """``python -m goti.ai`` as an operator starts it, its log on a pipe."""
    inherited = {name: value for name, value in os.environ.items() if not name.startswith("GOTI_")}
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "goti.ai",
        env={
            **inherited,
            "GOTI_HOST": "127.0.0.1",
            "GOTI_AI_PORT": str(port),
            "GOTI_AI_WORKERS": "1",
            "GOTI_LOG_FORMAT": "json",
            "GOTI_AI_MASTER_ENDGAMES": str(master_endgames),
        },
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )


async def test_the_ai_service_names_masters_tables_at_start_and_plays_from_them(
    serial: Path, tmp_path: Path
) -> None:
    shutil.copytree(serial / "russian", tmp_path / "russian")
    [port] = service_ports(1)
    process = await _start_ai(port, tmp_path)
    ai = LoggingProcess(process)
    try:
        said = await ai.record("Master's endgame tables: ")
        await ai.record("ai serving")
        # The first Master move after the start: a won three-piece ending kept won.
        game = Game("russian", start=Position.from_fen(WON_ENDING, "russian"))
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            reply = await ai_pb2_grpc.AiServiceStub(channel).ChooseMove(
                ai_pb2.ChooseMoveRequest(
                    state=convert.game_state_to_proto(game.state()), level=ai_pb2.LEVEL_MASTER
                ),
                timeout=60,
            )
        move = convert.move_from_proto(reply.move)
        assert move in game.position.legal_moves
        after = complete_tables(RUSSIAN, tmp_path)
        assert after is not None
        assert after.probe(game.position.push(move)) is Outcome.LOSS  # the opponent's
        process.send_signal(signal.SIGTERM)
        assert await ai.exit_code() == 0
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    assert (
        said["message"] == "Master's endgame tables: english up to 4 pieces, russian up to 3 pieces"
    )
    assert said["master_endgame_pieces"] == {"english": 4, "russian": SMALL}


async def test_the_ai_service_refuses_to_start_on_part_of_a_set(
    serial: Path, tmp_path: Path
) -> None:
    shutil.copytree(serial / "russian", tmp_path / "russian")
    (tmp_path / "russian" / "0m2k-0m1k.egdb").unlink()
    [port] = service_ports(1)
    process = await _start_ai(port, tmp_path)
    _, errors = await asyncio.wait_for(process.communicate(), timeout=60)
    assert process.returncode == 1
    text = errors.decode()
    assert "GOTI_AI_MASTER_ENDGAMES:" in text and "0m2k-0m1k is missing" in text
    assert f"goti endgames build --variant russian --pieces 3 --out {tmp_path}" in text
