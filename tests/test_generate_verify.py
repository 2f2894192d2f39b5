"""`curate generate rules` and `curate verify` as a user runs them, on small real files."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from curate.curation.programs import ProgramError, run_program
from curate.curation.sample import Program
from curate.curation.table import Table
from tests.test_cli import invoke

CARS = "model,make,mpg,hp,wt\n" + "\n".join(
    f"car {i},{['ford', 'fiat', 'audi'][i % 3]},{15 + (i * 7) % 19},{60 + (i * 13) % 97},{1.5 + ((i * 5) % 11) / 4}"
    for i in range(30)) + "\n"
YEARS = "year,exports,imports\n" + "\n".join(f"{2000 + i},{100 + i * 9 + (i % 4)},{80 + i * 5}" for i in range(12)) + "\n"


@pytest.fixture
def generated(tmp_path):
    ws, src = tmp_path / "ws", tmp_path / "in"
    src.mkdir()
    (src / "cars.csv").write_text(CARS)
    (src / "trade.csv").write_text(YEARS)
    assert invoke("ingest", src, "-w", ws, "--workers", "1", "-q").exit_code == 0
    assert invoke("clean", "-w", ws, "--workers", "1", "-q").exit_code == 0
    out = invoke("generate", "rules", "-w", ws, "--workers", "1", "--json")
    assert out.exit_code == 0, out.output
    return ws, json.loads(out.output)


def test_generate_reports_counts_per_subtask_and_rejections_by_reason(generated):
    ws, report = generated
    assert report["samples"] == sum(report["by_task"].values()) > 500
    assert report["tables"] == 2 and not report["failed"]
    assert {"TU/table_retrieval", "TCO/general_operations", "TCO/domain_specific_operations",
            "DA/correlation_analysis", "ADA/multi_step_retrieval"} <= set(report["by_task"])
    assert report["rejected"]["TCO/general_operations"]["condition_on_same_column"] > 0
    again = json.loads(invoke("generate", "rules", "-w", ws, "--workers", "1", "--json").output)
    assert again["cached"] and again["samples"] == report["samples"]
    text = invoke("generate", "rules", "-w", ws, "--workers", "1", "-q")
    assert "samples" in text.output and "TU/table_retrieval" in text.output


def test_verify_passes_then_catches_a_corrupted_answer(generated):
    ws, report = generated
    ok = invoke("verify", "-w", ws, "--workers", "1", "--json")
    assert ok.exit_code == 0, ok.output
    result = json.loads(ok.output)
    assert result["checked"] == report["samples"] == result["matched"]

    part = sorted((ws / "stages").glob("rules-*/part-*.samples.parquet"))[0]
    data = pq.read_table(part)
    rows = data.to_pylist()
    victim = next(r for r in rows if r["template"] == "tco.mean")
    victim["answer"] = json.dumps(json.loads(victim["answer"]) + 1)
    pq.write_table(pa.Table.from_pylist(rows, schema=data.schema), part)
    bad = invoke("verify", "-w", ws, "--workers", "1", "--json")
    assert bad.exit_code == 1
    result = json.loads(bad.output)
    assert result["mismatch_count"] == 1 and result["mismatches"][0]["id"] == victim["id"]


def test_seed_and_scale_change_what_is_generated(generated):
    ws, report = generated
    smaller = json.loads(invoke("generate", "rules", "-w", ws, "--workers", "1", "--json", "--scale", "0.2").output)
    assert 0 < smaller["samples"] < report["samples"]
    only = json.loads(invoke("generate", "rules", "-w", ws, "--workers", "1", "--json", "--only", "tu").output)
    assert set(only["by_task"]) <= {"TU/table_retrieval", "TU/column_naming", "TU/title_naming", "TU/fact_checking"}
    unknown = invoke("generate", "rules", "-w", ws, "--workers", "1", "--only", "nope")
    assert unknown.exit_code != 0 and "no template matches nope" in unknown.output


def test_generate_before_clean_says_what_to_do(tmp_path):
    out = invoke("generate", "rules", "-w", tmp_path / "ws")
    assert out.exit_code != 0 and "curate clean" in out.output


def test_parts_do_not_change_the_samples(tmp_path):
    """Two workers and one worker, different part boundaries: the same sample ids and answers."""
    from curate.curation.commands import run_clean, run_generate_rules, run_ingest
    from curate.curation.pipeline.executor import LocalExecutor
    from curate.curation.workspace import Workspace

    src = tmp_path / "in"
    src.mkdir()
    for i in range(4):
        (src / f"cars{i}.csv").write_text(CARS.replace("car ", f"car{i} "))
    results = []
    for workers, part_size in ((1, 4), (2, 1)):
        ws = Workspace(tmp_path / f"ws{workers}")
        run_ingest(ws, [str(src)], executor=LocalExecutor(workers), part_size=part_size)
        run_clean(ws, executor=LocalExecutor(workers))
        run_generate_rules(ws, executor=LocalExecutor(workers))
        files = [p for d in ws.current("rules") for p in d.files("samples")]
        table = pa.concat_tables([pq.read_table(p, columns=["id", "answer"]) for p in files])
        results.append(sorted(zip(table.column("id").to_pylist(), table.column("answer").to_pylist())))
    assert results[0] == results[1] and len(results[0]) > 1000


# ---------------------------------------------------------------------------- programs

def test_programs_report_what_went_wrong():
    table = Table(name="t", body=pa.table({"x": [1, 2, 3]}))
    assert run_program(Program("sql", 'SELECT sum("x") FROM t', "duckdb"), [table]) == 6
    with pytest.raises(ProgramError, match="SQL failed"):
        run_program(Program("sql", 'SELECT sum("nope") FROM t'), [table])
    with pytest.raises(ProgramError, match="SQL failed"):  # no files, no network from a program
        run_program(Program("sql", "SELECT * FROM read_csv('/etc/passwd')"), [table])
    with pytest.raises(ProgramError, match="unknown step"):
        run_program(Program("chain", '[{"op": "explode"}]'), [table])
    with pytest.raises(ProgramError, match="no column"):
        run_program(Program("chain", '[{"op": "select", "column": "y"}, {"op": "first"}]'), [table])
    with pytest.raises(ProgramError, match="unknown program kind"):
        run_program(Program("python", "import os"), [table])


def test_chain_steps_compose():
    table = Table(name="t", body=pa.table({"k": list("abcde"), "g": ["u", "v", "u", "v", "u"],
                                           "x": [5.0, 1.0, 4.0, 2.0, 3.0], "y": [1, 2, 3, 4, 5]}))
    chain = [{"op": "filter", "where": [["g", "==", "u"]]}, {"op": "sort", "by": "x", "descending": True},
             {"op": "head", "n": 2}, {"op": "aggregate", "func": "sum", "column": "y"}]
    assert run_program(Program("chain", json.dumps(chain)), [table]) == 1 + 3
    combine = [{"op": "filter", "where": [["g", "==", "u"]]}, {"op": "aggregate", "func": "mean", "column": "x",
                                                              "name": "a"},
               {"op": "filter", "input": "t", "where": [["g", "==", "v"]]},
               {"op": "aggregate", "func": "mean", "column": "x", "name": "b"},
               {"op": "combine", "func": "difference", "left": "a", "right": "b"}]
    assert run_program(Program("chain", json.dumps(combine)), [table]) == 4.0 - 1.5
    grouped = [{"op": "group", "by": "g", "func": "max", "column": "x"}, {"op": "select", "column": "x"}]
    assert run_program(Program("chain", json.dumps(grouped)), [table]) == [5.0, 2.0]
