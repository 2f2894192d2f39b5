"""TReB's three-model vote with a judge, row by row, and the judge's tolerance."""

from __future__ import annotations

import json

import pytest

from curate.validators.voting import HIGH, LOW, RuleJudge, frequency_judge_scores, quality_of, review_sampled, vote

judge = RuleJudge()


def test_all_three_agree_and_match_the_gold_keeps_it_as_high_quality():
    v = vote(42, ["42", "42.0", 42.00], judge.same)
    assert (v.answer, v.agreement, v.replaced, v.quality, v.needs_review) == (42, "3/3", False, HIGH, False)
    assert v.matches_gold == [True, True, True]


def test_all_three_agree_and_differ_from_the_gold_replaces_it_with_their_consensus():
    v = vote(41, ["42", "42", "42.0"], judge.same)
    assert (v.answer, v.agreement, v.replaced, v.quality, v.needs_review) == ("42", "3/3-replaced", True, HIGH, False)


def test_two_agree_and_match_the_gold_keeps_it_for_review():
    v = vote("Paris", ["paris", "Paris.", "Lyon"], judge.same)
    assert (v.answer, v.agreement, v.replaced, v.quality, v.needs_review) == ("Paris", "2/3", False, LOW, True)


def test_two_agree_against_the_gold_keeps_the_gold_for_review():
    v = vote("Paris", ["Lyon", "lyon", "Paris"], judge.same)
    assert (v.answer, v.agreement, v.replaced, v.quality) == ("Paris", "2/3-against-gold", False, LOW)


@pytest.mark.parametrize("answers", [["1", "2", "3"], ["1", "2", None], [None, None, "3"]])
def test_no_majority_or_missing_answers_keep_the_gold_for_review(answers):
    v = vote("1", answers, judge.same)
    assert v.answer == "1" and not v.replaced and v.quality == LOW and v.needs_review
    assert v.agreement == "none"


def test_two_agree_and_the_third_gave_nothing_is_still_two_thirds():
    v = vote(7, ["7", None, "7.0"], judge.same)
    assert v.agreement == "2/3" and v.matches_gold == [True, None, True]


def test_no_usable_answer_at_all():
    v = vote(7, [None, None, None], judge.same)
    assert v.agreement == "no-votes" and v.answer == 7 and v.needs_review


def test_a_judge_that_matches_the_gold_otherwise_than_the_candidates_match_each_other():
    """An LLM judge decides gold matches; when it splits a group the rule calls equal, a human decides."""
    v = vote("NYC", ["New York", "new york", "New York"], judge.same, matches_gold=lambda a: a == "New York")
    assert v.agreement == "3/3-split-judge" and v.answer == "NYC" and v.needs_review
    v = vote("NYC", ["New York", "new york", "NEW YORK"], judge.same, matches_gold=lambda a: True)
    assert v.agreement == "3/3" and v.answer == "NYC"


def test_the_vote_takes_exactly_three_candidates():
    with pytest.raises(ValueError, match="three"):
        vote(1, [1, 1], judge.same)


def test_the_judges_numeric_tolerance_aliases_and_unordered_lists():
    assert judge.same(0.947, "0.95")  # within 1% relative
    assert not judge.same(0.947, 0.96)
    assert RuleJudge(rel_tol=0.1).same(100, 109) and not RuleJudge(rel_tol=0.05).same(100, 109)
    assert judge.same("1,234", 1234) and judge.same("45%", 45) and judge.same("42.00", 42)
    assert judge.same("1.68e-07", 1.68e-07) and not judge.same("1.68e-07", 1.68)  # a tiny value as Python prints it
    assert judge.same(".5", 0.5) and not judge.same(".5", 5)
    assert judge.same(["b", "a", "c"], '["a", "b", "c"]') and not RuleJudge(ordered=True).same(["b", "a"], ["a", "b"])
    assert not judge.same(["a", "a"], ["a", "b"])  # a multiset, not a set
    assert judge.same("Yes", True) and judge.same("false", False) and not judge.same("yes", 1)
    assert RuleJudge(aliases=(("USA", "United States", "US"),)).same("united states", "USA")
    assert not judge.same("United States", "USA")


def test_a_nested_row_label_written_with_its_path_is_that_label():
    """Hierarchical tables are shown with nested rows as paths ("Asia / Japan"); a model that copies
    the shown label names the row the gold names, and every metric agrees."""
    from curate.evaluation.metrics import score

    assert judge.same("Asia / Japan", "Japan") and judge.same(["Asia / Japan", "Oslo"], ["oslo", "japan"])
    assert score("exact_match", "TOTAL / Men / 16 to 19 years", "16 to 19 years", {}).value == 1.0
    assert not judge.same("Japan / Asia", "Japan")  # the label is the path's last part, not any part
    assert not judge.same("Asia / Japan", "Europe / Japan")  # a reference with its own path must match it whole
    assert not judge.same("1/2", "2") and not judge.same("Asia/Japan", "Japan")  # only the written separator


@pytest.mark.parametrize("answer, gold", [(0.95, 0.9405), (0.9405, 0.95), (100.0, 101.0), (101.0, 100.0),
                                          (0.947, 0.95), (["a", 2.0], [1.99, "a"]), ("Yes", True), ("1", True)])
def test_the_vote_and_every_metric_ask_one_equivalence(answer, gold):
    """The vote's rule judge and numeric_match agree at the 1% boundary: the tolerance is relative to the gold."""
    from curate.evaluation.metrics import score

    assert judge.same(answer, gold) == (score("numeric_match", answer, gold, {"rel_tol": 0.01}).value == 1.0)
    assert judge.same(0.9405 * 1.01, 0.9405) and not judge.same(0.95, 0.9405)


def test_quality_is_high_for_rule_based_human_annotated_or_unanimous_only():
    assert quality_of("rule-based", None) == HIGH and quality_of("human-annotated", None) == HIGH
    assert quality_of("llm", vote(1, ["1", "1", "1"], judge.same)) == HIGH
    assert quality_of("llm", vote(1, ["1", "1", "2"], judge.same)) == LOW
    assert quality_of("llm", None) == LOW


def test_realhitbench_frequency_times_judge_score_picks_the_candidate_gold():
    ranked = frequency_judge_scores(["12", "12.0", "15"], [0.6, 0.8, 0.9], judge.same)
    assert ranked[0] == ("12", pytest.approx(2 * 0.7)) and ranked[1] == ("15", pytest.approx(0.9))


def test_review_sampling_is_by_content_hash_at_the_configured_rate():
    ids = [f"smp-{i}" for i in range(2000)]
    chosen = [i for i in ids if review_sampled(i, 0.25)]
    assert 400 <= len(chosen) <= 600
    assert chosen == [i for i in reversed(ids) if review_sampled(i, 0.25)][::-1]  # order does not matter
    assert all(review_sampled(i, 1.0) for i in ids) and not any(review_sampled(i, 0.0) for i in ids)


def test_final_answers_are_read_from_the_last_final_answer_line():
    from curate.validators.voting import extract_final_answer

    assert extract_final_answer("Let me see. 3+4=7.\nFinal Answer: 7") == "7"
    assert extract_final_answer("Final Answer: 3\nwait, no.\nFinal answer: **1,234**") == "1,234"
    assert extract_final_answer("Final Answer: Oslo, Bergen") == ["Oslo", "Bergen"]
    assert extract_final_answer("I do not know") is None and extract_final_answer("Final Answer:") is None


# ------------------------------------------------------------------ the LLM judge (scripted replies)

def _judge(reply):
    from curate.curation.llm.client import ChatClient
    from curate.curation.llm.backends.scripted import ScriptedBackend
    from curate.validators.voting import LLMJudge

    backend = ScriptedBackend(reply, "judge")
    return LLMJudge(ChatClient(backend), {"temperature": 0}), backend


def _sample(answer, question="Which city hosts the head office?"):
    from curate.curation.sample import Sample

    return Sample(task="NR/x", question=question, answer=answer, answer_type="text", table_ids=("t",), origin="llm")


def test_the_llm_judge_settles_only_free_text_the_rule_calls_different():
    from curate.validators.voting import decide_treb

    judge_llm, backend = _judge(lambda r: '{"match": true, "reason": "NYC is New York City"}'
                                if "candidate answer: new york" in r.messages[-1]["content"].lower() else '{"match": false, "reason": "no"}')
    samples = [_sample("NYC"), _sample(42, "How many?")]
    answers = [["New York City", "new york city", "New York City"], ["42.0", "41", None]]
    summary = {"judged_by_llm": 0}
    [text, number] = decide_treb(samples, answers, ["", ""], judge, judge_llm, summary)
    # three equal free-text candidates the rule calls different from "NYC": the judge says they match
    assert (text.agreement, text.answer, text.replaced) == ("3/3", "NYC", False)
    # numbers are the rule's alone: no request for them
    assert number.matches_gold == [True, False, None] and number.agreement == "none"
    assert summary["judged_by_llm"] == 1 and len(backend.calls) == 1  # one per sample and distinct answer
    assert "Reference answer: NYC" in backend.calls[0].messages[-1]["content"]


def test_an_unreadable_judge_reply_decides_nothing_and_the_rule_stands():
    from curate.validators.voting import decide_treb

    judge_llm, backend = _judge(lambda r: "I think so?")
    [v] = decide_treb([_sample("NYC")], [["New York", "New York", "New York"]], [""], judge, judge_llm,
                      {"judged_by_llm": 0})
    assert v.agreement == "3/3-replaced" and v.answer == "New York"  # the rule alone: unanimous against the gold
    assert len(backend.calls) == 2  # the reply, and one retry with the parse error
    assert "could not be read" in backend.calls[1].messages[-1]["content"]
    assert "I think so?" in v.votes[0]["judge"]


def test_realhitbench_variant_makes_the_best_scored_answer_the_candidate_gold_for_a_human_check():
    from curate.validators.voting import decide_realhitbench

    score = {"Oslo": 90, "Bergen": 40}
    judge_llm, backend = _judge(lambda r: json.dumps({"score": next(v for k, v in score.items()
                                                                    if f"Candidate answer: {k}" in r.messages[-1]["content"]),
                                                      "reason": "r"}))
    samples = [_sample("Trondheim"), _sample("Oslo")]
    answers = [["Oslo", "Bergen", "Bergen"], ["Bergen", None, None]]
    [first, second] = decide_realhitbench(samples, answers, ["| city |", "| city |"], judge, judge_llm,
                                          {"judged_by_llm": 0})
    # Bergen: 2 x 0.40 = 0.80 < Oslo: 1 x 0.90
    assert (first.answer, first.replaced, first.agreement, first.needs_review) == ("Oslo", True, "1/3-best", True)
    assert [v["score"] for v in first.votes] == [0.9, 0.4, 0.4] and first.quality == LOW
    assert (second.answer, second.agreement) == ("Bergen", "1/3-best")
    assert all("| city |" in c.messages[-1]["content"] for c in backend.calls)  # the judge sees the table


def test_the_vote_settings_name_what_is_missing():
    from curate.validators.voting import vote_settings

    three = [{"model": "a"}, {"model": "b"}, {"model": "c"}]
    with pytest.raises(ValueError, match="three candidate"):
        vote_settings({"candidates": three[:2]})
    with pytest.raises(ValueError, match=r"models\.judge"):
        vote_settings({"candidates": three, "method": "realhitbench"})
    with pytest.raises(ValueError, match="method must be one of treb, realhitbench"):
        vote_settings({"candidates": three, "method": "majority"})
    assert vote_settings({"candidates": three, "method": "realhitbench", "judge": {"model": "j"}})["method"] == "realhitbench"
