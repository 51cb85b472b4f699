"""The client's words: the language from the locale, both languages complete, refusals as one
line; and the terminal's light or dark background."""

from __future__ import annotations

import dataclasses

import grpc
import pytest

from goti.rules import GameWarning, Termination
from goti_client.errors import (
    ActionRefusedError,
    GotiError,
    IllegalMoveError,
    InvalidRequestError,
    RateLimitedError,
    Reason,
    UnavailableError,
)
from goti_client.tables import Level
from goti_client.terminal.labels import (
    ENGLISH_LABELS,
    LABELS,
    NEPALI_LABELS,
    Labels,
    Language,
    language_from_locale,
)
from goti_client.terminal.terminal_theme import (
    Brightness,
    brightness_from_colorfgbg,
    brightness_from_reply,
    detect_brightness,
)


@pytest.mark.parametrize(
    ("environment", "language"),
    [
        ({}, Language.ENGLISH),
        ({"LANG": "ne_NP.UTF-8"}, Language.NEPALI),
        ({"LANG": "en_GB.UTF-8"}, Language.ENGLISH),
        ({"LC_ALL": "ne_NP.UTF-8", "LANG": "en_US.UTF-8"}, Language.NEPALI),
        ({"LC_ALL": "C.UTF-8", "LANG": "ne_NP.UTF-8"}, Language.ENGLISH),
        ({"LC_ALL": "", "LC_MESSAGES": "ne_NP", "LANG": "en_US"}, Language.NEPALI),
    ],
)
def test_the_locale_chooses_the_language(environment: dict[str, str], language: Language) -> None:
    assert language_from_locale(environment) is language


@pytest.mark.parametrize("labels", [ENGLISH_LABELS, NEPALI_LABELS])
def test_both_languages_name_every_level_ending_warning_and_refusal(labels: Labels) -> None:
    assert set(labels.levels) == set(Level)
    assert set(labels.terminations) == set(Termination)
    assert set(labels.warnings) == set(GameWarning)
    assert set(labels.refusals) == set(ENGLISH_LABELS.refusals)
    for field in dataclasses.fields(Labels):
        value = getattr(labels, field.name)
        assert value, field.name


def test_the_nepali_words_are_nepali() -> None:
    assert NEPALI_LABELS.title == "गोटी · चेकर्स"
    assert "राजा" in NEPALI_LABELS.legend
    assert "गोटी" in NEPALI_LABELS.legend
    # Placeholders survive translation.
    for field in dataclasses.fields(Labels):
        english = getattr(ENGLISH_LABELS, field.name)
        nepali = getattr(NEPALI_LABELS, field.name)
        if isinstance(english, str):
            assert _placeholders(english) == _placeholders(nepali), field.name


def _placeholders(text: str) -> set[str]:
    return {part.split("}", 1)[0] for part in text.split("{")[1:]}


@pytest.mark.parametrize("language", list(Language))
def test_a_failed_call_reads_as_one_line(language: Language) -> None:
    labels = LABELS[language]
    errors: list[GotiError] = [
        IllegalMoveError("no", code=grpc.StatusCode.INVALID_ARGUMENT, reason=Reason.ILLEGAL_MOVE),
        ActionRefusedError(
            "too soon",
            code=grpc.StatusCode.FAILED_PRECONDITION,
            reason=Reason.DRAW_OFFER_TOO_SOON,
            metadata={"movesToWait": "3"},
        ),
        RateLimitedError(
            "slow down",
            code=grpc.StatusCode.RESOURCE_EXHAUSTED,
            reason=Reason.RATE_LIMITED,
            metadata={"retryAfterMs": "2500"},
        ),
        UnavailableError("connection refused\nand more", code=grpc.StatusCode.UNAVAILABLE),
        InvalidRequestError("table_id is empty\n  detail", code=grpc.StatusCode.INVALID_ARGUMENT),
    ]
    lines = [labels.explain(error) for error in errors]
    assert all(line and "\n" not in line for line in lines)
    assert "3" in lines[1]
    assert "2" in lines[2]
    assert lines[3] == labels.unreachable
    assert "table_id is empty" in lines[4]


@pytest.mark.parametrize(
    ("value", "brightness"),
    [("15;0", Brightness.DARK), ("0;15", Brightness.LIGHT), ("0;default;7", Brightness.LIGHT)],
)
def test_colorfgbg_names_the_background(value: str, brightness: Brightness) -> None:
    assert brightness_from_colorfgbg(value) is brightness
    assert detect_brightness({"COLORFGBG": value}) is brightness


def test_the_terminals_answer_names_the_background() -> None:
    assert brightness_from_reply(b"\x1b]11;rgb:ffff/ffff/ffff\x1b\\\x1b[?64;1c") is (
        Brightness.LIGHT
    )
    assert brightness_from_reply(b"\x1b]11;rgb:1e1e/1e1e/2e2e\x07") is Brightness.DARK
    assert brightness_from_reply(b"\x1b]11;rgb:fd/f6/e3\x07") is Brightness.LIGHT
    assert brightness_from_reply(b"\x1b[?62c") is None
    assert brightness_from_colorfgbg("default") is None
