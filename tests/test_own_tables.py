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
    out = invoke("build", data, "--releases", tmp / "releases", "-w", tmp / "ws", "--json", "--workers", "1")
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


# The Hub's licence identifiers (huggingface.co/docs/hub/repositories-licenses); no list ships offline
HUB_LICENCES = {
    "apache-2.0", "mit", "openrail", "bigscience-openrail-m", "creativeml-openrail-m", "bigscience-bloom-rail-1.0",
    "bigcode-openrail-m", "afl-3.0", "artistic-2.0", "bsl-1.0", "bsd", "bsd-2-clause", "bsd-3-clause",
    "bsd-3-clause-clear", "c-uda", "cc", "cc0-1.0", "cc-by-2.0", "cc-by-2.5", "cc-by-3.0", "cc-by-4.0", "cc-by-sa-3.0",
    "cc-by-sa-4.0", "cc-by-nc-2.0", "cc-by-nc-3.0", "cc-by-nc-4.0", "cc-by-nd-4.0", "cc-by-nc-nd-3.0",
    "cc-by-nc-nd-4.0", "cc-by-nc-sa-2.0", "cc-by-nc-sa-3.0", "cc-by-nc-sa-4.0", "cdla-sharing-1.0",
    "cdla-permissive-1.0", "cdla-permissive-2.0", "wtfpl", "ecl-2.0", "epl-1.0", "epl-2.0", "etalab-2.0", "eupl-1.1",
    "eupl-1.2", "agpl-3.0", "gfdl", "gpl", "gpl-2.0", "gpl-3.0", "lgpl", "lgpl-2.1", "lgpl-3.0", "isc", "lppl-1.3c",
    "ms-pl", "mpl-2.0", "odc-by", "odbl", "openrail++", "osl-3.0", "postgresql", "ofl-1.1", "ncsa", "unlicense",
    "zlib", "pddl", "lgpl-lr", "unknown", "other",
}
HUB_SIZES = {"n<1K", "1K<n<10K", "10K<n<100K", "100K<n<1M", "1M<n<10M", "10M<n<100M", "100M<n<1B", "n>1T"}
HUB_TASKS = {"table-question-answering", "question-answering", "text-generation", "text2text-generation",
             "text-classification", "tabular-classification"}


def card_header(release: Path) -> dict:
    from huggingface_hub import DatasetCard

    card = DatasetCard.load(release / "README.md")  # a local path: read, not fetched
    return card.data.to_dict()


def test_the_card_header_is_the_hubs_own_and_validates(own_release):
    """The header parses with huggingface_hub, round-trips through DatasetCardData, and holds what
    the Hub validates: licence ids (other only named and linked), language, size, tasks, configs."""
    from huggingface_hub import DatasetCardData
    from huggingface_hub.repocard import metadata_load

    header = card_header(own_release)
    assert DatasetCardData(**header).to_dict() == header
    assert metadata_load(own_release / "README.md") == header  # repocard's own parser reads the same header
    licences = header["license"] if isinstance(header["license"], list) else [header["license"]]
    assert set(licences) <= HUB_LICENCES
    assert "other" not in licences or (header["license_name"] and header["license_link"])
    assert header["language"] == ["en"] and set(header["size_categories"]) <= HUB_SIZES
    assert set(header["task_categories"]) <= HUB_TASKS and header["task_ids"] and header["tags"]
    configs = {c["config_name"]: c for c in header["configs"]}
    manifest = json.loads((own_release / "manifest.json").read_text())
    assert set(configs) >= {"default", *manifest["configs"]}
    for config in header["configs"]:  # every config's files are the release's own, by relative glob
        for files in config["data_files"]:
            assert list(own_release.glob(files["path"])), files
    card = (own_release / "README.md").read_text()
    assert "path/to" not in card and "## Citation" in card and "## Limitations" in card
    for benchmark in ("TReB", "RealHiTBench", "MMQA", "ToRR", "TableBench"):
        assert f"**{benchmark}**" in card
    assert "## An example sample" in card and "json.loads" in card


def test_the_cards_snippet_runs_against_the_release_as_written(own_release):
    import re
    import subprocess
    import sys

    card = (own_release / "README.md").read_text()
    reading = card.split("## Reading a sample and its tables", 1)[1]
    snippet = re.search(r"```python\n(.*?)```", reading, re.S).group(1)
    run = subprocess.run([sys.executable, "-c", snippet], cwd=own_release, capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    from curate.exports.release.card_usage import first_file

    slug, split = first_file(json.loads((own_release / "manifest.json").read_text()))
    first = json.loads((own_release / "samples" / slug / f"{split}.jsonl").read_text().splitlines()[0])
    assert first["question"] in run.stdout


def test_each_source_names_its_own_licence_and_one_known_licence_is_the_headers():
    from curate.exports.release.card_meta import card_data, hub_licence, source_licences

    assert hub_licence("CC BY-SA 4.0 (data; the authors' code is MIT)") == "cc-by-sa-4.0"
    assert hub_licence("as published in the R package (see the Rdatasets documentation)") is None
    manifest = {"name": "tb", "sources": [{"source": "tablebench", "licence": "CC BY-SA 4.0 (data)", "tables": 3}],
                "counts": {"samples": 12, "by_task": {}, "by_split": {"test": 12}, "by_task_split": {}},
                "build": {"import": {"benchmark": "TableBench"}}, "table_configurations": {"serializations": []}}
    assert card_data(manifest).license == "cc-by-sa-4.0"
    manifest["sources"].append({"source": "rdatasets", "licence": "as published in the R package", "tables": 2})
    manifest["packages"] = {"rdatasets:MASS": 2}
    rows = source_licences(manifest)
    assert [r["source"] for r in rows] == ["tablebench", "rdatasets:MASS"]
    assert rows[1]["link"] == "https://cran.r-project.org/package=MASS"
    data = card_data(manifest).to_dict()
    assert data["license"] == "other" and data["license_name"] and data["license_link"]


def test_a_folder_or_one_table_file_is_a_build_named_after_it(tmp_path):
    from curate.curation.build import folder_config, resolve_config

    data = own_tables(tmp_path / "Q3 numbers!")
    folder = resolve_config(folder_config(data))  # a valid build config: the release name is one the writer takes
    assert folder["release"]["name"] == "Q3-numbers" and folder["build"]["sources"] == [str(data.resolve())]
    one = folder_config(data / "sales.csv")
    assert one["release"]["name"] == "sales" and one["build"]["sources"] == [str((data / "sales.csv").resolve())]
