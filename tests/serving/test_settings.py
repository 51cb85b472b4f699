"""Settings from GOTI_* variables: defaults, parsing, errors that name the variable, and the
documentation generated from the same declarations."""

from __future__ import annotations

import dataclasses
import ipaddress
from pathlib import Path

import pytest

from goti import settings as settings_module
from goti.settings import Settings, SettingsError, variables

# A valid value for every variable that differs from its default, with the field it sets.
SAMPLES: dict[str, tuple[str, str, object]] = {
    "GOTI_HOST": ("127.0.0.1", "host", "127.0.0.1"),
    "GOTI_TABLES_PORT": ("6001", "tables_port", 6001),
    "GOTI_REFEREE_PORT": ("6002", "referee_port", 6002),
    "GOTI_AI_PORT": ("6003", "ai_port", 6003),
    "GOTI_WEB_PORT": ("8080", "web_port", 8080),
    "GOTI_TABLES_METRICS_PORT": ("9101", "tables_metrics_port", 9101),
    "GOTI_REFEREE_METRICS_PORT": ("9102", "referee_metrics_port", 9102),
    "GOTI_AI_METRICS_PORT": ("9103", "ai_metrics_port", 9103),
    "GOTI_REFEREE_TARGET": ("dns:///referee:50052", "referee_target", "dns:///referee:50052"),
    "GOTI_AI_TARGET": ("dns:///ai:50053", "ai_target", "dns:///ai:50053"),
    "GOTI_REDIS_URL": ("redis://redis:6379/0", "redis_url", "redis://redis:6379/0"),
    "GOTI_REDIS_SHARDS": ("64", "redis_shards", 64),
    "GOTI_REDIS_WAIT_REPLICAS": ("1", "redis_wait_replicas", 1),
    "GOTI_REDIS_WAIT_TIMEOUT_SECONDS": ("2", "redis_wait_timeout_seconds", 2.0),
    "GOTI_AI_MASTER_ENDGAMES": (
        "/var/lib/goti/endgames",
        "ai_master_endgames",
        "/var/lib/goti/endgames",
    ),
    "GOTI_DATA_DIR": ("/srv/goti", "data_dir", "/srv/goti"),
    "GOTI_AI_WORKERS": ("3", "ai_workers", 3),
    "GOTI_AI_SEARCH_MEMORY_MB": ("64", "ai_search_memory_mb", 64),
    "GOTI_LOG_LEVEL": ("DEBUG", "log_level", "debug"),
    "GOTI_LOG_FORMAT": ("json", "log_format", "json"),
    "GOTI_GRACE_SECONDS": ("2.5", "grace_seconds", 2.5),
    "GOTI_MAX_MESSAGE_BYTES": ("65536", "max_message_bytes", 65536),
    "GOTI_KEEPALIVE_TIME_SECONDS": ("120", "keepalive_time_seconds", 120.0),
    "GOTI_KEEPALIVE_TIMEOUT_SECONDS": ("10", "keepalive_timeout_seconds", 10.0),
    "GOTI_KEEPALIVE_MIN_PING_INTERVAL_SECONDS": ("30", "keepalive_min_ping_interval_seconds", 30.0),
    "GOTI_MAX_CONNECTION_AGE_SECONDS": ("1800", "max_connection_age_seconds", 1800.0),
    "GOTI_MAX_PENDING_REQUESTS": ("50000", "max_pending_requests", 50000),
    "GOTI_MAX_CONCURRENT_STREAMS": ("1000", "max_concurrent_streams", 1000),
    "GOTI_JOIN_BASE_URL": (
        "https://goti.example/join/",
        "join_base_url",
        "https://goti.example/join/",
    ),
    "GOTI_WEB_ALLOWED_ORIGINS": (
        "https://app.example, http://localhost:3000/",
        "web_allowed_origins",
        ("https://app.example", "http://localhost:3000"),
    ),
    "GOTI_FINISHED_TABLE_SECONDS": ("600", "finished_table_seconds", 600),
    "GOTI_WAITING_TABLE_SECONDS": ("3600", "waiting_table_seconds", 3600),
    "GOTI_IDLE_TABLE_SECONDS": ("7200", "idle_table_seconds", 7200),
    "GOTI_HEARTBEAT_SECONDS": ("5", "heartbeat_seconds", 5.0),
    "GOTI_TABLE_LOG_EVENTS": ("64", "table_log_events", 64),
    "GOTI_JOINS_PER_MINUTE": ("0", "joins_per_minute", 0),
    "GOTI_TABLES_PER_MINUTE": ("100", "tables_per_minute", 100),
    "GOTI_SEEKS_PER_MINUTE": ("30", "seeks_per_minute", 30),
    "GOTI_SEEK_RESUME_SECONDS": ("15", "seek_resume_seconds", 15),
    "GOTI_GUESTS_PER_MINUTE": ("5", "guests_per_minute", 5),
    "GOTI_IDLE_GUEST_DAYS": ("0", "idle_guest_days", 0),
    "GOTI_TRUSTED_PROXIES": (
        "10.0.0.0/8, 172.30.51.10 ,[fd00::1]",
        "trusted_proxies",
        (
            ipaddress.ip_network("10.0.0.0/8"),
            ipaddress.ip_network("172.30.51.10/32"),
            ipaddress.ip_network("fd00::1/128"),
        ),
    ),
}


def test_an_empty_environment_gives_the_defaults() -> None:
    assert Settings.from_env({}) == Settings()
    blank = {variable.name: "  " for variable in variables()}
    assert Settings.from_env(blank) == Settings()


def test_a_composition_roots_own_defaults_fill_only_what_the_environment_leaves_unset() -> None:
    unset = {"GOTI_WEB_PORT": "8080"}
    assert Settings.from_env({}, unset=unset).web_port == 8080
    assert Settings.from_env({"GOTI_WEB_PORT": " "}, unset=unset).web_port == 8080
    assert Settings.from_env({"GOTI_WEB_PORT": "0"}, unset=unset).web_port == 0
    with pytest.raises(SettingsError, match="GOTI_WEB_PORT must be a port number"):
        Settings.from_env({}, unset={"GOTI_WEB_PORT": "web"})


def test_every_field_is_a_documented_variable() -> None:
    documented = variables()
    assert len(documented) == len(dataclasses.fields(Settings))
    names = [variable.name for variable in documented]
    assert len(set(names)) == len(names)
    for variable in documented:
        assert variable.name.startswith("GOTI_")
        assert variable.description.strip() == variable.description
        assert "\n" not in variable.description and "|" not in variable.description


def test_every_variable_sets_its_field() -> None:
    assert set(SAMPLES) == {variable.name for variable in variables()}, "add a sample above"
    for name, (text, field_name, value) in SAMPLES.items():
        changed = Settings.from_env({name: text})
        assert getattr(changed, field_name) == value, name
        assert getattr(Settings(), field_name) != value, f"{name}: pick a non-default sample"
    everything = Settings.from_env({name: text for name, (text, _, _) in SAMPLES.items()})
    for _, field_name, value in SAMPLES.values():
        assert getattr(everything, field_name) == value


def test_documented_defaults_read_back_as_the_defaults() -> None:
    for variable in variables():
        if variable.default and "$" not in variable.default:
            assert Settings.from_env({variable.name: variable.default}) == Settings(), variable


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("GOTI_REFEREE_PORT", "abc", "GOTI_REFEREE_PORT must be a port number 1-65535, got 'abc'"),
        ("GOTI_TABLES_PORT", "0", "GOTI_TABLES_PORT must be a port number 1-65535, got '0'"),
        ("GOTI_AI_PORT", "70000", "GOTI_AI_PORT must be a port number 1-65535, got '70000'"),
        (
            "GOTI_AI_METRICS_PORT",
            "-1",
            "GOTI_AI_METRICS_PORT must be a port number 1-65535, or 0 for off, got '-1'",
        ),
        (
            "GOTI_GRACE_SECONDS",
            "soon",
            "GOTI_GRACE_SECONDS must be a number of seconds, 0 or more, got 'soon'",
        ),
        (
            "GOTI_GRACE_SECONDS",
            "-1",
            "GOTI_GRACE_SECONDS must be a number of seconds, 0 or more, got '-1'",
        ),
        ("GOTI_GRACE_SECONDS", "nan", "GOTI_GRACE_SECONDS must be a number of seconds"),
        (
            "GOTI_KEEPALIVE_TIMEOUT_SECONDS",
            "0",
            "GOTI_KEEPALIVE_TIMEOUT_SECONDS must be a number of seconds above 0, got '0'",
        ),
        ("GOTI_MAX_MESSAGE_BYTES", "0", "GOTI_MAX_MESSAGE_BYTES must be a whole number, 1 or more"),
        ("GOTI_MAX_MESSAGE_BYTES", "1e6", "GOTI_MAX_MESSAGE_BYTES must be a whole number"),
        ("GOTI_AI_WORKERS", "-2", "GOTI_AI_WORKERS must be a whole number, 0 or more, got '-2'"),
        (
            "GOTI_LOG_LEVEL",
            "loud",
            "GOTI_LOG_LEVEL must be one of debug, info, warning, error, critical, got 'loud'",
        ),
        ("GOTI_LOG_FORMAT", "xml", "GOTI_LOG_FORMAT must be one of auto, json, text, got 'xml'"),
        ("GOTI_REDIS_URL", "localhost:6379", "GOTI_REDIS_URL must be a URL starting redis://"),
        (
            "GOTI_REDIS_URL",
            "redis+sentinel://sentinel-0:26379",
            "GOTI_REDIS_URL must be redis+sentinel://HOST[:PORT][,HOST[:PORT]...]/SERVICE",
        ),
        ("GOTI_REDIS_WAIT_REPLICAS", "-1", "GOTI_REDIS_WAIT_REPLICAS must be a whole number"),
        (
            "GOTI_REDIS_WAIT_TIMEOUT_SECONDS",
            "0",
            "GOTI_REDIS_WAIT_TIMEOUT_SECONDS must be a number of seconds above 0, got '0'",
        ),
        ("GOTI_HOST", "not a host", "GOTI_HOST must be a host name or an IP address"),
        ("GOTI_HOST", "-bad-", "GOTI_HOST must be a host name or an IP address"),
        ("GOTI_AI_TARGET", "ai 50053", "GOTI_AI_TARGET must be a gRPC target"),
        ("GOTI_JOIN_BASE_URL", "goti.example", "GOTI_JOIN_BASE_URL must be a URL"),
        ("GOTI_WEB_ALLOWED_ORIGINS", "app.example", "GOTI_WEB_ALLOWED_ORIGINS must be web origins"),
        (
            "GOTI_WEB_ALLOWED_ORIGINS",
            "https://app.example/play",
            "GOTI_WEB_ALLOWED_ORIGINS must be web origins",
        ),
        ("GOTI_FINISHED_TABLE_SECONDS", "0", "GOTI_FINISHED_TABLE_SECONDS must be a whole number"),
        ("GOTI_IDLE_GUEST_DAYS", "-1", "GOTI_IDLE_GUEST_DAYS must be a whole number, 0 or more"),
        (
            "GOTI_TRUSTED_PROXIES",
            "gateway",
            "GOTI_TRUSTED_PROXIES must be IP addresses or networks",
        ),
        ("GOTI_TRUSTED_PROXIES", "10.0.0.0/33", "GOTI_TRUSTED_PROXIES must be IP addresses"),
    ],
)
def test_a_bad_value_is_an_error_naming_the_variable(name: str, text: str, message: str) -> None:
    with pytest.raises(SettingsError) as error:
        Settings.from_env({name: text})
    assert str(error.value).startswith(message)
    assert error.value.problems == [str(error.value)]


def test_every_bad_value_is_reported_at_once() -> None:
    with pytest.raises(SettingsError) as error:
        Settings.from_env({"GOTI_TABLES_PORT": "x", "GOTI_LOG_FORMAT": "xml", "GOTI_HOST": "ok"})
    assert [problem.split()[0] for problem in error.value.problems] == [
        "GOTI_TABLES_PORT",
        "GOTI_LOG_FORMAT",
    ]


def test_the_web_port_is_not_a_grpc_port() -> None:
    with pytest.raises(SettingsError, match="GOTI_WEB_PORT must differ from the gRPC ports"):
        Settings.from_env({"GOTI_WEB_PORT": "50051"})
    assert Settings.from_env({"GOTI_WEB_PORT": "0"}).web_port == 0
    assert Settings.from_env({"GOTI_WEB_PORT": "8080"}).web_port == 8080


def test_clients_may_not_ping_faster_than_servers_accept() -> None:
    with pytest.raises(SettingsError, match="GOTI_KEEPALIVE_TIME_SECONDS must be at least"):
        Settings.from_env(
            {
                "GOTI_KEEPALIVE_TIME_SECONDS": "10",
                "GOTI_KEEPALIVE_MIN_PING_INTERVAL_SECONDS": "30",
            }
        )


@pytest.mark.parametrize(
    ("text", "host"),
    [
        ("0.0.0.0", "0.0.0.0"),
        ("::", "[::]"),
        ("[::1]", "[::1]"),
        ("fe80::1", "[fe80::1]"),
        ("tables.internal", "tables.internal"),
        (" localhost ", "localhost"),
    ],
)
def test_hosts_are_normalised_for_a_bind_address(text: str, host: str) -> None:
    assert Settings.from_env({"GOTI_HOST": text}).host == host


def test_targets_default_to_this_host_and_the_service_port() -> None:
    settings = Settings.from_env({"GOTI_REFEREE_PORT": "7002", "GOTI_AI_TARGET": "dns:///ai:1"})
    assert settings.target("referee") == "localhost:7002"
    assert settings.target("ai") == "dns:///ai:1"
    assert settings.target("tables") == "localhost:50051"
    assert settings.port("referee") == 7002
    assert settings.metrics_port("tables") == 0


def test_ai_workers_default_to_the_cpus_available() -> None:
    assert Settings().ai_worker_count >= 1
    assert Settings(ai_workers=3).ai_worker_count == 3


def test_unknown_variables_are_pointed_out_with_a_likely_fix() -> None:
    environ = {
        "GOTI_REFERE_PORT": "1",
        "GOTI_FROBNICATE": "1",
        "GOTI_TEST_REDIS_URL": "redis://x",
        "GOTI_HOST": "::",
        "HOME": "/root",
    }
    assert settings_module.unknown_variables(environ) == [
        "GOTI_FROBNICATE",
        "GOTI_REFERE_PORT (did you mean GOTI_REFEREE_PORT?)",
    ]


def test_the_table_and_help_list_every_variable_with_its_default() -> None:
    table = settings_module.markdown_table().splitlines()
    help_text = settings_module.help_text()
    assert len(table) == 2 + len(variables())
    for row, variable in zip(table[2:], variables(), strict=True):
        assert row.startswith(f"| `{variable.name}` |")
        assert variable.description in row
        assert variable.name in help_text


def test_the_readme_shows_the_generated_table() -> None:
    readme = Path(__file__).parents[2] / "README.md"
    text = readme.read_text(encoding="utf-8")
    assert "\n## Configuration" in text
    assert settings_module.markdown_table() in text, (
        "paste goti.settings.markdown_table() into README.md's Configuration section"
    )
