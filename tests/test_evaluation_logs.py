"""Issue 46: per-sample logs, honest coverage, runs kept apart, the viewer, and order in execution match."""

from __future__ import annotations

import json

import pyarrow as pa
import pytest

from curate.evaluation.metrics import score


# ------------------------------------------------------------------ execution match: order only where asked


@pytest.mark.parametrize("question, ordered", [
    ("List the full name of every carrier that flies to Oslo.", False),
    ("Which towns have more than 100 people?", False),
    ("List the towns sorted by population.", True),
    ("Give the top 3 towns by population.", True),
    ("List the towns from largest to smallest.", True),
    ("Name the towns in alphabetical order.", True),
])
def test_rows_are_compared_in_order_only_where_the_question_asks_for_it(question, ordered):
    tables = {"towns": pa.table({"town": ["Oslo", "Bergen", "Bodø"], "people": [700, 290, 52]})}
    context = {"tables": tables, "program": "SELECT town FROM towns ORDER BY people DESC", "question": question}
    reversed_order = score("execution_match", "SELECT town FROM towns ORDER BY people", None, context)
    assert reversed_order.value == (0.0 if ordered else 1.0), reversed_order.details
    assert score("execution_match", "SELECT town FROM towns ORDER BY people DESC", None, context).value == 1.0
    # a question that asks for order, but a gold without ORDER BY: nothing to compare the order against
    unordered_gold = {**context, "program": "SELECT town FROM towns"}
    assert score("execution_match", "SELECT town FROM towns ORDER BY people", None, unordered_gold).value == 1.0
