"""A release is exactly its checksummed files (issue 41, finding 5): `curate release verify` fails on
anything SHA256SUMS does not list, on any symbolic link and on a listed path that leads outside; the
evaluator, the audit and the `imported` stage read only listed files, never through a link, and a
sample id held twice is refused, never silently won.

One small release (ten true/false questions, four of them true) is written once; each attack works
on its own copy.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.test_cli import invoke
from tests.test_release import _writable_copy

TASK = "TU/fact_checking"
SAMPLES = Path("samples") / "TU-fact_checking" / "test.parquet"


@pytest.fixture(scope="module")
def release(tmp_path_factory) -> Path:
    from curate.curation.sample import Sample
    from curate.curation.table import Table
    from tests.files import release_of

    table = Table(name="towns", body=pa.table({"town": [f"t{i}" for i in range(10)], "people": list(range(10))}))
    samples = [Sample(task=TASK, question=f"Does t{i} have more than 5 people?", answer=i > 5, answer_type="bool",
                      table_ids=(table.id,), origin="import") for i in range(10)]
    return release_of(tmp_path_factory.mktemp("integrity"), samples, [table], name="facts")


@pytest.fixture
def copy(release, tmp_path) -> Path:
    return _writable_copy(release, tmp_path / "release")


def _forged_samples(copy: Path, folder: Path) -> Path:
    """The release's own samples with every gold `true`, same ids, in `folder`/test.parquet."""
    data = pq.read_table(copy / SAMPLES)
    i = data.schema.get_field_index("answer")
    data = data.set_column(i, "answer", pa.array([json.dumps(True)] * data.num_rows))
    folder.mkdir(parents=True, exist_ok=True)
    pq.write_table(data, folder / "test.parquet")
    return folder / "test.parquet"


def _verify(path: Path) -> dict:
    from curate.exports.release import check_files

    return check_files(str(path))


def _problems(report: dict) -> dict[str, str]:
    """path -> why, of every problem a file check named."""
    return {p["path"]: p["why"] for p in report.get("problems", [])}


def _answers(path: Path) -> dict[str, object]:
    from curate.evaluation.dataset import ReleaseData

    return {s.id: s.answer for s in ReleaseData(path).samples()}


def test_a_symlinked_samples_folder_fails_verify_and_the_evaluator_never_reads_its_forged_golds(copy, tmp_path):
    """The reported attack: `samples/ZZ-forged -> /elsewhere` holding the same ids, every gold true.
    An all-true reply must score what the release's own golds give (4 of 10), not 1.0."""
    _forged_samples(copy, tmp_path / "elsewhere")
    (copy / "samples" / "ZZ-forged").symlink_to(tmp_path / "elsewhere", target_is_directory=True)

    out = invoke("release", "verify", copy, "--json", "--workers", "1")
    assert out.exit_code == 1, out.output
    files = json.loads(out.output)["files"]
    assert "symbolic link" in _problems(files)["samples/ZZ-forged"]
    assert files["links"] == ["samples/ZZ-forged"]

    ids = list(_answers(copy))
    predictions = tmp_path / "all-true.jsonl"
    predictions.write_text("".join(json.dumps({"sample_id": i, "reply": "Final Answer: True"}) + "\n" for i in ids))
    done = invoke("evaluate", copy, "--backend", "replay", "--predictions", predictions, "--out", tmp_path / "out",
                  "--modes", "tcot", "--json")
    assert done.exit_code == 0, done.output
    import pandas as pd

    results = pd.read_parquet(tmp_path / "out" / "results.parquet")
    assert len(results) == 10 and results["score"].mean() == pytest.approx(0.4)


def test_an_unlisted_file_in_samples_fails_verify_and_is_never_read(copy):
    own = _answers(copy)
    _forged_samples(copy, copy / "samples" / "ZZ-extra")
    files = _verify(copy)
    assert not files["ok"] and "samples/ZZ-extra/test.parquet" in files["unlisted"]
    assert _answers(copy) == own


def test_a_listed_file_replaced_by_a_link_to_the_same_bytes_fails_verify_and_is_refused(copy, tmp_path):
    from curate.evaluation.dataset import ReleaseData, ReleaseError

    target = copy / SAMPLES
    shutil.copy(target, tmp_path / "same.parquet")
    target.unlink()
    target.symlink_to(tmp_path / "same.parquet")
    files = _verify(copy)
    assert not files["ok"] and files["changed"] == [] and files["links"] == [SAMPLES.as_posix()]
    with pytest.raises(ReleaseError, match="symbolic link"):
        ReleaseData(copy).samples()


def test_a_listed_folder_that_is_a_link_out_of_the_release_is_named_for_each_file_it_holds(copy, tmp_path):
    shutil.move(copy / "tables", tmp_path / "tables")
    (copy / "tables").symlink_to(tmp_path / "tables", target_is_directory=True)
    problems = _problems(_verify(copy))
    assert "reached through a symbolic link (tables ->" in problems["tables/tables.parquet"]


def test_a_hard_link_is_not_a_finding_its_bytes_are_checked_like_any_file(copy, tmp_path):
    """Decided: a hard link names the file's own bytes (no folder, nowhere else to lead), so a
    deduplicated or `cp -al` copy verifies; an edit through it is a changed hash as usual."""
    target = copy / SAMPLES
    os.link(target, tmp_path / "elsewhere.parquet")
    out = invoke("release", "verify", copy, "--json", "--workers", "1")
    assert out.exit_code == 0, out.output
    (tmp_path / "elsewhere.parquet").write_bytes(b"edited elsewhere")
    assert _verify(copy)["changed"] == [SAMPLES.as_posix()]


def test_a_file_or_empty_folder_added_to_tables_fails_verify(copy):
    (copy / "tables" / "extra.parquet").write_bytes((copy / "tables" / "tables.parquet").read_bytes())
    (copy / "tables" / "empty").mkdir()
    os.mkfifo(copy / "tables" / "pipe")  # never opened: reading it would wait forever
    problems = _problems(_verify(copy))
    assert set(problems) >= {"tables/extra.parquet", "tables/empty/", "tables/pipe"}
    assert "not a regular file" in problems["tables/pipe"]


@pytest.mark.parametrize("listed, why", [("../outside.parquet", "'..' part"),
                                         ("samples/../../outside.parquet", "'..' part"),
                                         ("/tmp/outside.parquet", "absolute"),
                                         ("samples/./TU-fact_checking/x.parquet", "'.' or '..' part")])
def test_a_listed_path_that_could_leave_the_release_fails_verify_and_is_never_read(copy, listed, why):
    import hashlib

    outside = _forged_samples(copy, copy.parent / "forged")
    own = _answers(copy)
    with open(copy / "SHA256SUMS", "a") as f:
        f.write(f"{hashlib.sha256(outside.read_bytes()).hexdigest()}  {listed}\n")
    files = _verify(copy)
    assert not files["ok"] and why in _problems(files)[listed] and listed in files["malformed_lines"]
    assert _answers(copy) == own


def test_a_sample_id_held_twice_is_refused_by_evaluation_and_named_by_verify(copy):
    """A forger adds a second listed file with the same ids (SHA256SUMS rewritten): no copy may win."""
    from curate.evaluation.dataset import ReleaseData, ReleaseError
    from curate.exports.release import write_checksums

    _forged_samples(copy, copy / "samples" / "TU-fact_checking-again")
    write_checksums(copy)
    with pytest.raises(ReleaseError, match="sample id smp-") as refused:
        ReleaseData(copy).samples(split="test")
    assert {"samples/TU-fact_checking/test.parquet", "samples/TU-fact_checking-again/test.parquet"} <= set(
        str(refused.value).replace(":", " ").split())
    files = _verify(copy)
    assert not files["ok"] and any("sample id" in i and "-again/test.parquet" in i for i in files["inconsistent"])


def test_the_audit_and_the_imported_stage_read_only_listed_files(copy, tmp_path):
    """Two candidates answer every question with the release's gold: the audit finds nothing, with or
    without a symlinked folder of forged golds beside the listed files; the `imported` stage refuses."""
    from curate.importers.stage import ImportedStage
    from curate.validators.audit import audit_release

    golds = _answers(copy)
    candidates = {"a": dict(golds), "b": dict(golds)}
    _forged_samples(copy, tmp_path / "elsewhere")
    (copy / "samples" / "ZZ-forged").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    report = audit_release(str(copy), candidates)
    assert (report["checked"], report["findings"]) == (10, [])
    with pytest.raises(ValueError, match="ZZ-forged"):
        ImportedStage().plan({"release": str(copy)}, [])


def test_a_sample_id_held_twice_in_one_file_is_refused_too(copy):
    from curate.evaluation.dataset import ReleaseData, ReleaseError
    from curate.exports.release import write_checksums

    data = pq.read_table(copy / SAMPLES)
    pq.write_table(pa.concat_tables([data, data.slice(0, 1)]), copy / SAMPLES)
    write_checksums(copy)
    with pytest.raises(ReleaseError, match=f"is in {SAMPLES.as_posix()} and in {SAMPLES.as_posix()}"):
        ReleaseData(copy).samples()
    assert any("sample id" in i for i in _verify(copy)["inconsistent"])
