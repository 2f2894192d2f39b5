"""Header detection from the evidence a person reads, on small real workbooks (openpyxl writes them).

Each test is one of the errors found on RealHiTBench sheets nobody here had seen (issue 28): a
header row of numbers read as data, the stub's title read as a body row, "of which" rows beside
the row they split, a subtotal beside its group, a grand total under the last group, a label
wrapped over several rows read as several levels, a header with nothing under it dropped silently.
"""

from __future__ import annotations

import openpyxl
from openpyxl.styles import Alignment

from curate.curation.header_tree import children_labels, grand_total, row_paths, total_of
from curate.curation.sources.readers import xlsx
from curate.curation.sources.evidence import HEADER, WEIGHTS, is_header, signs
from tests.workbooks import workbook


def _paths(table) -> list[tuple[str, ...]]:
    return row_paths(table.header, table.n_rows)


def test_each_sign_has_its_stated_weight_and_a_header_needs_two_points():
    assert HEADER == 2.0
    assert signs([2019, 2020, 2021], [12.5, 13.1, 9.0]) == {"numeric_labels": WEIGHTS["numeric_labels"]}
    assert is_header(signs([2019, 2020, 2021], [12.5, 13.1, 9.0]))
    assert is_header(signs(list(range(1, 25)), [3.5] * 24))  # hours 1..24 over measurements
    assert not is_header(signs([1998, 2004], [2001, 2010]))  # years under years: a body of them
    assert not is_header(signs([12.5, 13.1], [1.0, 2.0]))  # measurements
    assert is_header(signs(["2023"], [5.0], merged_across=True))  # a year merged over the columns
    assert not is_header(signs([], [5.0], bold=True))  # bold alone is no header
    assert is_header(signs([], [], bold=True, written_blanks=True, figures_below=True))


def test_a_row_of_years_over_a_blank_row_is_the_header_not_the_first_body_row(tmp_path):
    rows = [["Stock", "Scotland", None, "Abroad", None],
            [None, 2022, 2023, 2022, 2023],
            [],
            ["Herring", 38597.9, 36893.6, 23821.2, 38198.5],
            ["Mackerel", 81546.8, 98473.6, 74260.3, 113387.9]]
    table = next(xlsx.read(str(workbook(tmp_path / "landings.xlsx", rows))))
    assert table.columns == ["Stock", "Scotland / 2022", "Scotland / 2023", "Abroad / 2022", "Abroad / 2023"]
    assert table.body.column("Stock").to_pylist() == ["Herring", "Mackerel"]


def test_hours_one_to_n_label_columns(tmp_path):
    rows = [["Hour", *range(1, 7)], ["Load", 3.2, 2.9, 2.8, 3.5, 4.1, 5.0], ["Price", 41.0, 39.5, 38.2, 40.1, 45.3, 52.0]]
    table = next(xlsx.read(str(workbook(tmp_path / "hours.xlsx", rows))))
    assert table.columns == ["Hour", "1", "2", "3", "4", "5", "6"] and table.n_rows == 2


def test_the_stubs_title_styled_like_the_header_is_no_body_row(tmp_path):
    """OECD's layout: "Time period | 2010 | 2011" bold, then "Reference area" bold with its other
    cells written blank, then the countries."""
    rows = [["Time period", "2010", "2011", "2012"], ["Reference area", " ", " ", " "],
            ["Australia", 1376, 1084, 1074], ["Austria", 350, 350, 300], ["Belgium", 511, 283, 284]]
    table = next(xlsx.read(str(workbook(tmp_path / "oecd.xlsx", rows, bold_rows=(1, 2)))))
    assert table.columns[1:] == ["2010", "2011", "2012"]
    assert table.body.column(0).to_pylist() == ["Australia", "Austria", "Belgium"]


def test_of_which_rows_and_bulleted_labels_sit_under_the_row_they_split(tmp_path):
    rows = [["Stock", "2022", "2023"],
            ["WC Mackerel", 81546.8, 98473.6], ["    of which IVa", 72391.7, 70475.4],
            ["NS Herring", 38597.9, 36893.6],
            ["Non-OECD economies", None, None], ["\u00b7\u2007\u2007Argentina", 15445, 18298], ["\u00b7\u2007\u2007Brazil", 248122, 234715]]
    table = next(xlsx.read(str(workbook(tmp_path / "stocks.xlsx", rows))))
    paths = _paths(table)
    assert [p.strip() for p in paths[1]] == ["WC Mackerel", "of which IVa"] and paths[2] == ("NS Herring",)
    # "Non-OECD economies" holds no figure: a node over its members, no body row of its own
    assert paths[3][0] == "Non-OECD economies" and paths[3][1].endswith("Argentina") and len(paths[4]) == 2
    assert table.n_rows == 5


def test_a_subtotal_is_a_child_of_its_group_and_a_grand_total_stands_at_the_root(tmp_path):
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.append(["Row labels", "Cost"])
    for label, indent, cost in [("Acme", 0, None), ("Cranes", 1, None), ("Sticker machine", 2, 348.2),
                                ("Cranes Total", 1, 348.2), ("Redemption", 1, None), ("Solar spin", 2, 96.6),
                                ("Globe", 2, 53.0), ("Redemption Total", 1, 149.6), ("Acme Total", 0, 497.8),
                                ("Betson", 0, None), ("Changers", 1, None), ("Token", 2, 68.0),
                                ("Changers Total", 1, 68.0), ("Betson Total", 0, 68.0), ("Grand Total", 0, 565.8)]:
        ws.append([label, cost])
        ws.cell(ws.max_row, 1).alignment = Alignment(indent=indent)
    wb.save(tmp_path / "pivot.xlsx")
    table = next(xlsx.read(str(tmp_path / "pivot.xlsx")))
    paths = _paths(table)
    # "Acme", "Cranes", "Redemption", ... hold no cost: nodes over the rows under them, not rows
    assert table.body.column("Row labels").to_pylist()[:3] == ["Sticker machine", "Cranes Total", "Solar spin"]
    assert paths[1] == ("Acme", "Cranes", "Cranes Total")
    assert paths[5] == ("Acme", "Acme Total")
    assert paths[-1] == ("Grand Total",)
    assert children_labels(table.header, "R", ("Acme",)) == ["Cranes", "Redemption", "Acme Total"]
    assert total_of("Africa Total") == total_of("Total for Africa") == "Africa" and total_of("Total") is None
    assert grand_total("Grand Total") and not grand_total("Total lipid (fat)")


def test_a_label_wrapped_over_header_rows_is_one_label_and_a_row_of_series_codes_is_no_level(tmp_path):
    rows = [[None, "Output per worker", None],
            [None, "Per cent", "Per cent"], [None, "change on", "change on"], [None, "previous", "quarter a"],
            [None, "quarter", "year ago"],
            ["Date", "A4YO", "A4YN"],
            ["2016 Q3", 0.1, 0.0], ["Q4", 0.0, 0.2], ["2017 Q1", 0.3, 0.1]]
    table = next(xlsx.read(str(workbook(tmp_path / "revisions.xlsx", rows, merges=("B1:C1",)))))
    # the codes identify the series, they name nothing a reader asks about: kept in a note, not in the paths
    assert table.columns == ["Date", "Output per worker / Per cent change on previous quarter",
                             "Output per worker / Per cent change on quarter a year ago"]
    assert any("Per cent change on previous quarter: A4YO" in note for note in table.notes)


def test_a_year_merged_over_the_columns_keeps_the_labelled_blocks_below_in_one_table(tmp_path):
    rows = [["Age and sex", "2023", None], [None, "Mining", "Construction"], [],
            ["TOTAL"], ["Men", 500, 10610], ["Women", 90, 1287], [],
            ["White"], ["Men", 437, 9298], ["Women", 81, 1108]]
    tables = list(xlsx.read(str(workbook(tmp_path / "employed.xlsx", rows, merges=("B1:C1", "A1:A2")))))
    assert len(tables) == 1
    table = tables[0]
    assert table.columns[1:] == ["2023 / Mining", "2023 / Construction"]
    assert [p for p in _paths(table) if len(p) == 2] == [("TOTAL", "Men"), ("TOTAL", "Women"), ("White", "Men"),
                                                         ("White", "Women")]


def test_a_table_with_no_body_is_a_reader_warning_with_the_reason(tmp_path, monkeypatch):
    """No sheet we know of still parses to a header without rows (the 4-level organisation chart
    that did now reads as sections); should a parse yield one, the reader says so and hands on
    the other tables, rather than passing an empty table on to be dropped without a word."""
    from dataclasses import replace

    path = workbook(tmp_path / "chart.xlsx", [["Unit", "Staff"], ["North", 4], ["South", 7]])
    parse = xlsx.grid_to_table
    monkeypatch.setattr(xlsx, "grid_to_table", lambda grid, name, prov, **how: replace(
        parse(grid, name, prov, **how), body=parse(grid, name, prov, **how).body.slice(0, 0)))
    skipped: list[dict] = []
    try:
        list(xlsx.read(str(path), skipped))
    except Exception as e:  # the only table had no rows: the file holds none, and the sheet's reason was said
        assert "grid" in str(e)
    assert skipped[0]["sheet"] == "Sheet" and "no body rows under the header at A1:B3" in skipped[0]["reason"]


def test_a_label_merged_along_its_row_over_the_figures_heads_the_rows_below(tmp_path):
    """OECD's "Time period: 2021" merged from the stub over the data columns is a section heading:
    the rows under it are its rows, and its text is not a value of every column."""
    rows = [["Reference area", "Arts", "Law", "Health"],
            ["Time period: 2021", None, None, None],
            ["Australia", 4.9, 3.0, 1.6],
            ["Austria", 5.5, 6.0, 2.7],
            ["Time period: 2017", None, None, None],
            ["Chile", 7.1, 6.2, 5.0],
            ["Peru", 3.3, 2.2, 1.0]]
    table = next(xlsx.read(str(workbook(tmp_path / "oecd.xlsx", rows, merges=("A2:D2", "A5:D5")))))
    assert table.body.column("Arts").to_pylist() == [4.9, 5.5, 7.1, 3.3]  # no "Time period: 2021" in it
    paths = _paths(table)
    assert paths[0] == ("Time period: 2021", "Australia") and paths[3] == ("Time period: 2017", "Peru")


def test_a_merge_over_a_few_columns_in_the_body_still_repeats_its_value(tmp_path):
    rows = [["Region", "Site", "A", "B", "C", "D"],
            ["North", "x", 1, 2, 3, 4],
            ["North", "y", 5, 6, 7, 8],
            ["South", "z", 9, 10, 11, 12]]
    table = next(xlsx.read(str(workbook(tmp_path / "few.xlsx", rows, merges=("A2:A3", "C4:D4")))))
    assert table.body.column("B").to_pylist()[2] == 9  # C4:D4 merges two figures: each column holds it


def test_a_year_written_once_over_its_quarters_names_every_quarter(tmp_path):
    """ONS writes "2016 Q3", "Q4", "2017 Q1", "Q2": the bare quarters are of the year above them,
    and a question about "Q4" must not be ambiguous."""
    rows = [["Date", "Output"], ["2016 Q3", 0.1], ["Q4", 0.2], ["2017 Q1", 0.3], ["Q2", 0.4], ["Q3", 0.5]]
    table = next(xlsx.read(str(workbook(tmp_path / "ons.xlsx", rows))))
    assert table.body.column("Date").to_pylist() == ["2016 Q3", "2016 Q4", "2017 Q1", "2017 Q2", "2017 Q3"]
    months = [["Month", "Sales"], ["2020 Nov", 1], ["Dec", 2], ["2021 Jan", 3], ["Feb", 4]]
    table = next(xlsx.read(str(workbook(tmp_path / "months.xlsx", months))))
    assert table.body.column("Month").to_pylist() == ["2020 Nov", "2020 Dec", "2021 Jan", "2021 Feb"]


def test_quarters_with_no_year_above_or_among_other_labels_are_left_as_written():
    from curate.curation.sources.grid import periods_completed

    assert periods_completed(["Q1", "Q2", "2020 Q3", "Q4", "2021 Q1"]) is None  # a bare quarter first: whose?
    assert periods_completed(["2020 Q1", "Q2", "Total", "2021 Q1", "Q2"]) is None  # not a run of periods
    assert periods_completed(["2020 Q1", "2020 Q2", "2021 Q1"]) is None  # nothing left out
    assert periods_completed(["2020 Q1", "Q2", "2021 Q1", "Q2"]) == ["2020 Q1", "2020 Q2", "2021 Q1", "2021 Q2"]


def test_a_label_alone_on_its_row_heading_nested_rows_is_a_node_not_a_body_row(tmp_path):
    """BLS's "TOTAL" over "Total, 16 years and over" and its age bands: a row with a label and no
    figure is no case of the table; its node spans the rows under it, and the serialization shows
    it on each of them. A heading with figures of its own (a subtotal) stays a row."""
    from curate.exports.serialize import serialize

    rows = [["Group", "Employed"],
            ["TOTAL", None],
            ["Total, 16 years and over", 590],
            ["16 to 19 years", 11],
            ["White", None],
            ["Men, 16 years and over", 500],
            ["16 to 19 years", 10]]
    table = next(xlsx.read(str(workbook(tmp_path / "bls.xlsx", rows))))
    assert table.body.column("Group").to_pylist() == ["Total, 16 years and over", "16 to 19 years",
                                                      "Men, 16 years and over", "16 to 19 years"]
    assert _paths(table)[0] == ("TOTAL", "Total, 16 years and over") and _paths(table)[3] == ("White", "16 to 19 years")
    assert serialize(table, "markdown").splitlines()[2] == "| TOTAL / Total, 16 years and over | 590 |"
    with_subtotal = [["Region", "Sales"], ["Asia", 30], ["  Japan", 10], ["  China", 20], ["Europe", 5], ["  France", 5]]
    table = next(xlsx.read(str(workbook(tmp_path / "sub.xlsx", with_subtotal))))
    assert table.n_rows == 6 - 1  # the header row only: "Asia" holds 30, it stays
