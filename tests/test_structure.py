"""Complex-structure detection on spreadsheets, with evidence, in RealHiTBench's categories: on
handmade sheets whose structure we know, and on RealHiTBench's own spreadsheets against the
category the authors gave each table."""

from __future__ import annotations

import json

import pytest

from curation.sources.readers.xlsx import sheet_structures
from tests.conftest import shared
from tests.files import hierarchical_xlsx
from tests.test_cli import invoke as cli


def invoke(args):
    result = cli(*args)
    assert result.exit_code == 0, result.output
    return result.output


def by_type(structures):
    return {(s["type"], s.get("kind", "")): s for sheet in structures for s in sheet["structures"]}


def test_a_merged_two_level_header_and_indented_row_labels_are_found_with_their_cell_ranges(tmp_path):
    found = by_type(sheet_structures(str(hierarchical_xlsx(tmp_path / "yields.xlsx"))))
    header = found[("hierarchical_column_header", "")]
    assert header["evidence"] == ["A3:E4"] and header["realhitbench_category"] == "ColumnHeaderMerge"
    assert "2 header levels" in header["detail"] and "merged" in header["detail"]
    indented = found[("hierarchical_row_header", "indentation")]
    assert indented["evidence"] == ["A6:A9"] and indented["realhitbench_category"] == "SingleRowClassified"
    assert found[("notes", "")]["evidence"] == ["A11:A11"]


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
    assert found[("background_color", "")]["evidence"] == ["D7:D7"]
    assert ("hierarchical_column_header", "") not in found  # one header row: flat


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

    from curation.cli import main

    result = CliRunner().invoke(main, ["inspect", str(tmp_path)])
    assert result.exit_code == 2 and "--labels" in result.output
    with pytest.raises(ValueError, match="FileName and CompStrucCata"):
        from curation.sources.readers.xlsx import compare_with_labels

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
