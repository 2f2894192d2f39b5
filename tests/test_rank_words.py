"""A column that numbers places (rank, position) is asked about by its number: "the lowest position"
is the last place to a reader and position 1 to a gold, so questions say "smallest" or "largest"."""

from __future__ import annotations

import re

import pyarrow as pa

from curate.curation.table import Table
from curate.generators.rules.profile import by_number
from tests.test_rules import generate

LEAGUE = Table(name="league", body=pa.table({
    "team": ["Ajax", "Bremen", "Celtic", "Dundee", "Everton", "Fulham", "Genk", "Hearts", "Inter", "Juventus"],
    "position": [3, 1, 7, 2, 10, 4, 9, 5, 8, 6],
    "points": [61.0, 80.5, 40.0, 70.25, 21.0, 55.5, 30.0, 50.75, 35.0, 45.5],
    "goals": [50, 70, 31, 66, 20, 48, 25, 45, 29, 41],
}))
AMBIGUOUS = re.compile(r"\b(highest|lowest|higher|lower)\b", re.I)


def test_a_question_about_a_place_column_says_smallest_or_largest_and_its_gold_follows_the_number():
    samples, _, _ = generate(LEAGUE, ["tco.argmax", "tco.argmin", "tco.rank", "tco.top_k", "tco.bottom_k"])
    about_position = [s for s in samples if "position" in s.program.text]  # asked about the column
    assert {s.template for s in about_position} >= {"tco.argmax", "tco.argmin", "tco.top_k", "tco.bottom_k"}
    for s in about_position:
        assert not AMBIGUOUS.search(s.question), s.question
        if s.template == "tco.argmax":
            assert "largest position" in s.question and s.answer == "Everton"  # position 10: the number
        if s.template == "tco.argmin":
            assert "smallest position" in s.question and s.answer == "Bremen"
        assert s.template != "tco.rank"  # a team's rank by its position is the position again
    # a measure keeps its words
    assert any("highest points" in s.question or "highest goals" in s.question for s in samples)


def test_only_the_direction_words_change():
    assert by_number("Which team has the lowest position? List them from highest down.") == \
        "Which team has the smallest position? List them from largest down."
    assert by_number("Lowest first") == "Smallest first"
