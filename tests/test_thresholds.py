"""Thresholds say which side a tie falls on, and each gold is computed with exactly that comparison:
"more than 8" leaves 8 out, "at least 8" keeps it, and a split's two sides hold every row between them."""

from __future__ import annotations

import json
import re

import numpy as np
import pyarrow as pa

from curate.curation.programs.chain import execute_chain, frame_from_arrow
from curate.curation.table import Table
from curate.generators.chains import OPPOSITE, _counterpart
from curate.generators.rules.catalog import load_templates
from curate.generators.rules.profile import HAVE, WORDS, TableProfile
from tests.test_rules import generate

# scores with many rows on round numbers: a threshold of 8 or 20 lands on a value
SCORES = Table(name="pupils", body=pa.table({
    "pupil": [f"pupil {i}" for i in range(16)],
    "class": ["a", "b"] * 8,
    "score": [4, 8, 8, 12, 8, 20, 6, 8, 15, 8, 3, 8, 10, 20, 8, 9],
    "hours": [1.0, 2.5, 2.0, 4.0, 3.0, 6.5, 1.5, 2.0, 5.0, 2.5, 0.5, 3.5, 4.5, 7.0, 3.0, 3.0],
}))
AMBIGUOUS = re.compile(r"\b(above|below|exceeds?|over|under)\b", re.I)  # "above 8": is 8 above 8?


def test_every_comparison_says_whether_the_threshold_is_in_and_its_rows_match_the_words():
    profile = TableProfile(SCORES)
    score = np.array(SCORES.body.column("score").to_pylist())
    holds = {">": score > 8, ">=": score >= 8, "<": score < 8, "<=": score <= 8}
    for op, expected in holds.items():
        cond = profile.condition("score", op, 8)
        for text in (cond.phrase(), cond.phrase(have=True)):
            assert not AMBIGUOUS.search(text), text
        assert ("least" in WORDS[op] or "most" in WORDS[op]) == op.endswith("=")  # a tie in exactly when said
        assert ("least" in HAVE[op] or "most" in HAVE[op]) == op.endswith("=")
        assert np.array_equal(cond.mask, expected)
    # the other side of a split is its exact complement: no row equal to 8 falls between them
    for op in (">", "<", ">=", "<="):
        cond = profile.condition("score", op, 8)
        other = profile.condition("score", OPPOSITE[op], 8)
        assert not (cond.mask & other.mask).any() and (cond.mask | other.mask).all(), op
        assert _counterpart(profile, cond, np.random.default_rng(0)).mask.tolist() == other.mask.tolist()


def test_a_conditional_comparison_counts_the_rows_on_its_threshold_in_one_group():
    samples, _, _ = generate(SCORES, ["ada.conditional"], scale=10)
    splits = [s for s in samples if json.loads(s.program.text)[0]["where"][0][1] != "=="]
    assert splits, "no threshold split on a table built for them"
    frame = frame_from_arrow(SCORES.body)
    for s in splits:
        steps = json.loads(s.program.text)
        (column, op, value), (_, other_op, other_value) = steps[0]["where"][0], steps[2]["where"][0]
        assert (other_op, other_value) == (OPPOSITE[op], value)
        first = execute_chain([steps[0], {"op": "aggregate", "func": "count", "column": column}], frame)
        second = execute_chain([{"op": "filter", "where": [[column, other_op, value]]},
                                {"op": "aggregate", "func": "count", "column": column}], frame)
        assert first + second == SCORES.n_rows  # the tied rows counted, once
        said = {">": "greater than", "<": "less than", ">=": "at least", "<=": "at most"}
        assert said[op] in s.question and said[other_op] in s.question, s.question


def test_no_template_states_a_threshold_with_a_word_that_reads_both_ways():
    for template in load_templates():
        for text in template.phrasings + template.short:
            if "{threshold}" in text or "{claim}" in text:
                assert not AMBIGUOUS.search(text), (template.id, text)
