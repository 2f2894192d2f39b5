"""LLM-as-judge scoring (the `llm_judge` metric): free-text answers graded 0-100 against the gold.

TReB's NLU tasks and RealHiTBench's data-analysis tasks have answers no rule can compare (an
analysis, a summary). A judge model reads the question, the reference answer and the model's
answer, and replies {"score": 0-100, "reason": ...} under a JSON schema. The prompt is data
(`judge.toml`) and is recorded, with its hash and the judge's identity, in `run.json`.

Judgements are stored in the prediction store by (judge, prompt, sample, answer): an answer that
recurs across modes or configurations is judged once, and a rerun asks nothing again. A verdict
that stays unreadable (after the client's one retry) leaves the row unscored, with the reply kept.
"""

from __future__ import annotations

import json
import tomllib
from functools import lru_cache
from pathlib import Path
from typing import Any

from curate.curation.hashing import content_hash

JUDGE_FILE = Path(__file__).with_name("judge.toml")
SCHEMA_PROPERTIES = {"score": {"type": "integer", "minimum": 0, "maximum": 100}, "reason": {"type": "string"}}


@lru_cache(maxsize=1)
def judge_prompt() -> str:
    return tomllib.loads(JUDGE_FILE.read_text())["prompt"]


def _shown(answer: Any) -> str:
    if isinstance(answer, (list, dict)):
        return json.dumps(answer, ensure_ascii=False)
    return str(answer)


def _parse(text: str) -> dict[str, Any]:
    from curate.curation.llm.client import parse_json_object

    value = parse_json_object(text, {"score": (int, float)})
    score = value["score"]
    if isinstance(score, bool) or not 0 <= score <= 100:
        raise ValueError(f"score must be a number from 0 to 100, got {score!r}")
    return {"score": float(score), "reason": str(value.get("reason", ""))}


class AnswerJudge:
    def __init__(self, client: Any, params: dict[str, Any]) -> None:
        self.client, self.params = client, dict(params)
        self.prompt = judge_prompt()

    @property
    def identity(self) -> dict[str, Any]:
        return {"judge": self.client.identity, "params": self.params, "prompt_hash": content_hash(self.prompt)[:16]}

    @property
    def name(self) -> str:
        return f"{self.client.identity['backend']}:{self.client.identity['model']}"

    def key(self, sample_id: str, answer_json: str) -> str:
        return content_hash("judgement", self.identity, sample_id, answer_json)

    def record(self) -> dict[str, Any]:
        """What run.json says about the judge: who, with what settings, the prompt itself, and what
        this run asked of it."""
        return {**self.identity, "name": self.name, "prompt": self.prompt, "usage": self.client.usage.as_dict()}

    def judge(self, items: list[tuple[str, str, Any, Any]]) -> list[dict[str, Any]]:
        """(sample id, question, gold, answer) -> {"score": 0-100 or None, "reason", "reply"}."""
        from curate.curation.llm.client import object_schema, require_replies
        from curate.curation.llm.types import ChatRequest, user

        requests = [ChatRequest(user(self.prompt.format(question=q, gold=_shown(g), answer=_shown(a))), self.params,
                                tag=sample_id) for sample_id, q, g, a in items]
        replies = self.client.structured(requests, _parse, object_schema(**SCHEMA_PROPERTIES)) if requests else []
        require_replies(self.client, replies)
        return [{"score": None, "reason": "", "reply": r.text[:2000]} if r.flagged
                else {"score": r.value["score"], "reason": r.value["reason"], "reply": r.text[:2000]} for r in replies]
