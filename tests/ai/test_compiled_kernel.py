"""The compiled kernel: the modules each distribution lists under ``[tool.goti.mypyc]`` are
mypyc's extensions in the compiled run (``make unit-compiled``) and their Python sources in the
other, so that each run tests what it says; the compiled search finds what the Python one
finds, node for node; and the AI service says at start which of the two it runs."""

from __future__ import annotations

import asyncio
import importlib
import importlib.machinery
import json
import os
import signal
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from service_ports import service_ports
from serving.logging_process import LoggingProcess

from goti.ai.kernel_build import COMPILED, KERNEL_MODULES, PURE_PYTHON, describe_kernel_build

REPOSITORY = Path(__file__).resolve().parents[2]
# Each distribution's folder and the root its module paths start from.
KERNELS = {
    "goti-client": (REPOSITORY / "clients", REPOSITORY / "clients"),
    "goti": (REPOSITORY, REPOSITORY / "services"),
}

# Fixed depths, so that no clock decides anything: openings, a middle game with kings, and
# endings where kings hunt a lone king, in both variants.
POSITIONS = [
    ("english", "B:W21-32:B1-12", 11),
    ("english", "W:W17,21-31:B1-8,10-12,15", 10),
    ("english", "W:WK14,19,22,K30:B5,K9,12,K27", 9),
    ("english", "W:WK21,K10:BK26", 12),
    ("russian", "W:Wa1,c1,e1,g1,b2,d2,f2,h2,a3,c3,e3,g3:Bb6,d6,f6,h6,a7,c7,e7,g7,b8,d8,f8,h8", 9),
    ("russian", "W:Wf4,a3,c3,b2,d2,f2,a1,c1,e1,g1:Bb8,d8,f8,h8,a7,g7,b6,d6,f6,h6", 9),
    ("russian", "W:WKa1,Kc3,e3:BKh8,g7,f6", 9),
    ("russian", "B:WKb2,c3,e3,g3:BKh8,b6,d6,Kf8", 8),
]

SEARCH = """
import json, sys
from goti.ai import search
from goti.rules.position import Position

found = []
for variant, fen, depth in json.loads(sys.argv[1]):
    searcher = search.Searcher(Position.from_fen(fen, variant))
    report = searcher.iterate(search.SearchLimits(max_depth=depth))
    line = searcher.principal_variation(searcher.root_moves[report.move_index], depth)
    exact = search.Searcher(Position.from_fen(fen, variant)).score_all(3)
    found.append([report.move_index, report.score, report.depth, report.nodes,
                  [list(move[:4]) for move in line], exact])
print(json.dumps({"search": search.__file__, "found": found}))
"""


def _module_names(project: Path, root: Path) -> list[str]:
    table = tomllib.loads((project / "pyproject.toml").read_text())["tool"]["goti"]["mypyc"]
    return [
        ".".join((project / path).relative_to(root).with_suffix("").parts)
        for path in table["modules"]
    ]


def _is_extension(path: Path) -> bool:
    return path.name.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES))


def test_the_kernel_is_compiled_in_the_compiled_run_and_python_source_otherwise(
    compiled_folder: Path | None,
) -> None:
    wrong = {}
    for project, root in KERNELS.values():
        for name in _module_names(project, root):
            origin = Path(importlib.import_module(name).__file__ or "")
            if compiled_folder is None:
                expected_here = origin == root.joinpath(*name.split(".")).with_suffix(".py")
            else:
                expected_here = origin.is_relative_to(compiled_folder) and _is_extension(origin)
            if not expected_here:
                wrong[name] = str(origin)
    assert wrong == {}, (
        "the wheels were built pure Python (no C compiler?): `make wheels` says why; "
        "GOTI_PURE_PYTHON=1 skips the compiled run"
        if compiled_folder is not None
        else "a compiled module is on the path of the run on the sources"
    )
    assert describe_kernel_build() == (PURE_PYTHON if compiled_folder is None else COMPILED)
    # The rest of the package comes from the same place, as its Python source.
    rules = Path(importlib.import_module("goti.rules.game").__file__ or "")
    assert rules.suffix == ".py"
    assert rules.is_relative_to(compiled_folder or KERNELS["goti-client"][1])


def test_the_runtime_knows_every_module_the_builds_compile() -> None:
    listed = [name for project, root in KERNELS.values() for name in _module_names(project, root)]
    assert listed == list(KERNEL_MODULES)


async def test_the_ai_service_says_at_start_which_build_of_the_search_it_runs(
    compiled_folder: Path | None,
) -> None:
    [port] = service_ports(1)
    inherited = {name: value for name, value in os.environ.items() if not name.startswith("GOTI_")}
    environment = {
        **inherited,
        "GOTI_HOST": "127.0.0.1",
        "GOTI_AI_PORT": str(port),
        "GOTI_AI_WORKERS": "1",
        "GOTI_LOG_FORMAT": "json",
    }
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "goti.ai",
        env=environment,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    ai = LoggingProcess(process)
    try:
        said = await ai.record("search: ")
        await ai.record("ai serving")
        process.send_signal(signal.SIGTERM)
        assert await ai.exit_code() == 0
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    expected = PURE_PYTHON if compiled_folder is None else COMPILED
    assert said["message"] == f"search: {expected}"
    assert said["search_build"] == expected
    assert bool(said["compiled"]) == (compiled_folder is not None)


def _search_in_child(environment: dict[str, str]) -> dict[str, object]:
    result = subprocess.run(
        [sys.executable, "-c", SEARCH, json.dumps(POSITIONS)],
        capture_output=True,
        text=True,
        env=environment,
        cwd=REPOSITORY,
        check=False,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    found: dict[str, object] = json.loads(result.stdout)
    return found


def test_the_compiled_search_finds_what_the_python_one_finds(
    compiled_folder: Path | None,
) -> None:
    if compiled_folder is None:
        pytest.skip("the compiled run compares its search with the Python sources' search")
    # The compiled run puts the folder on PYTHONPATH; without it, the sources are imported.
    sources_path = [
        entry
        for entry in os.environ.get("PYTHONPATH", "").split(os.pathsep)
        if entry and Path(entry).resolve() != compiled_folder
    ]
    compiled = _search_in_child(dict(os.environ))
    python = _search_in_child({**os.environ, "PYTHONPATH": os.pathsep.join(sources_path)})
    assert _is_extension(Path(str(compiled["search"])))
    assert Path(str(python["search"])).suffix == ".py"
    assert compiled["found"] == python["found"]
