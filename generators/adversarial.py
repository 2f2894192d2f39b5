"""TReB's adversarial multi-turn question writing: a generator and a discriminator.

Input: a reasoning-chain sample (its steps, its executed answer) and its table. The generator
writes two forms of the question: a long one (an analyst's multi-step request) and a short one (a
casual user's brief question). The discriminator scores each form for semantic plausibility,
logical consistency and answerability (1-5, with reasons). Forms that fall short go back to the
generator with that feedback, for up to `max_turns` turns. A sample is kept only when both forms
pass; its gold answer stays the chain's executed answer. Every turn is recorded on the sample.

All samples of a batch advance turn by turn, so each turn is one batch of requests per model.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import Any

from curation.llm.client import ChatClient, parse_json_object
from curation.llm.types import ChatRequest, user
from curation.sample import Sample

CRITERIA = ("plausibility", "consistency", "answerability")
FORMS = ("long", "short")

GENERATOR_PROMPT = """You write questions about a table for a benchmark.

Table:
{table}

A program computes the answer in these steps:
{steps}

Its answer is: {answer}

A template phrased the question as: "{question}"

Write the same question twice, so that the steps above answer it and nothing else does:
- "long": an analyst's multi-step request in full sentences, naming every condition;
- "short": a casual user's brief question with the same meaning.
Reply with JSON only: {{"long": "...", "short": "..."}}"""

REVISE_PROMPT = """A reviewer scored your questions 1-5 (plausibility, consistency, answerability) and said:
{feedback}
Rewrite them so that both pass. Reply with JSON only: {{"long": "...", "short": "..."}}"""

DISCRIMINATOR_PROMPT = """You review benchmark questions about a table.

Table:
{table}

The intended answer, computed by a program in these steps:
{steps}
Answer: {answer}

Long form: "{long}"
Short form: "{short}"

Score each form from 1 to 5 for plausibility (a real user would ask it), consistency (it means
exactly what the steps compute) and answerability (the table alone answers it, with the answer
above), and give your reasons. Reply with JSON only:
{{"long": {{"plausibility": n, "consistency": n, "answerability": n, "reasons": "..."}},
 "short": {{"plausibility": n, "consistency": n, "answerability": n, "reasons": "..."}}}}"""


def parse_forms(text: str) -> dict[str, str]:
    value = parse_json_object(text, {"long": str, "short": str})
    for form in FORMS:
        if len(value[form].strip()) < 8:
            raise ValueError(f"the {form} form is empty or too short")
    return {form: value[form].strip() for form in FORMS}


def parse_scores(text: str) -> dict[str, dict[str, Any]]:
    value = parse_json_object(text, {"long": dict, "short": dict})
    out = {}
    for form in FORMS:
        scores = value[form]
        for criterion in CRITERIA:
            score = scores.get(criterion)
            if isinstance(score, bool) or not isinstance(score, (int, float)) or not 1 <= score <= 5:
                raise ValueError(f"{form}.{criterion} must be a number from 1 to 5, got {score!r}")
        out[form] = {**{c: scores[c] for c in CRITERIA}, "reasons": str(scores.get("reasons", ""))}
    return out


@dataclass
class Outcome:
    """One chain sample's fate: `kept` (the sample with both forms), `rejected` (no pass within the
    turns) or `flagged` (a reply that could not be read, even after one retry)."""

    source: Sample
    status: str = "pending"
    sample: Sample | None = None
    reason: str = ""
    turns: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class AdversarialLoop:
    generator: ChatClient
    discriminator: ChatClient
    generator_params: dict[str, Any] = field(default_factory=dict)
    discriminator_params: dict[str, Any] = field(default_factory=dict)
    max_turns: int = 3
    threshold: float = 4.0  # every criterion of both forms must reach it

    def run(self, items: list[tuple[Sample, str]]) -> list[Outcome]:
        """`items`: (chain sample, its table serialized for the prompt)."""
        outcomes = [Outcome(source=s) for s, _ in items]
        tables = [t for _, t in items]
        conversations: list[tuple[dict[str, str], ...]] = [
            user(GENERATOR_PROMPT.format(table=t, steps=_steps(s), answer=json.dumps(s.answer, ensure_ascii=False),
                                         question=s.question)) for s, t in items]
        active = list(range(len(items)))
        for turn in range(1, self.max_turns + 1):
            if not active:
                break
            written = self.generator.structured(
                [ChatRequest(conversations[i], self.generator_params, tag=items[i][0].id) for i in active], parse_forms)
            judged_ids, reviews = [], []
            for i, reply in zip(active, written):
                record = {"turn": turn, "generator": reply.text}
                outcomes[i].turns.append(record)
                if reply.flagged:
                    outcomes[i].status, outcomes[i].reason = "flagged", f"generator: {reply.error}"
                    continue
                record["forms"] = reply.value
                conversations[i] = (*reply.exchange[:-1], {"role": "assistant", "content": reply.text})
                judged_ids.append(i)
                s = outcomes[i].source
                reviews.append(ChatRequest(user(DISCRIMINATOR_PROMPT.format(
                    table=tables[i], steps=_steps(s), answer=json.dumps(s.answer, ensure_ascii=False),
                    long=reply.value["long"], short=reply.value["short"])), self.discriminator_params, tag=s.id))
            scored = self.discriminator.structured(reviews, parse_scores) if reviews else []
            still = []
            for i, review in zip(judged_ids, scored):
                record = outcomes[i].turns[-1]
                record["discriminator"] = review.text
                if review.flagged:
                    outcomes[i].status, outcomes[i].reason = "flagged", f"discriminator: {review.error}"
                    continue
                record["scores"] = review.value
                failing = {f: s for f, s in review.value.items() if min(s[c] for c in CRITERIA) < self.threshold}
                if not failing:
                    outcomes[i].status = "kept"
                    continue
                feedback = "\n".join(f"- {form}: " + ", ".join(f"{c} {s[c]}" for c in CRITERIA)
                                     + f". {s['reasons']}" for form, s in failing.items())
                conversations[i] = (*conversations[i], {"role": "user", "content": REVISE_PROMPT.format(
                    feedback=feedback)})
                still.append(i)
            active = still
        for i in active:
            outcomes[i].status = "rejected"
            outcomes[i].reason = f"no pass within {self.max_turns} turns"
        for o in outcomes:
            if o.status == "kept":
                forms = o.turns[-1]["forms"]
                o.sample = replace(
                    o.source, question=forms["long"], question_short=forms["short"], origin="llm", id="",
                    provenance={**o.source.provenance, "chain_sample": o.source.id, "turns": json.dumps(o.turns),
                                "generator": self.generator.model, "discriminator": self.discriminator.model})
        return outcomes


def _steps(sample: Sample) -> str:
    """The chain's steps as numbered lines (the program's JSON, one step a line)."""
    if sample.program is None:
        return "(no program)"
    try:
        steps = json.loads(sample.program.text)
    except json.JSONDecodeError:
        return sample.program.text
    steps = steps.get("steps", steps) if isinstance(steps, dict) else steps
    if not isinstance(steps, list):
        return sample.program.text
    return "\n".join(f"{n}. {json.dumps(step, ensure_ascii=False)}" for n, step in enumerate(steps, 1))
