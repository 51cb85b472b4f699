"""The Kubernetes manifests agree with Kubernetes' API schemas and with Goti itself.

No cluster runs where these tests run, so the manifests are checked, not applied: every
object against the API schemas of the Kubernetes versions they are for (kubernetes-validate,
which ships them, in strict mode: an unknown field fails), and here against ``goti``: the
commands it accepts, its settings, the ports it listens on and how long it takes to stop.
"""

from __future__ import annotations

import copy
import importlib.metadata
import json
import math
import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml

from goti.backend import START_TIMEOUT_SECONDS, STOP_MARGIN_SECONDS
from goti.cli import build_parser
from goti.serving import SERVICE_CONFIG, SHUTDOWN_PAUSE_SECONDS
from goti.settings import SERVICE_NAMES, ServiceName, Settings, variables

ROOT = Path(__file__).parents[2]
KUBERNETES = ROOT / "deploy" / "kubernetes"
GATEWAY_EXAMPLE = KUBERNETES / "gateway-example.yaml"
"""Not part of the base: the operator copies it into an overlay with their own names."""

OLDEST_KUBERNETES = "1.30"
"""The oldest Kubernetes the manifests are for: gRPC probes are stable since 1.27, and the
preStop ``sleep`` action is on by default since 1.30."""
NEWEST_KUBERNETES = ".".join(importlib.metadata.version("kubernetes-validate").split(".")[:2])
"""The newest Kubernetes whose schemas the pinned kubernetes-validate ships: its version is
that Kubernetes version (1.37.0 ships 1.25 to 1.37)."""

REDIS_SECRET = ("goti-redis", "url")
"""The Secret and key the tables pods read GOTI_REDIS_URL from; the operator creates it."""

Manifest = dict[str, Any]


def kustomization() -> Manifest:
    document: Manifest = yaml.safe_load((KUBERNETES / "kustomization.yaml").read_text())
    return document


def rendered() -> list[Manifest]:
    """What ``kubectl kustomize deploy/kubernetes`` prints, for a kustomization that only
    lists files: their documents. No maintained kustomize installs from the registries CI
    reaches (Debian's kubectl is 1.20, of 2021), so the tests read the files themselves; the
    kustomization may hold nothing else (checked below), and where a kubectl is installed its
    rendering is compared with this one."""
    return [
        document
        for name in kustomization()["resources"]
        for document in yaml.safe_load_all((KUBERNETES / name).read_text())
        if document is not None
    ]


MANIFESTS = rendered()


def of_kind(kind: str) -> dict[str, Manifest]:
    return {m["metadata"]["name"]: m for m in MANIFESTS if m["kind"] == kind}


DEPLOYMENTS = of_kind("Deployment")
SERVICES = of_kind("Service")


def container(name: ServiceName) -> Manifest:
    containers: list[Manifest] = DEPLOYMENTS[name]["spec"]["template"]["spec"]["containers"]
    (only,) = containers
    assert only["name"] == name
    return only


def literal_environment(name: ServiceName) -> dict[str, str]:
    return {item["name"]: item["value"] for item in container(name)["env"] if "value" in item}


def settings_of(name: ServiceName) -> Settings:
    return Settings.from_env(literal_environment(name))


def selects(selector: dict[str, str], labels: dict[str, str]) -> bool:
    return selector.items() <= labels.items()


def pod_labels(deployment: Manifest) -> dict[str, str]:
    labels: dict[str, str] = deployment["spec"]["template"]["metadata"]["labels"]
    return labels


def selected_deployments(selector: dict[str, str]) -> list[str]:
    return [name for name, spec in DEPLOYMENTS.items() if selects(selector, pod_labels(spec))]


def cores(quantity: str) -> float:
    """A Kubernetes CPU quantity ("2", "500m") in cores."""
    return int(quantity[:-1]) / 1000 if quantity.endswith("m") else float(quantity)


def test_the_kustomization_lists_every_manifest_and_nothing_else() -> None:
    document = kustomization()
    assert set(document) == {"apiVersion", "kind", "resources"}, "rendered() reads only files"
    listed = set(document["resources"])
    on_disk = {path.name for path in KUBERNETES.glob("*.yaml")}
    assert listed == on_disk - {"kustomization.yaml", GATEWAY_EXAMPLE.name}
    names = Counter((m["kind"], m["metadata"]["name"]) for m in MANIFESTS)
    assert max(names.values()) == 1, "kustomize refuses two objects of one kind and name"
    assert all("namespace" not in m["metadata"] for m in MANIFESTS), "the overlay's to choose"


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="no kubectl installed here")
def test_kubectl_renders_what_these_tests_read() -> None:
    printed = subprocess.run(
        ["kubectl", "kustomize", str(KUBERNETES)],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout

    def by_identity(documents: list[Manifest]) -> list[Manifest]:
        return sorted(documents, key=lambda m: (m["kind"], m["metadata"]["name"]))

    assert by_identity(list(yaml.safe_load_all(printed))) == by_identity(MANIFESTS)


def validate_against_schemas(
    documents: list[Manifest], folder: Path
) -> subprocess.CompletedProcess[str]:
    """kubernetes-validate's own command, strict, on ``documents`` for both Kubernetes
    versions: its report says which objects passed against which version."""
    manifests = folder / "manifests.yaml"
    manifests.write_text(yaml.safe_dump_all(documents))
    versions = ["-k", OLDEST_KUBERNETES, "-k", NEWEST_KUBERNETES]
    return subprocess.run(
        [sys.executable, "-m", "kubernetes_validate", "--strict", *versions, str(manifests)],
        capture_output=True,
        text=True,
        check=False,
        cwd=folder,
        timeout=120,
    )


def test_every_object_is_valid_against_the_kubernetes_schemas(tmp_path: Path) -> None:
    checked = validate_against_schemas(MANIFESTS, tmp_path)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    # A kind it has no schema for is only a warning: each object must have passed.
    for version in (OLDEST_KUBERNETES, NEWEST_KUBERNETES):
        for manifest in MANIFESTS:
            resource = f"{manifest['kind'].lower()}/{manifest['metadata']['name']}"
            assert f"passed for resource {resource} against version {version}" in checked.stdout


def test_the_schema_check_refuses_a_misspelt_field(tmp_path: Path) -> None:
    """Strict mode is what makes the check worth having: a typo fails, not passes unseen."""
    misspelt = copy.deepcopy(DEPLOYMENTS["tables"])
    probes = misspelt["spec"]["template"]["spec"]["containers"][0]
    probes["readinesProbe"] = probes.pop("readinessProbe")
    checked = validate_against_schemas([misspelt], tmp_path)
    assert checked.returncode == 1
    assert "'readinesProbe' was unexpected" in checked.stdout


def test_each_service_is_a_deployment_of_the_compose_image() -> None:
    assert set(DEPLOYMENTS) == set(SERVICE_NAMES)
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    images = {compose["services"][name]["image"] for name in SERVICE_NAMES}
    assert {container(name)["image"] for name in SERVICE_NAMES} == images
    assert len(images) == 1


@pytest.mark.parametrize("name", SERVICE_NAMES)
def test_commands_are_ones_goti_accepts(name: ServiceName) -> None:
    dockerfile = (ROOT / "services" / "Dockerfile").read_text()
    assert re.search(r'^ENTRYPOINT \["goti"\]$', dockerfile, flags=re.MULTILINE)
    spec = container(name)
    assert "command" not in spec, "the image's entrypoint, goti, runs"
    arguments = build_parser().parse_args(spec["args"])
    assert (arguments.command, arguments.service) == ("serve", name)


@pytest.mark.parametrize("name", SERVICE_NAMES)
def test_variables_are_goti_settings_with_valid_values(name: ServiceName) -> None:
    environment = container(name)["env"]
    known = {variable.name for variable in variables()}
    assert {item["name"] for item in environment} <= known
    settings_of(name)  # raises, naming the variable, on a bad value
    from_elsewhere = {
        item["name"]: item["valueFrom"] for item in environment if "value" not in item
    }
    if name == "tables":
        reference = from_elsewhere.pop("GOTI_REDIS_URL")["secretKeyRef"]
        assert (reference["name"], reference["key"]) == REDIS_SECRET
        assert not reference.get("optional", False), "the tables service needs Redis"
    assert from_elsewhere == {}


@pytest.mark.parametrize("name", SERVICE_NAMES)
def test_probes_ask_the_grpc_health_service_on_the_port_goti_listens_on(
    name: ServiceName,
) -> None:
    spec = container(name)
    port = settings_of(name).port(name)
    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        assert spec[probe]["grpc"] == {"port": port}, probe
    startup = spec["startupProbe"]
    allowed = startup["periodSeconds"] * startup["failureThreshold"]
    assert allowed >= START_TIMEOUT_SECONDS, "as long to start as goti serve allows"


@pytest.mark.parametrize("name", SERVICE_NAMES)
def test_container_ports_are_the_ports_goti_listens_on(name: ServiceName) -> None:
    settings = settings_of(name)
    listening = {"grpc": settings.port(name), "metrics": settings.metrics_port(name)}
    if name == "tables":
        listening["web"] = settings.web_port
    declared = {port["name"]: port["containerPort"] for port in container(name)["ports"]}
    assert declared == {kind: port for kind, port in listening.items() if port}


@pytest.mark.parametrize("name", SERVICE_NAMES)
def test_a_pod_outlives_gotis_graceful_stop(name: ServiceName) -> None:
    """Kubernetes kills a pod terminationGracePeriodSeconds after it starts stopping it, the
    preStop hook included: by then Goti must have paused, drained and exited. Its gRPC stop
    ends within GOTI_GRACE_SECONDS of SIGTERM, the web port's (tables) within the whole
    seconds of it after the pause, and goti serve gives each process STOP_MARGIN_SECONDS more
    to exit."""
    pod = DEPLOYMENTS[name]["spec"]["template"]["spec"]
    pre_stop = container(name)["lifecycle"]["preStop"]["sleep"]["seconds"]
    assert pre_stop > 0, "endpoints and DNS drop the pod before Goti stops"
    grace = settings_of(name).grace_seconds
    needed = pre_stop + SHUTDOWN_PAUSE_SECONDS + math.ceil(grace) + STOP_MARGIN_SECONDS
    assert pod["terminationGracePeriodSeconds"] >= needed


@pytest.mark.parametrize("name", ["referee", "ai"])
def test_the_tables_service_finds_every_referee_and_ai_pod_by_dns(name: ServiceName) -> None:
    service = SERVICES[name]["spec"]
    assert service["clusterIP"] == "None", "headless: DNS names every ready pod"
    port = settings_of(name).port(name)
    (grpc_port,) = service["ports"]
    assert (grpc_port["port"], grpc_port["targetPort"]) == (port, "grpc")
    assert settings_of("tables").target(name) == f"dns:///{name}:{port}"
    # Every address DNS gives gets calls only with a round-robin policy (gRPC's default,
    # pick_first, would use one pod).
    policies = json.loads(SERVICE_CONFIG)["loadBalancingConfig"]
    assert policies == [{"round_robin": {}}]
    # gRPC resolves the name again when a connection closes: a connection that ages out makes
    # the tables service see the pods an autoscaler added.
    assert settings_of(name).max_connection_age_seconds > 0


def test_the_tables_service_is_reached_over_http2_on_its_grpc_port() -> None:
    service = SERVICES["tables"]["spec"]
    assert service.get("clusterIP") != "None", "one address for the gateway"
    ports = {port["name"]: port for port in service["ports"]}
    settings = settings_of("tables")
    assert ports["grpc"]["port"] == settings.tables_port
    assert ports["grpc"]["appProtocol"] == "kubernetes.io/h2c"
    assert ports["web"]["port"] == settings.web_port


def test_every_service_selects_the_pods_of_its_deployment() -> None:
    assert set(SERVICES) == set(SERVICE_NAMES)
    for name in SERVICE_NAMES:
        service = SERVICES[name]["spec"]
        assert selected_deployments(service["selector"]) == [name]
        named = {port["name"] for port in container(name)["ports"]}
        assert {port["targetPort"] for port in service["ports"]} <= named


def test_each_deployment_selects_its_own_pods_alone() -> None:
    for name, deployment in DEPLOYMENTS.items():
        assert selected_deployments(deployment["spec"]["selector"]["matchLabels"]) == [name]
        for spread in deployment["spec"]["template"]["spec"]["topologySpreadConstraints"]:
            assert selected_deployments(spread["labelSelector"]["matchLabels"]) == [name]


def test_every_deployment_is_autoscaled_and_its_disruptions_budgeted() -> None:
    autoscalers = of_kind("HorizontalPodAutoscaler")
    budgets = of_kind("PodDisruptionBudget")
    assert set(autoscalers) == set(budgets) == set(DEPLOYMENTS)
    for name, autoscaler in autoscalers.items():
        target = autoscaler["spec"]["scaleTargetRef"]
        assert (target["apiVersion"], target["kind"], target["name"]) == (
            "apps/v1",
            "Deployment",
            name,
        )
        (metric,) = autoscaler["spec"]["metrics"]
        assert metric["resource"]["name"] == "cpu"
        assert "replicas" not in DEPLOYMENTS[name]["spec"], "the autoscaler sets the replicas"
        budget = budgets[name]["spec"]
        assert selected_deployments(budget["selector"]["matchLabels"]) == [name]
        # A drain may take one pod while another serves.
        assert budget["maxUnavailable"] < autoscaler["spec"]["minReplicas"]


@pytest.mark.parametrize("name", SERVICE_NAMES)
def test_every_container_has_requests_and_limits(name: ServiceName) -> None:
    resources = container(name)["resources"]
    for bound in ("requests", "limits"):
        assert set(resources[bound]) == {"cpu", "memory"}, bound
    assert cores(resources["requests"]["cpu"]) <= cores(resources["limits"]["cpu"])


def test_the_ai_runs_one_search_process_per_cpu_of_its_limit() -> None:
    """A container sees every CPU of its node (the limit is a CPU-time quota), so Goti's own
    default would start a process per node CPU; the setting must match the limit."""
    limit = cores(container("ai")["resources"]["limits"]["cpu"])
    assert settings_of("ai").ai_workers == limit


@pytest.mark.parametrize("name", SERVICE_NAMES)
def test_pods_run_as_the_images_user_with_somewhere_to_write(name: ServiceName) -> None:
    dockerfile = (ROOT / "services" / "Dockerfile").read_text()
    user = re.search(r"useradd --system --uid (\d+)", dockerfile)
    assert user is not None
    pod = DEPLOYMENTS[name]["spec"]["template"]["spec"]
    assert pod["securityContext"]["runAsUser"] == int(user.group(1))
    spec = container(name)
    assert spec["securityContext"]["readOnlyRootFilesystem"]
    # The AI's search processes start from a fork server, whose socket is made in /tmp.
    mounts = {mount["mountPath"]: mount["name"] for mount in spec["volumeMounts"]}
    volumes = {volume["name"]: volume for volume in pod["volumes"]}
    assert "emptyDir" in volumes[mounts["/tmp"]]


def test_the_gateway_example_routes_clients_to_the_tables_service() -> None:
    example = {m["kind"]: m for m in yaml.safe_load_all(GATEWAY_EXAMPLE.read_text())}
    assert set(example) == {"Gateway", "GRPCRoute", "HTTPRoute"}
    assert {m["apiVersion"] for m in example.values()} == {"gateway.networking.k8s.io/v1"}
    gateway = example["Gateway"]
    listeners = {listener["name"]: listener for listener in gateway["spec"]["listeners"]}
    service = {port["port"]: port["name"] for port in SERVICES["tables"]["spec"]["ports"]}
    for kind, port_name in (("GRPCRoute", "grpc"), ("HTTPRoute", "web")):
        route = example[kind]["spec"]
        (parent,) = route["parentRefs"]
        assert parent["name"] == gateway["metadata"]["name"]
        listener = listeners[parent["sectionName"]]
        assert listener["allowedRoutes"]["kinds"] == [{"kind": kind}]
        assert route["hostnames"] == [listener["hostname"]]
        (rule,) = route["rules"]
        (backend,) = rule["backendRefs"]
        assert backend["name"] == "tables"
        assert service[backend["port"]] == port_name, kind
    hostnames = [listener["hostname"] for listener in listeners.values()]
    assert len(set(hostnames)) == len(hostnames), "a GRPCRoute and an HTTPRoute share no host"


def test_the_readme_says_how_to_apply_them_and_where_redis_comes_from() -> None:
    readme = (ROOT / "README.md").read_text()
    in_a_namespace = r"kubectl (-n \S+ )?"
    assert re.search(in_a_namespace + r"apply -k deploy/kubernetes\n", readme)
    secret, key = REDIS_SECRET
    create = rf"create secret generic {secret} \\\n\s+--from-literal={key}=redis"
    assert re.search(in_a_namespace + create, readme)
