"""How a person reads a sheet's header: what names a column, what only identifies or titles it
(issue 28, the review of tree questions over the held-back RealHiTBench sheets)."""

from __future__ import annotations

import openpyxl

from curate.curation.header_tree import row_paths, series_codes
from curate.curation.sources.readers import xlsx
from tests.workbooks import workbook


def test_series_codes_are_short_capitals_and_digits_of_one_length_and_names_are_not():
    assert series_codes(["DJ4R", "DJ4Q", "DJK8", "DJK7"])
    assert series_codes(["A4YN", "LNNP"])  # some codes are all letters, as long as one mixes in digits
    assert not series_codes(["USA", "GBR", "FRA"])  # country codes name the columns
    assert not series_codes(["2019", "2020"])
    assert not series_codes(["Q1", "Q2 2020"]) and not series_codes(["A4YN"])


def test_a_header_row_of_series_identifiers_is_no_level_of_the_column_paths(tmp_path):
    rows = [[None, "Manufacturing", None],
            [None, "Output per job", "Output per hour worked"],
            ["Date", "DJ4R", "DJK8"],
            ["2016 Q3", 0.1, 0.0], ["2016 Q4", 0.0, 0.2], ["2017 Q1", 0.3, 0.1]]
    table = next(xlsx.read(str(workbook(tmp_path / "codes.xlsx", rows, merges=("B1:C1",)))))
    assert table.columns == ["Date", "Manufacturing / Output per job", "Manufacturing / Output per hour worked"]
    assert "Series identifiers: Manufacturing / Output per job: DJ4R; Manufacturing / Output per hour worked: DJK8" \
        in table.notes


def test_a_title_over_the_column_of_row_labels_is_the_caption_not_part_of_its_name(tmp_path):
    rows = [[None, "GREAT BRITAIN", "Month", None],
            ["Level", "Reason", "2012-11", "2012-12"],
            ["Low", "Leaves a training scheme", 5, 6],
            [None, "Misconduct", 2, 3],
            ["High", "Left employment", 7, 9],
            [None, "Misconduct", 1, 4]]
    table = next(xlsx.read(str(workbook(tmp_path / "title.xlsx", rows, merges=("C1:D1", "A3:A4", "A5:A6")))))
    assert table.columns == ["Level", "Reason", "Month / 2012-11", "Month / 2012-12"]
    assert table.caption == "GREAT BRITAIN"


def test_numbers_repeated_under_each_merged_group_are_a_header_row_named_by_the_stub(tmp_path):
    rows = [[None, "Tertiary branch complexity", None, None, None],
            [None, "Mouse #1", None, "Mouse #2", None],
            ["Age (months)", 3, 6, 3, 6],
            [None, 1, 5, 1, 1], [None, 1, 1, 1, 2], [None, 4, 4, 0, 2]]
    table = next(xlsx.read(str(workbook(tmp_path / "ages.xlsx", rows, bold_rows=(2, 3), merges=("B1:E1", "B2:C2", "D2:E2")))))
    assert table.n_rows == 3  # the ages are no case of the table
    assert table.columns[1:3] == ["Tertiary branch complexity / Mouse #1 / Age (months) 3",
                                  "Tertiary branch complexity / Mouse #1 / Age (months) 6"]


def test_a_row_of_measurements_that_differs_under_each_group_stays_in_the_body(tmp_path):
    rows = [[None, "Mouse #1", None, "Mouse #2", None],
            ["Age (months)", 3, 6, 3, 6],
            ["a", 1, 5, 2, 1], ["b", 1, 1, 1, 2]]
    table = next(xlsx.read(str(workbook(tmp_path / "body.xlsx", rows, merges=("B1:C1", "D1:E1")))))
    assert table.n_rows == 2 and table.columns[1] == "Mouse #1 / 3"
    rows[1] = ["Week 1", 3, 6, 4, 6]  # not the same numbers under each group: something measured
    table = next(xlsx.read(str(workbook(tmp_path / "body2.xlsx", rows, merges=("B1:C1", "D1:E1")))))
    assert table.n_rows == 3


def test_text_columns_past_a_column_of_codes_are_levels_of_the_row_tree(tmp_path):
    rows = [["Product, country code and name", None, None, "2017", "2018"],
            ["Fresh", 1220, "Canada", 415.8, 320.0],
            [None, 4039, "Norway", 35.0, 42.6],
            [None, None, "Total", 450.8, 362.6],
            ["Frozen", 3370, "Chile", 70.1, 80.2],
            [None, 4039, "Norway", 12.0, 13.0],
            [None, None, "Total", 82.1, 93.2]]
    table = next(xlsx.read(str(workbook(tmp_path / "salmon.xlsx", rows, merges=("A1:C1", "A2:A4", "A5:A7")))))
    paths = row_paths(table.header, table.n_rows)
    assert paths[:3] == [("Fresh", "Canada"), ("Fresh", "Norway"), ("Fresh", "Total")]
    assert paths[4] == ("Frozen", "Norway")  # the codes (4039) are no level of their own


def test_a_stored_date_time_shows_as_the_date_its_format_shows(tmp_path):
    import datetime as dt

    wb = openpyxl.Workbook()
    ws = wb.active
    ws.append(["Date", "Production"])
    for day, hour, value in [(30, 0, 46.2), (31, 0, 43.4), (1, 7, 44.1)]:
        ws.append([dt.datetime(2017, 1 if day > 1 else 2, day, hour), value])
        ws.cell(ws.max_row, 1).number_format = "mm-dd-yy"
    wb.save(tmp_path / "dates.xlsx")
    table = next(xlsx.read(str(tmp_path / "dates.xlsx")))
    assert table.body.column("Date").to_pylist()[:3] == [dt.date(2017, 1, 30), dt.date(2017, 1, 31), dt.date(2017, 2, 1)]
    # a format that shows the time keeps it
    assert xlsx.as_shown_date(dt.datetime(2017, 2, 2, 7), "yyyy-mm-dd h:mm") == dt.datetime(2017, 2, 2, 7)


def test_tables_stacked_under_one_sheet_title_each_carry_it(tmp_path):
    """productivity-table01: one title over three blocks of revisions; the second and third, with no
    caption of their own, are revisions too."""
    rows = [["Revisions since previously published estimates", None],
            ["Date", "Whole economy"], ["2016 Q3", 0.1], ["2016 Q4", -0.2], ["2017 Q1", 0.0],
            [None, None], [None, None],
            ["Date", "Manufacturing"], ["2016 Q3", 0.3], ["2016 Q4", 0.0], ["2017 Q1", -0.1]]
    tables = list(xlsx.read(str(workbook(tmp_path / "stacked.xlsx", rows, bold_rows=(1, 2, 8)))))
    assert len(tables) == 2
    assert [t.caption for t in tables] == ["Revisions since previously published estimates"] * 2
