"""The per-sample log of a run: `samples.jsonl`, one line per sample x mode x configuration.

Each line holds what a reader needs to see why a sample scored what it did: the question, the
gold and the gold program, the tables (ids and serialization), a reference to the prompt as sent
(`prompt_id`, its messages in `prompts.jsonl`, each prompt once, keyed by its content's hash), the
raw reply, the model's program and its output, the extracted answer, the score, the metric and
its reason, tokens, the latency of its model calls and the client's retries (latency.py; null
where nothing was timed), and the failure kind of a request that got no usable reply (those
lines have no score). It is JSON Lines: `pandas.read_json(path, lines=True)`, DuckDB's `read_json_auto`,
`datasets.load_dataset("json", data_files=path)` read it; the report is built from it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

from curate.evaluation.dataset import EvalSample

SAMPLES_FILE, PROMPTS_FILE = "samples.jsonl", "prompts.jsonl"


def log_rows(results: list[dict[str, Any]], predictions: list[dict[str, Any]], failures: list[dict[str, Any]],
             samples: list[EvalSample], model: str, run: str,
             messages: Callable[[EvalSample, str, str], Any]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """(log lines, prompts by id). `messages(sample, mode, config)`: the first turn's messages."""
    from curate.curation.hashing import content_hash
    from curate.curation.taxonomy import tasks

    by_id = {s.id: s for s in samples}
    taxonomy = tasks()
    replies = {(p["sample_id"], p["mode"], p["config"]): p for p in predictions}
    prompts: dict[str, Any] = {}

    def prompt_id(sample: EvalSample, mode: str, config: str) -> str | None:
        try:
            sent = messages(sample, mode, config)
        except ValueError:  # --prompt official on a sample without the benchmark's instruction
            return None
        key = content_hash("prompt", list(sent))[:16]
        prompts.setdefault(key, list(sent))
        return key

    def common(sample: EvalSample, mode: str, config: str) -> dict[str, Any]:
        serialization, _, perturbation = config.partition(":")
        return {"run_id": run, "model": model, "sample_id": sample.id, "task": sample.task,
                "split": sample.split, "mode": mode, "config": config, "serialization": serialization,
                "perturbation": perturbation, "table_ids": list(sample.table_ids), "question": sample.question,
                "gold": json.dumps(sample.answer, ensure_ascii=False),
                "gold_program": (sample.program or {}).get("text") or "",
                "prompt_id": prompt_id(sample, mode, config)}

    out = []
    for result in results:
        sample = by_id[result["sample_id"]]
        prediction = replies.get((sample.id, result["mode"], result["config"]), {})
        details = json.loads(result["details"] or "{}")
        out.append({**common(sample, result["mode"], result["config"]),
                    **{k: result[k] for k in ("skill", "benchmark", "metric", "score", "extracted", "method", "executed",
                                              "answer", "error", "truncated", "prompt_tokens", "completion_tokens")},
                    "reason": reason(result["score"], details, result["error"]), "details": result["details"],
                    "reply": prediction.get("reply") or "", "program": prediction.get("program") or "",
                    "program_output": prediction.get("program_output") or "",
                    "turns": prediction.get("turns") or "[]", "failure": "", **_timing(prediction)})
    for failed in failures:
        sample = by_id.get(failed["sample_id"])
        if sample is None:
            continue
        task = taxonomy.get(sample.task)
        out.append({**common(sample, failed["mode"], failed["config"]),
                    "skill": task.skill if task else "", "benchmark": task.benchmark if task else "",
                    "metric": task.metric if task else "exact_match", "score": None, "extracted": False,
                    "method": "none", "executed": None, "answer": "null", "error": failed["error"],
                    "truncated": False, "prompt_tokens": 0, "completion_tokens": 0,
                    "reason": f"no usable reply ({failed['failure']}): not scored, asked again by the next run",
                    "details": "{}", "reply": "", "program": "", "program_output": "", "turns": "[]",
                    "failure": failed["failure"], **_timing(failed)})
    return sorted(out, key=lambda r: (r["sample_id"], r["mode"], r["config"])), prompts


def _timing(stored: dict[str, Any]) -> dict[str, Any]:
    """A stored prediction's or failure's `latency_s` and `retries` (latency.py); None where not timed."""
    latency, retries = stored.get("latency_s"), stored.get("retries")
    return {"latency_s": None if latency is None else float(latency), "retries": None if retries is None else int(retries)}


def reason(score: float | None, details: dict[str, Any], error: str) -> str:
    """Why a sample scored what it did, in words, from the metric's details."""
    if details.get("unscored"):
        return f"not scored: {details['unscored']}"
    if details.get("unextracted"):
        return "no answer could be extracted from the reply" + (f" ({error})" if error else "")
    if details.get("error"):
        return f"0: {details['error']}"
    if "judge_score" in details:
        return f"the judge gave {details['judge_score']}/100: {details.get('reason', '')}"
    if "compared" in details:
        return (f"{'same' if score == 1.0 else 'different'} result rows, compared {details['compared']} "
                f"({details.get('rows')} predicted, {details.get('gold_rows')} gold)")
    shown = ", ".join(f"{k} {v}" for k, v in details.items() if k not in ("reason",))
    verdict = "matches the gold" if score == 1.0 else "does not match the gold" if score == 0.0 else f"scores {score}"
    return verdict + (f" ({shown})" if shown else "") + (f"; the program failed: {error}" if error else "")


def write_log(out: Path, rows: list[dict[str, Any]], prompts: dict[str, Any]) -> None:
    """samples.jsonl and prompts.jsonl, written whole (each run rewrites its own log)."""
    with open(out / SAMPLES_FILE, "w") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False, default=str) + "\n")
    with open(out / PROMPTS_FILE, "w") as f:
        for key, messages in prompts.items():
            f.write(json.dumps({"prompt_id": key, "messages": messages}, ensure_ascii=False) + "\n")


def read_log(folder: Path) -> list[dict[str, Any]]:
    with open(Path(folder) / SAMPLES_FILE) as f:
        return [json.loads(line) for line in f if line.strip()]


def read_prompts(folder: Path, wanted: set[str] | None = None) -> dict[str, Any]:
    file = Path(folder) / PROMPTS_FILE
    if not file.exists():
        return {}
    out = {}
    with open(file) as f:
        for line in f:
            record = json.loads(line)
            if wanted is None or record["prompt_id"] in wanted:
                out[record["prompt_id"]] = record["messages"]
    return out
