"""TReB's question classification: a model names the task of the taxonomy each question belongs to.

Generated and imported questions carry the task they were written for; a writer model does not
always write what it was asked. The classifier reads each question (of the configured origins)
against the taxonomy's task list. Agreement is recorded; a disagreement queues the sample for
human review (`provenance["review"] = "queued"`, `task_check = "disagrees"`), or, with
`relabel = true`, moves it to the classifier's task when that task allows its answer type.
A reply that names no task of the list is flagged and changes nothing.
"""

from __future__ import annotations

import json
import tomllib
from dataclasses import replace
from functools import lru_cache
from pathlib import Path
from typing import Any

from curate.curation.config import with_defaults
from curate.curation.pipeline.graph import stage
from curate.curation.pipeline.reports import ClassifyReport
from curate.curation.pipeline.stage import Plan, Stage
from curate.curation.sample import ReviewState

PROMPT_FILE = Path(__file__).with_name("prompts") / "classify.toml"


@lru_cache(maxsize=1)
def prompts() -> dict[str, Any]:
    return tomllib.loads(PROMPT_FILE.read_text())


DEFAULTS: dict[str, Any] = {"origins": ["llm", "import"], "relabel": False, "benchmarks": [], "per_part": 64,
                            "classifier": {}}


def settings(config: dict[str, Any]) -> dict[str, Any]:
    out = with_defaults("classify", config, DEFAULTS)
    if not out["classifier"].get("model"):
        raise ValueError("the classify stage needs [models.classifier] with a model")
    return out


def task_list(benchmarks: list[str]) -> str:
    """The taxonomy as the classifier sees it: one line per task, with its description."""
    from curate.curation.taxonomy import tasks

    lines = []
    for key, t in tasks().items():
        if (benchmarks and t.benchmark not in benchmarks) or t.imported:  # imported tasks are never generated
            continue
        lines.append(f"- {key}: {t.description or t.skill + ', ' + key.split('/')[-1].replace('_', ' ')}")
    return "\n".join(lines)


def parser(known: set[str]):
    def parse(text: str) -> dict[str, Any]:
        from curate.curation.llm.client import parse_json_object

        value = parse_json_object(text, {"task": str})
        if value["task"].strip() not in known:
            raise ValueError(f"{value['task']!r} is not a task of the list")
        return {"task": value["task"].strip(), "reason": str(value.get("reason", ""))}
    return parse


@stage("classify", outputs=("samples",), inputs={"samples": ("<samples",)}, latest=("samples",), kind="check",
       section=("classify",), settings="curate.validators.classify:settings", models=("classifier",))
class ClassifyStage(Stage):
    """The `classify` stage: the selected samples in, every sample out (checked ones annotated)."""

    version = "1"

    report_type = ClassifyReport

    def in_process(self, config: dict[str, Any]) -> bool:
        from curate.curation.llm import uses_in_process_model

        return uses_in_process_model(config.get("classifier"))

    def fingerprint(self, config: dict[str, Any]) -> Any:
        return [prompts()["classify"], task_list(settings(config)["benchmarks"])]

    def plan(self, config: dict[str, Any], inputs: list[Any]) -> Plan:
        from curate.curation.llm.cache import workspace_cache

        settings(config)
        cache = workspace_cache(inputs[0])
        return Plan(tasks=[str(p) for p in inputs[0].files("samples")], shared={"cache": str(cache)})

    def run_part(self, task: str, shared: dict[str, Any], config: dict[str, Any]):
        import pyarrow.parquet as pq

        from curate.curation.arrow_io import samples_from_arrow, samples_to_arrow
        from curate.curation.llm.client import client_from_config, object_schema, require_replies
        from curate.curation.llm.types import ChatRequest, user
        from curate.curation.taxonomy import tasks

        s = settings(config)
        samples = list(samples_from_arrow(pq.read_table(task)))
        chosen = [i for i, x in enumerate(samples) if x.origin in s["origins"]]
        summary: dict[str, Any] = {"samples": len(samples), "checked": len(chosen), "agrees": 0, "disagrees": 0,
                                   "relabelled": 0, "flagged": 0}
        if not chosen:
            return {"samples": samples_to_arrow(samples)}, summary
        listing = task_list(s["benchmarks"])
        known = {line[2:].split(":")[0] for line in listing.splitlines()}
        client, params = client_from_config(s["classifier"], shared["cache"], "classifier")
        requests = [ChatRequest(user(prompts()["classify"]["prompt"].format(tasks=listing, question=samples[i].question)),
                                params, tag=samples[i].id) for i in chosen]
        schema = object_schema(task={"type": "string", "enum": sorted(known)}, reason={"type": "string"})
        replies = client.structured(requests, parser(known), schema)
        require_replies(client, replies)
        for i, reply in zip(chosen, replies):
            sample = samples[i]
            if reply.flagged:
                summary["flagged"] += 1
                samples[i] = replace(sample, provenance={**sample.provenance, "task_check": "flagged",
                                                         "task_check_reply": reply.text[:2000]})
                continue
            named = reply.value["task"]
            provenance = {**sample.provenance, "classified_as": named, "classified_by": client.model,
                          "classify_reason": reply.value["reason"][:500]}
            if named == sample.task:
                summary["agrees"] += 1
                samples[i] = replace(sample, provenance={**provenance, "task_check": "agrees"})
            elif s["relabel"] and tasks()[named].allows(sample.answer_type):
                summary["relabelled"] += 1
                samples[i] = replace(sample, task=named, id="",  # the id hashes the task: a new identity
                                     provenance={**provenance, "task_check": "relabelled", "relabelled_from":
                                                 json.dumps([sample.task, sample.id])})
            else:
                summary["disagrees"] += 1
                samples[i] = sample.with_review(ReviewState.QUEUED, **provenance, task_check="disagrees")
        summary["usage"] = {"classifier": client.usage.as_dict()}
        return {"samples": samples_to_arrow(samples)}, summary
