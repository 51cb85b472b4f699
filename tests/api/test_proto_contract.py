"""The contract's own checks: the committed code matches the protos, every element of the
protos is documented, and the error reasons say what the code does."""

from __future__ import annotations

import dataclasses
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from google.protobuf import descriptor_pb2

from goti.api.error_status import (
    CANDIDATES,
    CURRENT_SEQ,
    FIELD,
    LEGAL_MOVES,
    LIMIT,
    MOVES_TO_WAIT,
    RETRY_AFTER_MS,
    TOKEN,
    reason_name,
    status_code_of,
)
from goti.api.v1 import errors_pb2, game_pb2
from goti.rules.game import GameState

REPOSITORY = Path(__file__).resolve().parents[2]
PROTO_ROOT = REPOSITORY / "proto"
PROTOS = sorted(PROTO_ROOT.glob("goti/api/v1/*.proto"))

# Paths in a FileDescriptorProto (descriptor.proto field numbers).
MESSAGES, ENUMS, SERVICES = 4, 5, 6
FIELDS, NESTED_MESSAGES, NESTED_ENUMS, ONEOFS = 2, 3, 4, 8
ENUM_VALUES, METHODS = 2, 2


def test_the_committed_code_matches_the_protos() -> None:
    result = subprocess.run(
        [sys.executable, str(PROTO_ROOT / "build.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> list[descriptor_pb2.FileDescriptorProto]:
    """The protos as descriptors with their comments (protoc's source info)."""
    out = tmp_path_factory.mktemp("descriptors") / "set.binpb"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "grpc_tools.protoc",
            f"--proto_path={PROTO_ROOT}",
            "--include_source_info",
            f"--descriptor_set_out={out}",
            *(str(path.relative_to(PROTO_ROOT)) for path in PROTOS),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return list(descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes()).file)


Element = tuple[tuple[int, ...], str]


def enum_elements(
    path: tuple[int, ...], scope: str, enum: descriptor_pb2.EnumDescriptorProto
) -> Iterator[Element]:
    yield path, f"{scope}.{enum.name}"
    for index, value in enumerate(enum.value):
        yield (*path, ENUM_VALUES, index), f"{scope}.{enum.name}.{value.name}"


def message_elements(
    path: tuple[int, ...], scope: str, message: descriptor_pb2.DescriptorProto
) -> Iterator[Element]:
    name = f"{scope}.{message.name}"
    yield path, name
    for index, field in enumerate(message.field):
        yield (*path, FIELDS, index), f"{name}.{field.name}"
    for index, oneof in enumerate(message.oneof_decl):
        if not oneof.name.startswith("_"):  # the synthetic oneof of a proto3 `optional`
            yield (*path, ONEOFS, index), f"{name}.{oneof.name}"
    for index, nested in enumerate(message.nested_type):
        if not nested.options.map_entry:
            yield from message_elements((*path, NESTED_MESSAGES, index), name, nested)
    for index, nested_enum in enumerate(message.enum_type):
        yield from enum_elements((*path, NESTED_ENUMS, index), name, nested_enum)


def elements(file: descriptor_pb2.FileDescriptorProto) -> Iterator[Element]:
    """Every documentable element of a file: its source path and its full name."""
    for index, message in enumerate(file.message_type):
        yield from message_elements((MESSAGES, index), file.package, message)
    for index, enum in enumerate(file.enum_type):
        yield from enum_elements((ENUMS, index), file.package, enum)
    for index, service in enumerate(file.service):
        name = f"{file.package}.{service.name}"
        yield (SERVICES, index), name
        for method_index, method in enumerate(service.method):
            yield (SERVICES, index, METHODS, method_index), f"{name}.{method.name}"


def comments(file: descriptor_pb2.FileDescriptorProto) -> dict[tuple[int, ...], str]:
    return {
        tuple(location.path): location.leading_comments.strip()
        for location in file.source_code_info.location
        if location.leading_comments.strip()
    }


def test_every_service_rpc_message_field_and_enum_value_has_a_comment(
    files: list[descriptor_pb2.FileDescriptorProto],
) -> None:
    undocumented = []
    counted = 0
    for file in files:
        if not file.name.startswith("goti/"):
            continue
        documented = comments(file)
        for path, name in elements(file):
            counted += 1
            if path not in documented:
                undocumented.append(name)
    assert counted > 400
    assert undocumented == []


def test_every_enum_starts_with_an_unspecified_zero(
    files: list[descriptor_pb2.FileDescriptorProto],
) -> None:
    for file in files:
        for enum in file.enum_type:
            assert enum.value[0].number == 0
            assert enum.value[0].name.endswith("_UNSPECIFIED"), enum.name


def test_each_reason_documents_its_string_and_the_status_code_sent(
    files: list[descriptor_pb2.FileDescriptorProto],
) -> None:
    (errors,) = [file for file in files if file.name.endswith("/errors.proto")]
    (reasons,) = [enum for enum in errors.enum_type if enum.name == "ErrorReason"]
    documented = comments(errors)
    enum_index = list(errors.enum_type).index(reasons)
    for index, value in enumerate(reasons.value):
        if value.number == 0:
            continue
        text = " ".join(documented[(ENUMS, enum_index, ENUM_VALUES, index)].split())
        name = reason_name(errors_pb2.ErrorReason.Value(value.name))
        code = status_code_of(name)
        assert text.startswith(f'Sent as "{name}" with {code.name}:'), text


def test_the_metadata_keys_the_code_uses_are_the_documented_ones() -> None:
    text = (PROTO_ROOT / "goti/api/v1/errors.proto").read_text()
    key_list = text.split("// Metadata keys used below:", 1)[1].split("syntax =", 1)[0]
    listed = set(re.findall(r"^// - `(\w+)`:", key_list, flags=re.MULTILINE))
    used = {
        FIELD,
        LEGAL_MOVES,
        CANDIDATES,
        MOVES_TO_WAIT,
        TOKEN,
        CURRENT_SEQ,
        RETRY_AFTER_MS,
        LIMIT,
    }
    assert listed == used
    for key in used:
        assert re.fullmatch(r"[a-z]+(?:[A-Z][a-z]+)*", key), key


def test_every_status_code_is_one_grpc_knows() -> None:
    for value in errors_pb2.ErrorReason.values():
        if value:
            assert isinstance(status_code_of(reason_name(value)), grpc.StatusCode)


def test_the_wire_game_state_mirrors_the_rules_game_state() -> None:
    """Each rules field has its wire field(s); a new rules field must be carried too."""
    wire_of_rules = {
        "variant": {"variant"},
        "start": {"start"},
        "moves": {"moves"},
        "position": {"position"},
        "repetition": {"repetition"},
        "quiet_plies": {"quiet_plies"},
        "draw_offer": {"draw_offer"},
        "last_offer_ply": {"white_last_offer_ply", "black_last_offer_ply"},
        "captured": {"captured_by_white", "captured_by_black"},
        "outcome": {"outcome"},
    }
    assert {field.name for field in dataclasses.fields(GameState)} == set(wire_of_rules)
    wire_fields = {field.name for field in game_pb2.GameState.DESCRIPTOR.fields}
    assert wire_fields == set().union(*wire_of_rules.values())
