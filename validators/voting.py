"""Three-model voting with a judge (TReB), and RealHiTBench's frequency x judge-score variant.

Three candidate models answer a sample; a judge says, for each candidate, whether it matches the
gold answer, and whether candidates match each other. TReB's table, exactly:

    all three agree, and match the gold     -> keep the gold        (agreement "3/3", unanimous)
    all three agree, and differ from it     -> replace the gold with their consensus ("3/3-replaced")
    two agree, and match the gold           -> keep the gold        ("2/3")
    any other case                          -> keep the gold        ("2/3-against-gold", "none")

Quality: "high" for rule-based (an executed program), human-annotated or unanimous samples;
"low" otherwise, and those are queued for human review at the configured rate.

The judge first compares by rule (numbers within a tolerance, aliases, lists in any order); an
LLM judge, when configured, decides only what the rule cannot (free text that differs).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from curation.pipeline.stage import Plan, Stage

HIGH, LOW = "high", "low"
HIGH_QUALITY_ORIGINS = ("rule-based", "executed", "human-annotated", "unanimous")

_NUMBER = re.compile(r"^[-+]?(\d{1,3}(,\d{3})+|\d+)?(\.\d+)?%?$")
_SPACES = re.compile(r"\s+")


# ------------------------------------------------------------------------------ the rule judge


@dataclass(frozen=True)
class RuleJudge:
    """Match two answers by rule.

    - numbers within `rel_tol` relative (or `abs_tol` absolute) of each other: 0.947 ~ 0.95 at 1%
    - "42", "42.0", "42.00" and 42 are one number; "1,234" is 1234; "45%" is 45
    - text equal after case, spacing and surrounding punctuation are ignored, or listed as aliases
    - lists equal as multisets (order ignored) unless `ordered`
    - "yes"/"true" and "no"/"false" are booleans
    """

    rel_tol: float = 0.01
    abs_tol: float = 1e-6
    aliases: tuple[tuple[str, ...], ...] = ()
    ordered: bool = False

    def same(self, a: Any, b: Any) -> bool:
        a, b = normalize(a), normalize(b)
        if isinstance(a, list) or isinstance(b, list):
            a = a if isinstance(a, list) else [a]
            b = b if isinstance(b, list) else [b]
            if len(a) != len(b):
                return False
            if self.ordered:
                return all(self.same(x, y) for x, y in zip(a, b))
            rest = list(b)
            for x in a:
                for i, y in enumerate(rest):
                    if self.same(x, y):
                        del rest[i]
                        break
                else:
                    return False
            return True
        if isinstance(a, bool) or isinstance(b, bool):
            return a == b and isinstance(a, bool) and isinstance(b, bool)
        if isinstance(a, float) and isinstance(b, float):
            return math.isclose(a, b, rel_tol=self.rel_tol, abs_tol=self.abs_tol)
        if isinstance(a, str) and isinstance(b, str):
            return a == b or any(a in group and b in group for group in self._alias_sets())
        return False

    def _alias_sets(self) -> list[set[str]]:
        return [{normalize(x) for x in group} for group in self.aliases]


def normalize(value: Any) -> Any:
    """An answer as the judge compares it: numbers as floats, text folded, booleans recognised."""
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("[") and text.endswith("]"):
            try:
                return normalize(json.loads(text))
            except json.JSONDecodeError:
                pass
        folded = _SPACES.sub(" ", text.strip(" .,;:!?\"'")).lower()
        if folded in ("true", "yes"):
            return True
        if folded in ("false", "no"):
            return False
        compact = folded.replace(" ", "")
        if compact and _NUMBER.match(compact) and any(ch.isdigit() for ch in compact):
            return float(compact.replace(",", "").rstrip("%"))
        return folded
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, (list, tuple)):
        return [normalize(v) for v in value]
    return normalize(str(value))


# ------------------------------------------------------------------------------ the vote


@dataclass
class Verdict:
    """The outcome of one sample's vote."""

    answer: Any  # the gold answer after the vote (replaced only by a unanimous consensus)
    agreement: str  # 3/3 | 3/3-replaced | 2/3 | 2/3-against-gold | none | no-votes
    matches_gold: list[bool | None]  # per candidate (None: no usable answer)
    replaced: bool = False
    quality: str = LOW
    needs_review: bool = True
    votes: list[dict[str, Any]] = field(default_factory=list)


def vote(gold: Any, answers: Sequence[Any], same: Callable[[Any, Any], bool],
         matches_gold: Callable[[Any], bool | None] | None = None) -> Verdict:
    """TReB's table over three candidate answers (None: the candidate gave no usable answer).

    `same(a, b)` says whether two candidates agree; `matches_gold(a)` whether a candidate matches
    the gold (default: `same(a, gold)`; an LLM judge may answer here).
    """
    matches_gold = matches_gold or (lambda a: same(a, gold))
    usable = [a for a in answers if a is not None]
    judged = [None if a is None else bool(matches_gold(a)) for a in answers]
    if len(answers) != 3:
        raise ValueError(f"TReB's vote takes three candidates, got {len(answers)}")
    if not usable:
        return Verdict(gold, "no-votes", judged)
    # the largest group of candidates that agree with each other
    groups: list[list[int]] = []
    for i, a in enumerate(answers):
        if a is None:
            continue
        for g in groups:
            if same(answers[g[0]], a):
                g.append(i)
                break
        else:
            groups.append([i])
    largest = max(groups, key=len)
    if len(largest) == 3:
        if all(judged[i] for i in largest):
            return Verdict(gold, "3/3", judged, quality=HIGH, needs_review=False)
        if not any(judged[i] for i in largest):
            return Verdict(answers[largest[0]], "3/3-replaced", judged, replaced=True, quality=HIGH,
                           needs_review=False)
        return Verdict(gold, "3/3-split-judge", judged)  # the judge disagrees with itself: a human decides
    if len(largest) == 2:
        if all(judged[i] for i in largest):
            return Verdict(gold, "2/3", judged)
        return Verdict(gold, "2/3-against-gold", judged)
    return Verdict(gold, "none", judged)


def quality_of(origin_quality: str, verdict: Verdict | None) -> str:
    """High for rule-based, human-annotated or unanimous samples; low otherwise."""
    if origin_quality in HIGH_QUALITY_ORIGINS:
        return HIGH
    return verdict.quality if verdict else LOW


def frequency_judge_scores(answers: Sequence[Any], judge_scores: Sequence[float],
                           same: Callable[[Any, Any], bool]) -> list[tuple[Any, float]]:
    """RealHiTBench's variant: each distinct answer scores (how many candidates gave it) x (the
    mean judge score of those candidates); best first. The best becomes the candidate gold, which a
    human then checks."""
    groups: list[tuple[Any, list[float]]] = []
    for a, score in zip(answers, judge_scores):
        if a is None:
            continue
        for rep, scores in groups:
            if same(rep, a):
                scores.append(score)
                break
        else:
            groups.append((a, [score]))
    ranked = [(rep, len(scores) * (sum(scores) / len(scores))) for rep, scores in groups]
    return sorted(ranked, key=lambda x: -x[1])


def review_sampled(sample_id: str, rate: float, seed: int = 0) -> bool:
    """Whether a sample short of full agreement goes to human review, at `rate`, by content hash."""
    from curation.pipeline.rng import record_seed

    return record_seed(seed, sample_id, "review") / 2.0 ** 64 < rate


# ------------------------------------------------------------------------------ the stage

ANSWER_PROMPT = """Answer the question about the table.

Table:
{table}

Question: {question}

Think briefly if you need to, then end with one line: "Final Answer: <answer>".
For several values, separate them with commas."""

_FINAL = re.compile(r"final answer\s*[:：]\s*(.+)", re.I)

STAGE_DEFAULTS: dict[str, Any] = {"seed": 0, "origins": ["llm", "import"], "only_without_program": True,
                                  "review_rate": 1.0, "audit_rate": 0.0, "rel_tol": 0.01,
                                  "max_table_rows": 20, "max_table_chars": 4000, "per_part": 32,
                                  "candidates": [], "judge": {}}


def extract_final_answer(text: str) -> Any:
    """The last "Final Answer:" line; a comma-separated answer becomes a list. None if absent."""
    found = _FINAL.findall(text or "")
    if not found:
        return None
    answer = found[-1].strip().strip("*").strip()
    if not answer:
        return None
    parts = [p.strip() for p in answer.split(",")]
    # "1,234" is a number, not a list
    if len(parts) > 1 and not _NUMBER.match(answer.replace(" ", "")):
        return parts
    return answer


def vote_settings(config: dict[str, Any]) -> dict[str, Any]:
    from curation.config import with_defaults

    out = with_defaults("vote", config, STAGE_DEFAULTS)
    if len(out["candidates"]) != 3 or not all(c.get("model") for c in out["candidates"]):
        raise ValueError("the vote needs three candidate models: [models.candidate_1], [models.candidate_2] and "
                         "[models.candidate_3]")
    for key in ("review_rate", "audit_rate"):
        if not 0.0 <= out[key] <= 1.0:
            raise ValueError(f"[vote] {key} must be between 0 and 1, got {out[key]!r}")
    return out


class VoteStage(Stage):
    """The `vote` stage: three candidates answer every sample no rule computed; TReB's table decides.

    Inputs: the selected samples, then the datasets holding their tables. Every sample passes
    through; voted ones carry their votes, the agreement (`judge_verdict`), the quality label, a
    replaced gold answer when all three agree against it, and `provenance["review"] = "queued"`
    when they go to human review (short of full agreement, at `review_rate`; plus an audit sample
    of unanimous ones at `audit_rate`).
    """

    name = "vote"
    version = "1"
    outputs = ("samples",)

    def fingerprint(self, config: dict[str, Any]) -> Any:
        return ANSWER_PROMPT

    def plan(self, config: dict[str, Any], inputs: list[Any]) -> Plan:
        from curation.arrow_io import table_index

        vote_settings(config)
        tables = table_index(str(p) for d in inputs[1:] for p in d.files("tables"))
        cache = inputs[0].path.parent.parent / "llm-cache.sqlite"
        return Plan(tasks=[str(p) for p in inputs[0].files("samples")], shared={"tables": tables, "cache": str(cache)})

    def run_part(self, task: str, shared: dict[str, Any], config: dict[str, Any]):
        from dataclasses import replace

        import pyarrow.parquet as pq

        from curation.arrow_io import samples_from_arrow, samples_to_arrow, table_at
        from curation.llm.client import client_from_config
        from curation.llm.prompts import table_for_prompt
        from curation.llm.types import ChatRequest, ModelUnavailable, user
        from curation.sample import Vote

        s = vote_settings(config)
        samples = list(samples_from_arrow(pq.read_table(task)))
        chosen = [i for i, x in enumerate(samples) if x.origin in s["origins"]
                  and (x.program is None or not s["only_without_program"])]
        summary: dict[str, Any] = {"samples": len(samples), "voted": len(chosen), "agreement": {}, "replaced": 0,
                                   "queued": 0, "quality": {}}
        if chosen:
            clients = [client_from_config(c, shared["cache"], f"candidate_{n + 1}")
                       for n, c in enumerate(s["candidates"])]
            prompts = []
            for i in chosen:
                where = shared["tables"].get(samples[i].table_ids[0]) if samples[i].table_ids else None
                table = table_at(*where) if where else None
                prompts.append(user(ANSWER_PROMPT.format(
                    table=table_for_prompt(table, s["max_table_rows"], s["max_table_chars"]),
                    question=samples[i].question)))
            replies = []
            for client, params in clients:
                responses = client.complete([ChatRequest(p, params, tag=samples[i].id) for p, i in zip(prompts, chosen)])
                down = [r for r in responses if not r.ok and r.transient]
                if down:
                    raise ModelUnavailable(f"{client.role} ({client.model}): {len(down)} requests got no reply "
                                           f"({down[0].error}); rerun when it answers: finished requests are cached")
                replies.append(responses)
            judge = RuleJudge(rel_tol=s["rel_tol"])
            for k, i in enumerate(chosen):
                sample = samples[i]
                answers = [extract_final_answer(r[k].text) for r in replies]
                verdict = vote(sample.answer, answers, judge.same)
                review = verdict.needs_review and review_sampled(sample.id, s["review_rate"], s["seed"])
                review = review or (not verdict.needs_review and review_sampled(sample.id, s["audit_rate"], s["seed"]))
                votes = tuple(Vote(model=clients[n][0].model, answer=answers[n], agrees_with_gold=verdict.matches_gold[n],
                                   raw=replies[n][k].text) for n in range(3))
                provenance = {**sample.provenance, **({"review": "queued"} if review else {})}
                samples[i] = replace(sample, votes=votes, judge_verdict=verdict.agreement, answer=verdict.answer,
                                     quality=quality_of(sample.quality, verdict), provenance=provenance)
                summary["agreement"][verdict.agreement] = summary["agreement"].get(verdict.agreement, 0) + 1
                summary["replaced"] += int(verdict.replaced)
                summary["queued"] += int(review)
                summary["quality"][samples[i].quality] = summary["quality"].get(samples[i].quality, 0) + 1
            summary["usage"] = {c.role: c.usage.as_dict() for c, _ in clients}
        return {"samples": samples_to_arrow(samples)}, summary
