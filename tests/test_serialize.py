"""Table serializations (ToRR's seven plus LaTeX) and ToRR's four structural perturbations."""

from __future__ import annotations

import json
from collections import Counter

import pyarrow as pa
import pytest

from curate.curation.body import cell_text
from curate.curation.table import HeaderNode, Table
from curate.exports.perturb import PERTURBATIONS, perturb
from curate.exports.serialize import FORMATS, PARSEABLE, column_paths, labelled_paths, parse, serialize, shown_rows

# cells that break naive writers: separators, quotes, escapes, markup, unicode, missing values
TRICKY = Table(name="tricky", caption="Sales & returns", body=pa.table({
    "name": ["Müller | Söhne", 'say "hi", ok', "back\\slash", "<b>bold</b>", "50% & $5_#{x}~^ ends\\"],
    "units": [17, None, 3, 0, -42],
    "price": [1.5, 2.0, None, 1e-7, 123456.789],
}))
LOSSY = {"latex", "indexed_row_major"}  # they fold a newline into a space


def cells(table: Table) -> list[list[str]]:
    return [[cell_text(v) for v in row] for row in zip(*(c.to_pylist() for c in table.body.columns))]


@pytest.mark.parametrize("fmt", PARSEABLE)
def test_every_parseable_format_round_trips(fmt):
    columns, rows = parse(serialize(TRICKY, fmt), fmt)
    assert columns == TRICKY.columns
    assert rows == cells(TRICKY)


@pytest.mark.parametrize("fmt", sorted(set(PARSEABLE) - LOSSY))
def test_a_newline_inside_a_cell_survives(fmt):
    table = Table(name="t", body=pa.table({"a": ["line 1\nline 2", "x"], "b": [1, 2]}))
    assert parse(serialize(table, fmt), fmt)[1] == cells(table)


@pytest.mark.parametrize("fmt", ["markdown", "indexed_row_major"])
def test_a_backslash_is_shown_as_it_is_unless_it_would_read_as_an_escape(fmt):
    table = Table(name="t", body=pa.table({"study": ["\\cite{HSAuR:Coronary1976}", "a\\|b", "end\\"], "n": [1, 2, 3]}))
    text = serialize(table, fmt)
    assert "\\cite{HSAuR:Coronary1976}" in text and "\\\\cite" not in text  # what a model copies is the value
    assert parse(text, fmt)[1] == cells(table)


def test_concatenation_holds_every_header_and_cell():
    text = serialize(TRICKY, "concatenation")
    for value in TRICKY.columns + [c for row in cells(TRICKY) for c in row if c]:
        assert value in text


def test_formats_are_what_their_readers_expect():
    assert serialize(TRICKY, "markdown").splitlines()[1] == "| --- | --- | --- |"
    assert json.loads(serialize(TRICKY, "json"))["data"][1] == ['say "hi", ok', None, 2.0]
    assert "df = pd.DataFrame({" in serialize(TRICKY, "dataframe")
    assert serialize(TRICKY, "indexed_row_major").splitlines()[2].startswith("row 2 : ")
    assert "<caption>Sales &amp; returns</caption>" in serialize(TRICKY, "html")
    assert r"50\% \& \$5\_\#\{x\}" in serialize(TRICKY, "latex")
    with pytest.raises(ValueError, match="unknown serialization"):
        serialize(TRICKY, "yaml")
    with pytest.raises(ValueError, match="cannot be parsed back"):
        parse("x", "concatenation")
    assert set(FORMATS) == set(PARSEABLE) | {"concatenation"} and len(FORMATS) == 8


# ---------------------------------------------------------------------------- hierarchical headers

def hierarchical() -> Table:
    """| Region (2 rows) | 2023: Q1 Q2 | 2024: Q1 Q2 |"""
    header = (HeaderNode("C", 0, 0, 0, "Region"), HeaderNode("C", 0, 1, 2, "2023"), HeaderNode("C", 0, 3, 4, "2024"),
              HeaderNode("C", 1, 1, 1, "Q1"), HeaderNode("C", 1, 2, 2, "Q2"), HeaderNode("C", 1, 3, 3, "Q1"),
              HeaderNode("C", 1, 4, 4, "Q2"))
    body = pa.table({"Region": ["North", "South"], "2023 / Q1": [1, 2], "2023 / Q2": [3, 4],
                     "2024 / Q1": [5, 6], "2024 / Q2": [7, 8]})
    return Table(name="h", body=body, header=header)


def test_merged_headers_keep_their_spans_in_html_and_latex():
    table = hierarchical()
    html_text = serialize(table, "html")
    assert '<th rowspan="2">Region</th><th colspan="2">2023</th><th colspan="2">2024</th>' in html_text
    latex = serialize(table, "latex")
    assert r"\multirow{2}{*}{Region} & \multicolumn{2}{c}{2023} & \multicolumn{2}{c}{2024} \\" in latex
    expected = ["Region", "2023 / Q1", "2023 / Q2", "2024 / Q1", "2024 / Q2"]
    assert column_paths(table) == expected
    for fmt in ("html", "latex", "csv", "markdown", "json"):
        columns, rows = parse(serialize(table, fmt), fmt)
        assert columns == expected, fmt
        assert rows == [["North", "1", "3", "5", "7"], ["South", "2", "4", "6", "8"]], fmt


# ---------------------------------------------------------------------------- row trees stay visible

def nested_rows() -> Table:
    """A row tree read from section rows and indentation, as a sheet shows it:

        Region          | Sales
        Asia            | 30       <- the group's own row (its subtotal)
          Japan         | 10
          China         | 20
        Europe          |          <- a section row
          France        | 5
          of which Paris| 2        <- one level under France
        Total           | 35       <- a grand total at the root
    """
    body = pa.table({"Region": ["Asia", "Japan", "China", "Europe", "France", "of which Paris", "Total"],
                     "Sales": [30, 10, 20, None, 5, 2, 35]})
    header = (HeaderNode("C", 0, 0, 0, "Region"), HeaderNode("C", 0, 1, 1, "Sales"),
              HeaderNode("R", 0, 0, 2, "Asia"), HeaderNode("R", 1, 1, 1, "Japan"), HeaderNode("R", 1, 2, 2, "China"),
              HeaderNode("R", 0, 3, 5, "Europe"), HeaderNode("R", 1, 4, 5, "France"),
              HeaderNode("R", 2, 5, 5, "of which Paris"), HeaderNode("R", 0, 6, 6, "Total"))
    return Table(name="nested", body=body, header=header)


def test_the_default_serialization_shows_each_row_under_its_path():
    """What the evaluated model reads (markdown, the release's default) says which rows are under
    which: a row's label carries the labels of its path that its row does not show, top first,
    written like the column paths ("Top / Sub"); group rows and the grand total stand as they are."""
    text = serialize(nested_rows(), "markdown")
    assert text.splitlines()[2:] == [
        "| Asia | 30 |",
        "| Asia / Japan | 10 |",
        "| Asia / China | 20 |",
        "| Europe |  |",
        "| Europe / France | 5 |",
        "| Europe / France / of which Paris | 2 |",
        "| Total | 35 |"]


def test_every_format_shows_the_same_nesting_and_the_stored_table_is_unchanged():
    table = nested_rows()
    expected = shown_rows(table)
    assert expected[5][0] == "Europe / France / of which Paris"
    for fmt in PARSEABLE:
        assert parse(serialize(table, fmt), fmt)[1] == expected, fmt
    assert "Europe / France" in serialize(table, "concatenation")
    assert table.body.column("Region").to_pylist()[4] == "France"  # the record keeps the sheet's label


def test_labels_a_row_already_shows_are_not_repeated():
    """A merged stub spread into a column of its own already shows the path: nothing is added;
    where one level is shown and a deeper one is not, only the hidden one joins the label."""
    body = pa.table({"Material": ["Glass", "Glass", "Steel"], "Organism": ["E. coli", "E. coli", "E. coli"],
                     "Sampler": ["3M", "Swab", "3M"], "Log": [1.5, 2.0, 0.5]})
    header = (*(HeaderNode("C", 0, j, j, c) for j, c in enumerate(body.column_names)),
              HeaderNode("R", 0, 0, 1, "Glass"), HeaderNode("R", 1, 0, 1, "E. coli"),
              HeaderNode("R", 0, 2, 2, "Steel"), HeaderNode("R", 1, 2, 2, "Dry run"))
    table = Table(name="merged stub", body=body, header=header)
    assert labelled_paths(table) == {2: (0, "Steel / Dry run")}  # "Steel" is shown, "Dry run" (under it) nowhere
    assert serialize(table, "markdown").splitlines()[2] == "| Glass | E. coli | 3M | 1.5 |"


def test_a_flat_table_is_written_as_stored():
    assert labelled_paths(TRICKY) == {} and labelled_paths(hierarchical()) == {}
    assert shown_rows(TRICKY) == cells(TRICKY)


# ---------------------------------------------------------------------------- perturbations

FLAT = Table(name="flat", body=pa.table({"id": [f"r{i}" for i in range(25)], "x": list(range(25)),
                                         "y": [i * 0.5 for i in range(25)]}))


def test_shuffles_keep_every_cell_and_change_the_order():
    rows = perturb(FLAT, "row_shuffle", seed=1)
    assert Counter(map(tuple, cells(rows))) == Counter(map(tuple, cells(FLAT))) and cells(rows) != cells(FLAT)
    assert rows.columns == FLAT.columns and rows.id != FLAT.id and "perturbed:row_shuffle" in rows.flags
    cols = perturb(FLAT, "column_shuffle", seed=2)
    assert sorted(cols.columns) == sorted(FLAT.columns)
    assert all(cols.body.column(c).to_pylist() == FLAT.body.column(c).to_pylist() for c in FLAT.columns)


def test_transpose_twice_gives_the_table_back_as_text():
    once = perturb(FLAT, "transpose")
    assert once.columns == ["id"] + [f"r{i}" for i in range(25)] and once.n_rows == 2
    twice = perturb(once, "transpose")
    assert twice.columns == FLAT.columns and cells(twice) == cells(FLAT)


def test_empty_rows_are_inserted_one_per_ten_rows():
    out = perturb(FLAT, "empty_rows", seed=3)
    assert out.n_rows == 27
    assert sum(1 for row in cells(out) if not any(row)) == 2
    assert [row for row in cells(out) if any(row)] == cells(FLAT)


def test_perturbations_depend_on_the_seed_and_the_table_only():
    for kind in PERTURBATIONS:
        assert perturb(FLAT, kind, seed=5).id == perturb(FLAT, kind, seed=5).id
    assert len({perturb(FLAT, "row_shuffle", seed=s).id for s in range(5)}) == 5


def test_a_hierarchical_table_is_refused_with_the_reason():
    with pytest.raises(ValueError, match="hierarchical header"):
        perturb(hierarchical(), "row_shuffle")
    with pytest.raises(ValueError, match="unknown perturbation"):
        perturb(FLAT, "rotate")


def test_every_realhitbench_table_round_trips_in_every_parseable_format():
    """The real hierarchical spreadsheets: merged headers, gaps, repeated names, dates, notes."""
    from curate.curation.sources import file_unit, read_unit
    from tests.conftest import shared

    def folded(values: list[str]) -> list[str]:
        return [" ".join(v.split()) for v in values]

    tables = [t for f in sorted(shared("realhitbench", "tables").glob("*.xlsx"))
              for t in read_unit(file_unit(f), [], []) if isinstance(t, Table)]
    assert len(tables) > 150 and sum(t.is_hierarchical for t in tables) > 50  # 183 and 131 when written
    for table in tables:
        expected = shown_rows(table)
        stored = cells(table)
        assert [r for r, row in enumerate(expected) if row != stored[r]] == sorted(labelled_paths(table)), table.name
        for fmt in PARSEABLE:
            columns, rows = parse(serialize(table, fmt), fmt)
            if fmt in LOSSY:
                assert folded(columns) == folded(column_paths(table)), (table.name, fmt)
                assert [folded(r) for r in rows] == [folded(r) for r in expected], (table.name, fmt)
            else:
                assert columns == column_paths(table) and rows == expected, (table.name, fmt)
