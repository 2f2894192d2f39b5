"""TReB's three-model vote with a judge, row by row, and the judge's tolerance."""

from __future__ import annotations

import pytest

from validators.voting import HIGH, LOW, RuleJudge, frequency_judge_scores, quality_of, review_sampled, vote

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
    assert judge.same(["b", "a", "c"], '["a", "b", "c"]') and not RuleJudge(ordered=True).same(["b", "a"], ["a", "b"])
    assert not judge.same(["a", "a"], ["a", "b"])  # a multiset, not a set
    assert judge.same("Yes", True) and judge.same("false", False) and not judge.same("yes", 1)
    assert RuleJudge(aliases=(("USA", "United States", "US"),)).same("united states", "USA")
    assert not judge.same("United States", "USA")


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
    from validators.voting import extract_final_answer

    assert extract_final_answer("Let me see. 3+4=7.\nFinal Answer: 7") == "7"
    assert extract_final_answer("Final Answer: 3\nwait, no.\nFinal answer: **1,234**") == "1,234"
    assert extract_final_answer("Final Answer: Oslo, Bergen") == ["Oslo", "Bergen"]
    assert extract_final_answer("I do not know") is None and extract_final_answer("Final Answer:") is None
