"""Unreadable input is reported with its path and reason, skipped, counted; the run goes on."""

from __future__ import annotations

import pytest

from curate.curation.commands import run_ingest


def bad_files(folder):
    import openpyxl

    folder.mkdir()
    (folder / "good.csv").write_text("a,b\n1,2\n3,4\n")
    (folder / "corrupt.xlsx").write_bytes(b"PK\x03\x04 this is not really a zip archive")
    (folder / "binary.csv").write_bytes(bytes(range(256)) * 4)
    (folder / "latin.csv").write_bytes(b"a,b\n\x81\x8d\x8f,\x90\x9d\n")  # undefined in UTF-8 and cp1252
    (folder / "empty.csv").write_bytes(b"")
    (folder / "notable.html").write_text("<html><body><p>no table here</p></body></html>")
    (folder / "fake.sqlite").write_text("definitely not a database " * 20)
    wb = openpyxl.Workbook()
    wb.active["A1"] = "a lonely note, no grid"
    wb.save(folder / "nogrid.xlsx")
    return {
        "corrupt.xlsx": "not a readable .xlsx workbook",
        "binary.csv": "binary file",
        "latin.csv": "undecodable text",
        "empty.csv": "empty file",
        "notable.html": "no <table> in the HTML",
        "fake.sqlite": "not a SQLite database",
        "nogrid.xlsx": "no sheet holds a grid of cells",
    }


def test_each_bad_file_is_reported_and_the_good_one_ingested(tmp_path, workspace, inline):
    expected = bad_files(tmp_path / "in")
    result = run_ingest(workspace, [str(tmp_path / "in")], executor=inline)
    [source] = result["sources"]
    assert source["tables"] == 1 and source["failed"] == len(expected)
    reasons = {f["path"].rsplit("/", 1)[1]: f["reason"] for f in source["failures"]}
    assert set(reasons) == set(expected)
    for name, fragment in expected.items():
        assert fragment in reasons[name], (name, reasons[name])


@pytest.mark.parametrize("workers", [1, 2])
def test_bad_input_does_not_depend_on_the_executor(tmp_path, workers):
    from curate.curation.pipeline.executor import LocalExecutor
    from curate.curation.workspace import Workspace

    bad_files(tmp_path / "in")
    result = run_ingest(Workspace(tmp_path / f"ws{workers}"), [str(tmp_path / "in")], executor=LocalExecutor(workers))
    assert result["failed"] == 7 and result["tables"] == 1


def test_missing_source_is_an_error_for_that_source_only(tmp_path, workspace, inline):
    (tmp_path / "ok.csv").write_text("a,b\n1,2\n2,3\n")
    result = run_ingest(workspace, [str(tmp_path / "nope"), str(tmp_path / "ok.csv")], executor=inline)
    assert result["sources_failed"] == [str(tmp_path / "nope")]
    assert result["tables"] == 1
