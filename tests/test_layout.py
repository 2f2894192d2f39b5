"""How a sheet's layout is read (issue 44): side-by-side tables, constant and row-number columns,
figures at the precision the sheet shows, unit lines, quantities over a period. Each test writes
a small workbook laid out as the real sheets were."""

from __future__ import annotations

from pathlib import Path

from curate.curation import semantics as sem
from curate.curation.sources.readers.xlsx import read, sheet_tables
from curate.curation.sources.grid import NoGrid
from tests.workbooks import workbook


def tables(path: Path) -> list:
    return list(read(str(path)))


def roles(table) -> dict[str, str]:  # type: ignore[no-untyped-def]
    return {i.name: i.role for i in sem.infer(table)}


TWO_PERIODS = [["Period 1", None, None, None, "Period 2", None, None],
               ["SKU", "Units", "Sales", None, "SKU", "Units", "Sales"],
               ["NJ-7", 129, 3.5, None, "bis-64", 95, 3.1],
               ["bis-64", 123, 8.25, None, "NU-VE", 86, 8.0],
               ["6M-5F", 107, 2.0, None, "FBA-41", 71, 5.5],
               ["TC-CY", 51, 41.2, None, "WI-X8", 61, 11.0]]


def test_side_by_side_blocks_are_two_tables(tmp_path: Path) -> None:
    """Two blocks, an empty column between them, each with its header and its own row labels
    (economy-table44's two periods): two tables, each placed where the sheet has it."""
    found = tables(workbook(tmp_path / "periods.xlsx", TWO_PERIODS, merges=("A1:C1", "E1:G1")))
    assert [t.provenance.cell_range for t in found] == ["A2:C6", "E2:G6"]
    assert [t.caption for t in found] == ["Period 1", "Period 2"]
    assert all(t.columns == ["SKU", "Units", "Sales"] for t in found)
    assert found[1].body.column(0).to_pylist() == ["bis-64", "NU-VE", "FBA-41", "WI-X8"]


def test_blocks_under_one_repeated_heading_row_are_tables_with_no_empty_column_between(tmp_path: Path) -> None:
    """health-table01: the five highest states' cases beside the five least, "States, Cases" twice under
    "Highest" and "Least", no column between. Read as one table, the least cases' row was named by the
    highest state on it (a wrong gold of a held-out review)."""
    rows = [["Highest", None, "Least", None], ["States", "Cases", "States", "Cases"],
            ["Maharashtra", 6623344, "Andaman Nicobar", 7670], ["Kerala", 5055224, "Lakshadweep", 10365],
            ["Karnataka", 2991614, "Daman and Diu", 10682], ["Tamil Nadu", 2714025, "Ladakh", 21148]]
    found = tables(workbook(tmp_path / "lists.xlsx", rows, merges=("A1:B1", "C1:D1")))
    assert [t.columns for t in found] == [["States", "Cases"], ["States", "Cases"]]
    assert [t.caption for t in found] == ["Highest", "Least"]
    assert found[1].body.column(0).to_pylist()[0] == "Andaman Nicobar"
    years = [["Country", "Cases", "Deaths", "Cases", "Deaths"], ["Chad", 5, 1, 7, 2], ["Mali", 9, 2, 4, 1],
             ["Peru", 3, 0, 6, 1]]  # a measure's columns repeated under years, one label column: one table
    assert len(tables(workbook(tmp_path / "years.xlsx", years))) == 1


def test_structure_categories_read_the_sheet_as_laid_out(tmp_path: Path) -> None:
    """`apart=False` (what `curate inspect`'s categories read): one table over both blocks, as
    before the cut, so "one header block repeated side by side" is still seen."""
    path = workbook(tmp_path / "periods.xlsx", TWO_PERIODS, merges=("A1:C1", "E1:G1"))
    (_, parts), = sheet_tables(str(path), apart=False)
    assert [t.provenance.cell_range for _, t in parts if not isinstance(t, NoGrid)] == ["A1:G6"]


def test_a_spacer_column_inside_one_table_stays(tmp_path: Path) -> None:
    """A blank column between two experiments' replicates, figures on its right and no row
    labels of their own (science-table64): one table."""
    rows = [[None, "Expt-1", None, None, "Expt-2", None],
            ["Set", "Rep1", "Rep2", None, "Rep1", "Rep2"],
            ["Set1", 533.8, 884.1, None, 696.3, 566.2],
            ["Set2", 520.8, 823.8, None, 670.6, 591.2],
            ["Set3", 265.0, 287.8, None, 302.5, 309.6]]
    found = tables(workbook(tmp_path / "spacer.xlsx", rows, merges=("B1:C1", "E1:F1")))
    assert len(found) == 1 and found[0].n_cols == 5


def test_labels_repeated_for_the_eye_keep_one_table(tmp_path: Path) -> None:
    """The players named again right of their picks, over their points (sport-table05): the same
    rows under other headings, one table. The same headings over the same rows (original and new
    prices) are two."""
    picks = [["Player", "Game 1", "Game 2", None, "Player", "Points", "Total"],
             ["John", 3, 1, None, "John", 11, 18],
             ["Carl", 2, 2, None, "Carl", 14, 17],
             ["Barry", 2, 1, None, "Barry", 11, 15]]
    assert len(tables(workbook(tmp_path / "picks.xlsx", picks))) == 1
    prices = [["Item", "Qty", "Price", None, "Item", "Qty", "Price", "Change"],
              ["Tomato", 10, 5, None, "Tomato", 10, 4, -1],
              ["Potato", 20, 10, None, "Potato", 20, 11, 1],
              ["Banana", 100, 12, None, "Banana", 100, 9, -3]]
    assert [t.n_cols for t in tables(workbook(tmp_path / "prices.xlsx", prices))] == [3, 4]


def test_a_constant_label_column_is_no_row_level(tmp_path: Path) -> None:
    """Region merged down the whole table and a manager's name on every row say what the table is
    about; the stores (a label written once over its rows) and the products are the row levels."""
    rows = [["Region", "Manager", "Store", "Product", "Sales"],
            ["East", "Smith", "S1", "Tea", 10],
            [None, "Smith", None, "Coffee", 12],
            [None, "Smith", "S2", "Tea", 7],
            [None, "Smith", None, "Coffee", 9]]
    table, = tables(workbook(tmp_path / "constant.xlsx", rows, merges=("A2:A5",)))
    row_nodes = [n for n in table.header if n.axis == "R"]
    assert {n.text for n in row_nodes} == {"S1", "S2", "Tea", "Coffee"}
    assert {n.text: n.level for n in row_nodes if n.text.startswith("S")} == {"S1": 0, "S2": 0}


def test_row_number_columns_are_row_indices(tmp_path: Path) -> None:
    """A column with no heading, or headed "No.", that runs 1, 2, 3 down the rows numbers them:
    never averaged or compared. A rank and a count of things stay quantities."""
    rows = [[None, "No.", "Country", "Rank", "Cars"],
            [1, 1, "Chile", 3, 1],
            [2, 2, "Peru", 1, 2],
            [3, 3, "Bolivia", 2, 3],
            [4, 4, "Ecuador", 4, 3]]
    table, = tables(workbook(tmp_path / "numbered.xlsx", rows))
    found = roles(table)
    assert found["column 1"] == found["No."] == sem.ROW_INDEX
    assert found["Rank"] != sem.ROW_INDEX and found["Cars"] != sem.ROW_INDEX


def test_figures_are_read_at_the_precision_shown(tmp_path: Path) -> None:
    """A cell formatted "#,##0.00" that shows 12,258.36 is 12258.36 (not a formula's float); a
    "0.0%" cell keeps the digits it shows; General keeps every digit."""
    rows = [["Item", "Mean", "Share", "Raw"],
            ["a", 12258.3560606061, 0.12345, 3.14159],
            ["b", 1.005, 0.5, 2.5],
            ["c", 7.0, 0.0251, 1.0]]
    table, = tables(workbook(tmp_path / "shown.xlsx", rows, formats={"B2:B4": "#,##0.00", "C2:C4": "0.0%"}))
    assert table.body.column(1).to_pylist() == [12258.36, 1.01, 7.0]
    assert table.body.column(2).to_pylist() == [0.123, 0.5, 0.025]
    assert table.body.column(3).to_pylist() == [3.14159, 2.5, 1.0]


def test_a_unit_line_joins_the_caption(tmp_path: Path) -> None:
    """"[In thousands]" right above the header is the figures' unit, not the title: the caption
    keeps the title and carries the unit, and the notes do not hold it."""
    rows = [["Table 1. Employment by industry"], ["[In thousands]"], [None],
            ["Industry", "2022", "2023"], ["Mining", 640, 651], ["Construction", 7746, 8012], ["Retail", 15570, 15620],
            [None], ["Source: a statistics office"]]
    table, = tables(workbook(tmp_path / "units.xlsx", rows))
    assert table.caption == "Table 1. Employment by industry [In thousands]"
    assert table.notes == ("Source: a statistics office",)


def test_a_quantity_over_a_period_is_no_time(tmp_path: Path) -> None:
    """"Live births per year" and "Hours per week" are amounts; "Period" and "Year" are times."""
    rows = [["Period", "Year", "Live births per year", "Hours per week", "Number of days"],
            ["1950-1955", 1950, 9000, 38.5, 12],
            ["1955-1960", 1955, 10000, 39.0, 15],
            ["1960-1965", 1960, 12000, 40.5, 11],
            ["1965-1970", 1965, 13000, 37.0, 19]]
    table, = tables(workbook(tmp_path / "period.xlsx", rows))
    found = roles(table)
    assert found["Period"] == found["Year"] == sem.TIME
    assert {found[c] for c in ("Live births per year", "Hours per week", "Number of days")} <= set(sem.QUANTITIES)
