"""The audit's vote on golds without a program: candidate programs (several models, or several samples of one)
against the gold, under one answer equivalence (`validators.answer_diff`), and a judge for what the vote
cannot settle.

For each sample, the candidates are grouped by answer (a difference only in writing is the same answer). Then:

- the largest group holds the gold's answer: fine; a `presentation` finding where the gold is written
  differently ("1,062", "Series Three"), an `ambiguous` one where most candidates say the question has no single
  answer (the gold may be one reading of several: the judge is asked whether it is the natural one);
- otherwise the vote disagrees with the gold, and a judge decides. The rule judge decides only what a rule can:
  all candidates agree on another answer, none says the question is ambiguous, and it is no forecast (whose
  answer depends on a method the question does not name): TReB's table, the gold is wrong. A split vote, a
  candidate that calls the question ambiguous, or a forecast is `ambiguous` and "needs judge/review".
- a forecast whose gold is within `FORECAST_TOLERANCE` of the largest group's forecast is the same forecast by
  another method: `ambiguous`, never a wrong gold, and the judge is not asked.
- an LLM judge (prompt: `prompts/audit_judge.toml`, `[vote_judge]`) sees the table, the question, the gold and
  each candidate's program, answer and note, and decides every disagreement: `gold_wrong` (its answer, compared
  with the gold by the same equivalence: a difference only in writing stays `presentation`), `ambiguous`, or
  `gold_right` (no finding; listed in the report's judge section). Its `gold_wrong` makes a wrong gold only
  where the rule's threshold holds too (`against_gold`: every candidate on one answer against the gold);
  otherwise the finding is `ambiguous`, with the judge's reason. Replies come live, replayed from a file, or
  from batch output lines (`curate audit --judge-prompts`, then `--judge-replies`).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

FORECAST = re.compile(r"\b(forecast\w*|predict\w*|project(?:ed|ion|ions)?|extrapolat\w*)\b", re.I)
# a forecast's answer depends on a method the question does not name: a gold within 5% of the candidates'
# forecast, number by number, is the same forecast by another method (a linear trend one period off, an average
# change instead of a fitted line), never a wrong gold
FORECAST_TOLERANCE = 0.05
VERDICTS = ("gold_right", "gold_wrong", "ambiguous")
_NEEDS = "needs judge/review"


def replay_remarks(path: str) -> dict[str, dict[str, Any]]:
    """What each line of a replay file says beside its program: {source_id or sample_id: {ambiguous, note}}
    (the writer of the candidate marking the question ambiguous, and why)."""
    out: dict[str, dict[str, Any]] = {}
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue  # replayed_answers reports a broken line; a remark is optional
        remark = {"ambiguous": bool(record.get("ambiguous")), "note": str(record.get("note") or "")[:500]}
        for key in ("sample_id", "source_id"):
            if record.get(key):
                out[str(record[key])] = remark
    return out


def is_forecast(question: str, task: str) -> bool:
    return bool(FORECAST.search(question)) or "forecast" in task.lower()


def models(voters: list[dict[str, Any]]) -> list[Any]:
    """The answers of the candidates a model wrote: the general rules' answers (program "rule ...") are
    evidence shown beside them, not votes of the threshold (a crude rule that misreads a table must not veto)."""
    return [v["answer"] for v in voters if not str(v.get("program", "")).startswith("rule ")]


def against_gold(gold: Any, answers: list[Any], ctx: Any, min_votes: int = 2) -> bool:
    """The one threshold for a wrong gold: at least `min_votes` candidates (`models`), every one giving one
    answer, and that answer differing from the gold in value or items (not only in writing). A split vote, or a
    vote that holds the gold's answer, never makes a gold wrong, whatever a judge says: it is reported as
    ambiguous."""
    from curate.validators.answer_diff import FORMAT, SAME, difference, same_answer

    return (len(answers) >= max(min_votes, 1) and all(same_answer(a, answers[0], ctx) for a in answers[1:])
            and difference(gold, answers[0], ctx)[0] not in (SAME, FORMAT))


def decide(question: str, task: str, gold: Any, candidates: list[dict[str, Any]], ctx: Any,
           min_votes: int = 2) -> dict[str, Any] | None:
    """The rule judge's decision for one sample: None when the candidates hold the gold's answer (and say
    nothing against the question), else {kind, wrong_gold, disagree, group, detail, reasons} (and `ask`: the
    judge is asked although the vote holds the gold's answer). `candidates`:
    [{name, answer, ambiguous, note}] with usable answers."""
    from curate.validators.answer_diff import FORMAT, ITEMS, SAME, close, difference, same_answer

    if not candidates:
        return None
    groups: list[list[dict[str, Any]]] = []
    for c in candidates:
        for g in groups:
            if same_answer(c["answer"], g[0]["answer"], ctx):
                g.append(c)
                break
        else:
            groups.append([c])
    largest = max(groups, key=len)
    kind, reasons = difference(gold, largest[0]["answer"], ctx)
    marked = [c for c in candidates if c.get("ambiguous")]
    n = len(candidates)
    names = ", ".join(c["name"] for c in largest)
    if kind in (SAME, FORMAT) and 2 * len(largest) > n:
        if 2 * len(marked) > n:  # the judge settles it: one reading (gold right) or several (ambiguous)
            return {"kind": "ambiguous", "wrong_gold": False, "disagree": False, "ask": True, "group": largest,
                    "reasons": reasons,
                    "detail": f"{len(largest)} of {n} candidates give the gold's answer, but {len(marked)} of {n} say "
                              f"the question is ambiguous: the gold may be one reading of several; {_NEEDS}"}
        if kind == FORMAT:
            return {"kind": "presentation", "wrong_gold": False, "disagree": False, "group": largest,
                    "reasons": reasons, "detail": f"{len(largest)} of {n} candidates ({names}) give the gold's "
                                                  f"answer written differently: {'; '.join(reasons)}"}
        return None
    forecast = is_forecast(question, task)
    if forecast and 2 * len(largest) > n and close(gold, largest[0]["answer"], FORECAST_TOLERANCE):
        return {"kind": "ambiguous", "wrong_gold": False, "disagree": False, "ask": False, "group": largest,
                "reasons": reasons,
                "detail": f"a forecast: the gold is within {FORECAST_TOLERANCE:.0%} of {len(largest)} of {n} "
                          f"candidates' ({largest[0]['answer']}), the same forecast by another method (the question "
                          f"names none); not a wrong gold"}
    if not against_gold(gold, models(candidates), ctx, min_votes):
        why = f"the candidates split ({' / '.join(str(g[0]['answer']) for g in groups)})"
    elif marked:
        why = f"{len(marked)} of {n} candidates say the question is ambiguous"
    elif forecast:
        why = "a forecast: its answer depends on a method the question does not name"
    else:
        wrong = "missing_or_extra_items" if kind == ITEMS else "wrong_value"
        return {"kind": wrong, "wrong_gold": True, "disagree": True, "group": largest, "reasons": reasons,
                "detail": f"{len(largest)} of {n} candidates ({names}) agree on {largest[0]['answer']!r}, not the gold "
                          f"({'; '.join(reasons)}); decided by rule (TReB: all candidates agree against the gold)"}
    against = f"; the largest group against the gold: {'; '.join(reasons)}" if reasons and kind not in (SAME, FORMAT) \
        else ""
    return {"kind": "ambiguous", "wrong_gold": False, "disagree": True, "group": largest, "reasons": reasons,
            "detail": f"{why}{against}: {_NEEDS}"}


def vote_sample(row: dict[str, Any], prov: dict[str, Any], gold: Any, bodies: dict[str, Any],
                candidates: dict[str, dict[str, Any]], programs: dict[str, dict[str, str]],
                remarks: dict[str, dict[str, dict[str, Any]]], rules: list[tuple[str, Any]],
                min_votes: int = 2) -> Any:
    """One sample's vote among the candidates that answered it (and the general rules' answers, one vote
    each): None when no candidate answered, True when checked and fine, else a Finding."""
    from curate.validators.answer_diff import context_of, difference
    from curate.validators.findings import Finding

    source_id = str(prov.get("source_id", ""))
    cands = []
    for name, answers in candidates.items():
        if row["id"] in answers:
            said = remarks.get(name, {})
            remark = said.get(row["id"]) or said.get(source_id) or {}
            cands.append({"name": name, "answer": answers[row["id"]],
                          "program": programs.get(name, {}).get(row["id"], ""),
                          "ambiguous": bool(remark.get("ambiguous")), "note": remark.get("note", "")})
    if not cands:
        return None
    voters = cands + [{"name": rule, "answer": answer, "program": f"rule {rule}", "ambiguous": False, "note": ""}
                      for rule, answer in rules]
    first = next(iter(bodies.values()), None)
    ctx = context_of(first.column_names, first.to_pylist()) if first is not None else context_of([], [])
    decided = decide(row["question"], row.get("task", ""), gold, voters, ctx, min_votes)
    if decided is None:
        return True
    group = decided["group"]
    recomputed = group[0]["answer"]
    votes = [{"name": v["name"], "answer": v["answer"], "program": v["program"], "ambiguous": v["ambiguous"],
              "note": v["note"], "versus_gold": difference(gold, v["answer"], ctx)[0]} for v in voters]
    literals = {x.lower() for v in voters for x in re.findall(r"""['"]([^'"\n]{3,60})['"]""", v["program"])}
    used = [f"{v['name']}: {v['program']}".strip() for v in group]
    share = len(group) / len(voters)
    confidence = round(0.9 * share, 2) if decided["wrong_gold"] else 0.5
    finding = Finding(row["id"], source_id, decided["kind"], gold, recomputed, decided["wrong_gold"], confidence,
                      [v["name"] for v in group], used, decided["detail"], row["question"],
                      rows_used(bodies, [gold, *[v["answer"] for v in voters]], literals))
    finding.votes = votes
    if decided.get("ask", decided["disagree"]):
        finding.judge = {"by": None, "verdict": None, "reason": _NEEDS if not decided["wrong_gold"] else
                         "decided by rule; no judge reply"}
    return finding


def rows_used(bodies: dict[str, Any], values: list[Any], literals: set[str], limit: int = 8) -> dict[str, Any]:
    """The evidence: the rows of each table that hold a value of the gold or of an answer, or whose text holds a
    value a candidate's program names ('ismb' in "ismb 750 137"; column names and file names are no values)."""
    from curate.curation.answers import normalize_answer, plain
    from curate.validators.answer_diff import parts
    from curate.validators.findings import excerpt

    def telling(v: Any) -> bool:  # a small whole number (a count) is in many cells by chance
        n = normalize_answer(v)
        return not (isinstance(n, float) and n.is_integer() and abs(n) < 100)

    out = excerpt(bodies, [p for v in values for p in parts(v) if telling(p)], limit)
    for name, body in bodies.items():
        named = literals - {c.lower() for c in body.column_names} - {"table.csv"}
        if not named:
            continue
        rows = [list(r.values()) for r in body.slice(0, 5000).to_pylist()]
        hit = [r for r in rows if any(isinstance(c, str) and any(x in c.lower() for x in named) for c in r)]
        held = out.get(name, {"rows": [], "matching_rows": 0})
        extra = [r for r in plain(hit) if r not in held["rows"]]
        if extra:
            out[name] = {"columns": body.column_names, "rows": (held["rows"] + extra)[:limit],
                         "matching_rows": held["matching_rows"] + len(extra)}
    for part in out.values():
        part["what"] = "rows hold the gold, a candidate's answer or a value its program names"
    return out


# --------------------------------------------------------------------------- the LLM judge of disagreements


def judge_prompt(template: str, body: Any, question: str, gold: Any, votes: list[dict[str, Any]], rule: str,
                 max_rows: int = 60, max_chars: int = 12000) -> str:
    """The judge's prompt: the table with numbered rows (at most `max_rows`, about `max_chars`), the question,
    the gold, each candidate's answer, note and program, and how the rule judge compared them."""
    from curate.curation.llm.prompts import cell_text

    lines = [" | ".join(["#", *map(str, body.column_names)])]
    size = len(lines[0])
    for n, row in enumerate(body.slice(0, max_rows).to_pylist(), 1):
        line = " | ".join([str(n), *(cell_text(v) for v in row.values())])
        if size + len(line) > max_chars:
            break
        lines.append(line)
        size += len(line) + 1
    if body.num_rows > len(lines) - 1:
        lines.append(f"... ({body.num_rows - len(lines) + 1} more rows)")
    versus = {"same": "the gold's answer", "format": "the gold's answer written differently",
              "items": "some of the gold's items", "value": "differs from the gold"}
    shown = "\n\n".join(f"{v['name']}: answer {v['answer']!r}" + (f" ({versus[v['versus_gold']]})"
                                                                   if v.get("versus_gold") in versus else "")
                        + (" (marked ambiguous)" if v["ambiguous"] else "")
                        + (f"; note: {v['note']}" if v["note"] else "") + f"\n{program_shown(v['program'])}"
                        for v in votes)
    return template.format(rows=body.num_rows, table="\n".join(lines), question=question, gold=gold,
                           candidates=shown, rule=rule)


def row_ranges(rows: list[int]) -> str:
    """Row numbers as a reader writes them: [2, 3, 4, 5, 9] is "2-5, 9"."""
    out: list[list[int]] = []
    for n in sorted(set(rows)):
        if out and n == out[-1][1] + 1:
            out[-1][1] = n
        else:
            out.append([n, n])
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in out)


def program_shown(program: str) -> str:
    """A candidate's program as its writer wrote it: without the line the replay adds to write the table out."""
    return "\n".join(x for x in program.splitlines() if x.strip() != "df.to_csv('table.csv', index=False)").strip()


def vote_judge_requests(path: str, report: dict[str, Any]) -> list[dict[str, Any]]:
    """One judge request per disagreement the vote found (findings with a `judge` entry): {custom_id,
    check: "vote", sample_ids, source_id, prompt, columns, rows}."""
    import tomllib

    import pyarrow.parquet as pq

    from curate.curation.arrow_io import table_at, table_index
    from curate.curation.programs import data_view

    wanted = {f["sample_id"]: f for f in report["findings"] if f.get("judge") and f.get("votes")}
    if not wanted:
        return []
    release = Path(path)
    template = tomllib.loads((Path(__file__).with_name("prompts") / "audit_judge.toml").read_text())["vote_judge"]
    index = table_index([str(release / "tables" / "tables.parquet")])
    out = []
    for file in sorted((release / "samples").glob("*/*.parquet")):
        for row in pq.read_table(file, columns=["id", "table_ids"]).to_pylist():
            f = wanted.get(row["id"])
            tables = [table_at(*index[t]) for t in row["table_ids"] if t in index] if f else []
            if len(tables) != 1:
                continue
            body = data_view(tables[0])
            prompt = judge_prompt(template["prompt"], body, f["question"], f["gold"], f["votes"], f["detail"])
            out.append({"custom_id": f"vote:{row['id']}", "check": "vote", "sample_ids": [row["id"]],
                        "source_id": f["source_id"], "prompt": prompt, "table": tables[0].name,
                        "columns": body.column_names, "rows": body.to_pylist()})
    return out


def judge_batch_lines(requests: list[dict[str, Any]], model: str, max_tokens: int = 1024) -> list[dict[str, Any]]:
    """The judge's requests (the vote's and the question/SQL check's) as OpenAI batch input lines (`vllm run-batch`
    reads them too): each `custom_id` is the request's, so `judge_replayed` maps a batch output line back to it.
    A line holds the prompt and nothing else: no gold verdict, no correction."""
    from curate.curation.llm.batch import URL

    return [{"custom_id": r["custom_id"], "method": "POST", "url": URL,
             "body": {"model": model, "messages": [{"role": "user", "content": r["prompt"]}], "temperature": 0.0,
                      "max_tokens": max_tokens}} for r in requests]


def vote_verdict(reply: str) -> dict[str, Any] | None:
    """A judge's reply as {verdict, answer, rows, reason}; None when it gives no verdict."""
    from curate.curation.llm.client import parse_json_object

    try:
        obj = parse_json_object(reply or "", {"verdict": str})
    except ValueError:
        words = [v for v in VERDICTS if v in (reply or "").lower()]
        return {"verdict": words[0], "answer": "", "rows": [], "reason": (reply or "").strip()[:300]} \
            if len(words) == 1 else None
    verdict = obj["verdict"].strip().lower()
    if verdict not in VERDICTS:
        return None
    rows = [int(r) for r in obj.get("rows") or [] if isinstance(r, (int, float)) or str(r).isdigit()]
    return {"verdict": verdict, "answer": obj.get("answer") or "", "rows": rows,
            "reason": str(obj.get("reason", ""))[:500]}


def apply_vote_judge(report: dict[str, Any], requests: list[dict[str, Any]], replies: dict[str, str],
                     judge: str) -> dict[str, Any]:
    """The judge's verdicts on the vote's disagreements: `gold_wrong` a wrong gold (or `presentation`, where
    its answer is the gold written differently), `ambiguous` ambiguous, `gold_right` no finding (kept under
    report["vote_judge"]["upheld"]); a request without a readable reply keeps the rule's decision."""
    from collections import Counter

    from curate.curation.answers import plain
    from curate.validators.answer_diff import FORMAT, ITEMS, SAME, context_of, difference, same_answer
    from curate.validators.findings import KINDS, proposed_answer

    by_sample = {f["sample_id"]: f for f in report["findings"] if f["sample_id"]}
    summary: dict[str, Any] = {"model": judge, "asked": len(requests), "judged": 0, "verdicts": Counter(),
                               "upheld": []}
    dropped = set()
    for r in requests:
        sample_id = r["sample_ids"][0]
        f = by_sample.get(sample_id)
        verdict = vote_verdict(replies.get(sample_id, ""))
        if f is None or verdict is None:
            continue
        summary["judged"] += 1
        summary["verdicts"][verdict["verdict"]] += 1
        f["judge"] = {"by": judge, **verdict}
        if verdict["rows"]:
            numbered = [[n, *r["rows"][n - 1].values()] for n in verdict["rows"] if 0 < n <= len(r["rows"])]
            judged = {f"{r['table']}, rows {row_ranges(verdict['rows'])}": {
                "columns": ["#", *r["columns"]], "rows": plain(numbered[:12]), "matching_rows": len(numbered),
                "what": "rows the judge used"}}
            f["evidence"] = {**judged, **(f.get("evidence") or {})}  # the judge's rows first
        f["engines"] = [*f["engines"], judge]
        said = f"judge {judge}: {verdict['verdict'].replace('_', ' ')} ({verdict['reason']})"
        if verdict["verdict"] == "gold_right":
            dropped.add(sample_id)
            summary["upheld"].append({"sample_id": sample_id, "source_id": f["source_id"], "reason": verdict["reason"]})
            continue
        if verdict["verdict"] == "ambiguous":
            f.update(kind="ambiguous", wrong_gold=False, confidence=0.7, detail=said, proposed=None)
            continue
        ctx = context_of(r["columns"], r["rows"])
        answer = verdict["answer"] or f["recomputed"]
        kind, reasons = difference(f["gold"], answer, ctx)
        if kind in (SAME, FORMAT):
            f.update(kind="presentation", wrong_gold=False, confidence=0.7, proposed=None,
                     detail=f"{said}; but its answer {answer!r} is the gold written differently ({'; '.join(reasons)})")
            continue
        if not against_gold(f["gold"], models(f["votes"]), ctx):
            f.update(kind="ambiguous", wrong_gold=False, confidence=0.6, proposed=None,
                     detail=f"{said}; not a wrong gold: the candidates do not all agree on one answer against the "
                            f"gold (a wrong gold needs them and the judge)")
            continue
        if not same_answer(answer, f["recomputed"], ctx):  # its answer is free text: said, not a veto
            said += f"; its answer {answer!r}, the candidates' {f['recomputed']!r}"
        wrong = "missing_or_extra_items" if kind == ITEMS else "wrong_value"
        f.update(kind=wrong, wrong_gold=True, confidence=0.9, recomputed=answer, detail=said,
                 proposed=proposed_answer(f["gold"], answer))
    for f in report["findings"]:
        f["needs_review"] = bool(f["sample_id"]) and (f["wrong_gold"]
                                                      or f["kind"] in ("ambiguous", "question_sql_disagree"))
    report["findings"] = [f for f in report["findings"] if f["sample_id"] not in dropped]
    counts = Counter(f["kind"] for f in report["findings"])
    report["counts"] = {k: counts.get(k, 0) for k in KINDS}
    report["wrong_gold"] = sum(f["wrong_gold"] for f in report["findings"])
    summary["verdicts"] = dict(summary["verdicts"])
    report["vote_judge"] = summary
    return report
