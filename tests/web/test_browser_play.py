"""The web page in a real browser (Debian's Chromium, headless), against a real backend: every
scenario in ``browser/scenarios`` plays through the page as a person would, by clicks and
keys, and checks what the page shows against what the server holds."""

from __future__ import annotations

import pytest

from .conftest import WebBackend, run_scenario

pytestmark = [pytest.mark.usefixtures("browser"), pytest.mark.timeout(300)]


async def test_a_whole_game_against_the_computer_by_clicks(web_backend: WebBackend) -> None:
    report = await run_scenario(web_backend, "computer_game", moveLimit=40, seed=7)
    assert report["tookBack"]
    assert report["plies"] > 0


async def test_a_multi_jump_landing_by_landing(web_backend: WebBackend) -> None:
    report = await run_scenario(web_backend, "multi_jump")
    assert report["moves"][-2:] == ["24x15x8", "4x11"]


async def test_two_browsers_play_each_other_through_a_join_link(web_backend: WebBackend) -> None:
    report = await run_scenario(web_backend, "online_game", plies=10, seed=11)
    assert len(report["moves"]) == 10


async def test_a_draw_offer_told_to_both_then_accepted_on_the_opponents_turn(
    web_backend: WebBackend,
) -> None:
    report = await run_scenario(web_backend, "draw_offer")
    assert report["plies"] == 3


async def test_the_move_list_follows_the_newest_move_and_keeps_a_long_capture_in_its_column(
    web_backend: WebBackend,
) -> None:
    report = await run_scenario(web_backend, "move_list", plies=36, seed=2)
    assert report["plies"] >= 30
    assert report["phone"]["lines"] > 1


async def test_a_reload_mid_game_resumes_with_no_missing_move(web_backend: WebBackend) -> None:
    report = await run_scenario(web_backend, "reload_resume")
    assert int(report["resumedFrom"]) > 0


async def test_the_lobby_updates_when_a_table_opens(web_backend: WebBackend) -> None:
    await run_scenario(web_backend, "lobby_live")


async def test_theme_language_and_layout(web_backend: WebBackend) -> None:
    await run_scenario(web_backend, "presentation")
