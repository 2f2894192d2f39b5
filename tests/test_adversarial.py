"""The generator/discriminator loop with scripted models: accept, revise, reject, flag."""

from __future__ import annotations

import json

from curate.curation.llm.client import ChatClient
from curate.curation.llm.backends.scripted import ScriptedBackend
from curate.curation.sample import Program, Sample
from curate.generators.adversarial import AdversarialLoop

CHAIN = Sample(task="ADA/multi_step_operations", question="What is the mean of y where x > 1?", answer=5.5,
               answer_type="number", table_ids=("tbl-1",), origin="rule", quality="rule-based",
               program=Program("chain", json.dumps([{"op": "filter", "column": "x", "cmp": ">", "value": 1},
                                                    {"op": "aggregate", "agg": "mean", "column": "y"}])))
TABLE = "| x | y |\n| 1 | 2 |\n| 2 | 5 |\n| 3 | 6 |"
FORMS = {"long": "Considering only the rows whose x exceeds 1, what is the average value of y?",
         "short": "avg y when x > 1?"}


def scores(value):
    one = {"plausibility": value, "consistency": value, "answerability": value, "reasons": f"scored {value}"}
    return json.dumps({"long": one, "short": one})


def loop(generator_reply, discriminator_reply, max_turns=3):
    g, d = ScriptedBackend(generator_reply, "gen"), ScriptedBackend(discriminator_reply, "disc")
    return AdversarialLoop(ChatClient(g), ChatClient(d), max_turns=max_turns), g, d


def test_forms_that_pass_at_once_are_kept_with_the_chains_answer():
    runner, g, d = loop(lambda r: json.dumps(FORMS), lambda r: scores(5))
    [outcome] = runner.run([(CHAIN, TABLE)])
    assert outcome.status == "kept" and len(outcome.turns) == 1
    s = outcome.sample
    assert (s.question, s.question_short, s.answer, s.program, s.origin) == (
        FORMS["long"], FORMS["short"], 5.5, CHAIN.program, "llm")
    assert s.id != CHAIN.id and s.provenance["chain_sample"] == CHAIN.id
    assert json.loads(s.provenance["turns"])[0]["scores"]["long"]["consistency"] == 5
    assert "x > 1" in g.calls[0].messages[-1]["content"] or '"value": 1' in g.calls[0].messages[-1]["content"]
    assert FORMS["long"] in d.calls[0].messages[-1]["content"]


def test_forms_revised_from_the_discriminators_feedback_pass_on_a_later_turn():
    def discriminator(request):
        return scores(5) if "average value of y" in request.messages[-1]["content"] else scores(2)

    def generator(request):
        if "A reviewer scored" in request.messages[-1]["content"]:
            return json.dumps(FORMS)
        return json.dumps({"long": "What about y in the table please?", "short": "y stuff?"})

    runner, g, _ = loop(generator, discriminator)
    [outcome] = runner.run([(CHAIN, TABLE)])
    assert outcome.status == "kept" and len(outcome.turns) == 2
    revise = g.calls[1].messages
    assert [m["role"] for m in revise] == ["user", "assistant", "user"] and "scored 2" in revise[-1]["content"]


def test_forms_that_never_pass_are_rejected_after_the_last_turn():
    runner, g, d = loop(lambda r: json.dumps(FORMS), lambda r: scores(3), max_turns=2)
    [outcome] = runner.run([(CHAIN, TABLE)])
    assert outcome.status == "rejected" and outcome.sample is None and len(outcome.turns) == 2
    assert len(g.calls) == 2 and len(d.calls) == 2


def test_junk_replies_end_as_flagged_records_after_one_retry():
    runner, g, _ = loop(lambda r: "I like tables!", lambda r: scores(5))
    [outcome] = runner.run([(CHAIN, TABLE)])
    assert outcome.status == "flagged" and "generator" in outcome.reason and len(g.calls) == 2
    assert outcome.turns[0]["generator"] == "I like tables!"
    runner, _, d = loop(lambda r: json.dumps(FORMS), lambda r: '{"long": {"plausibility": 9}}')
    [outcome] = runner.run([(CHAIN, TABLE)])
    assert outcome.status == "flagged" and "discriminator" in outcome.reason and len(d.calls) == 2


def test_a_batch_advances_turn_by_turn_and_each_sample_keeps_its_own_fate():
    other = Sample(task=CHAIN.task, question="Count rows where y > 2", answer=2, answer_type="number",
                   table_ids=("tbl-1",), program=CHAIN.program)

    def discriminator(request):
        return scores(2) if "Count" in request.messages[-1]["content"] else scores(5)

    def generator(request):
        first = request.messages[0]["content"]
        if "Count rows" in first:
            return json.dumps({"long": "Count the rows whose y is above 2, please.", "short": "Count y>2?"})
        return json.dumps(FORMS)

    runner, g, _ = loop(generator, discriminator, max_turns=2)
    kept, rejected = runner.run([(CHAIN, TABLE), (other, TABLE)])
    assert (kept.status, rejected.status) == ("kept", "rejected")
    assert len(g.calls) == 3  # turn 1: both; turn 2: only the one still failing
