"""The audit's vote on golds without a program (validators/audit_vote.py, validators/answer_diff.py): candidates
compared with the gold under one answer equivalence that tells writing from value, ambiguous questions reported
as ambiguous, and a judge (rule always; an LLM's replies replayed, batch or live) for the disagreements."""

from __future__ import annotations

import json

import pytest

from tests.conftest import shared
from tests.test_cli import invoke
from curate.validators.answer_diff import Context, context_of, difference
from curate.validators.audit_vote import decide, vote_verdict


def test_a_difference_in_writing_is_told_apart_from_a_difference_in_value():
    unsigned = context_of(["series", "error (cents)"], [["three", 31.73], ["four", 4.47]])
    assert not unsigned.signed and "series" in unsigned.header_words
    signed = context_of(["change"], [["-3.5"]])
    assert signed.signed
    cases = [("1,062", "1062", "format", "thousands separator"), ("37.37%", "37.37", "format", "percent sign"),
             ("18.3", "18.33", "format", "rounding"), ("3209008", "3209008.86", "format", "rounding"),
             ("Singapore", "singapore", "format", "letter case"), ("e2-2000", "e2 - 2000", "format", "spacing"),
             ("Series Three", "three", "format", "column's name"), ("1982，Limerick", "1982, Limerick", "format",
                                                                   "list separator"),
             ("4.70", "4.7", "same", None), ("2", 2.0, "same", None), ("11", "12", "value", None),
             ("0.34", "0.35", "value", None), ("Santo Domingo，higher", "distrito nacional, 10013.87", "value", None),
             ("nicosia (cyp)", ["nicosia (cyp)", "3 - 0"], "items", None), ("-36.2", "36.2", "format", "sign")]
    for gold, answer, kind, why in cases:
        got, reasons = difference(gold, answer, unsigned)
        assert got == kind, (gold, answer, got, reasons)
        assert why is None or any(why in r for r in reasons), (gold, answer, reasons)
    assert difference("-36.2", "36.2", signed)[0] == "value"  # a table that writes signs: the sign is a value
    assert difference("Series Three", "three", Context())[0] == "value"  # "series" names no column here


def _c(name, answer, ambiguous=False, note=""):
    return {"name": name, "answer": answer, "ambiguous": ambiguous, "note": note}


def test_the_rule_judge_decides_only_a_unanimous_plain_vote_and_reports_ambiguous_questions_as_ambiguous():
    ctx = Context()
    q, task = "How many players scored more than 3 goals?", "TableBench/NumericalReasoning/Counting"
    assert decide(q, task, "5", [_c("a", "5"), _c("b", "5"), _c("c", "6")], ctx) is None
    wrong = decide(q, task, "9", [_c("a", "5"), _c("b", "5"), _c("c", "5")], ctx)
    assert wrong["kind"] == "wrong_value" and wrong["wrong_gold"] and "decided by rule" in wrong["detail"]
    for candidates, why in (([_c("a", "40"), _c("b", "14"), _c("c", "40")], "split"),
                            ([_c("a", "5", True, "two readings"), _c("b", "5"), _c("c", "5")], "ambiguous")):
        found = decide(q, task, "9", candidates, ctx)
        assert found["kind"] == "ambiguous" and not found["wrong_gold"] and why in found["detail"]
        assert "needs judge/review" in found["detail"]
    forecast = decide("What might be the forecasted life expectancy for 2010?", "TableBench/DataAnalysis/"
                      "TrendForecasting", "69.07", [_c(n, "70.81") for n in "abc"], ctx)
    assert forecast["kind"] == "ambiguous" and "forecast" in forecast["detail"]
    written = decide(q, task, "1,062", [_c(n, "1062") for n in "abc"], ctx)
    assert written["kind"] == "presentation" and not written["wrong_gold"]
    agreed = decide(q, task, "4", [_c(n, "4", True, "8 if every row counts") for n in "abc"], ctx)
    assert agreed["kind"] == "ambiguous" and not agreed["disagree"]  # they agree, but say it is ambiguous
    items = decide(q, task, "nicosia (cyp)", [_c(n, ["nicosia (cyp)", "3 - 0"]) for n in "abc"], ctx)
    assert items["kind"] == "missing_or_extra_items"


def test_a_judge_reply_is_read_as_a_verdict_or_as_nothing():
    assert vote_verdict('{"verdict": "gold_wrong", "answer": "5", "rows": [3, "4"], "reason": "r"}') == {
        "verdict": "gold_wrong", "answer": "5", "rows": [3, 4], "reason": "r"}
    assert vote_verdict("```json\n{\"verdict\": \"Ambiguous\", \"reason\": \"two readings\"}\n```")["verdict"] == \
        "ambiguous"
    assert vote_verdict("I think gold_right.")["verdict"] == "gold_right"
    assert vote_verdict('{"verdict": "maybe"}') is None and vote_verdict("") is None


# Six of TableBench's original-release questions (the design half of the md5 split), answered by three
# HAND-WRITTEN candidates (replayed text answers, one PoT program): they test the plumbing, not a model.
ISMB, SERIES, SPLIT = "7341c70da411447ef71639df09d1b994", "8e90a54d425a61c7bb3cc66e5698edbf", "65aadc9add4b1a42f5b5071d6a16cfd6"
FORECAST, COMPARE, MOUNTAINS = "c7d3b4bc8a57ba77136b864b42e00c90", "a391095376b9b00a461c12b58b5cf94b", \
    "2a01a6240ddabb477a15919fcca82afb"
ANSWERS = {ISMB: ["70.63"] * 3, SERIES: ["three"] * 3, SPLIT: ["40", "14", "40"], FORECAST: ["70.81, 79.97"] * 3,
           COMPARE: ["e2 - 2000, 202.5"] * 3,
           MOUNTAINS: ["aoraki / mount cook, mount aspiring / tititea, mount tapuaenuku"] * 3}
AMBIGUOUS = {SPLIT: "three side-by-side blocks", COMPARE: "comparison form unspecified"}
ISMB_PROGRAM = ("import pandas as pd\ndf = pd.read_csv('table.csv')\nismb = df[df['type'].str.startswith('ismb')]\n"
                "print(f\"Final Answer: {round(ismb['weight (kg / m)'].mean(), 2)}\")")


@pytest.mark.integration
def test_the_vote_with_a_judge_on_tablebench_golds(tmp_path):
    from curate.importers import write_import

    source = shared("tablebench", "original_release", "TableBench_original_subset.jsonl")
    subset = tmp_path / "tb.jsonl"
    subset.write_text("".join(x + "\n" for x in source.read_text().splitlines() if json.loads(x)["id"] in ANSWERS))
    write_import("tablebench", [str(subset)], name="tb", releases=tmp_path / "releases")
    release = tmp_path / "releases" / "tb" / "1.0.0"
    files = []
    for n, name in enumerate(("hand-a", "hand-b", "hand-c")):
        path = tmp_path / f"{name}.jsonl"
        lines = []
        for sid, answers in ANSWERS.items():
            line = {"source_id": sid, "mode": "tcot", "reply": f"Final Answer: {answers[n]}",
                    "ambiguous": sid in AMBIGUOUS, "note": AMBIGUOUS.get(sid, "")}
            if sid == ISMB and n == 0:
                line.update(mode="pot", reply=f"```python\n{ISMB_PROGRAM}\n```")
            lines.append(json.dumps(line) + "\n")
        path.write_text("".join(lines))
        files += ["--candidates", path]
    prompts = tmp_path / "judge-prompts.jsonl"
    out = invoke("audit", release, *files, "--isolation", "none", "--json", "--judge-prompts", prompts)
    findings = {f["source_id"]: f for f in json.loads(out.output)}
    # without a judge's reply: the rule decides the unanimous vote; the rest is ambiguous and needs the judge
    assert {s for s, f in findings.items() if f["wrong_gold"]} == {ISMB}
    assert findings[ISMB]["kind"] == "wrong_value" and "decided by rule" in findings[ISMB]["detail"]
    assert findings[SERIES]["kind"] == findings[MOUNTAINS]["kind"] == "presentation"  # format only: never wrong
    assert {findings[s]["kind"] for s in (SPLIT, FORECAST, COMPARE)} == {"ambiguous"}
    assert all("needs judge/review" in findings[s]["detail"] for s in (SPLIT, FORECAST, COMPARE))
    asked = {json.loads(x)["custom_id"]: json.loads(x) for x in prompts.read_text().splitlines()}
    assert set(asked) == {f"vote:{findings[s]['sample_id']}" for s in (ISMB, SPLIT, FORECAST, COMPARE)}
    ismb_prompt = asked[f"vote:{findings[ISMB]['sample_id']}"]["prompt"]
    assert "ismb 750 173" in ismb_prompt and "str.startswith('ismb')" in ismb_prompt and "Gold answer: 13.14" in ismb_prompt

    # the judge's replies, made elsewhere (HAND-WRITTEN here): replay lines and one batch output line
    replies = tmp_path / "hand-judge.jsonl"
    verdicts = {ISMB: {"verdict": "gold_wrong", "answer": "70.63", "rows": [1, 7], "reason": "mean of 7 ismb rows"},
                SPLIT: {"verdict": "ambiguous", "rows": [], "reason": "which Number column"},
                FORECAST: {"verdict": "gold_right", "rows": [], "reason": "another method gives the gold"}}
    text = "".join(json.dumps({"source_id": s, "reply": json.dumps(v)}) + "\n" for s, v in verdicts.items())
    compare = {"verdict": "gold_wrong", "answer": "e2 - 2000, higher", "rows": [], "reason": "spacing only"}
    text += json.dumps({"custom_id": f"vote:{findings[COMPARE]['sample_id']}", "response": {"status_code": 200, "body": {
        "choices": [{"message": {"role": "assistant", "content": json.dumps(compare)}}]}}}) + "\n"
    replies.write_text(text)
    out = invoke("audit", release, *files, "--isolation", "none", "--json", "--judge-replies", replies,
                 "--out", tmp_path / "errata")
    judged = {f["source_id"]: f for f in json.loads(out.output)}
    ismb = judged[ISMB]
    assert ismb["wrong_gold"] and ismb["confidence"] == 0.9 and ismb["judge"]["verdict"] == "gold_wrong"
    assert ismb["proposed"] == "70.63" and "hand-judge" in ismb["engines"]
    assert judged[SPLIT]["kind"] == "ambiguous" and judged[SPLIT]["judge"]["reason"] == "which Number column"
    assert FORECAST not in judged  # upheld: no finding
    assert judged[COMPARE]["kind"] == "presentation" and not judged[COMPARE]["wrong_gold"]  # the judge's answer is
    # the gold written differently: one equivalence decides, not the judge's word
    md = (tmp_path / "errata" / "audit.md").read_text()
    for shown in ("ismb 750 173", "str.startswith('ismb')", "hand-b", "mean of 7 ismb rows", "rows the judge used",
                  "gold upheld", "another method gives the gold"):
        assert shown in md, shown
