"""Complex-structure detection on spreadsheets, with evidence, in RealHiTBench's categories: on
handmade sheets whose structure we know, and on RealHiTBench's own spreadsheets against the
category the authors gave each table."""

from __future__ import annotations

import json

import pytest

from curate.curation.sources.readers.xlsx import sheet_structures
from tests.conftest import shared
from tests.files import hierarchical_xlsx
from tests.test_cli import invoke as cli


def invoke(args):
    result = cli(*args)
    assert result.exit_code == 0, result.output
    return result.output


def by_type(structures):
    return {(s["type"], s.get("kind", "")): s for sheet in structures for s in sheet["structures"]}


def by_sign(structures):
    return {s["sign"]: s for sheet in structures for s in sheet["structures"]}


def test_a_merged_two_level_header_and_indented_row_labels_are_found_with_their_cell_ranges(tmp_path):
    found = by_type(sheet_structures(str(hierarchical_xlsx(tmp_path / "yields.xlsx"))))
    signs = by_sign(sheet_structures(str(hierarchical_xlsx(tmp_path / "yields.xlsx"))))
    header = signs["header_levels"]
    assert header["evidence"] == ["A3:E4"] and header["realhitbench_category"] == "ColumnHeaderMerge"
    assert "2 header levels" in header["detail"] and "merged" in header["detail"]
    assert signs["merged_header"]["weight"] == 1.0  # levels and merges: the definition, both signs
    indented = found[("hierarchical_row_header", "indentation")]
    assert indented["evidence"] == ["A6:A9"] and indented["realhitbench_category"] == "SingleRowClassified"
    signs = by_sign(sheet_structures(str(tmp_path / "yields.xlsx"), everything=True))
    assert signs["notes_below"]["evidence"] == ["A11:A11"]  # a source line: it suggests ExternalSupply


def section_rows_xlsx(path):
    """A flat header; 'Job demand' and 'Hours' rows hold only a label in the first stub column and
    head the rows below them; one cell is filled in a colour that marks a significant value."""
    import openpyxl
    from openpyxl.styles import PatternFill

    wb = openpyxl.Workbook()
    ws = wb.active
    for row in (["Variable", "Level", "n", "%"], ["Job demand", None, None, None], [None, "Mental", 162, 62.8],
                [None, "Physical", 72, 27.9], ["Hours", None, None, None], [None, "Up to 30", 10, 3.9],
                [None, "Over 30", 248, 96.1]):
        ws.append(row)
    ws["D7"].fill = PatternFill("solid", fgColor="FFC7CE")
    wb.save(path)
    return path


def test_label_only_rows_heading_groups_are_section_rows_and_a_colour_that_singles_cells_out_is_found(tmp_path):
    found = by_type(sheet_structures(str(section_rows_xlsx(tmp_path / "sections.xlsx"))))
    sections = found[("hierarchical_row_header", "section_rows")]
    assert sections["evidence"] == ["A2:D2", "A5:D5"] and sections["realhitbench_category"] == "SingleRowClassified"
    assert found[("hierarchical_row_header", "multi_column")]["realhitbench_category"] == "MultiColumnClassified"
    assert ("hierarchical_column_header", "") not in found  # one header row: flat
    # a lone highlighted figure suggests BackgroundColor (half a sign); every sign found is listed
    signs = by_sign(sheet_structures(str(tmp_path / "sections.xlsx"), everything=True))
    assert signs["highlighted_cells"]["evidence"] == ["D7:D7"] and signs["highlighted_cells"]["weight"] == 0.5


def test_curate_inspect_json_lists_the_structures_at_the_top_level(tmp_path):
    out = invoke(["inspect", str(hierarchical_xlsx(tmp_path / "yields.xlsx")), "--json"])
    structures = json.loads(out)["structures"]
    assert {s["realhitbench_category"] for s in structures} >= {"ColumnHeaderMerge", "SingleRowClassified"}
    assert all(s["sheet"] == "Yields" and s["evidence"] for s in structures)


def test_detection_against_realhitbench_labels_recalls_the_header_categories():
    """`curate inspect TABLES --labels QA_subset.json`: one command, precision and recall per category.
    The authors give each table one category while a table often shows several structures, so
    precision is low by construction; recall is the measure."""
    tables, labels = shared("realhitbench", "tables"), shared("realhitbench", "QA_subset.json")
    result = json.loads(invoke(["inspect", str(tables), "--labels", str(labels), "--json"]))
    assert result["tables"] == 105
    recall = {name: c["recall"] for name, c in result["categories"].items()}
    assert recall["ColumnHeaderMerge"] >= 0.9 and recall["MultiColumnClassified"] >= 0.9
    assert recall["SingleRowClassified"] >= 0.9
    assert recall["ContentCompound"] >= 0.9 and recall["StructureCompound"] == 1.0
    printed = invoke(["inspect", str(tables), "--labels", str(labels)])
    assert "ColumnHeaderMerge" in printed and "recall" in printed


def test_a_folder_without_labels_is_a_usage_error(tmp_path):
    from click.testing import CliRunner

    from curate.curation.cli import main

    result = CliRunner().invoke(main, ["inspect", str(tmp_path)])
    assert result.exit_code == 2 and "--labels" in result.output
    with pytest.raises(ValueError, match="FileName and CompStrucCata"):
        from curate.curation.sources.readers.xlsx import compare_with_labels

        (tmp_path / "q.json").write_text('[{"x": 1}]')
        compare_with_labels(str(tmp_path), str(tmp_path / "q.json"))


def test_notes_right_on_top_of_the_header_and_a_value_supplied_beside_a_label_are_external_supply(tmp_path):
    """Lines of instructions standing right on the header (no blank row between) are notes, not
    part of the table; a value given beside a label above the body ("Cost: 1720") is supplied from
    outside the grid. Both are RealHiTBench's ExternalSupply."""
    import openpyxl

    wb = openpyxl.Workbook()
    ws = wb.active
    for row in (["Table 5.01: Visits abroad by region, 2023"], ["This worksheet contains one table."],
                ["To turn off freeze panes select the View ribbon."], ["Region", "Purpose", "Visits", "Spending"],
                ["North America", "Holiday", 2292000, 4138], ["North America", "Business", 687000, 1457],
                ["Europe", "Holiday", 3000, 6], ["Europe", "Business", 2000, 5]):
        ws.append(row)
    wb.save(tmp_path / "visits.xlsx")
    notes = by_type(sheet_structures(str(tmp_path / "visits.xlsx")))[("notes", "")]
    assert notes["realhitbench_category"] == "ExternalSupply" and len(notes["evidence"]) >= 1

    wb = openpyxl.Workbook()
    ws = wb.active
    for row in (["Job #", "Artist", "Venue", "Height", "Cost:", 1720], ["Job #", "Artist", "Venue", "Height", "Share", "Cost"],
                ["EM2058", "Corona Sunsets", "Centre Island", 87.5, 0.25, 430], ["WI2253", "Fools Gold", "Common", 40, 0.5, 860],
                ["LA2035", "Ditybird", "Common", 40, 0.25, 430]):
        ws.append(row)
    wb.save(tmp_path / "ads.xlsx")
    supplied = by_type(sheet_structures(str(tmp_path / "ads.xlsx")))[("notes", "")]
    assert supplied["evidence"] == ["E1:F1"] and "beside a label" in supplied["detail"]


def test_a_conditional_format_that_fills_body_cells_is_a_background_colour(tmp_path):
    import openpyxl
    from openpyxl.formatting.rule import CellIsRule
    from openpyxl.styles import PatternFill

    wb = openpyxl.Workbook()
    ws = wb.active
    for row in (["Site", "2019", "2020"], ["North", 12, 30], ["South", 45, 8], ["East", 20, 22]):
        ws.append(row)
    wb.save(tmp_path / "plain.xlsx")
    assert ("background_color", "") not in by_type(sheet_structures(str(tmp_path / "plain.xlsx")))
    ws.conditional_formatting.add("B2:C4", CellIsRule(operator="greaterThan", formula=["25"],
                                                      fill=PatternFill(bgColor="FFC7CE", fill_type="solid")))
    wb.save(tmp_path / "coloured.xlsx")
    found = by_type(sheet_structures(str(tmp_path / "coloured.xlsx")))[("background_color", "")]
    assert found["realhitbench_category"] == "BackgroundColor" and found["evidence"] == ["B2:C2", "B3:C3", "B4:C4"]


# ---- each category's definition on a small sheet: the signs a person checks for, and what is not it ----

def _book(path, rows, style=None):
    import openpyxl

    wb = openpyxl.Workbook()
    ws = wb.active
    for row in rows:
        ws.append(row)
    if style:
        style(ws)
    wb.save(path)
    return str(path)


def _categories(path):
    return {s["realhitbench_category"] for sheet in sheet_structures(path) for s in sheet["structures"]}


PLAIN = [["Region", "2019", "2020", "2021"], ["North", 12, 30, 41], ["South", 45, 8, 17], ["East", 20, 22, 29],
         ["West", 33, 19, 25]]


def test_a_column_header_merge_is_levels_joined_by_merged_cells_not_two_stacked_rows(tmp_path):
    """ColumnHeaderMerge: 'column headers form multi-level hierarchies through cell merging'. Two
    header rows whose upper labels are merged over the columns they group show both signs (levels,
    merges: score 2, the fitted threshold); the same rows with the group label repeated over every
    column, unmerged, show only stacked levels."""
    rows = [["Region", "Sales", None, "Costs", None], [None, "2020", "2021", "2020", "2021"],
            ["North", 12, 30, 5, 7], ["South", 45, 8, 9, 3], ["East", 20, 22, 4, 6]]
    merged = _book(tmp_path / "merged.xlsx", rows, lambda ws: (ws.merge_cells("B1:C1"), ws.merge_cells("D1:E1"),
                                                                ws.merge_cells("A1:A2")))
    assert "ColumnHeaderMerge" in _categories(merged)
    assert "ColumnHeaderMerge" not in _categories(_book(tmp_path / "plain.xlsx", PLAIN))


def test_stacked_tables_on_one_sheet_are_content_compound(tmp_path):
    """ContentCompound: the sheet is divided into sub-tables; two tables one under another, each
    under its own title, are sub-tables of one sheet whatever their widths."""
    rows = [["Table 1: Sales"], ["Region", "2020", "2021"], ["North", 12, 30], ["South", 45, 8], [], [],
            ["Table 2: Staff"], ["Region", "2020", "2021", "2022"], ["North", 3, 4, 5], ["South", 6, 7, 8]]
    assert "ContentCompound" in _categories(_book(tmp_path / "stacked.xlsx", rows))


def test_external_supply_is_what_the_reader_needs_from_outside_the_body(tmp_path):
    """ExternalSupply: statements above the header besides its title; notes keying markers the
    table's cells carry; a 'Label: value' outside the body; one unit declared for the whole table;
    markers among the figures whose key is elsewhere. A bare table with a title has none of them,
    and a source line with a general note below only suggests it (half a sign): the table reads
    without them. Thresholds fitted recall first claim the category on that suggestion alone."""
    from curate.curation.sources.structure import THRESHOLDS

    titled = [["Sales by region"]] + PLAIN
    assert "ExternalSupply" not in _categories(_book(tmp_path / "bare.xlsx", titled))
    notes = titled + [[], ["Source: regional returns, 2022."], ["Note: 2021 figures are provisional."]]
    strict = {**THRESHOLDS, "ExternalSupply": 1.0}
    assert "ExternalSupply" not in {s["realhitbench_category"] for sheet in sheet_structures(
        _book(tmp_path / "notes.xlsx", notes), thresholds=strict) for s in sheet["structures"]}
    assert ("ExternalSupply" in _categories(tmp_path / "notes.xlsx")) == (THRESHOLDS["ExternalSupply"] <= 0.5)
    assert by_sign(sheet_structures(_book(tmp_path / "notes.xlsx", notes), everything=True))[
        "notes_below"]["weight"] == 0.5
    marked = [["Sales by region"], ["Region", "2019", "2020", "2021"], ["North*", 12, 30, 41], ["South", 45, 8, 17],
              ["East", 20, 22, 29], [], ["* North includes the islands from 2020."]]
    found = by_sign(sheet_structures(_book(tmp_path / "keyed.xlsx", marked)))
    assert found["keyed_notes"]["evidence"] == ["A7:A7"] and found["keyed_notes"]["weight"] == 1.0
    told = [["Statement of travel expenses"], ["Taxable benefit for personal use of city vehicles"],
            ["For the period January 1 to December 31, 2021"], []] + PLAIN
    found = by_sign(sheet_structures(_book(tmp_path / "preamble.xlsx", told)))
    assert found["preamble"]["evidence"] == ["A1:A1", "A2:A2"] and found["preamble"]["weight"] == 1.0
    boilerplate = titled + [[], ["\u00a9 Terms & conditions"], ["https://example.org/sales"], [1234]]
    assert "ExternalSupply" not in _categories(_book(tmp_path / "boilerplate.xlsx", boilerplate))
    supplied = [["Project:", "Kerala plant"], ["Manager:", "Jagan"]] + PLAIN
    found = by_sign(sheet_structures(_book(tmp_path / "supplied.xlsx", supplied)))
    assert found["value_beside_label"]["evidence"] == ["A1:B1", "A2:B2"]
    unit = [["Profit & loss"], ["in million USD", "FY 2019", "FY 2020"], ["Revenue", 30990, 35119],
            ["Costs", 11088, 12693], ["Profit", 19902, 22426]]
    found = by_sign(sheet_structures(_book(tmp_path / "unit.xlsx", unit)))
    assert found["unit_statement"]["evidence"] == ["A2:A2"] and found["unit_statement"]["weight"] == 1.0
    flags = [["Measure", "2012", "Change", "CI"], ["Access", 71.1, "S", 0.52], ["Safety", 72.0, "S", 0.49],
             ["Information", 68.3, None, 0.50], ["Relations", 84.7, "S", 0.34]]
    found = by_sign(sheet_structures(_book(tmp_path / "flags.xlsx", flags)))
    assert found["flag_markers"]["realhitbench_category"] == "ExternalSupply"
    assert found["flag_markers"]["evidence"] == ["C2:C2", "C3:C3", "C5:C5"]


def _fill(colour):
    from openpyxl.styles import PatternFill

    return PatternFill("solid", fgColor=colour)


GROUPS = [["Item", "Group", "Cost", "Risk"], ["Motor", "Drive", 12, 3], ["Inverter", "Drive", 30, 2],
          ["Battery", "Storage", 45, 4], ["Cell", "Storage", 8, 1], ["Cable", "Bus", 20, 2], ["Plug", "Bus", 22, 1]]


def test_background_colour_is_fill_that_carries_meaning(tmp_path):
    """BackgroundColor: rows coloured by the group they belong to, a coloured band across the
    table opening each group, or rows banded in alternating colours. Not it: one fill down a column,
    shading of the stub, or a coloured label alone, which repeat what the structure already says."""
    def coded(ws):
        for r, colour in zip(range(2, 8), ["DDEBF7", "DDEBF7", "FCE4D6", "FCE4D6", "E2EFDA", "E2EFDA"]):
            for c in "ABCD":
                ws[f"{c}{r}"].fill = _fill(colour)

    found = by_sign(sheet_structures(_book(tmp_path / "coded.xlsx", GROUPS, coded)))
    assert found["colour_coded_groups"]["evidence"] == ["A2:D3", "A4:D5", "A6:D7"]
    assert found["colour_coded_groups"]["realhitbench_category"] == "BackgroundColor"
    assert "highlighted_cells" not in found  # the rows are coloured, no cell apart from its row

    def bands(ws, across=True):
        for r in (2, 5):
            ws[f"A{r}"].fill = _fill("B7DEF6")
            if across:
                ws.merge_cells(f"A{r}:D{r}")

    found = by_sign(sheet_structures(_book(tmp_path / "bands.xlsx", SECTIONS, bands)))
    assert found["group_bands"]["evidence"] == ["A2:D2", "A5:D5"]
    labels = _book(tmp_path / "labels.xlsx", SECTIONS, lambda ws: bands(ws, across=False))
    assert "BackgroundColor" not in _categories(labels)

    def banded(ws):
        for r in range(2, 8):
            for c in "ABCD":
                ws[f"{c}{r}"].fill = _fill("F2F2F2" if r % 2 else "FFFFCC")

    def column(ws):
        for r in range(2, 8):
            ws[f"C{r}"].fill = _fill("FFFFCC")

    def stub(ws):
        for r in range(2, 8):
            ws[f"A{r}"].fill = _fill("E2F2FB" if r % 3 else "B7DEF6")

    for name, style in (("column", column), ("stub", stub)):
        assert "BackgroundColor" not in _categories(_book(tmp_path / f"{name}.xlsx", GROUPS, style)), name
    # alternate-row banding: RealHiTBench labels it BackgroundColor (the one banded sheet of the 159
    # tuned on is labelled so), and it no longer passes for decoration
    found = by_sign(sheet_structures(_book(tmp_path / "banded.xlsx", GROUPS, banded)))
    assert found["banded_rows"]["evidence"] == ["A2:D7"] and "highlighted_cells" not in found


SECTIONS = [["Region", "Sector", "2020", "2021"], ["North", None, None, None], [None, "Farms", 12, 30],
            [None, "Shops", 45, 8], ["South", None, None, None], [None, "Farms", 20, 22], [None, "Shops", 33, 19]]


def test_thresholds_are_fitted_by_youdens_j_with_ties_to_recall():
    """The procedure that sets every threshold: the score that best separates the sheets labelled
    with a category from the rest (recall minus the share of other sheets flagged), the lower one
    on a tie; a category no fitting sheet is labelled with keeps one full sign."""
    from curate.curation.sources.structure import PRIOR_THRESHOLD, fit_threshold

    # at 1: recall 1, half the others flagged; at 2: recall 1/2, none flagged; J ties at 0.5: the lower
    assert fit_threshold([2.0, 2.0, 1.0, 1.0, 1.0, 0.0], [True, True, False, True, True, False]) == 1.0
    assert fit_threshold([2.0, 2.0, 1.0, 1.0, 1.0, 0.0], [True, True, False, False, False, False]) == 2.0
    assert fit_threshold([0.5, 1.0], [False, False]) == PRIOR_THRESHOLD


def test_every_sign_belongs_to_a_category_with_a_stated_definition_weight_and_threshold():
    from curate.curation.sources.structure import DEFINITIONS, REALHITBENCH_CATEGORIES, SIGNS, THRESHOLDS

    assert set(DEFINITIONS) == set(REALHITBENCH_CATEGORIES) == set(THRESHOLDS)
    assert {category for category, _ in SIGNS.values()} == set(REALHITBENCH_CATEGORIES)
    assert all(weight in (0.5, 1.0) for _, weight in SIGNS.values())


def test_thresholds_fitted_on_one_half_recall_the_categories_of_the_other_half():
    """Two-fold cross-validation on RealHiTBench's 105 spreadsheets (benchmarks/hierarchical_holdout.py
    --cross-fit): the thresholds fitted on one half, measured on the other. The signs were written
    having seen both halves; only the thresholds are fitted. Figures of this commit: see README."""
    import sys
    from pathlib import Path

    tables, labels = shared("realhitbench", "tables"), shared("realhitbench", "QA_subset.json")
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    from hierarchical_holdout import cross_fit

    from curate.curation.sources.readers.xlsx import category_scores

    questions = json.loads(Path(labels).read_text())
    questions = next(iter(questions.values())) if isinstance(questions, dict) else questions
    gold = {q["FileName"]: q["CompStrucCata"] for q in questions}
    scores = {p.stem: category_scores(str(p)) for p in sorted(Path(tables).glob("*.xlsx")) if p.stem in gold}
    folds = cross_fit(scores, gold)
    held = folds["fit on tuning, measured on held_back"]["categories"]
    tuning = folds["fit on held_back, measured on tuning"]["categories"]
    for category in ("ColumnHeaderMerge", "MultiColumnClassified", "SingleRowClassified", "ContentCompound"):
        assert held[category]["recall"] >= 0.85 and tuning[category]["recall"] >= 0.85, category
    for category in ("ExternalSupply", "BackgroundColor"):
        assert held[category]["recall"] >= 0.9 and tuning[category]["recall"] >= 0.9, category
        assert held[category]["precision"] >= 0.2 and tuning[category]["precision"] >= 0.2, category


# ---- issue 44: signs drawn from sheets of realhitbench/more's tuning part, true of the structure ----

def test_a_parent_row_whose_children_stand_a_stub_column_deeper_is_single_row_classified(tmp_path):
    """Indentation drawn with columns: "Boston" in A with its figures, its states in B under it.
    One label a row, so it is a tree in one stub, not several classifying columns; region and state
    side by side on one row are (MultiColumnClassified)."""
    stepped = [["Region", None, "Number"], ["Boston", None, 37439], [None, "Maine", 3504], [None, "Vermont", 1723],
               ["Chicago", None, 177249], [None, "Ohio", 43565], [None, "Illinois", 45096]]
    found = by_sign(sheet_structures(_book(tmp_path / "stepped.xlsx", stepped)))
    assert found["stepped_stub"]["evidence"] == ["A2:C2", "A5:C5"]
    assert found["stepped_stub"]["realhitbench_category"] == "SingleRowClassified"
    assert "sparse_stub_column" not in found
    side_by_side = [["Region", "State", "Number"], ["Boston", "Maine", 3504], [None, "Vermont", 1723],
                    ["Chicago", "Ohio", 43565], [None, "Illinois", 45096], [None, "Iowa", 7124]]
    found = by_sign(sheet_structures(_book(tmp_path / "side.xlsx", side_by_side)))
    assert "stepped_stub" not in found and "sparse_stub_column" in found


def test_group_labels_written_once_over_their_columns_unmerged_are_a_column_header_merge(tmp_path):
    """ColumnHeaderMerge: 'Household' written once over its three columns, the cells beside it left
    blank rather than merged, groups the columns as a merge would; two stacked rows without a label
    over several columns do not."""
    rows = [[None, "Household", None, None, "All purchasers", None, None], ["Year", "FAH", "FAFH", "All", "FAH", "FAFH",
                                                                            "All"],
            [1997, 6.12, 4.32, 10.44, 52.8, 47.2, 100], [1998, 5.86, 4.24, 10.1, 52.1, 47.9, 100],
            [1999, 5.9, 4.25, 10.16, 52.2, 47.8, 100]]
    found = by_sign(sheet_structures(_book(tmp_path / "laid.xlsx", rows)))
    assert "unmerged_group_labels" in found and "merged_header" not in found
    assert "ColumnHeaderMerge" in _categories(str(tmp_path / "laid.xlsx"))


def test_a_value_given_a_few_cells_right_of_its_label_or_under_it_is_external_supply(tmp_path):
    """A form above the table: "User Name:" with its value three cells on (the label is wide), and
    "Employee:" and "Dates:" side by side with their values under them. Labels with no value under
    or beside them ("Dates:", "Sort By:") supply nothing."""
    rows = [["Sales by region"], ["User Name:", None, None, "Anoop Sukumar"], ["Employee:", None, "Dates:"],
            ["MBurger", None, "Feb-01 - Feb-07"], []] + PLAIN
    found = by_sign(sheet_structures(_book(tmp_path / "form.xlsx", rows)))
    assert found["value_beside_label"]["evidence"] == ["A2:D2", "A3:A4", "C3:C4"]
    labels = [["Sales by region"], ["Dates:", "Sort By:"], []] + PLAIN
    found = by_sign(sheet_structures(_book(tmp_path / "labels.xlsx", labels), everything=True))
    assert "value_beside_label" not in found


def test_a_foot_row_that_sums_or_averages_the_rows_above_it_is_read_from_the_numbers(tmp_path):
    """A ledger's last row adds up the rows above it (labelled 'TOTAL' or not at all): under a
    one-level header, the only grouping its rows have (SingleRowClassified). A last row that is
    just another row is not."""
    ledger = [["Client", "Debit", "Credit"], ["A1", 20000, 0], ["A1", 20000, 1000], ["A10", 10000, 0],
              ["A10", 0, 2000], [None, 50000, 3000]]
    found = by_sign(sheet_structures(_book(tmp_path / "ledger.xlsx", ledger)))
    assert found["foot_aggregate"]["evidence"] == ["A6:C6"] and "sum" in found["foot_aggregate"]["detail"]
    assert found["foot_aggregate"]["realhitbench_category"] == "SingleRowClassified"
    returns = [["Year", "Stocks", "Bonds"], [2006, 0.1579, 0.0298], [2007, 0.0549, 0.0466], [2008, -0.37, 0.016],
               [2009, 0.2646, 0.001], ["averages", 0.0268, 0.0234]]  # the means, written to 4 decimals
    found = by_sign(sheet_structures(_book(tmp_path / "returns.xlsx", returns)))
    assert "mean" in found["foot_aggregate"]["detail"]
    assert "foot_aggregate" not in by_sign(sheet_structures(_book(tmp_path / "plain.xlsx", PLAIN), everything=True))
    near = ledger[:-1] + [[None, 50600, 3040]]  # 1% off: not the sum, whatever the rounding shown
    assert "foot_aggregate" not in by_sign(sheet_structures(_book(tmp_path / "near.xlsx", near), everything=True))


def test_label_rows_each_heading_ten_rows_or_more_part_the_body_into_sub_tables(tmp_path):
    """ContentCompound: 'Occupational group' and 'Industry' each head a long run of rows, sub-tables
    of one body; label rows heading two or three rows each are groups (SECTIONS), not sub-tables."""
    rows = [["Series", "2023", "2024"], ["All workers", 160.6, 165.4], ["Occupational group", None, None]]
    rows += [[f"Occupation {i}", 150 + i, 155 + i] for i in range(12)] + [["Industry", None, None]]
    rows += [[f"Industry {i}", 140 + i, 145 + i] for i in range(12)]
    found = by_sign(sheet_structures(_book(tmp_path / "long.xlsx", rows)))
    assert found["long_sections"]["evidence"] == ["A3:C3", "A16:C16"]
    assert found["long_sections"]["realhitbench_category"] == "ContentCompound"
    assert "long_sections" not in by_sign(sheet_structures(_book(tmp_path / "groups.xlsx", SECTIONS), everything=True))


# ---- signs read from the numbers and the header row, and thresholds fitted recall first ----

def test_subtotals_the_numbers_show_are_rows_classified_in_one_stub_with_no_label_saying_so(tmp_path):
    """'Manufacturing' is the sum of the two rows under it, 'Services' of the three under it, with no
    bold, indent or 'Total': groups in one stub (SingleRowClassified). A grand total alone nests
    nothing, and rows that add up to nothing are a plain list."""
    rows = [["Industry", "2022", "2023"], ["Manufacturing", 15570, 15901], ["Durable goods", 10065, 10312],
            ["Nondurable goods", 5505, 5589], ["Services", 9172, 9630], ["Retail", 4311, 4502],
            ["Transport", 2620, 2777], ["Finance", 2241, 2351]]
    found = by_sign(sheet_structures(_book(tmp_path / "nested.xlsx", rows)))
    assert found["summing_rows"]["evidence"] == ["A2:C8"] and found["summing_rows"]["detail"].startswith("2 rows")
    assert found["summing_rows"]["realhitbench_category"] == "SingleRowClassified"
    flat = rows[:1] + rows[2:4] + rows[5:]
    assert "summing_rows" not in by_sign(sheet_structures(_book(tmp_path / "flat.xlsx", flat), everything=True))
    grand = flat + [["All", sum(r[1] for r in flat[1:]), sum(r[2] for r in flat[1:])]]
    assert "summing_rows" not in by_sign(sheet_structures(_book(tmp_path / "grand.xlsx", grand), everything=True))


def test_a_label_heading_the_unlabelled_column_beside_it_suggests_a_merged_header(tmp_path):
    """'Average retail price' over a price and, unlabelled, its unit: the label covers both columns as
    a merge would (half a sign: sloppy sheets leave a label out too). A header labelling every column
    has none."""
    rows = [["Form", "Average retail price", None, "Yield"], ["Fresh", 1.85, "per pound", 0.9],
            ["Sauce", 1.17, "per pound", 1.0], ["Juice", 0.87, "per pint", 1.0]]
    found = by_sign(sheet_structures(_book(tmp_path / "apples.xlsx", rows), everything=True))
    assert found["label_over_unlabelled"]["evidence"] == ["B1:C1"] and found["label_over_unlabelled"]["weight"] == 0.5
    assert "label_over_unlabelled" not in by_sign(sheet_structures(_book(tmp_path / "plain.xlsx", PLAIN),
                                                                   everything=True))


def test_one_header_row_writing_the_same_labels_twice_side_by_side_is_structure_compound(tmp_path):
    """'Item, Qty, Price' then, past a blank column, 'Item, Qty, Price' again: the same table twice."""
    rows = [["Item", "Qty", "Price", None, "Item", "Qty", "Price"], ["Tomato", 10, 5, None, "Tomato", 10, 4],
            ["Potato", 20, 10, None, "Potato", 20, 11], ["Banana", 100, 12, None, "Banana", 100, 9]]
    found = by_sign(sheet_structures(_book(tmp_path / "twice.xlsx", rows)))
    assert found["repeated_header_blocks"]["evidence"] == ["A1:C1", "E1:G1"]
    assert found["repeated_header_blocks"]["realhitbench_category"] == "StructureCompound"
    assert "repeated_header_blocks" not in by_sign(sheet_structures(_book(tmp_path / "plain.xlsx", PLAIN),
                                                                    everything=True))


def test_label_rows_naming_two_variables_classify_the_rows_by_both(tmp_path):
    """An export writes 'Reference area: Belgium' and 'Sector: State government' as rows over each
    row of figures: rows classified by two variables (MultiColumnClassified), written as rows."""
    rows = [["", "Female", "Male"]]
    for area, sector, f, m in (("Austria", "State", 9287, 6574), ("Belgium", "State", 27816, 18701),
                               ("Belgium", "Municipal", 330442, 156431)):
        rows += [[f"Reference area: {area}", None, None], [f"Sector: {sector}", None, None], [None, f, m]]
    found = by_sign(sheet_structures(_book(tmp_path / "export.xlsx", rows), everything=True))
    assert found["keyed_label_rows"]["realhitbench_category"] == "MultiColumnClassified"
    assert "reference area, sector" in found["keyed_label_rows"]["detail"]


def test_thresholds_are_fitted_recall_first_within_the_claims_budget():
    """Lowering a threshold that recalls one more labelled sheet is worth a claim or two more, as long
    as the sheets' mean number of claims stays within the budget; a lowering that recalls nothing is not."""
    from curate.curation.sources.structure import REALHITBENCH_CATEGORIES, fit_thresholds

    def sheet(**scores):
        return {c: scores.get(c, 0.0) for c in REALHITBENCH_CATEGORIES}

    scores = [sheet(ExternalSupply=1.0), sheet(ExternalSupply=0.5), sheet(ExternalSupply=0.5, ColumnHeaderMerge=2.0),
              sheet(ExternalSupply=0.5, ColumnHeaderMerge=1.0), sheet(ExternalSupply=0.5, ContentCompound=1.0),
              sheet(ContentCompound=1.0)]
    labels = ["ExternalSupply", "ExternalSupply", "ColumnHeaderMerge", "ContentCompound", "ContentCompound",
              "ContentCompound"]
    from curate.curation.sources.structure import fit_threshold

    assert fit_threshold([s["ExternalSupply"] for s in scores], [y == "ExternalSupply" for y in labels]) == 1.0
    # 4 claims at the Youden thresholds; 0.5 recalls the second sheet for 4 claims more: 8 over 6 sheets
    assert fit_thresholds(scores, labels, budget=1.4)["ExternalSupply"] == 0.5
    assert fit_thresholds(scores, labels, budget=1.3)["ExternalSupply"] == 1.0
    assert fit_thresholds(scores, labels, budget=3.0)["ColumnHeaderMerge"] == 2.0  # lower recalls no one more
