"""A real Goti backend with its web port, in the test's process: the shared Redis (emptied
first), a referee, the computer player with one search process, and a tables runtime serving
gRPC and, from the same event loop, the page with Connect and gRPC-Web, each on a free port.

Browser scenarios run as Node scripts (``browser/run.mjs``) driving Debian's Chromium through
``playwright-core``, installed under ``web/`` by ``npm ci``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
from collections.abc import AsyncIterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from in_process_backend import NO_RATE_LIMITS, SETTINGS, search_processes, start_peers
from redis.asyncio import Redis
from service_ports import service_ports

from goti.tables.runtime import TablesRuntime
from goti.tables.seeking import ALL_POOLS
from goti.web.server import WebServer, start_web_server

REPOSITORY = Path(__file__).parents[2]
RUNNER = Path(__file__).parent / "browser" / "run.mjs"
PLAYWRIGHT = REPOSITORY / "web" / "node_modules" / "playwright-core"
CHROMIUM = Path(os.environ.get("GOTI_TEST_CHROMIUM", "/usr/bin/chromium"))
BROWSER_REQUIRED = "GOTI_TEST_BROWSER_REQUIRED"
"""Set (as ``make test`` does) to fail, rather than skip, when the browser is missing."""
SCREENSHOTS = "GOTI_TEST_SCREENSHOTS"
"""Where failing scenarios leave their screenshots; a folder of the test's own when unset."""


def browser_missing() -> str | None:
    """Why the browser scenarios cannot run here; None when they can."""
    if shutil.which("node") is None:
        return "node is not installed"
    if not PLAYWRIGHT.is_dir():
        return "web/node_modules has no playwright-core: run `npm ci` in web/"
    if not CHROMIUM.exists():
        return f"no Chromium at {CHROMIUM}: apt-get install chromium"
    return None


@pytest.fixture
def browser() -> None:
    """Skip (or, under ``make test``, fail) when Node, playwright-core or Chromium is
    missing."""
    missing = browser_missing()
    if missing is None:
        return
    if os.environ.get(BROWSER_REQUIRED):
        pytest.fail(f"the browser scenarios cannot run: {missing}")
    pytest.skip(f"the browser scenarios cannot run: {missing}")


@dataclass
class WebBackend:
    """The backend a browser plays on."""

    url: str
    """The page's address (``http://127.0.0.1:PORT/``)."""
    grpc_target: str
    runtime: TablesRuntime
    web: WebServer
    screenshots: Path
    redis: Redis
    """The backend's Redis, for the conditions a scenario asks the test to wait for."""
    results: list[dict[str, Any]] = field(default_factory=list)


@pytest_asyncio.fixture
async def web_backend(redis_url: str, redis: Redis, tmp_path: Path) -> AsyncIterator[WebBackend]:
    [web_port] = service_ports(1)
    url = f"http://127.0.0.1:{web_port}/"
    options = replace(
        NO_RATE_LIMITS,
        join_base_url=f"{url}join/",
        timer_poll_seconds=0.05,
        heartbeat_seconds=2.0,
    )
    screenshots = Path(os.environ.get(SCREENSHOTS) or tmp_path / "screenshots")
    async with contextlib.AsyncExitStack() as stack:
        ai_pool = stack.enter_context(search_processes(1))
        wiring = await start_peers(stack, options, redis_url, ai_pool)
        tables, runtime = await wiring.start(stack)
        web = await start_web_server(
            runtime.tables_servicer,
            runtime.players_servicer,
            runtime.matchmaking_servicer,
            SETTINGS,
            port=web_port,
        )
        stack.push_async_callback(web.stop)
        yield WebBackend(url, tables.target, runtime, web, screenshots, redis)


SCENARIO_SECONDS = 240.0
CONDITION_SECONDS = 30.0
"""How long a condition a scenario asks for may take on a busy machine."""


async def _until_pools_empty(backend: WebBackend) -> None:
    """Wait until nobody waits in any seek pool (a closed tab's seek is out once the server
    has seen its stream end)."""
    pools = [pool.key for pool in ALL_POOLS]
    loop = asyncio.get_running_loop()
    deadline = loop.time() + CONDITION_SECONDS
    while any(await asyncio.gather(*(backend.redis.zcard(pool) for pool in pools))):
        assert loop.time() < deadline, "a seek stayed in its pool"
        await asyncio.sleep(0.05)


async def _follow_scenario(
    process: asyncio.subprocess.Process, backend: WebBackend, lines: list[str]
) -> None:
    """Collect the scenario's output, doing what it asks of the backend as it goes."""
    assert process.stdout is not None and process.stdin is not None
    async for raw in process.stdout:
        line = raw.decode(errors="replace").rstrip("\n")
        lines.append(line)
        if line.startswith("ASK "):
            action = line.removeprefix("ASK ")
            if action == "drop connections":
                backend.web.drop_connections()
            elif action == "wait until the pools are empty":
                await _until_pools_empty(backend)
            else:
                raise AssertionError(f"the scenario asks for something unknown: {action}")
            process.stdin.write(b"done\n")
            await process.stdin.drain()


async def run_scenario(backend: WebBackend, name: str, **parameters: object) -> dict[str, Any]:
    """Run one browser scenario against ``backend``; returns what it reports. Fails the test
    with the scenario's output and where its screenshots are when it fails."""
    screenshots = backend.screenshots / name
    environment = {
        **os.environ,
        "GOTI_WEB_URL": backend.url,
        "GOTI_TEST_SCREENSHOTS": str(screenshots),
        "GOTI_TEST_CHROMIUM": str(CHROMIUM),
        "GOTI_SCENARIO_PARAMETERS": json.dumps(parameters),
    }
    process = await asyncio.create_subprocess_exec(
        "node",
        str(RUNNER),
        name,
        env=environment,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    assert process.stderr is not None
    lines: list[str] = []
    errors = asyncio.ensure_future(process.stderr.read())
    try:
        await asyncio.wait_for(_follow_scenario(process, backend, lines), SCENARIO_SECONDS)
        await asyncio.wait_for(process.wait(), SCENARIO_SECONDS)
    except TimeoutError:
        process.kill()
        await process.wait()
        pytest.fail(
            f"browser scenario {name} ran past {SCENARIO_SECONDS:g} s; screenshots (if any) in "
            f"{screenshots}\n" + "\n".join(lines)
        )
    finally:
        if process.stdin is not None:
            process.stdin.close()
    problems = (await errors).decode(errors="replace")
    if process.returncode != 0:
        pytest.fail(
            f"browser scenario {name} failed (exit {process.returncode}); screenshots in "
            f"{screenshots}\n--- stdout\n" + "\n".join(lines) + f"\n--- stderr\n{problems}"
        )
    report: dict[str, Any] = {}
    for line in lines:
        if line.startswith("RESULT "):
            report = json.loads(line.removeprefix("RESULT "))
    print(f"browser scenario {name}: {json.dumps(report)}")
    return report
