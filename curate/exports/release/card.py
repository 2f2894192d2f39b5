"""The dataset card (`README.md`): its YAML header for Hugging Face `datasets`, how the samples were
made, what a model is shown, how answers score, counts that reconcile, and each stage's report in a line.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from curate.curation.pipeline.reports import (AdversarialReport, ClassifyReport, CleanReport, ContractsReport, IngestReport,
                                       PhraseReport, QuestionsReport, ReviewReport, SamplesReport, SelectReport,
                                       SqlReport, VerifyReport, VoteReport)
from curate.exports.release.accounting import accounting_line
from curate.exports.release.card_meta import card_data, source_licences
from curate.exports.release.card_usage import citation_section, usage_section


def _table(title: str, header: list[str], rows: list[list[Any]]) -> list[str]:
    """A titled Markdown table, and the blank line after it."""
    return [f"### {title}", "", "| " + " | ".join(header) + " |", "|" + " --- |" * len(header),
            *("| " + " | ".join(str(c) for c in row) + " |" for row in rows), ""]


def _yaml_string(text: str) -> str:
    return json.dumps(text)  # a JSON string is a valid YAML scalar


def dataset_card(manifest: dict[str, Any], reports: dict[str, Any], diff: dict[str, Any],
                 release_dir: Path | None = None) -> str:
    """README.md: the Hugging Face header (`card_meta`) and a card a reader can trust; `release_dir` (the
    release being written) gives its example sample."""
    from huggingface_hub import DatasetCard

    from curate.curation.taxonomy import tasks

    taxonomy = tasks()
    counts = manifest["counts"]
    lines: list[str] = []
    name, version = manifest["name"], manifest["version"]
    lines += [f"# {name} {version}", ""]
    if manifest.get("description"):
        lines += [manifest["description"], ""]
    imported = manifest["build"].get("import")
    lines += [(f"{counts['samples']:,} samples over {counts['tables']:,} tables of {imported['benchmark']}, imported "
               f"by `curate import {imported['format']}` from its published files: questions and gold answers as "
               "their authors published them, each sample keeping the benchmark's own id "
               "(`provenance.source_id`)." if imported else
               f"{counts['samples']:,} table-reasoning samples over {counts['tables']:,} tables, built by "
               "curate from real tables and databases. Every gold answer was computed by "
               "executing a program (DuckDB SQL or a reasoning chain) that ships with the sample, and was "
               "re-executed before release."), "",
              f"- fingerprint: `{manifest['fingerprint']}`",
              f"- parent: {manifest['parent']['version'] + ' (`' + manifest['parent']['fingerprint'] + '`)' if manifest['parent'] else 'none (first version)'}",
              f"- seed: {manifest['seed']}; built with curate at commit `{manifest['environment']['git_commit'] or 'unknown'}`",
              ""]
    lines += usage_section(manifest, release_dir)

    def table(title: str, header: list[str], rows: list[list[Any]]) -> None:
        lines.extend(_table(title, header, rows))

    lines += ["## Contents", ""]
    by_skill: dict[str, int] = {}
    for task_key, n in counts["by_task"].items():
        t = taxonomy.get(task_key)
        skill = (t.skill if t.skill == t.benchmark else f"{t.benchmark} {t.skill}") if t else "unknown"
        by_skill[skill] = by_skill.get(skill, 0) + n
    table("By skill", ["skill", "samples"], [[k, f"{v:,}"] for k, v in sorted(by_skill.items())])
    table("By task", ["task", "samples", "answer types", "metric"],
          [[k, f"{v:,}", ", ".join(taxonomy[k].answer_types or (taxonomy[k].answer_type,)) if k in taxonomy else "",
            taxonomy[k].metric if k in taxonomy else ""] for k, v in counts["by_task"].items()])
    table("By quality", ["quality", "samples"], [[k or "(none)", f"{v:,}"] for k, v in counts["by_quality"].items()])
    table("By origin", ["origin", "samples"], [[k, f"{v:,}"] for k, v in counts["by_origin"].items()])
    table("By split", ["split", "samples"], [[k, f"{v:,}"] for k, v in counts["by_split"].items()])

    if imported:
        lines += _card_import(imported, manifest["build"].get("corrected"), reports.get("errata"))
    else:
        lines += _card_built(manifest, reports)
    lines += _card_licences(manifest)
    changes = diff["samples"]
    lines += ["## Changes", "",
              (f"Against {diff['old']['version']}: {changes['added']:,} samples added, {changes['removed']:,} "
               f"removed, {changes['changed']:,} changed (see `diff.json`)." if diff.get("old", {}).get("version")
               else "First version."), "",
              "## Checking this release", "", "```bash",
              f"curate release verify {name}/{version}   # checksums, then every program re-executed", "```", ""]
    lines += citation_section(manifest)
    return str(DatasetCard("---\n" + card_data(manifest).to_yaml() + "\n---\n\n" + "\n".join(lines)))


def _card_licences(manifest: dict[str, Any]) -> list[str]:
    """Each source's own licence, named where the source states it, with where to read it."""
    rows = source_licences(manifest)
    lines = ["## Sources and licences", "",
             "The questions, answers and programs are curate's output; every table keeps its source's licence. "
             "Publish and cite each table as its source does:", ""]
    lines += _table("Tables by source", ["source", "licence", "Hub id", "where stated", "tables"],
                    [[r["source"], r["stated"], f"`{r['hub']}`" if r["hub"] else "-", r["link"] or "-", r["tables"]]
                     for r in rows])
    if any(not r["hub"] and r["stated"] == "not stated by the source" for r in rows):
        lines += ["A source without a stated licence: state its licence before publishing this release (the "
                  "header's `license`), or keep the release private.", ""]
    return lines


def _card_built(manifest: dict[str, Any], reports: dict[str, Any]) -> list[str]:
    """How a built release was made: its stages, human review, questions, scoring and counts."""
    lines = _card_database_shares(SelectReport.from_json(reports.get("select")).database_share)
    lines += ["## Method", ""]
    stages = manifest["build"].get("stages", {})
    for stage, info in stages.items():
        lines.append(f"- **{stage}** (`{info.get('dataset', '')}`): {_stage_line(stage, reports.get(stage, {}))}")
    lines += ["", "Quality labels: `rule-based` (a template's executed answer), `executed` (an executed SQL "
              "query), `declared-keys` / `inferred-keys` (key selection, by where the keys came from), "
              "`human-annotated` (accepted or fixed by annotators).", ""]
    rejected = ReviewReport.from_json(reports.get("review")).rejected
    if rejected:
        lines += ["### Removed by human review", "", "| sample | task | reasons | annotators |", "| --- | --- | --- | --- |"]
        lines += [f"| {r['id']} | {r['task']} | {'; '.join(r['reasons'])} | {', '.join(r['annotators'])} |"
                  for r in rejected]
        lines.append("")
    lines += _card_method(manifest, reports)
    return lines


def _card_import(imported: dict[str, Any], corrected: dict[str, Any] | None = None,
                 errata: dict[str, Any] | None = None) -> list[str]:
    """Where an imported release came from (every file with its sha256 and licence), the errata of a
    corrected one (`curate build RELEASE`), and how its authors score it (the official profile
    `curate evaluate` applies by default)."""
    lines = ["## Method", "",
             f"Imported with `curate import {imported['format']}` (importer version {imported['importer_version']}). "
             f"Citation: {imported['citation']}.", ""]
    if corrected:
        lines += [f"Corrected from version {corrected['from']['version']} (`{corrected['from']['fingerprint']}`) by "
                  "`curate build`: gold answers that `curate audit` found suspect were checked by annotators in "
                  "Label Studio; a confirmed or corrected gold replaces the published one (kept in "
                  "`provenance.gold_before_review`), a question marked ambiguous leaves the release.", ""]
    lines += [f"- {note}" for note in imported.get("notes", [])]
    lines += _card_left_out(imported)
    lines += ["", "### Source files", "", "| file | sha256 | licence |", "| --- | --- | --- |"]
    lines += [f"| {s['path']} | `{s['sha256']}` | {s['licence']} |" for s in imported["sources"]]
    if errata is not None:
        def cell(v: Any) -> str:
            text = v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)
            return text.replace("|", "\\|").replace("\n", " ")[:200]

        lines += ["", "## Errata", "",
                  f"{len(errata['corrected'])} gold answers corrected, {len(errata['removed'])} samples removed, "
                  f"{len(errata['confirmed'])} audit findings checked and the published gold kept.", ""]
        if errata["corrected"]:
            lines += _table("Corrected gold answers", ["source id", "sample", "task", "question", "published gold",
                                                      "corrected gold", "by", "finding"],
                           [[e["source_id"], e["id"], e["task"], cell(e["question"]), cell(e["gold_before"]),
                             cell(e["gold"]), e["by"], e["finding"] or "-"] for e in errata["corrected"]])
        if errata["removed"]:
            lines += _table("Removed", ["source id", "sample", "task", "question", "published gold", "reasons", "finding"],
                           [[e["source_id"], e["id"], e["task"], cell(e["question"]), cell(e["gold"]),
                             cell("; ".join(e["reasons"])), e["finding"] or "-"] for e in errata["removed"]])
        if errata["confirmed"]:
            lines += _table("Checked, the published gold kept", ["source id", "sample", "gold", "finding"],
                           [[e["source_id"], e["id"], cell(e["gold"]), e["finding"] or "-"] for e in errata["confirmed"]])
    lines += ["", "## How answers are scored", "",
              f"`curate evaluate` scores this release with the benchmark's official metrics, reproduced from its "
              f"authors' evaluation code (profile `{imported['profile']}`), and beside them with curate's own "
              "metric per task (the task table); where the official code has a known defect both numbers are "
              "reported, never one for the other. `curate evaluate --backend gold` answers every sample with its "
              "own gold and must score 1.000 under curate's metrics.", "",
              "## Limitations", "",
              ("- The gold answers are the authors', but for the errata above." if errata is not None else
               "- The gold answers are the authors'; curate did not re-compute them (`curate audit` looks for wrong "
               "ones)."), ""]
    return lines


def _card_left_out(imported: dict[str, Any]) -> list[str]:
    """The published records not in the release, counted by why (`build.import.skipped` lists each)."""
    import re
    from collections import Counter

    counts = Counter((s.get("kind", "other"), re.sub(r"\[\d+\]", "[]", s.get("field", "")))
                     for s in imported.get("skipped", []))
    if not counts:
        return []
    return ["", "### Left out by the import", "", "| why | field | records |", "| --- | --- | --- |",
            *[f"| {kind.replace('_', ' ')} | {field or '-'} | {n} |" for (kind, field), n in sorted(counts.items())],
            "", "Each is listed with its file, place and reason in the manifest (`build.import.skipped`)."]


def _card_database_shares(share: dict[str, Any]) -> list[str]:
    """Each database's share of the multi-table samples, and the cap that bounds it."""
    by_task = share.get("by_database", {})
    if not by_task:
        return []
    totals: dict[str, int] = {}
    for counts in by_task.values():
        for db, n in counts.items():
            totals[db or "(none)"] = totals.get(db or "(none)", 0) + n
    whole = sum(totals.values())
    limits = share.get("per_database_limit", {})
    lines = ["### Multi-table samples by database", "",
             f"No database gives more than {share.get('max', 0):.0%} of a multi-table task's samples "
             f"({', '.join(share.get('tasks', []))}; with fewer databases than that share allows, an even split "
             "among them); the most one database gives per task: "
             + ", ".join(f"{t} {n:,}" for t, n in sorted(limits.items())) + ".", "",
             "| database | samples | share |", "| --- | --- | --- |"]
    lines += [f"| {db} | {n:,} | {n / whole:.1%} |" for db, n in sorted(totals.items(), key=lambda kv: (-kv[1], kv[0]))]
    return lines + [""]


def _card_method(manifest: dict[str, Any], reports: dict[str, Any]) -> list[str]:
    """How questions were made, what a model is shown, how answers score, what to keep in mind,
    and counts that add up."""
    counts = manifest["counts"]
    checked = VerifyReport.from_json(reports.get("verify")).checked
    unserialized_queries = SqlReport.from_json(reports.get("sql")).queries_over_unserialized_tables
    derived = counts.get("derived_tables", 0)
    roles = counts.get("column_roles", {})
    configs = manifest["table_configurations"]
    default = configs.get("default", {})
    role_text = ", ".join(f"{k} {v:,}" for k, v in sorted(roles.items(), key=lambda kv: -kv[1])) or "none recorded"
    lines = [
        "## How the questions were made", "",
        "Every question comes from a template (`curate/generators/rules/templates/*.toml`, or MMQA's SQL templates) "
        "applied to one cleaned table or one database, and its gold answer is what the sample's program "
        "returns. Before a template asks anything, each column's role is inferred from its values, its name "
        "and its documentation (an R help page's Format section): only measures and counts are summed, "
        "averaged, compared, correlated or tested; codes and flags filter and group; row indices and "
        "identifiers are never asked about and never the answer; a row is named by its natural key (a "
        "name, or a unique year). A column is named by its documented label with its header, e.g. "
        "\"per capita crime rate (`crim`)\". Thresholds are rounded to 3 significant figures and the gold "
        "is computed with the rounded value. Candidates whose answer is ambiguous or says nothing are "
        "rejected and counted by reason in the rules report (ties, empty filters, a filter that leaves the "
        "answer unchanged, a target fixed by the filter, a variable tested against itself, totals of rates, "
        "correlation matrices read as data). Every convention a question depends on is in the question: "
        "rounding, the group a test statistic is computed for, the decision's words, list order.", "",
        f"Column roles over the source tables: {role_text}.", "",
        "## What the model is shown", "",
        f"Each sample names its tables by id; the release serializes every table in "
        f"{', '.join(configs['serializations'])} (default {default.get('serialization', 'markdown')}), with its "
        "caption, and hierarchical headers as merged cells in HTML and LaTeX. "
        f"{derived:,} of the {counts['tables']:,} tables are **derived** copies a template made and the sample "
        "is asked over: the table with its headers hidden (column naming) or with outliers injected into one "
        "column (anomaly detection). A derived table carries its source's name; its values differ only as "
        "described. "
        "`curate evaluate` puts each table in the prompt up to 30,000 characters (`max_table_chars`), and "
        "rule questions are asked only of tables whose markdown fits, so the model sees every row they ask "
        "about; tables of MMQA's databases can be longer and are cut there (the first 2,000 rows, then the "
        "character budget). "
        f"Tables over {configs.get('max_serialized_cells', 0):,} cells are not serialized in the release "
        f"({len(configs.get('not_serialized', [])):,} here); they are in the typed records of "
        "`tables/tables.parquet`. A multi-table question that needs such a table is released only where the "
        "contents are not needed: as text-to-SQL (the SQL is written from the schema) and selection of declared "
        "keys (inferred keys are asked only of tables shown whole: uniqueness is a property of every row); "
        f"{unserialized_queries:,} of the generated SQL queries were of "
        "that kind, before selection (`provenance.not_serialized` names the tables).", "",
        "## How answers are scored", "",
        "`curate evaluate` extracts the final answer and scores it with the task's metric (see the task table): "
        "`exact_match` (equal after normalisation: 42 = \"42.0\", case and spacing ignored, lists in any "
        "order), `numeric_match` (numbers within 1% of the gold, item by item for lists such as [statistic, "
        "p-value, decision]), `set_f1` (the answer's items as a set), `retrieval_prf_at_k`, `key_selection` "
        "and `execution_match` (MMQA). A list answer is given as a JSON list when an item holds a comma. "
        "`curate evaluate --backend gold` answers every sample with its own gold and must score 1.000.", "",
        "## Counts", "",
        f"- {counts['samples']:,} samples; the verify stage re-executed {checked:,} programs (SQL and reasoning "
        f"chains) to their gold; the other {max(0, counts['samples'] - checked):,} samples' golds are read from "
        "a table's own metadata (a hidden header, declared or inferred keys) by a metadata program.",
        f"- {counts['tables']:,} tables: {counts['tables'] - derived:,} source tables the samples use (of the "
        f"{CleanReport.from_json(reports.get('clean')).kept:,} cleaning kept) and {derived:,} derived copies.",
        *_card_accounting(counts.get("source_tables")), "",
        "## Limitations", "",
        "- Questions are written by templates: they are exact and checkable, but plainer than a person's "
        "wording; a model may rephrase them (the LLM stages) without changing the program.",
        "- Column roles are inferred; a code without documentation can still be read as a quantity, and a "
        "label is the first clause of its documentation.",
        "- Multi-table (MMQA) databases of the R corpus are assembled by key inference within one R package: "
        "a foreign key needs every value found in the key it references (a handful of exceptions at most, "
        "named in its evidence), no dates or row numbers join tables, and a generic column such as a country "
        "joins only one dataset's tables or a table about that entity. Inferred keys remain inferences.",
        "- Gold answers are exact for the tables as released; they are not checked against the world.",
        *_card_personal_data(SqlReport.from_json(reports.get("sql")).personal_data), "",
    ]
    return lines


def _card_personal_data(found: dict[str, str]) -> list[str]:
    """The personal data the databases' tables hold (never a question's label, filter or answer)."""
    if not found:
        return []
    by_kind: dict[str, list[str]] = {}
    for column, kind in found.items():
        by_kind.setdefault(kind, []).append(f"`{column}`")
    said = "; ".join(f"{kind}: {', '.join(columns[:6])}" + (f" and {len(columns) - 6} more" if len(columns) > 6 else "")
                     for kind, columns in sorted(by_kind.items()))
    return [f"- **Personal data is present** in {len(found):,} columns of the multi-table databases' tables ({said}). "
            "No question names, filters by or answers with such a column, but the tables are shipped as they "
            "were read: publish them only where that is allowed."]


def _stage_line(stage: str, report: dict[str, Any]) -> str:
    if stage == "ingest":
        read = IngestReport.from_json(report)
        return f"{read.tables:,} tables and {read.databases:,} databases read"
    if stage == "clean":
        clean = CleanReport.from_json(report)
        return f"TReB's cleaning rules kept {clean.kept:,} of {clean.tables_in:,} tables"
    if stage == "rules":
        return (f"{SamplesReport.from_json(report).samples:,} rule-based QA pairs and reasoning chains from templates, "
                "gold answers by execution; ambiguous candidates rejected")
    if stage == "sql":
        sql = SqlReport.from_json(report)
        lost = (f"; {len(sql.without_samples)} databases gave none: "
                + "; ".join(f"{db} ({why})" for db, why in sql.without_samples.items())) if sql.without_samples else ""
        return (f"{sql.queries:,} multi-table SQL queries kept of {sql.candidates:,} candidates, "
                f"{sql.samples:,} MMQA samples{lost}")
    if stage == "select":
        selected = SelectReport.from_json(report)
        near, over = selected.dropped_for("near_duplicate"), selected.dropped_for("over_cap")
        over_share = selected.dropped_for("over_database_share")
        cap = selected.settings.get("max_per_task", 0)
        share = selected.settings.get("max_database_share")
        return (f"{selected.samples:,} samples selected; {near:,} near-duplicate questions dropped"
                + (f", {over:,} over the cap of {cap:,} per task (spread evenly over templates)" if cap else "")
                + (f", {over_share:,} over a database's share of {share:.0%} of a multi-table task" if share else ""))
    if stage == "vote":
        vote = VoteReport.from_json(report)
        agreement = ", ".join(f"{k} {v:,}" for k, v in sorted(vote.agreement.items()))
        how = "RealHiTBench's frequency x judge score" if vote.method == "realhitbench" else "TReB's table"
        return (f"{vote.voted:,} samples no rule computed were answered by three models and decided by "
                f"{how} ({agreement or 'none'}); {vote.replaced:,} gold answers replaced, "
                f"{vote.queued:,} queued for human review")
    if stage == "phrase":
        phrased = PhraseReport.from_json(report)
        return (f"{phrased.samples:,} of {phrased.tried:,} SQL samples phrased as natural questions by "
                "a model (MMQA), each still naming every value its query compares against")
    if stage == "questions":
        written = QuestionsReport.from_json(report)
        return (f"{written.samples:,} questions written by a model from RealHiTBench's per-type prompts over "
                f"{written.tables:,} tables; their answers are candidate golds for the vote and a human check")
    if stage == "classify":
        classified = ClassifyReport.from_json(report)
        return (f"{classified.checked:,} questions classified into the task taxonomy by a model (TReB): "
                f"{classified.agrees:,} agree with their task, {classified.disagrees:,} queued for review, "
                f"{classified.relabelled:,} relabelled")
    if stage == "adversarial":
        kept = AdversarialReport.from_json(report)
        return (f"{kept.samples:,} of {kept.tried:,} template questions reworded by a model as a person would ask "
                "them, each kept only where a discriminator that never saw the gold answered it with the executed "
                "gold and judged it natural and unambiguous (TReB's generator/discriminator loop); the others keep "
                "their template wording")
    if stage == "review":
        review = ReviewReport.from_json(report)
        applied = review.applied
        line = (f"human review in Label Studio: {applied.get('accept', 0):,} samples accepted, {applied.get('fix', 0):,} "
                f"gold answers fixed (the old one kept in provenance), {applied.get('reject', 0):,} samples rejected")
        waiting = review.open + review.queued_not_pushed
        if review.required:
            return line + f"; review required: {review.held_back:,} samples still waiting were held back"
        return line + (f"; {waiting:,} samples still waiting for review are included as they were" if waiting else "")
    if stage == "verify":
        v = VerifyReport.from_json(report)
        return (f"{v.matched:,} of {v.checked:,} programs re-executed to their gold answer ({v.counts()}"
                + (f"; {v.human_fixed:,} gold answers fixed by annotators differ from their program"
                   if v.human_fixed else "") + ")")
    if stage == "contracts":
        contracts = ContractsReport.from_json(report)
        return f"{contracts.met} of {len(contracts.expectations)} data-contract expectations met (Great Expectations)"
    return ""


def _card_accounting(accounting: dict[str, Any] | None) -> list[str]:
    """Every source table accounted for: how many no question asks about, and why."""
    if not accounting or not (accounting.get("without") or accounting.get("unreadable_files")):
        return []
    return [f"- Every table read accounted for: {accounting_line(accounting)}. The build's rules report names "
            "each table that gave no question (`without_questions_tables`) and its clean report each table "
            "cleaning dropped (`dropped_tables`)."]
