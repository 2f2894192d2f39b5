"""Checks that run inside `.envs/vllm` (real vLLM on the CPU); tests/test_vllm.py runs them and
asserts on the JSON each prints. `python tests/vllm_checks.py CHECK WORKDIR MODEL_SECTION_JSON`."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path


def backend(workdir: Path, section: dict) -> dict:
    """A batch through the in-process backend: replies, token counts, a refused request isolated,
    and a rerun answered wholly by the cache."""
    from curate.curation.llm.client import client_from_config
    from curate.curation.llm.types import ChatRequest, user

    client, params = client_from_config({**section, "temperature": 0, "max_tokens": 24}, workdir / "cache.sqlite",
                                        "candidate_1")
    prompts = [ChatRequest(user(f"Table:\n| city | people |\n| Oslo | {700 + i} |\nHow many people live in Oslo?"),
                           params) for i in range(6)]
    too_long = ChatRequest(user("word " * 5000), params)
    started = time.perf_counter()
    first = client.complete([*prompts[:3], too_long, *prompts[3:]])
    seconds = time.perf_counter() - started
    usage_first = client.usage.as_dict()
    again = client.complete(prompts)
    usage = client.usage.as_dict()
    # a structured reply decoded under its JSON schema (guided decoding): even this base model's is readable
    from curate.curation.llm.client import object_schema, parse_json_object

    schema = object_schema(city={"type": "string", "enum": ["Oslo", "Bergen"]}, capital={"type": "boolean"})
    [structured] = client.structured([ChatRequest(user("Which city is the capital of Norway? Reply as JSON."),
                                                  {**params, "max_tokens": 64})],
                                     lambda t: parse_json_object(t, {"city": str, "capital": bool}), schema)
    return {"structured": {"value": structured.value, "error": structured.error, "text": structured.text},"first": [{"ok": r.ok, "text": r.text, "error": r.error[:300], "transient": r.transient,
                       "prompt_tokens": r.prompt_tokens, "completion_tokens": r.completion_tokens,
                       "finish_reason": r.finish_reason} for r in first],
            "again_texts": [r.text for r in again], "again_cached": [r.cached for r in again],
            "usage_first": usage_first, "usage": usage, "seconds": seconds,
            "identity": client.identity}


def vote(workdir: Path, section: dict) -> dict:
    """The vote stage with three vLLM candidates and a vLLM judge: one engine serves all four roles."""
    from curate.curation.llm.backends import vllm_backend
    from curate.curation.pipeline.executor import LocalExecutor
    from curate.curation.pipeline.runner import run_stage
    from tests.files import voting_inputs

    stages = workdir / "ws" / "stages"
    selected, imported, executed = voting_inputs(stages)
    config = {"candidates": [{**section, "seed": n, "temperature": 0.7, "max_tokens": 32} for n in range(3)],
              "judge": {**section, "temperature": 0, "max_tokens": 48}, "method": "treb", "review_rate": 1.0}
    run = run_stage("vote", config, [selected, selected], stages, LocalExecutor(2))  # in_process: one worker
    again = run_stage("vote", config, [selected, selected], stages, LocalExecutor(2))
    out = {s.id: s for s in run.dataset.records("samples")}
    return {"report": run.report, "engines": len(vllm_backend._ENGINES), "again_cached": again.cached,
            "samples": {s.id: {"votes": [{"model": v.model, "answer": v.answer, "raw": v.raw} for v in out[s.id].votes],
                               "agreement": out[s.id].judge_verdict, "quality": out[s.id].quality,
                               "review": out[s.id].provenance.get("review")} for s in [*imported, executed]},
            "imported": [s.id for s in imported], "executed": executed.id}


def evaluate(workdir: Path, section: dict, release: str) -> dict:
    """`curate evaluate`'s evaluator with the vLLM backend over a real release (TCoT and PoT, two
    configurations), twice: the second run predicts nothing."""
    from curate.curation.llm.client import client_from_config
    from curate.evaluation.evaluate import Evaluator, Settings

    settings = Settings(modes=["tcot", "pot"], limit=3, tasks=["TCO/"], max_table_chars=1500,
                        configs=["markdown:none", "json:column_shuffle"])
    client, params = client_from_config({**section, "temperature": 0, "max_tokens": 48}, workdir / "llm.sqlite", "model")
    first = Evaluator(release, workdir / "out", settings, client, params).run()
    second = Evaluator(release, workdir / "out", settings, client, params).run()
    import pandas as pd

    results = pd.read_parquet(workdir / "out" / "results.parquet")
    return {"first": first, "second": second, "rows": len(results), "modes": sorted(set(results["mode"])),
            "configs": sorted(set(results["config"])), "scores_in_range": bool(results["score"].between(0, 1).all()),
            "report": (workdir / "out" / "report.md").read_text()}


CHECKS = {"backend": backend, "vote": vote, "evaluate": evaluate}

if __name__ == "__main__":
    name, workdir, section = sys.argv[1], Path(sys.argv[2]), json.loads(sys.argv[3])
    workdir.mkdir(parents=True, exist_ok=True)
    print(json.dumps(CHECKS[name](workdir, section, *sys.argv[4:]), default=str))
