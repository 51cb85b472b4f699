"""The deployment files agree with Goti: commands, variables, ports and the README's steps.

No Docker engine runs where these tests run, so the files are checked, not run: the compose
file against the Compose specification (``make lint``), and here against ``goti`` itself.
"""

from __future__ import annotations

import ipaddress
import re
import shlex
from pathlib import Path
from typing import Any

import pytest
import yaml

from goti.cli import build_parser
from goti.settings import Settings, variables

ROOT = Path(__file__).parents[2]
COMPOSE: dict[str, Any] = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
SERVICES: dict[str, dict[str, Any]] = COMPOSE["services"]
GOTI_SERVICES = {
    name: spec for name, spec in SERVICES.items() if spec.get("image") == "goti:latest"
}


def test_every_goti_service_runs_the_one_image() -> None:
    assert set(GOTI_SERVICES) == {"tables", "referee", "ai"}
    for spec in GOTI_SERVICES.values():
        assert spec["build"]["dockerfile"] == "services/Dockerfile"


@pytest.mark.parametrize("name", ["tables", "referee", "ai"])
def test_commands_are_ones_goti_accepts(name: str) -> None:
    command = GOTI_SERVICES[name]["command"]
    arguments = build_parser().parse_args(command)
    assert arguments.command == "serve"
    assert command[:2] == ["serve", name]


@pytest.mark.parametrize("name", ["tables", "referee", "ai"])
def test_variables_are_goti_settings_with_valid_values(name: str) -> None:
    environment = {key: str(value) for key, value in GOTI_SERVICES[name]["environment"].items()}
    known = {variable.name for variable in variables()}
    assert set(environment) <= known
    Settings.from_env(environment)  # raises, naming the variable, on a bad value


@pytest.mark.parametrize("name", ["tables", "referee", "ai"])
def test_health_checks_use_the_grpc_health_protocol_on_the_service_port(name: str) -> None:
    spec = GOTI_SERVICES[name]
    settings = Settings.from_env({k: str(v) for k, v in spec["environment"].items()})
    port = getattr(settings, f"{name}_port")
    assert spec["healthcheck"]["test"] == [
        "CMD",
        "python",
        "-m",
        "goti.healthcheck",
        f"localhost:{port}",
    ]


def test_tables_find_referee_and_ai_by_dns_round_robin() -> None:
    environment = GOTI_SERVICES["tables"]["environment"]
    settings = Settings.from_env({k: str(v) for k, v in environment.items()})
    assert settings.referee_target == f"dns:///referee:{Settings().referee_port}"
    assert settings.ai_target == f"dns:///ai:{Settings().ai_port}"
    assert environment["GOTI_REDIS_URL"].startswith("redis://redis:")
    assert set(GOTI_SERVICES["tables"]["depends_on"]) == {"redis", "referee", "ai"}


def test_redis_keeps_an_append_only_log_and_has_a_health_check() -> None:
    redis = SERVICES["redis"]
    assert "--appendonly" in redis["command"]
    assert redis["command"][redis["command"].index("--appendonly") + 1] == "yes"
    assert any(volume.endswith(":/data") for volume in redis["volumes"])
    assert redis["healthcheck"]["test"][-1] == "ping"


def test_the_client_port_is_published_once_and_reaches_the_tables_replicas() -> None:
    published = [(name, port) for name, spec in SERVICES.items() for port in spec.get("ports", [])]
    assert published == [("gateway", "50051:50051"), ("gateway", "8080:8080")]
    tables = Settings.from_env(
        {k: str(v) for k, v in GOTI_SERVICES["tables"]["environment"].items()}
    )
    nginx = (ROOT / "deploy" / "nginx.conf").read_text()
    assert re.search(rf"server tables:{tables.tables_port}\b", nginx)
    assert re.search(rf"server tables:{tables.web_port}\b", nginx)
    assert "grpc_pass grpc://tables;" in nginx
    assert "proxy_pass http://tables_web;" in nginx


def test_the_tables_trust_the_gateway_alone_to_name_the_client() -> None:
    """Behind the gateway every call comes from it: the guest rate limit counts per client
    only if the gateway forwards the client's address and the tables believe no one else."""
    tables = Settings.from_env(
        {k: str(v) for k, v in GOTI_SERVICES["tables"]["environment"].items()}
    )
    gateway = ipaddress.ip_address(SERVICES["gateway"]["networks"]["default"]["ipv4_address"])
    assert tables.trusted_proxies == (ipaddress.ip_network(gateway),)
    network = COMPOSE["networks"]["default"]["ipam"]["config"][0]
    assert gateway in ipaddress.ip_network(network["subnet"])
    assert gateway not in ipaddress.ip_network(network["ip_range"]), "others may draw it"
    nginx = (ROOT / "deploy" / "nginx.conf").read_text()
    servers = nginx.split("server {")[1:]
    assert len(servers) == 2
    for server, directive in zip(servers, ("grpc_set_header", "proxy_set_header"), strict=True):
        assert f"{directive} X-Forwarded-For $proxy_add_x_forwarded_for;" in server


def test_every_service_has_resource_limits() -> None:
    for name, spec in SERVICES.items():
        limits = spec["deploy"]["resources"]["limits"]
        assert {"cpus", "memory"} <= set(limits), name


def test_the_dockerfile_steps_are_the_readmes() -> None:
    """Installing Goti in the image is what the README tells an operator to do by hand: build
    both wheels (in a stage with a C compiler, for the compiled build), then install them."""
    dockerfile = (ROOT / "services" / "Dockerfile").read_text()
    readme = (ROOT / "README.md").read_text()
    built = re.findall(r"^RUN (pip wheel [^\n]+)$", dockerfile, flags=re.MULTILINE)
    assert built == ["pip wheel --no-cache-dir --no-deps --wheel-dir wheels ./clients ."]
    assert "pip wheel --no-deps --wheel-dir wheels ./clients ." in readme
    installs = re.findall(r"^RUN (pip install [^\n&]+)", dockerfile, flags=re.MULTILINE)
    assert [install.strip() for install in installs] == [
        "pip install --no-cache-dir /tmp/wheels/*.whl"
    ]
    assert "pip install wheels/*.whl" in readme
    entrypoint = re.search(r'^ENTRYPOINT \["(\w+)"\]', dockerfile, flags=re.MULTILINE)
    command = re.search(r"^CMD (\[.*\])$", dockerfile, flags=re.MULTILINE)
    assert entrypoint is not None and command is not None
    default = [entrypoint.group(1), *yaml.safe_load(command.group(1))]
    assert shlex.join(default) in readme
    for name in GOTI_SERVICES:
        assert f"goti serve {name}" in readme


def test_the_dockerfile_builds_the_wheels_from_every_file_their_build_reads() -> None:
    """The wheel stage copies what a build of both distributions reads (each setup.py, the
    SDK's build module inside clients/, MANIFEST.in, the license the metadata names), has a
    C compiler, and hands its wheels, and nothing else, to the image that runs Goti."""
    dockerfile = (ROOT / "services" / "Dockerfile").read_text()
    stages = re.split(r"^FROM ", dockerfile, flags=re.MULTILINE)[1:]
    assert [stage.split()[0] for stage in stages] == ["python:3.11-slim"] * 2
    build, run = stages
    assert "AS wheels" in build.splitlines()[0]
    assert "gcc" in build and "libc6-dev" in build
    copied = {
        part
        for line in re.findall(r"^COPY ([^\n]+)$", build, flags=re.MULTILINE)
        for part in line.split()[:-1]
    }
    needed = {"pyproject.toml", "setup.py", "MANIFEST.in", "README.md", "LICENSE"}
    assert needed | {"services", "clients"} <= copied
    for name in needed:
        assert (ROOT / name).exists(), name
    assert (ROOT / "clients" / "setup.py").exists() and (
        ROOT / "clients" / "mypyc_build.py"
    ).exists()
    assert re.findall(r"^COPY ([^\n]+)$", run, flags=re.MULTILINE) == [
        "--from=wheels /src/wheels /tmp/wheels"
    ]
    assert "gcc" not in run


NEXT_UPSTREAM_CASES = frozenset(
    {"error", "timeout", "invalid_header", "non_idempotent", "off"}
    | {f"http_{code}" for code in (500, 502, 503, 504, 403, 404, 429)}
)
"""What nginx's grpc_next_upstream and proxy_next_upstream accept (nginx's own reference,
https://nginx.org/en/docs/http/ngx_http_grpc_module.html#grpc_next_upstream): any other word
stops nginx from starting."""


def test_the_gateway_passes_calls_on_only_in_cases_nginx_knows() -> None:
    nginx = (ROOT / "deploy" / "nginx.conf").read_text()
    directives = re.findall(r"^\s*(?:grpc|proxy)_next_upstream ([^;]+);", nginx, re.MULTILINE)
    assert len(directives) == 2
    for cases in directives:
        assert set(cases.split()) <= NEXT_UPSTREAM_CASES, cases
