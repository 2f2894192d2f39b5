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
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from curate.curation.answers import Equivalence, final_answer
from curate.curation.answers import normalize_answer as normalize
from curate.curation.pipeline.graph import stage
from curate.curation.pipeline.reports import VoteReport
from curate.curation.pipeline.stage import Plan, Stage

HIGH, LOW = "high", "low"
HIGH_QUALITY_ORIGINS = ("rule-based", "executed", "human-annotated", "unanimous")


# ------------------------------------------------------------------------------ the rule judge


@dataclass(frozen=True)
class RuleJudge(Equivalence):
    """Match a candidate's answer against a reference (the gold, or the answer most candidates
    gave) by `curate.curation.answers.Equivalence`, the rule every metric applies too: numbers within 1%
    of the reference, text, booleans and lists as it says."""

    rel_tol: float = 0.01
    abs_tol: float = 1e-6


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
    from curate.curation.pipeline.rng import record_seed

    return record_seed(seed, sample_id, "review") / 2.0 ** 64 < rate


# ------------------------------------------------------------------------------ the LLM judge

JUDGE_MATCH_PROMPT = """Decide whether a candidate answer to a question about a table says the same as the reference answer.

Question: {question}
Reference answer: {gold}
Candidate answer: {candidate}

Formats may differ: numbers may be rounded (within {tolerance:.0%}) or written with units, lists may come in any
order, names may be aliases or abbreviations. Judge the meaning, not the wording.
Reply with only a JSON object: {{"match": true or false, "reason": "<one sentence>"}}"""

JUDGE_SCORE_PROMPT = """Rate how likely the candidate answer is correct for the question about the table.

Table:
{table}

Question: {question}
Candidate answer: {candidate}

Reply with only a JSON object: {{"score": <an integer from 0 to 100>, "reason": "<one sentence>"}}"""


def _parse_match(text: str) -> dict[str, Any]:
    from curate.curation.llm.client import parse_json_object

    return parse_json_object(text, {"match": bool})


def _parse_score(text: str) -> dict[str, Any]:
    from curate.curation.llm.client import parse_json_object

    value = parse_json_object(text, {"score": (int, float)})
    if not 0 <= value["score"] <= 100:
        raise ValueError(f"score must be between 0 and 100, got {value['score']!r}")
    return value


def is_free_text(value: Any) -> bool:
    """An answer the rule cannot settle: text (or a list holding text), not a number or a boolean."""
    v = normalize(value)
    return isinstance(v, str) or (isinstance(v, list) and any(isinstance(x, str) for x in v))


class LLMJudge:
    """An LLM as the judge, for what the rule judge cannot decide.

    `matches` says whether free-text candidates mean the gold answer (TReB's judge); `scores` rates
    each candidate's correctness from the table and question alone, 0-1 (RealHiTBench's judge).
    A reply that stays unreadable after one retry decides nothing: None (the rule's verdict stands,
    or the candidate scores 0), and the raw reply is kept on the vote.
    """

    def __init__(self, client: Any, params: dict[str, Any], rel_tol: float = 0.01) -> None:
        self.client, self.params, self.rel_tol = client, params, rel_tol

    def matches(self, items: list[tuple[str, str, Any, Any]]) -> list[tuple[bool | None, str]]:
        """(tag, question, gold, candidate) -> (match or None, raw reply)."""
        from curate.curation.llm.types import ChatRequest, user

        requests = [ChatRequest(user(JUDGE_MATCH_PROMPT.format(question=q, gold=_shown(g), candidate=_shown(c),
                                                               tolerance=self.rel_tol)), self.params, tag=tag)
                    for tag, q, g, c in items]
        replies = self._ask(requests, _parse_match, {"match": {"type": "boolean"}})
        return [(None if r.flagged else r.value["match"], r.text) for r in replies]

    def scores(self, items: list[tuple[str, str, str, Any]]) -> list[tuple[float | None, str]]:
        """(tag, table text, question, candidate) -> (score 0-1 or None, raw reply)."""
        from curate.curation.llm.types import ChatRequest, user

        requests = [ChatRequest(user(JUDGE_SCORE_PROMPT.format(table=t, question=q, candidate=_shown(c))),
                                self.params, tag=tag) for tag, t, q, c in items]
        replies = self._ask(requests, _parse_score, {"score": {"type": "integer", "minimum": 0, "maximum": 100}})
        return [(None if r.flagged else r.value["score"] / 100.0, r.text) for r in replies]

    def _ask(self, requests: list[Any], parse: Callable[[str], Any], verdict: dict[str, Any]) -> list[Any]:
        from curate.curation.llm.client import object_schema, require_replies

        schema = object_schema(**verdict, reason={"type": "string"})
        replies = self.client.structured(requests, parse, schema) if requests else []
        require_replies(self.client, replies)
        return replies


def _shown(answer: Any) -> str:
    return ", ".join(str(a) for a in answer) if isinstance(answer, list) else str(answer)


# ------------------------------------------------------------------------------ the stage

ANSWER_PROMPT = """Answer the question about the table.

Table:
{table}

Question: {question}

Think briefly if you need to, then end with one line: "Final Answer: <answer>".
For several values, separate them with commas."""


METHODS = ("treb", "realhitbench")

STAGE_DEFAULTS: dict[str, Any] = {"seed": 0, "method": "treb", "origins": ["llm", "import"],
                                  "only_without_program": True, "review_rate": 1.0, "audit_rate": 0.0,
                                  "rel_tol": 0.01, "max_table_rows": 20, "max_table_chars": 4000, "per_part": 32,
                                  "candidates": [], "judge": {}}


def extract_final_answer(text: str) -> Any:
    """The last "Final Answer:" line; a comma-separated answer becomes a list. None if absent."""
    return final_answer(text)


def vote_settings(config: dict[str, Any]) -> dict[str, Any]:
    from curate.curation.config import with_defaults

    config = dict(config)
    handed = [config.pop(f"candidate_{n}") for n in (1, 2, 3) if f"candidate_{n}" in config]  # [models.candidate_N]
    if handed:
        config["candidates"] = handed
    out = with_defaults("vote", config, STAGE_DEFAULTS)
    if len(out["candidates"]) != 3 or not all(c.get("model") for c in out["candidates"]):
        raise ValueError("the vote needs three candidate models: [models.candidate_1], [models.candidate_2] and "
                         "[models.candidate_3]")
    for key in ("review_rate", "audit_rate"):
        if not 0.0 <= out[key] <= 1.0:
            raise ValueError(f"[vote] {key} must be between 0 and 1, got {out[key]!r}")
    if out["method"] not in METHODS:
        raise ValueError(f"[vote] method must be one of {', '.join(METHODS)}, got {out['method']!r}")
    if out["method"] == "realhitbench" and not out["judge"].get("model"):
        raise ValueError("[vote] method = \"realhitbench\" scores every candidate with an LLM judge: add [models.judge]")
    return out


@stage("vote", outputs=("samples",), inputs={"samples": ("<samples",), "tables": ("clean", "rules")}, latest=("samples",),
       kind="check", section=("vote",), settings="curate.validators.voting:vote_settings",
       models=("candidate_1", "candidate_2", "candidate_3", "judge?"), after=("classify",))
class VoteStage(Stage):
    """The `vote` stage: three candidates answer every sample no rule computed, then a decision.

    Inputs: the selected samples, then the datasets holding their tables. Every sample passes
    through; voted ones carry their votes and the agreement (`judge_verdict`).

    - method "treb" (default): TReB's table. The rule judge matches answers; an LLM judge
      ([models.judge], optional) decides the free-text candidates the rule calls different from
      the gold. A unanimous consensus against the gold replaces it (the old gold is kept in the
      provenance). Samples short of full agreement are queued for human review
      (`provenance["review"] = "queued"`) at `review_rate`, unanimous ones at `audit_rate`.
    - method "realhitbench": the judge scores each candidate from the table and question; each
      distinct answer scores frequency x mean judge score; the best becomes the candidate gold,
      and every voted sample is queued for a human check (at `review_rate`).
    """

    version = "2"

    report_type = VoteReport

    def in_process(self, config: dict[str, Any]) -> bool:
        from curate.curation.llm import uses_in_process_model

        return uses_in_process_model(*config.get("candidates", []), config.get("judge"))

    def fingerprint(self, config: dict[str, Any]) -> Any:
        return [ANSWER_PROMPT, JUDGE_MATCH_PROMPT, JUDGE_SCORE_PROMPT]

    def plan(self, config: dict[str, Any], inputs: list[Any]) -> Plan:
        from curate.curation.arrow_io import table_index
        from curate.curation.llm.cache import workspace_cache

        vote_settings(config)
        tables = table_index(str(p) for d in inputs[1:] for p in d.files("tables"))
        cache = workspace_cache(inputs[0])
        return Plan(tasks=[str(p) for p in inputs[0].files("samples")], shared={"tables": tables, "cache": str(cache)})

    def run_part(self, task: str, shared: dict[str, Any], config: dict[str, Any]):
        import pyarrow.parquet as pq

        from curate.curation.arrow_io import samples_from_arrow, samples_to_arrow, table_at
        from curate.curation.llm.client import client_from_config, require_replies
        from curate.curation.llm.prompts import table_for_prompt
        from curate.curation.llm.types import ChatRequest, user

        s = vote_settings(config)
        samples = list(samples_from_arrow(pq.read_table(task)))
        chosen = [i for i, x in enumerate(samples) if x.origin in s["origins"]
                  and (x.program is None or not s["only_without_program"])]
        summary: dict[str, Any] = {"samples": len(samples), "voted": len(chosen), "method": s["method"],
                                   "agreement": {}, "replaced": 0, "queued": 0, "quality": {}, "judged_by_llm": 0}
        if not chosen:
            return {"samples": samples_to_arrow(samples)}, summary
        clients = [client_from_config(c, shared["cache"], f"candidate_{n + 1}") for n, c in enumerate(s["candidates"])]
        judge = None
        if s["judge"].get("model"):
            judge_client, judge_params = client_from_config(s["judge"], shared["cache"], "judge")
            judge = LLMJudge(judge_client, judge_params, s["rel_tol"])
        tables = []
        for i in chosen:
            where = shared["tables"].get(samples[i].table_ids[0]) if samples[i].table_ids else None
            tables.append(table_for_prompt(table_at(*where) if where else None, s["max_table_rows"], s["max_table_chars"]))
        replies = []
        for client, params in clients:
            responses = client.complete([ChatRequest(user(ANSWER_PROMPT.format(table=t, question=samples[i].question)),
                                                     params, tag=samples[i].id) for t, i in zip(tables, chosen)])
            require_replies(client, responses)
            replies.append(responses)
        answers = [[extract_final_answer(r[k].text) for r in replies] for k in range(len(chosen))]
        rule = RuleJudge(rel_tol=s["rel_tol"])
        decide = decide_realhitbench if s["method"] == "realhitbench" else decide_treb
        verdicts = decide([samples[i] for i in chosen], answers, tables, rule, judge, summary)
        for k, i in enumerate(chosen):
            sample, verdict = samples[i], verdicts[k]
            if verdict.needs_review:
                review = review_sampled(sample.id, s["review_rate"], s["seed"])
            else:
                review = review_sampled(sample.id, s["audit_rate"], s["seed"])
            samples[i] = _with_verdict(sample, verdict, [clients[n][0].model for n in range(3)],
                                       [replies[n][k].text for n in range(3)], review)
            summary["agreement"][verdict.agreement] = summary["agreement"].get(verdict.agreement, 0) + 1
            summary["replaced"] += int(verdict.replaced)
            summary["queued"] += int(review)
            summary["quality"][samples[i].quality] = summary["quality"].get(samples[i].quality, 0) + 1
        summary["usage"] = {c.role: c.usage.as_dict() for c, _ in clients}
        if judge:
            summary["usage"]["judge"] = judge.client.usage.as_dict()
        return {"samples": samples_to_arrow(samples)}, summary


def decide_treb(samples: list[Any], answers: list[list[Any]], tables: list[str], rule: RuleJudge,
                 judge: LLMJudge | None, summary: dict[str, Any]) -> list[Verdict]:
    """TReB's table; the LLM judge (if any) settles free-text candidates the rule calls different from the gold."""
    # one judgement per sample and distinct answer (as the rule normalizes it)
    asked: dict[tuple[int, str], bool | None] = {}
    raw: dict[tuple[int, str], str] = {}

    def key(k: int, answer: Any) -> tuple[int, str]:
        return k, json.dumps(normalize(answer), sort_keys=True, default=str)

    if judge:
        items, where = [], []
        for k, (sample, row) in enumerate(zip(samples, answers)):
            for a in row:
                if (a is not None and key(k, a) not in where and not rule.same(a, sample.answer)
                        and is_free_text(a) and is_free_text(sample.answer)):
                    items.append((sample.id, sample.question, sample.answer, a))
                    where.append(key(k, a))
        for at, (match, text) in zip(where, judge.matches(items)):
            asked[at], raw[at] = match, text
        summary["judged_by_llm"] += len(items)
    verdicts = []
    for k, (sample, row) in enumerate(zip(samples, answers)):
        def matches_gold(a: Any, k: int = k, gold: Any = sample.answer) -> bool:
            llm = asked.get(key(k, a))
            return rule.same(a, gold) if llm is None else llm

        verdict = vote(sample.answer, row, rule.same, matches_gold=matches_gold)
        verdict.votes = [{"judge": raw.get(key(k, a), "") if a is not None else ""} for a in row]
        verdicts.append(verdict)
    return verdicts


def decide_realhitbench(samples: list[Any], answers: list[list[Any]], tables: list[str], rule: RuleJudge,
                         judge: LLMJudge | None, summary: dict[str, Any]) -> list[Verdict]:
    """Frequency x judge score; the best answer becomes the candidate gold; a human checks every one."""
    assert judge is not None  # vote_settings demands one
    items, where = [], []
    for k, (sample, row) in enumerate(zip(samples, answers)):
        for n, a in enumerate(row):
            if a is not None:
                items.append((sample.id, tables[k], sample.question, a))
                where.append((k, n))
    scored = dict(zip(where, judge.scores(items)))
    summary["judged_by_llm"] += len(items)
    verdicts = []
    for k, (sample, row) in enumerate(zip(samples, answers)):
        scores = [(scored[(k, n)][0] or 0.0) if a is not None else 0.0 for n, a in enumerate(row)]
        ranked = frequency_judge_scores(row, scores, rule.same)
        matches = [None if a is None else rule.same(a, sample.answer) for a in row]
        if ranked and ranked[0][1] > 0:
            best, score = ranked[0]
            count = sum(1 for a in row if a is not None and rule.same(a, best))
            replaced = not rule.same(best, sample.answer)
            verdict = Verdict(best if replaced else sample.answer, f"{count}/3-best", matches, replaced=replaced)
        else:
            verdict = Verdict(sample.answer, "no-votes", matches)
        verdict.votes = [{"judge": scored[(k, n)][1] if (k, n) in scored else "", "score": scored.get((k, n), (None,))[0]}
                         for n in range(3)]
        verdicts.append(verdict)
    return verdicts


def _with_verdict(sample: Any, verdict: Verdict, models: list[str], texts: list[str], review: bool) -> Any:
    """The sample after its vote: votes, agreement, the decided gold (the old one kept), quality, review."""
    from dataclasses import replace

    from curate.curation.sample import ReviewState, Vote

    votes = []
    for n in range(3):
        extra = verdict.votes[n] if n < len(verdict.votes) else {}
        answer = extract_final_answer(texts[n])
        raw = texts[n] + (f"\n\n[judge] {extra['judge']}" if extra.get("judge") else "")
        votes.append(Vote(model=models[n], answer=answer, agrees_with_gold=verdict.matches_gold[n], raw=raw,
                          score=extra.get("score")))
    provenance = dict(sample.provenance)
    if verdict.replaced:
        provenance["gold_before_vote"] = json.dumps(sample.answer, ensure_ascii=False, sort_keys=True)
    if review:
        provenance["review"] = ReviewState.QUEUED.value
    return replace(sample, votes=tuple(votes), judge_verdict=verdict.agreement, answer=verdict.answer,
                   quality=quality_of(sample.quality, verdict), provenance=provenance)
