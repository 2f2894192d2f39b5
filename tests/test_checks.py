"""`curate check`: near-duplicate questions and leakage across splits, before a release."""

from __future__ import annotations

import json

import pyarrow.parquet as pq

from curate.curation.arrow_io import samples_to_arrow
from curate.curation.sample import Program, Sample
from tests.test_cli import invoke
from curate.validators.checks import check_samples


def sample(question, split="test", program="SELECT 1", task="TCO/general_operations", tables=("tbl-1",)):
    return Sample(task=task, question=question, answer=1, answer_type="number", table_ids=tables,
                  program=Program("sql", program), split=split)


def write(path, samples):
    path.mkdir(parents=True, exist_ok=True)
    pq.write_table(samples_to_arrow(samples), path / "samples.parquet")
    return path


def test_questions_equal_up_to_case_punctuation_and_spacing_are_near_duplicates(tmp_path):
    folder = write(tmp_path / "r", [
        sample("What is the mean of Größe?", program="SELECT 1"),
        sample("what is the MEAN of größe", program="SELECT 2"),
        sample("What is the mean of Größe?", tables=("tbl-2",), program="SELECT 3"),  # another table
        sample("What is the median of Größe?", program="SELECT 4"),
    ])
    report = check_samples([str(folder / "samples.parquet")])
    assert report["near_duplicates"]["groups"] == 1 and report["near_duplicates"]["samples"] == 2
    assert report["leakage"]["groups"] == 0 and not report["ok"]


def test_the_same_program_on_the_same_tables_in_two_splits_is_leakage(tmp_path):
    folder = write(tmp_path / "r", [
        sample("How many rows?", split="train", program="SELECT count(*) FROM t"),
        sample("Count the rows.", split="test", program="SELECT count(*) FROM t"),
        sample("How many columns?", split="test", program="SELECT 3"),
    ])
    out = invoke("check", str(folder), "--json")
    assert out.exit_code == 1
    report = json.loads(out.output)
    assert report["leakage"]["groups"] == 1 and report["leakage"]["examples"][0]["splits"] == ["test", "train"]
    assert report["near_duplicates"]["groups"] == 0


def test_a_clean_dataset_passes(tmp_path):
    folder = write(tmp_path / "r", [sample("How many rows?"), sample("How many columns?", program="SELECT 2")])
    out = invoke("check", str(folder))
    assert out.exit_code == 0 and "OK" in out.output
    assert invoke("check", str(tmp_path / "missing")).exit_code != 0
