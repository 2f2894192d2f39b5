"""How a column of raw cells (a spreadsheet's, an HTML table's, a CSV's) is typed: numbers written as
text become numbers, a statistics office's "no value" marks become missing, and no real value is
ever turned into a missing one."""

from __future__ import annotations

import pyarrow as pa

from curate.curation.body import infer_column


def test_numbers_written_as_text_become_numbers():
    assert infer_column(["60,000", "7", None]).to_pylist() == [60000, 7, None]
    assert infer_column(["7.5", 2, " "]).type == pa.float64()


def test_missing_value_marks_in_a_numeric_column_become_missing():
    assert infer_column([12, "..", "NA", "-", "(X)", 4]).to_pylist() == [12, None, None, None, None, 4]


def test_a_lower_case_x_is_a_suppressed_count():
    assert infer_column([120, "x", 35]).to_pylist() == [120, None, 35]


def test_an_upper_case_x_is_a_value_and_keeps_its_column_text():
    chromosome = infer_column([6, 22, "X", 1])  # science-table15: the X chromosome beside numbered ones
    assert chromosome.type == pa.string() and chromosome.to_pylist() == ["6", "22", "X", "1"]


def test_codes_with_leading_zeros_stay_codes():
    assert infer_column(["007", "012"]).to_pylist() == ["007", "012"]
