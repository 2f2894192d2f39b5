"""Hostile and odd files in a source folder: each is reported with its name and the reason (a limit
it broke, what kind of entry it is), quickly and without growing memory, and every good file
beside it is still ingested. The bombs are small on disk; the limits refuse them before they grow."""

from __future__ import annotations

import os
import zipfile

import pytest

from curate.curation.pipeline.runner import run_stage

pytestmark = pytest.mark.timeout(120)
GOOD = "a,b\n1,2\n3,4\n"


def ingest(folder, inline, tmp_path, **limits):
    run = run_stage("ingest", {"source": str(folder), **({"limits": limits} if limits else {})}, [],
                    tmp_path / "stages", inline)
    report = run.report
    problems = {**{s["path"].rsplit("/", 1)[-1]: s["reason"] for s in report.get("skipped_files", [])},
                **{f["path"].rsplit("/", 1)[-1]: f["reason"] for f in report["failures"]}}
    return report, problems


def test_entries_that_are_not_regular_files_are_skipped_by_name_and_the_rest_is_read(tmp_path, inline):
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "good.csv").write_text(GOOD)
    os.mkfifo(folder / "pipe.csv")  # reading it would wait forever
    os.symlink("/dev/zero", folder / "zero.csv")  # reading it would never end
    os.symlink(folder / "loop-b.csv", folder / "loop-a.csv")
    os.symlink(folder / "loop-a.csv", folder / "loop-b.csv")
    os.symlink(folder / "gone.csv", folder / "dangling.csv")
    (tmp_path / "elsewhere").mkdir()
    os.symlink(tmp_path / "elsewhere", folder / "linked-folder")  # was passed by without a word
    with open(os.fsencode(folder) + b"/bad-\xff-name.csv", "w") as f:
        f.write(GOOD)
    report, problems = ingest(folder, inline, tmp_path)
    assert report["tables"] == 1  # good.csv, whatever sits beside it
    assert "FIFO" in problems["pipe.csv"] and "character device" in problems["zero.csv"]
    assert "symbolic link loop" in problems["loop-a.csv"] and "symbolic link loop" in problems["loop-b.csv"]
    assert "broken symbolic link" in problems["dangling.csv"]
    assert "symbolic link to a folder" in problems["linked-folder"]
    assert "not valid UTF-8" in problems["bad-\\xff-name.csv"]  # the name shown with its byte escaped


def test_an_xlsx_zip_bomb_is_refused_before_it_is_unpacked(tmp_path, inline):
    import openpyxl

    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "good.csv").write_text(GOOD)
    workbook = openpyxl.Workbook()
    workbook.active.append(["a", "b"])
    workbook.active.append([1, 2])
    workbook.save(folder / "bomb.xlsx")
    with zipfile.ZipFile(folder / "bomb.xlsx", "a", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("xl/media/padding.bin", b"\0" * (64 * 1024 * 1024))  # 64 MB in about 64 KB
    assert (folder / "bomb.xlsx").stat().st_size < 1024 * 1024
    report, problems = ingest(folder, inline, tmp_path, max_uncompressed_mb=16)
    assert report["tables"] == 1
    assert "unpacked size (MB) is past the limit (max_uncompressed_mb = 16" in problems["bomb.xlsx"]


def test_an_html_span_bomb_is_refused_before_its_grid_is_laid_out(tmp_path, inline):
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "good.csv").write_text(GOOD)
    cells = "".join('<td rowspan="1000" colspan="1000">x</td>' for _ in range(6))
    (folder / "spans.html").write_text("<table>" + f"<tr>{cells}</tr>" * 10 + "</table>")  # 60 M cells
    assert (folder / "spans.html").stat().st_size < 4096
    report, problems = ingest(folder, inline, tmp_path)
    assert report["tables"] == 1 and "past the limit (max_merged_cells" in problems["spans.html"]


def test_limits_on_cells_rows_and_time_name_the_setting_that_was_broken(tmp_path, inline):
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "wide.csv").write_text(",".join(f"c{i}" for i in range(50)) + "\n" + ",".join("1" * 50) + "\n")
    (folder / "long.csv").write_text("a\n" + "1\n" * 500)
    _, problems = ingest(folder, inline, tmp_path, max_columns=20, max_rows=100)
    assert "max_columns = 20" in problems["wide.csv"] and "max_rows = 100" in problems["long.csv"]
    _, problems = ingest(folder, inline, tmp_path / "t", seconds_per_file=0.000001)
    assert all("seconds_per_file" in r for r in problems.values()) and len(problems) == 2


def test_a_stray_closing_tag_does_not_hide_the_tables_after_it(tmp_path, inline):
    folder = tmp_path / "in"
    folder.mkdir()
    table = "<table><tr><th>town</th><th>people</th></tr><tr><td>Oslo</td><td>700</td></tr></table>"
    (folder / "two.html").write_text(f"<html><body>{table}</table><p>and</p>{table}</body></html>")
    report, problems = ingest(folder, inline, tmp_path)
    assert report["tables"] == 2 and not problems


def test_utf16_without_a_byte_order_mark_is_read_as_text(tmp_path, inline):
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "le.csv").write_bytes("town,people\nTromsø,77\nOslo,700\n".encode("utf-16-le"))
    (folder / "be.csv").write_bytes("town,people\nBergen,290\n".encode("utf-16-be"))
    report, problems = ingest(folder, inline, tmp_path)
    assert report["tables"] == 2 and not problems


def test_a_bad_ingest_setting_is_refused_when_the_config_is_read(tmp_path):
    from curate.curation.build import BuildError, run_build
    from curate.curation.workspace import Workspace

    with pytest.raises(BuildError, match=r"\[ingest\]: unknown setting\(s\) max_sheets"):
        run_build(Workspace(tmp_path / "ws"), {"ingest": {"max_sheets": 3}}, tmp_path / "releases")
