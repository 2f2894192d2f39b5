"""`curate build DIR`: a folder of one's own CSVs and spreadsheets becomes a release with no config,
and the release's card (README.md) is one the Hugging Face Hub accepts, its snippet runnable as written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.test_cli import invoke
from tests.workbooks import workbook


def own_tables(folder: Path) -> Path:
    """Two CSVs and a spreadsheet, as a user's folder holds them."""
    folder.mkdir(parents=True)
    rows = [f"{r},{y},{(y * 37 + len(r) * 11) % 400 + 10},{(y * 53 + len(r) * 7) % 9000 + 1000}"
            for r in ("North", "South", "East", "West") for y in range(2016, 2022)]
    (folder / "sales.csv").write_text("region,year,units,revenue\n" + "\n".join(rows) + "\n")
    staff = [f"{n},{('Ops', 'Sales', 'IT')[i % 3]},{25 + i * 3},{40000 + i * 2500}"
             for i, n in enumerate(("Ann", "Bob", "Cid", "Dee", "Eve", "Fay", "Gus", "Hal", "Ivy", "Jon"))]
    (folder / "staff.csv").write_text("name,department,age,salary\n" + "\n".join(staff) + "\n")
    workbook(folder / "stock.xlsx", [["item", "warehouse", "quantity", "price"],
                                     *[[f"item{i}", "AB"[i % 2], i * 7 + 3, 2.5 * i + 1] for i in range(1, 13)]],
             bold_rows=(1,))
    return folder


@pytest.fixture(scope="module")
def own_release(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("own")
    data = own_tables(tmp / "my shop data")
    out = invoke("build", data, "--releases", tmp / "releases", "-w", tmp / "ws", "--json", "--workers", "2")
    assert out.exit_code == 0, out.output
    return Path(json.loads(out.output)["release"]["path"])


def test_a_folder_of_csvs_and_a_spreadsheet_builds_a_release_without_a_config(own_release):
    assert own_release.parent.name == "my-shop-data" and own_release.name == "1.0.0"  # named after the folder
    manifest = json.loads((own_release / "manifest.json").read_text())
    assert manifest["counts"]["samples"] > 0 and manifest["counts"]["tables"] >= 3
    sources = {Path(s).name for s in manifest["build"]["sources"]}
    assert sources == {"my shop data"}
    out = invoke("release", "verify", own_release, "--json", "--workers", "1")
    assert out.exit_code == 0, out.output
    assert json.loads(out.output)["ok"]
