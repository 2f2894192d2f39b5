"""The runner: signatures, reuse, resume after a kill, executors, per-record randomness."""

from __future__ import annotations

import os
import signal
import subprocess
import time

import pyarrow.parquet as pq

from curate.curation.commands import run_clean, run_ingest
from curate.curation.pipeline.executor import LocalExecutor
from curate.curation.pipeline.rng import record_rng
from curate.curation.pipeline.signature import stage_signature
from curate.curation.workspace import Workspace
from tests.conftest import curate_command


def write_csvs(folder, n):
    folder.mkdir(exist_ok=True)
    for i in range(n):
        rows = "\n".join(f"{j},{(i * 7 + j * 3) % 11},{i}-{j}" for j in range(6))
        (folder / f"t{i:03d}.csv").write_text("k,v,label\n" + rows + "\n")


def dataset_content(dataset):
    """Every record file of a dataset, as Python values, keyed by file name (order of parts kept)."""
    return {p.name: pq.read_table(p).to_pylist() for kind in ("tables", "databases") for p in dataset.files(kind)}


def test_signature_depends_on_name_version_config_and_inputs():
    base = stage_signature("clean", "1", {"a": 1}, ["x"])
    assert base == stage_signature("clean", "1", {"a": 1}, ["x"])
    assert len({base, stage_signature("clean", "2", {"a": 1}, ["x"]), stage_signature("clean", "1", {"a": 2}, ["x"]),
                stage_signature("clean", "1", {"a": 1}, ["y"]), stage_signature("other", "1", {"a": 1}, ["x"])}) == 5


def copy_of_the_code(tmp_path, monkeypatch):
    """This repository's packages copied to `tmp_path`, and the code fingerprint reading the copy."""
    import shutil

    from curate.curation.pipeline import code

    for package in code.PACKAGES:
        shutil.copytree(code.ROOT / package, tmp_path / "code" / package,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.parquet"))
    monkeypatch.setattr(code, "ROOT", tmp_path / "code")
    code.direct_imports.cache_clear()
    return tmp_path / "code"


def test_a_stage_signature_covers_the_code_it_imports_and_nothing_else(tmp_path, monkeypatch):
    from curate.curation.pipeline import code

    closure = code.import_closure("curate.generators.rules.stage")
    # what the rules stage runs, imported lazily or named by a registry, and not what it never runs
    assert {"curate.generators.rules.engine", "curate.generators.chains", "curate.curation.answers", "curate.curation.programs.chain",
            "curate.curation.sources.grid", "curate.curation.semantics"} <= set(closure)
    assert not {"curate.curation.cli", "curate.generators.sql.stage", "curate.evaluation.metrics"} & set(closure)
    root = copy_of_the_code(tmp_path, monkeypatch)
    before = code.code_fingerprint("curate.generators.rules.stage")
    with open(root / "curate" / "curation" / "cli.py", "a") as f:
        f.write("\n# an edit the rules never run\n")
    code.direct_imports.cache_clear()
    assert code.code_fingerprint("curate.generators.rules.stage") == before
    answers = root / "curate" / "curation" / "answers.py"
    answers.write_text(answers.read_text().replace("def format_answer(", "def format_answer(  ", 1))
    code.direct_imports.cache_clear()
    assert code.code_fingerprint("curate.generators.rules.stage") != before


def test_every_declared_stage_is_covered_by_its_own_code_fingerprint():
    """Every package that holds a stage is one the fingerprint reads (`curate.importers.stage` once was not,
    so editing the `imported` stage never reran it)."""
    from curate.curation.pipeline import code
    from curate.curation.pipeline.graph import DECLARED

    for declared in DECLARED:
        module = declared.target.split(":")[0]
        assert module in code.import_closure(module), declared.name


def test_editing_a_function_a_stage_uses_reruns_the_stage(tmp_path, monkeypatch, workspace, inline):
    from curate.curation.pipeline import code

    write_csvs(tmp_path / "in", 3)
    root = copy_of_the_code(tmp_path, monkeypatch)
    run_ingest(workspace, [str(tmp_path / "in")], executor=inline)
    first = run_clean(workspace, executor=inline)
    assert run_clean(workspace, executor=inline)["cached"]
    rules = root / "curate" / "curation" / "cleaning" / "rules.py"
    rules.write_text(rules.read_text().replace("def apply_rules(", "def apply_rules(  ", 1))
    code.direct_imports.cache_clear()
    again = run_clean(workspace, executor=inline)
    assert not again["cached"] and again["dataset"] != first["dataset"]
    assert run_ingest(workspace, [str(tmp_path / "in")], executor=inline)["sources"][0]["cached"]  # ingest never runs it


def test_a_rerun_reuses_finished_stages(tmp_path, workspace, inline):
    write_csvs(tmp_path / "in", 5)
    first = run_ingest(workspace, [str(tmp_path / "in")], executor=inline)
    again = run_ingest(workspace, [str(tmp_path / "in")], executor=inline)
    assert not first["sources"][0]["cached"] and again["sources"][0]["cached"]
    assert run_clean(workspace, executor=inline)["cached"] is False
    assert run_clean(workspace, executor=inline)["cached"] is True


def test_changing_clean_config_reruns_clean_only_and_editing_a_file_reruns_ingest(tmp_path, workspace, inline):
    write_csvs(tmp_path / "in", 5)
    run_ingest(workspace, [str(tmp_path / "in")], executor=inline)
    first = run_clean(workspace, executor=inline)
    config = tmp_path / "build.toml"
    config.write_text("[clean]\nmax_total_chars = 20\n")
    changed = run_clean(workspace, str(config), executor=inline)
    assert not changed["cached"] and changed["dataset"] != first["dataset"] and changed["kept"] == 0
    assert run_ingest(workspace, [str(tmp_path / "in")], executor=inline)["sources"][0]["cached"]
    os.utime(tmp_path / "in" / "t000.csv")  # touching is not changing
    assert run_ingest(workspace, [str(tmp_path / "in")], executor=inline)["sources"][0]["cached"]
    (tmp_path / "in" / "t000.csv").write_text("k,v\n1,2\n3,4\n")
    assert not run_ingest(workspace, [str(tmp_path / "in")], executor=inline)["sources"][0]["cached"]


def test_process_pool_writes_exactly_what_one_process_writes(tmp_path):
    write_csvs(tmp_path / "in", 12)
    results = []
    for workers in (1, 2):
        ws = Workspace(tmp_path / f"ws{workers}")
        run_ingest(ws, [str(tmp_path / "in")], executor=LocalExecutor(workers), part_size=2)
        run_clean(ws, executor=LocalExecutor(workers))
        results.append([dataset_content(ws.current(s)[0]) for s in ("ingest", "clean")])
    assert results[0] == results[1]


def test_a_killed_run_resumes_to_exactly_the_uninterrupted_output(tmp_path):
    write_csvs(tmp_path / "in", 300)
    args = ["ingest", str(tmp_path / "in"), "--part-size", "1", "--workers", "1", "-q"]
    reference = Workspace(tmp_path / "reference")
    subprocess.run(curate_command() + args + ["-w", str(reference.root)], check=True, capture_output=True)

    killed = Workspace(tmp_path / "killed")
    process = subprocess.Popen(curate_command() + args + ["-w", str(killed.root)], start_new_session=True,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 60
    stage_dir = None
    while time.time() < deadline:
        dirs = list((killed.root / "stages").glob("ingest-*")) if (killed.root / "stages").exists() else []
        if dirs and len(list(dirs[0].glob("part-*.done"))) >= 5:
            stage_dir = dirs[0]
            break
        time.sleep(0.005)
    os.killpg(process.pid, signal.SIGKILL)
    process.wait(timeout=30)
    assert stage_dir is not None, "the run never got going"
    done_before = len(list(stage_dir.glob("part-*.done")))
    assert not (stage_dir / "_COMPLETE.json").exists() and done_before < 300, "the kill came too late to test resume"

    subprocess.run(curate_command() + args + ["-w", str(killed.root)], check=True, capture_output=True)
    [resumed], [uninterrupted] = killed.current("ingest"), reference.current("ingest")
    assert resumed.name == uninterrupted.name
    assert dataset_content(resumed) == dataset_content(uninterrupted)
    assert resumed.report() == uninterrupted.report()
    ids = [t["id"] for rows in dataset_content(resumed).values() for t in rows]
    assert len(ids) == len(set(ids)) == 300
    assert not list(stage_dir.glob(".*.tmp-*"))


def test_record_randomness_depends_on_seed_and_record_not_on_order():
    a = record_rng(7, "tbl-1", "shuffle").integers(0, 10**9, 5).tolist()
    assert a == record_rng(7, "tbl-1", "shuffle").integers(0, 10**9, 5).tolist()
    assert a != record_rng(8, "tbl-1", "shuffle").integers(0, 10**9, 5).tolist()
    assert a != record_rng(7, "tbl-2", "shuffle").integers(0, 10**9, 5).tolist()
    assert a != record_rng(7, "tbl-1", "sample").integers(0, 10**9, 5).tolist()


def test_a_second_writer_on_the_same_workspace_fails_fast(workspace):
    import pytest

    from curate.curation.workspace import WorkspaceBusy

    with workspace.lock():
        with pytest.raises(WorkspaceBusy, match="in use"):
            with workspace.lock():
                pass


def test_a_stage_a_build_no_longer_runs_stops_standing_for_its_output_and_so_does_what_it_fed(tmp_path):
    from tests.files import finished_dataset

    workspace = Workspace(tmp_path / "ws")
    for stage in ("select", "vote", "review", "verify"):
        workspace.set_current(stage, [finished_dataset(workspace.stages_dir, stage)])
    workspace.drop_current("vote")
    assert sorted(workspace.state()["current"]) == ["select"]
    assert workspace.current("select") and not workspace.current("review")
    workspace.drop_current("vote")  # nothing to drop: no change
    assert sorted(workspace.state()["current"]) == ["select"]


def test_killing_only_the_main_process_leaves_no_worker_running_or_writing(tmp_path):
    """SIGKILL to `curate` alone (not its process group): its pool's workers die with it, and
    nothing is written into the workspace afterwards (without the lock, it would be unsafe)."""
    import psutil

    from tests.waiting import wait_for

    write_csvs(tmp_path / "in", 400)
    ws = tmp_path / "ws"
    args = ["ingest", str(tmp_path / "in"), "--part-size", "1", "--workers", "2", "-q", "-w", str(ws)]
    process = subprocess.Popen(curate_command() + args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    main = psutil.Process(process.pid)
    family: list[psutil.Process] = []
    try:
        started = wait_for(lambda: len(list(ws.glob("stages/ingest-*/part-*.done"))) >= 5, timeout=120)
        family = main.children(recursive=True)
        assert started and len(family) >= 2, "the run never got its workers going"
        os.kill(process.pid, signal.SIGKILL)  # the main process only
        process.wait(timeout=30)
        def running(p: psutil.Process) -> bool:
            try:
                return p.is_running() and p.status() != psutil.STATUS_ZOMBIE
            except psutil.Error:
                return False

        assert wait_for(lambda: not any(running(p) for p in family), timeout=30), \
            f"workers outlived the main process: {[p.pid for p in family if running(p)]}"
        written = sorted(p.name for p in ws.rglob("*"))
        time.sleep(2)
        assert sorted(p.name for p in ws.rglob("*")) == written  # nothing written after the kill
        assert not (next(ws.glob("stages/ingest-*")) / "_COMPLETE.json").exists(), "the kill came too late to test"
    finally:  # whatever of the run is left (not this process's own helpers: its resource tracker)
        for p in [main, *family]:
            try:
                p.kill()
            except psutil.Error:
                pass
