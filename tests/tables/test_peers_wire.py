"""``peers.with_state`` splices a stored game state in front of a serialized request, which is
right only while ``state`` is field 1, a ``GameState``, of every request it builds: these
tests read the requests it builds from peers.py itself and pin that in their descriptors."""

from __future__ import annotations

import ast
import inspect

import pytest
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

from goti.api import convert
from goti.api.v1 import ai_pb2, game_pb2, referee_pb2
from goti.rules.game import Game
from goti.tables import peers

_PB2_MODULES = {"ai_pb2": ai_pb2, "referee_pb2": referee_pb2}


def _message_class(node: ast.expr | None) -> type[Message]:
    assert isinstance(node, ast.Attribute), node
    assert isinstance(node.value, ast.Name), ast.dump(node)
    message_class = getattr(_PB2_MODULES[node.value.id], node.attr)
    assert issubclass(message_class, Message)
    return message_class  # type: ignore[no-any-return]


def _requests_built_with_state() -> dict[str, type[Message]]:
    """Each request type peers.py passes to ``with_state``: ``with_state(state, X_pb2.R(...))``,
    or a parameter annotated with its type (``action: referee_pb2.ApplyRequest``)."""
    found: dict[str, type[Message]] = {}
    for function in ast.walk(ast.parse(inspect.getsource(peers))):
        if not isinstance(function, ast.AsyncFunctionDef | ast.FunctionDef):
            continue
        annotations = {arg.arg: arg.annotation for arg in function.args.args}
        for call in ast.walk(function):
            if not (
                isinstance(call, ast.Call)
                and isinstance(call.func, ast.Name)
                and call.func.id == "with_state"
            ):
                continue
            rest = call.args[1]
            if isinstance(rest, ast.Call):
                message_class = _message_class(rest.func)
            else:
                assert isinstance(rest, ast.Name), ast.dump(rest)
                message_class = _message_class(annotations[rest.id])
            found[message_class.DESCRIPTOR.full_name] = message_class
    return found


REQUESTS = _requests_built_with_state()


def test_every_call_of_with_state_was_found() -> None:
    source = inspect.getsource(peers)
    calls = source.count("with_state(state, ")
    assert calls >= len(REQUESTS) >= 5
    assert {
        "goti.api.v1.ApplyRequest",
        "goti.api.v1.DescribeGameRequest",
        "goti.api.v1.ExportPdnRequest",
        "goti.api.v1.ChooseMoveRequest",
        "goti.api.v1.DecideDrawRequest",
    } <= set(REQUESTS)


@pytest.mark.parametrize("name", sorted(REQUESTS))
def test_field_1_of_the_request_is_its_game_state(name: str) -> None:
    field = REQUESTS[name].DESCRIPTOR.fields_by_number[1]
    assert field.name == "state"
    assert field.type == FieldDescriptor.TYPE_MESSAGE
    assert field.message_type is not None
    assert field.message_type.full_name == game_pb2.GameState.DESCRIPTOR.full_name
    assert not field.is_repeated


def _filled(message: Message, depth: int = 2) -> set[str]:
    """Sets every field but the state, one of each oneof, to a value that is not its default,
    so that a splice that lost or shifted any of them would show; returns their names."""
    names: set[str] = set()
    for field in message.DESCRIPTOR.fields:
        oneof = field.containing_oneof
        if field.name == "state" or (oneof is not None and oneof.name in names):
            continue
        if field.message_type is not None and field.message_type.GetOptions().map_entry:
            getattr(message, field.name)["Event"] = "Goti"
        elif field.is_repeated or (field.type == FieldDescriptor.TYPE_MESSAGE and not depth):
            continue
        elif field.type == FieldDescriptor.TYPE_MESSAGE:
            child = getattr(message, field.name)
            _filled(child, depth - 1)
            child.SetInParent()
        elif field.type == FieldDescriptor.TYPE_ENUM:
            assert field.enum_type is not None
            setattr(message, field.name, field.enum_type.values[-1].number)
        elif field.type == FieldDescriptor.TYPE_BOOL:
            setattr(message, field.name, True)
        elif field.type == FieldDescriptor.TYPE_STRING:
            setattr(message, field.name, "11-15")
        elif field.type == FieldDescriptor.TYPE_BYTES:
            setattr(message, field.name, b"\x01")
        elif field.type in {FieldDescriptor.TYPE_FLOAT, FieldDescriptor.TYPE_DOUBLE}:
            setattr(message, field.name, 0.5)
        else:
            setattr(message, field.name, 3)
        names.add(field.name)
        if oneof is not None:
            names.add(oneof.name)
    return names


@pytest.mark.parametrize("name", sorted(REQUESTS))
def test_the_spliced_bytes_are_the_request_with_its_state_set(name: str) -> None:
    game = Game()
    for move in ("11-15", "22-18", "15x22"):
        game.play(move)
    state = convert.game_state_to_proto(game.state())
    request_class = REQUESTS[name]
    rest = request_class()
    filled = _filled(rest)

    spliced = request_class.FromString(peers.with_state(state.SerializeToString(), rest))

    expected = request_class()
    expected.CopyFrom(rest)
    expected.state.CopyFrom(state)  # type: ignore[attr-defined]
    assert spliced == expected
    assert {field.name for field, _ in spliced.ListFields()} >= {"state"} | {
        name for name in filled if name in request_class.DESCRIPTOR.fields_by_name
    }


def test_a_streamed_apply_is_its_call_id_then_its_request_as_field_2() -> None:
    fields = referee_pb2.ApplyStreamRequest.DESCRIPTOR.fields_by_number
    assert fields[1].name == "call_id"
    assert fields[1].type == FieldDescriptor.TYPE_UINT64
    assert fields[2].name == "request"
    assert fields[2].type == FieldDescriptor.TYPE_MESSAGE
    assert fields[2].message_type is not None
    assert fields[2].message_type.full_name == referee_pb2.ApplyRequest.DESCRIPTOR.full_name
    assert not fields[2].is_repeated
    assert set(fields) == {1, 2}


@pytest.mark.parametrize("call_id", [1, 127, 128, 2**32 + 5, 2**64 - 1])
def test_the_spliced_stream_request_carries_the_call_id_and_the_whole_apply(call_id: int) -> None:
    game = Game()
    for move in ("11-15", "22-18"):
        game.play(move)
    state = convert.game_state_to_proto(game.state())
    action = referee_pb2.ApplyRequest(side=game_pb2.COLOR_BLACK, move_notation="15x22")

    streamed = referee_pb2.ApplyStreamRequest.FromString(
        peers.as_stream_request(call_id, peers.with_state(state.SerializeToString(), action))
    )

    expected = referee_pb2.ApplyRequest()
    expected.CopyFrom(action)
    expected.state.CopyFrom(state)
    assert streamed.call_id == call_id
    assert streamed.request == expected


def test_peers_builds_its_stream_requests_with_the_splice() -> None:
    source = inspect.getsource(peers)
    assert "as_stream_request(call_id, request)" in source
    assert "ApplyStreamRequest(" not in source
