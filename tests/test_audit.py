"""`curate audit`: wrong gold answers found by re-deriving them, with evidence (curate/validators/audit.py)."""

from __future__ import annotations

import json

import pyarrow as pa
import pytest

from tests.conftest import shared
from tests.test_cli import invoke
from curate.validators.audit import check_sql, compare, gold_readings

# The 21 MMQA samples of ../shared/data/mmqa/, labelled by hand from their tables (each question solved
# without the SQL): is the published gold right for the question, and if not, what kind of problem?
#   0  wrong_value: the acting-managed department with most employees is Homeland Security (208000), not
#      Treasury (115897); the SQL is wrong too (it sums Treasury twice over its two acting heads: 231794)
#   1  right (Treasury, 11.1); the SQL repeats Treasury (two acting heads): presentation
#   2  wrong_value: the Californian acting heads are 52 and 69 years old: 60.5, not 63.0
#   3  wrong_value: Homeland Security's budget (44.6) is above Treasury's (11.1)
#   4  right; the SQL repeats Aroostook (two competitions): presentation
#   7  missing_or_extra_items: Drummond hosted in 2004, not after 2005
#   9, 11  right (Aroostook), but the SQL filters on the year, never on the theme 'MTV Cube' the question names
#   every other gold is right for its question.
MMQA_WRONG = {0: "wrong_value", 2: "wrong_value", 3: "wrong_value", 7: "missing_or_extra_items"}
MMQA_NOTES = {1: "presentation", 4: "presentation", 9: "question_sql_disagree", 11: "question_sql_disagree"}


def _body(**columns):
    return pa.table(columns)


def test_result_sets_compare_by_shape_not_by_writing():
    sql = "SELECT first, last FROM p"
    rows = [("Michael", "Leighton")]
    assert compare("Michael Leighton", rows, ["first", "last"], sql, "Who?")[0] == "presentation"
    assert compare("Leighton", rows, ["first", "last"], sql, "Who?")[0] == "presentation"  # a subset of columns
    assert compare("Michael, Leighton", rows, ["first", "last"], sql, "Who?")[0] is None
    # prose parsed into values: the label that names a selected column is dropped
    assert compare("Gender 1: 5", [(1, 5)], ["Gender", "count"], "SELECT Gender, COUNT(*) ...", "How many?")[0] is None
    assert compare("Gender 1: 6", [(1, 5)], ["Gender", "count"], "SELECT Gender, COUNT(*) ...", "How many?")[0] \
        == "wrong_value"
    table = json.dumps({"columns": ["name", "n"], "index": [0, 1], "data": [["a", 2], ["b", 3]]})
    assert compare(table, [("b", 3.0), ("a", 2)], ["name", "n"], "SELECT name, n FROM t", "Which?")[0] is None
    assert compare("33.3", [(33.3333,)], ["x"], "SELECT AVG(x)", "Mean?")[0] is None  # within the gold's rounding
    assert compare("33.4", [(33.3333,)], ["x"], "SELECT AVG(x)", "Mean?")[0] == "wrong_value"
    # order counts only when the SQL orders and the question asks for an order
    ordered = "SELECT n FROM t ORDER BY n"
    assert compare("b, a", [("a",), ("b",)], ["n"], ordered, "Which names?")[0] is None
    assert compare("b, a", [("a",), ("b",)], ["n"], ordered, "List the names in alphabetical order.")[0] == "wrong_value"
    # duplicates: per DISTINCT
    assert compare("a", [("a",), ("a",)], ["n"], "SELECT n FROM t", "Which?")[0] == "presentation"
    assert compare("a, b, c", [("a",), ("b",)], ["n"], "SELECT n FROM t", "Which?")[0] == "missing_or_extra_items"
    assert gold_readings("Grand Falls/Grand-Sault, Perth-Andover", [])[0] == ["Grand Falls/Grand-Sault", "Perth-Andover"]


def test_sqlite_first_with_types_from_the_data_and_ties_are_ambiguous():
    bodies = {"c": _body(id=["301", "302"], name=["stats", "english"]),
              "r": _body(sid=[1, 2, 3], cid=[301, 301, 302], club=["FJA Filming", "x", "y"])}
    # text '301' against the integer 301, and a double-quoted string: SQLite's reading, not DuckDB's
    r = check_sql("Which course has students in 'FJA Filming'?",
                  'SELECT name FROM c WHERE id IN (SELECT cid FROM r WHERE club = "FJA Filming")', "stats", bodies)
    assert r["kind"] is None and r["recomputed"] == [["stats"]] and "sqlite" in r["engines"]
    tie = check_sql("Which course has the fewest students?", "SELECT cid FROM r GROUP BY cid ORDER BY COUNT(*) DESC "
                    "LIMIT 1", "301", bodies)
    assert tie["kind"] is None  # 301 has two, 302 one: no tie
    bodies["r"] = _body(sid=[1, 2], cid=[301, 302], club=["a", "b"])
    tie = check_sql("Which course has the most students?", "SELECT cid, COUNT(*) AS n FROM r GROUP BY cid "
                    "ORDER BY n DESC LIMIT 1", "302, 1", bodies)
    assert tie["kind"] == "ambiguous" and not tie["wrong_gold"]
    # where the gold is the SQL's result: only failing, empty and tied SQL
    assert check_sql("q", "SELECT nope FROM r", None, bodies, gold_is_result=True)["kind"] == "sql_fails"
    assert check_sql("q", "SELECT cid FROM r WHERE sid > 9", None, bodies, gold_is_result=True)["kind"] == "sql_fails"
    assert check_sql("q", "SELECT cid FROM r ORDER BY sid LIMIT 1", None, bodies, gold_is_result=True)["kind"] is None


def test_the_filtered_rule_answers_only_what_the_question_fully_says():
    from curate.validators.audit import filtered_rule

    body = _body(company=["a", "b", "c", "d"], industry=["oil and gas", "oil and gas", "banking", "oil and gas"],
                 **{"sales (billion )": [350.0, 120.0, 400.0, 300.0], "market value (billion )": [10.0, 20.0, 30.0, 40.0],
                    "months": ["August, September", "September", "October", "August"]})
    rule, value = filtered_rule("What is the average market value of companies in the oil and gas industry that have "
                                "sales of at least 300 billion?", body)
    assert value == 25.0 and "sales (billion ) >= 300" in rule  # rows a and d
    assert filtered_rule("How many companies have sales greater than 300?", body)[1] == 2
    assert filtered_rule("How many companies are in the banking industry?", body)[1] == 1
    assert filtered_rule("How many companies were active in September?", body) is None  # 'active': not said by the table
    assert filtered_rule("How many companies have sales greater than 300 and grew fastest?", body) is None
    assert filtered_rule("How many companies are listed?", body) is None  # every row: no rule needed
    # a cell that lists several values holds each of them
    assert filtered_rule("How many companies occurred in the month of September?", body)[1] == 2
    # rows that sum up others are no cases, and distinct things are not rows (RealHiTBench's cost sheet)
    from curate.validators.audit import rule_answers

    costs = _body(item=["a", "b", "b", "Redemption- New Total", "Total"], Cost=[150.0, 200.0, 200.0, 550.0, 550.0])
    assert rule_answers("How many items have a Cost greater than 100?", costs)[0][1] == 3
    assert rule_answers("How many distinct items have a Cost greater than 100?", costs) == []


@pytest.mark.integration
def test_audit_of_imported_mmqa_finds_the_labelled_wrong_golds_with_their_kinds(tmp_path):
    from curate.importers import write_import

    write_import("mmqa", [str(shared("mmqa", "mmqa_samples.json"))], name="mmqa", releases=tmp_path / "releases")
    out = invoke("audit", tmp_path / "releases" / "mmqa" / "1.0.0", "--json", "--out", tmp_path / "errata")
    assert out.exit_code == 1  # wrong golds found
    findings = json.loads(out.output)
    flagged = {int(f["source_id"]): f["kind"] for f in findings if f["wrong_gold"]}
    # precision and recall of wrong_gold on the hand labels: 4 of 4 flagged, nothing else (1.0 / 1.0)
    assert flagged == MMQA_WRONG
    assert {int(f["source_id"]): f["kind"] for f in findings if not f["wrong_gold"]} == MMQA_NOTES
    for f in findings:
        assert {"sample_id", "source_id", "kind", "gold", "recomputed", "confidence", "wrong_gold", "engines"} <= f.keys()
    report = json.loads((tmp_path / "errata" / "audit.json").read_text())
    assert report["counts"]["wrong_value"] == 3 and report["wrong_gold"] == 4
    md = (tmp_path / "errata" / "audit.md").read_text()
    assert "| 5 | Aroostook | Village |" in md  # the table excerpt behind a finding
    assert "<table>" in (tmp_path / "errata" / "audit.html").read_text()


@pytest.mark.integration
def test_audit_of_spider_flags_failing_empty_and_tied_gold_sql(tmp_path):
    from curate.importers import write_import

    write_import("spider", [str(shared("spider", "dev_questions.json"))], name="spider", releases=tmp_path / "releases")
    out = invoke("audit", tmp_path / "releases" / "spider" / "1.0.0", "--json")
    findings = json.loads(out.output)
    kinds = {}
    for f in findings:
        kinds.setdefault(f["kind"], set()).add(f["source_id"])
    # 21 gold queries fail in SQLite (MachineSpider translated "age" to "alter", an SQL keyword);
    # 8 return nothing (stadiums of 5000-10000 seats, cats-and-dogs owners, lower-case 'english'/'t'...);
    # 16 keep one of rows tied on ORDER BY ... LIMIT (population 0, text 'null' horsepower, 2014 and 2015
    # with three concerts each, four countries with 12 languages), and 2 name the language beside
    # MAX(percentage) per country where two languages tie (CCK, COK, ... at 0.0): each checked by hand
    assert len(kinds["sql_fails"]) == 29
    assert kinds["ambiguous"] == {f"dev_questions:{n}" for n in (26, 27, 95, 96, 133, 134, 159, 160, 165, 166, 217,
                                                                  218, 265, 266, 281, 282, 293, 294)}
    assert all(f["wrong_gold"] for f in findings)


# Golds without a program (TableBench): candidate PoT programs from a replayed file of outputs. No
# capable model runs here, so these candidates are HAND-WRITTEN (two styles, "hand-a" and "hand-b"),
# for two questions only, to test the plumbing (each program starts a sandbox worker: about a second
# each here): a gold the authors corrected as wrong (kind value), and one they only re-wrote (format:
# "7,562,936"), which must not be flagged. They are not model outputs.
HAND_WRITTEN = {
    "7341c70da411447ef71639df09d1b994": (  # average weight of the ismb beams: 13.14 published, 70.63 corrected
        "print('Final Answer:', round(df[df['type'].str.startswith('ismb')]['weight (kg / m)'].mean(), 2))",
        "w = [r['weight (kg / m)'] for _, r in df.iterrows() if 'ismb' in r['type']]\n"
        "print('Final Answer: %.2f' % (sum(w) / len(w)))"),
    "eb0fb4b94b11893ab0deabdb1ea670e5": (  # top 5 albums' sales: right, only written "7,562,936"
        "print('Final Answer:', df.sort_values('position').head(5)['sales'].sum())",
        "print('Final Answer:', sum(df[df['position'] <= 5]['sales']))"),
}


@pytest.mark.integration
def test_golds_without_a_program_are_voted_against_replayed_candidate_programs(tmp_path):
    from curate.importers import write_import

    source = shared("tablebench", "original_release", "TableBench_original_subset.jsonl")
    subset = tmp_path / "subset.jsonl"  # the questions with candidates, and as many without (quick)
    lines = source.read_text().splitlines()
    subset.write_text("\n".join([x for x in lines if json.loads(x)["id"] in HAND_WRITTEN] + lines[:4]) + "\n")
    write_import("tablebench", [str(subset)], name="tb", releases=tmp_path / "releases")
    files = []
    for n, style in enumerate(("hand-a", "hand-b")):
        path = tmp_path / f"{style}.jsonl"
        path.write_text("".join(json.dumps({"source_id": sid, "reply": f"```python\n{programs[n]}\n```"}) + "\n"
                                for sid, programs in HAND_WRITTEN.items()))
        files += ["--candidates", path]
    out = invoke("audit", tmp_path / "releases" / "tb" / "1.0.0", *files, "--json", "--isolation", "none")
    findings = json.loads(out.output)
    corrections = {c["id"]: c for c in json.loads(shared("tablebench", "original_release", "corrections.json")
                                                   .read_text())}
    flagged = {f["source_id"]: f for f in findings if f["wrong_gold"]}
    assert set(flagged) == {"7341c70da411447ef71639df09d1b994"}
    # "7,562,936" against the candidates' 7562936: the gold written differently (the authors' `format` correction)
    (written,) = [f for f in findings if not f["wrong_gold"]]
    assert written["kind"] == "presentation" and "thousands separator" in written["detail"]
    assert corrections[written["source_id"]]["kind"] == "format"
    assert all(corrections[s]["kind"] == "value" for s in flagged)  # 1/1 with hand-written candidates
    ismb = flagged["7341c70da411447ef71639df09d1b994"]
    assert ismb["kind"] == "wrong_value" and ismb["wrong_gold"] and ismb["recomputed"] in (70.63, "70.63")
    # the two candidates and the filtered rule (the ismb rows' mean weight) agree
    assert ismb["engines"][:2] == ["hand-a", "hand-b"] and "ismb" in ismb["programs"][0]
    assert ismb["engines"][2:] == ["mean(weight (kg / m) where values named)"]


@pytest.mark.integration
def test_real_model_replies_as_candidates_find_the_golds_tablebench_corrected(tmp_path):
    """o3-mini's published DP replies (a real model's outputs, ../shared/data/tablebench/eval_examples)
    cover 10 of the 98 original-release questions; 3 of those golds the authors corrected (2 value, 1 items).
    One candidate only, so --min-votes 1: every flag is o3-mini disagreeing with the gold."""
    from curate.importers import write_import

    original = shared("tablebench", "original_release", "TableBench_original_subset.jsonl")
    o3 = [json.loads(x) for x in shared("tablebench", "eval_examples", "o3-mini_DP_inference.jsonl").read_text()
          .splitlines()]
    lines = [x for x in original.read_text().splitlines() if json.loads(x)["id"] in {r["id"] for r in o3}]
    assert len(lines) == 10
    (tmp_path / "tb.jsonl").write_text("\n".join(lines) + "\n")
    write_import("tablebench", [str(tmp_path / "tb.jsonl")], name="tb", releases=tmp_path / "releases")
    ids = {json.loads(x)["id"] for x in lines}
    replies = tmp_path / "o3-mini.jsonl"
    replies.write_text("".join(json.dumps({"source_id": r["id"], "mode": "tcot", "reply": r["prediction"]}) + "\n"
                               for r in o3 if r["id"] in ids))
    out = invoke("audit", tmp_path / "releases" / "tb" / "1.0.0", "--candidates", replies, "--min-votes", "1", "--json")
    corrections = {c["id"]: c for c in json.loads(shared("tablebench", "original_release", "corrections.json")
                                                   .read_text())}
    wrong = {i for i in ids if corrections.get(i, {}).get("kind") in ("value", "items")}
    flagged = {f["source_id"]: f["kind"] for f in json.loads(out.output) if f["wrong_gold"]}
    assert set(flagged) == wrong and len(wrong) == 3  # precision 3/3, recall 3/3 (on 10 questions)
    (items,) = [i for i in wrong if corrections[i]["kind"] == "items"]  # "nicosia (cyp)" without the score
    assert flagged[items] == "missing_or_extra_items"


@pytest.mark.integration
def test_without_a_model_the_rules_flag_only_golds_tablebench_corrected_and_answer_as_its_authors_did(tmp_path):
    """The part that needs no model, on all 98 original-release questions. The rules (the filtered rule
    included) were tuned on the odd-md5 half only (benchmarks/audit_tablebench_holdout.py): they answer 12
    questions and flag 5, every one a gold the authors corrected (kind `value`), with the authors' corrected
    answer as the recomputed one; on the held-back even half they answer 3 and flag none (recall 0 of 6).
    On the 149 cleaned questions (TableBench_DP_subset.jsonl) they flag nothing."""
    import hashlib

    from curate.importers import write_import
    from curate.validators.audit import audit_release

    source = shared("tablebench", "original_release", "TableBench_original_subset.jsonl")
    write_import("tablebench", [str(source)], name="tb", releases=tmp_path / "releases")
    report = audit_release(str(tmp_path / "releases" / "tb" / "1.0.0"))
    corrections = {c["id"]: c for c in json.loads(shared("tablebench", "original_release", "corrections.json")
                                                   .read_text())}
    assert report["checked"] == 12
    flagged = {f["source_id"]: f for f in report["findings"]}
    assert len(flagged) == 5 and all(f["wrong_gold"] and f["confidence"] == 0.6 for f in flagged.values())
    assert all(corrections.get(s, {}).get("kind") == "value" for s in flagged)  # precision 1.0
    assert all(int(hashlib.md5(s.encode()).hexdigest(), 16) % 2 == 1 for s in flagged)  # all from the tuning half
    for s, f in flagged.items():  # the rule recomputes what the authors corrected the gold to
        assert float(str(f["recomputed"])) == float(corrections[s]["cleaned_answer"].replace(",", "")), s

    cleaned = shared("tablebench", "TableBench_DP_subset.jsonl")
    write_import("tablebench", [str(cleaned)], name="tbc", releases=tmp_path / "releases")
    report = audit_release(str(tmp_path / "releases" / "tbc" / "1.0.0"))
    assert report["checked"] == 12 and report["findings"] == []


@pytest.mark.integration
def test_every_spider_gold_query_whose_result_a_row_order_changes_is_flagged_ambiguous():
    """Recall of the tie flags against an oracle that shares neither detector: each gold SQL run over the
    tables with their rows stored in 8 random orders (benchmarks/audit_spider_ties.py). 14 queries change
    with the order, all 14 flagged; the 4 flags the oracle cannot see are groups tied under ORDER BY
    COUNT(*) LIMIT 1, which SQLite orders by the group key whatever the rows' order (2014 and 2015 with
    three concerts each; checked by hand)."""
    from benchmarks.audit_spider_ties import measure

    result = measure(8, shared("spider"))
    assert result["oracle_tie_dependent"] == 14 and result["missed"] == []
    assert result["flagged_not_in_oracle"] == [f"dev_questions:{n}" for n in (217, 218, 26, 27)]


@pytest.mark.integration
def test_the_question_sql_judge_replayed_and_live(tmp_path):
    """The optional question/SQL consistency check: prompts written out, replies made elsewhere read back
    (HAND-WRITTEN replies here, not a model's: they test the plumbing), and the same through the LLM layer
    with a scripted backend. An inconsistent pair is a question_sql_disagree finding that needs a person."""
    from curate.curation.llm.client import ChatClient
    from curate.curation.llm.backends.scripted import ScriptedBackend
    from curate.importers import write_import
    from curate.validators.audit import apply_judge, audit_release, judge_live, judge_requests, judge_verdict

    write_import("mmqa", [str(shared("mmqa", "mmqa_samples.json"))], name="mmqa", releases=tmp_path / "releases")
    release = tmp_path / "releases" / "mmqa" / "1.0.0"
    prompts = tmp_path / "prompts.jsonl"
    replies = tmp_path / "hand-judge.jsonl"
    lines = {"5": '{"consistent": false, "reason": "the SQL never filters on the year"}',
             "2": "Verdict: inconsistent. The SQL averages all acting heads.", "6": "no idea", "9": "{}"}
    replies.write_text("".join(json.dumps({"source_id": k, "reply": v}) + "\n" for k, v in lines.items())
                       + json.dumps({"source_id": "1", "reply": '{"consistent": true, "reason": ""}'}) + "\n")
    out = invoke("audit", release, "--json", "--judge-prompts", prompts, "--judge-replies", replies)
    written = [json.loads(x) for x in prompts.read_text().splitlines()]
    assert len(written) == 21 and all("SQL:" in w["prompt"] and "Question:" in w["prompt"] for w in written)
    findings = {f["source_id"]: f for f in json.loads(out.output)}
    new = findings["5"]
    assert new["kind"] == "question_sql_disagree" and not new["wrong_gold"] and new["needs_review"]
    assert new["engines"] == ["hand-judge"] and "never filters on the year" in new["detail"]
    assert findings["2"]["kind"] == "wrong_value" and "hand-judge" in findings["2"]["engines"]
    assert "6" not in findings  # a reply that says neither is no verdict
    assert findings["1"]["kind"] == "presentation" and "hand-judge" not in findings["1"]["engines"]  # consistent
    assert findings["9"]["engines"] == ["sqlite", "duckdb"]  # '{}' says nothing: the audit's own finding stays
    assert judge_verdict("no idea") is None and judge_verdict('{"consistent": true}')["consistent"] is True

    requests = judge_requests(str(release))
    theme = '{"consistent": false, "reason": "the SQL never filters on the theme"}'
    client = ChatClient(ScriptedBackend(lambda r: theme if "Question:" in r.messages[0]["content"] and "MTV Cube"
                                        in r.messages[0]["content"].split("Question:")[1] else
                                        '{"consistent": true, "reason": ""}'))
    live = judge_live(requests, client)
    assert len(live) == 21
    report = apply_judge(audit_release(str(release)), requests, live, "scripted")
    assert report["judge"] == {"model": "scripted", "judged": 21, "inconsistent": 2}
    judged = {f["source_id"]: f for f in report["findings"] if "scripted" in f["engines"]}
    assert set(judged) == {"9", "11"} and all("theme" in f["detail"] for f in judged.values())

    import socket  # a judge server that does not answer is an error, not a silent "nothing judged"

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    out = invoke("audit", release, "-w", tmp_path / "ws", "--judge-model", "m", "--judge-base-url",
                 f"http://127.0.0.1:{port}/v1", "--judge-settings", '{"retries": 0, "timeout": 2}')
    assert out.exit_code == 1 and "the first request got no reply, so the other 20 were not sent" in out.output
