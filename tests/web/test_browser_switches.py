"""The page past each switch from one table to the next (a join from the lobby, a rematch
against the computer or between people) and into a table watched by what a screen shows (its
code or join link): in a real browser against a real backend, each scenario goes on to the
next thing the person does there and checks that it arrives live, with no reload."""

from __future__ import annotations

import pytest

from .conftest import WebBackend, run_scenario

pytestmark = [pytest.mark.usefixtures("browser"), pytest.mark.timeout(300)]


async def test_after_a_join_from_the_lobby_each_page_sees_the_others_moves(
    web_backend: WebBackend,
) -> None:
    report = await run_scenario(web_backend, "lobby_join_play", plies=4)
    assert len(report["moves"]) == 4


async def test_at_master_and_after_a_rematch_the_computers_replies_arrive_live(
    web_backend: WebBackend,
) -> None:
    report = await run_scenario(web_backend, "computer_rematch")
    assert report["rematchId"] != report["firstId"]


async def test_after_a_rematch_between_people_the_first_move_reaches_the_other_page(
    web_backend: WebBackend,
) -> None:
    report = await run_scenario(web_backend, "people_rematch")
    assert len(report["moves"]) == 2


async def test_watching_by_code_by_join_link_and_from_a_full_tables_link(
    web_backend: WebBackend,
) -> None:
    report = await run_scenario(web_backend, "watch_by_code")
    assert len(report["moves"]) == 2
