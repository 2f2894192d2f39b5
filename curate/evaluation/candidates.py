"""Candidate answers for `curate audit`: PoT programs of a model, run as `curate evaluate` runs them
(the program in the sandbox, `curate.evaluation.sandbox`; its printed final answer extracted), for
the samples whose gold has no SQL to re-run. `curate.validators.audit` votes the answers with the
rule judge (the CLI passes them on: evaluation imports no validator).

The replies come from a replay file (`{source_id or sample_id, reply}` per line, as `curate evaluate
--backend replay` reads; a line without a `mode` is a PoT reply), from a batch output (the replies to
`curate audit --export-requests`), or from a model asked now (`model_answers` with a live client,
its replies cached). The requests are `curate evaluate --modes pot`'s, so replies serve both.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

PARAMS = {"temperature": 0.0, "max_tokens": 1024}  # `curate evaluate`'s defaults: the same requests


def replayed_answers(release: str, path: str, isolation: str = "bwrap", model: str | None = None
                     ) -> tuple[dict[str, Any], dict[str, str]]:
    """({sample_id: answer}, {sample_id: program}) of one file of replies (one candidate model); a
    batch output is answered request by request (`model`: the one its requests were exported for)."""
    from curate.curation.llm.backends.replay import ReplayBackend, _first_is_batch_output
    from curate.curation.llm.client import ChatClient
    from curate.evaluation.evaluate import Evaluator, Settings

    if _first_is_batch_output(Path(path)):
        return model_answers(release, ChatClient(ReplayBackend(path, model)), PARAMS, isolation)
    lines = [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()]
    with tempfile.TemporaryDirectory(prefix="curate-audit-") as tmp:
        replay = Path(tmp) / Path(path).name
        replay.write_text("".join(json.dumps({"mode": "pot", **r}, ensure_ascii=False) + "\n" for r in lines))
        evaluator = Evaluator(release, Path(tmp) / "run", Settings(modes=["pot"], sandbox=isolation,
                                                                   sandbox_workers=1), replay=replay)
        try:
            evaluator._run_replay(evaluator.samples())
            rows = evaluator.store.rows(evaluator.model)
        finally:
            evaluator.store.db.close()
    return _answers(rows)


def model_answers(release: str, client: Any, params: dict[str, Any] | None = None, isolation: str = "bwrap"
                  ) -> tuple[dict[str, Any], dict[str, str]]:
    """The same, asked of `client` for every sample whose gold has no SQL. A request without a reply
    (failed, or written to a batch file by an exporting client) gives no answer."""
    from curate.evaluation.evaluate import Evaluator, Item, Settings

    with tempfile.TemporaryDirectory(prefix="curate-audit-") as tmp:
        evaluator = Evaluator(release, Path(tmp) / "run", Settings(modes=["pot"], sandbox=isolation, sandbox_workers=1),
                              client, PARAMS if params is None else params)
        config = evaluator.configs[0]
        items = [Item(s, "pot", config, evaluator.store.key(evaluator.model, s.id, "pot", config.name))
                 for s in evaluator.samples() if not _has_sql(s)]
        sandbox = _LazySandbox(evaluator, isolation)
        rows: list[dict[str, Any]] = []
        try:
            for start in range(0, len(items), evaluator.settings.batch):
                rows += evaluator._single(items[start:start + evaluator.settings.batch], sandbox)
        finally:
            sandbox.close()
            evaluator.store.db.close()
    return _answers([r for r in rows if "answer" in r])


def _has_sql(sample: Any) -> bool:
    """A gold the audit re-runs as SQL (`curate.validators.audit`): no vote is needed for it."""
    program = sample.program or {}
    return bool(sample.provenance.get("source_sql") or program.get("kind") == "sql")


class _LazySandbox:
    """The sandbox, started only when a reply holds a program (an export asks nothing, runs nothing)."""

    size = 1

    def __init__(self, evaluator: Any, isolation: str) -> None:
        self._make = lambda: __import__("curate.evaluation.sandbox", fromlist=["Sandbox"]).Sandbox(
            1, evaluator._limits(), isolation)
        self._sandbox: Any = None

    def run(self, *args: Any, **kwargs: Any) -> Any:
        if self._sandbox is None:
            self._sandbox = self._make()
        return self._sandbox.run(*args, **kwargs)

    def close(self) -> None:
        if self._sandbox is not None:
            self._sandbox.close()


def _answers(rows: list[dict[str, Any]]) -> tuple[dict[str, Any], dict[str, str]]:
    from curate.curation.answers import final_answer

    answers = {}
    for r in rows:
        answer = json.loads(r["answer"]) if r["answer"] not in (None, "null") else None
        if isinstance(answer, str) and "final answer" in answer.lower():  # a program that printed the line
            answer = final_answer(answer)
        if answer not in (None, ""):
            answers[r["sample_id"]] = answer
    programs = {r["sample_id"]: r["program"] or "" for r in rows}
    return answers, programs
