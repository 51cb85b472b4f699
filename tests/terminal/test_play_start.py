"""The start screen of ``goti play``: a stray Q does not end the app, and a failure to connect
reads as gRPC's cause, verbatim."""

from __future__ import annotations

from textual.widgets import Static

from goti_client.terminal.app import GotiApp
from goti_client.terminal.dialogs import Question
from goti_client.terminal.player_files import PlayerFiles

from .pilot_moves import SCREEN_SIZE, connected, screen_text, shows, wait_until
from .running_backend import Backend


async def test_q_asks_before_quitting_and_no_stays(
    backend: Backend, player_files: PlayerFiles
) -> None:
    app = GotiApp(server=backend.target, files=player_files)
    async with app.run_test(size=SCREEN_SIZE) as pilot:
        await connected(pilot)
        await pilot.press("q")
        await wait_until(pilot, lambda: isinstance(app.screen, Question), "the quit question")
        await shows(pilot, "Quit Goti?")
        await pilot.press("n")
        await wait_until(pilot, lambda: app.screen is app.start_screen, "the start screen")
        assert app.is_running
        await pilot.press("q")
        await wait_until(pilot, lambda: isinstance(app.screen, Question), "the quit question")
        await pilot.press("y")
        await wait_until(pilot, lambda: not app.is_running, "the app to end")
    assert app.return_code == 0


async def test_a_misformatted_server_name_shows_grpcs_cause_without_a_stray_bracket(
    player_files: PlayerFiles,
) -> None:
    # gRPC says: "errors resolving bad..name:50051: [field:hostname lookup error:address
    # lookup failed for bad..name:50051: Misformatted domain name]".
    app = GotiApp(server="bad..name:50051", files=player_files)
    async with app.run_test(size=SCREEN_SIZE) as pilot:
        status = app.start_screen.query_one("#connection-status", Static)
        await wait_until(pilot, lambda: "Cannot reach" in str(status.render()), "the failure")
        assert str(status.render()) == (
            "Cannot reach Goti at bad..name:50051: Misformatted domain name"
        )


async def test_error_text_with_brackets_is_shown_as_it_is(player_files: PlayerFiles) -> None:
    # Read as markup, "[goti]" would be taken for a style and vanish from the line.
    app = GotiApp(server="[goti]:1", files=player_files)
    async with app.run_test(size=SCREEN_SIZE) as pilot:
        await wait_until(
            pilot,
            lambda: "Cannot reach Goti at [goti]:1: [goti]:1" in screen_text(app),
            "the failure, brackets and all",
        )
