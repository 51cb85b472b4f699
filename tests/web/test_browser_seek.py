"""Play online now in a real browser against a real backend: two pages that tap it with the
same choices end up at one table, play it live and, the rated game over, see their new
ratings; a seek that is cancelled, or whose tab goes away, leaves the pool at once."""

from __future__ import annotations

import pytest

from .conftest import WebBackend, run_scenario

pytestmark = [pytest.mark.usefixtures("browser"), pytest.mark.timeout(300)]


async def test_two_pages_seeking_alike_meet_at_one_table_and_see_each_others_moves(
    web_backend: WebBackend,
) -> None:
    report = await run_scenario(web_backend, "seek_play")
    assert len(report["moves"]) == 2
    assert report["wait"]["rating"].endswith("1500?")
    # The rated game's winner went up from 1500 and the loser down.
    assert report["ratings"]["first"] != report["ratings"]["second"]


async def test_a_cancelled_seek_and_a_closed_tab_leave_the_pool_and_the_next_seek_pairs(
    web_backend: WebBackend,
) -> None:
    report = await run_scenario(web_backend, "seek_cancel")
    assert report["tableId"]
