"""RealHiTBench (Wu et al., ACL 2025): its QA file (`queries`: FileName, CompStrucCata,
QuestionType, SubQType, Question, FinalAnswer, ProcessedAnswer) and the folder of spreadsheets.

Each spreadsheet is read by curate's own XLSX reader (`curate.curation.sources.readers.xlsx`), so a sample's
tables keep their header trees, merged cells, sections and notes; every table the file holds is
the sample's. The gold is `ProcessedAnswer` (`FinalAnswer` kept in provenance): a chart's is the
list of plotted series ("[[...]]"), scored by PASS@1; an analysis answer is free text.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path
from typing import Any

from curate.importers import BadInput, Imported, SourceFile, importer, sha256_of

LICENCE = "as published by the authors (RealHiTBench)"
CITATION = "RealHiTBench: A Comprehensive Realistic Hierarchical Table Benchmark for Evaluating LLM-Based Table Analysis (Wu et al., ACL Findings 2025)"
REQUIRED = ("FileName", "QuestionType", "SubQType", "Question", "ProcessedAnswer")
TYPES = {"Fact Checking": "FactChecking", "Numerical Reasoning": "NumericalReasoning", "Data Analysis": "DataAnalysis",
         "Visualization": "Visualization", "Structure Comprehending": "StructureComprehending"}
CHARTS = {"BarChart Generation": "bar", "LineChart Generation": "line", "PieChart Generation": "pie",
          "ScatterChart Generation": "scatter"}


def task_key(question_type: str, subtype: str) -> str:
    """("Fact Checking", "Value-Matching") -> "RealHiTBench/FactChecking/Value_Matching"; a subtype
    the benchmark's taxonomy does not list (a few questions carry a stray one) counts as its type's first."""
    from curate.curation.taxonomy import tasks

    key = f"RealHiTBench/{TYPES[question_type]}/{re.sub(r'[^A-Za-z0-9]+', '_', subtype).strip('_')}"
    if key in tasks():
        return key
    return min(k for k in tasks() if k.startswith(f"RealHiTBench/{TYPES[question_type]}/"))


def chart_gold(text: str, chart: str) -> dict[str, Any]:
    value = ast.literal_eval(text.strip())
    series = value if value and all(isinstance(v, list) for v in value) else [value]
    flat = [v for s in series for v in s]
    if not flat or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in flat):
        raise ValueError("a chart's ProcessedAnswer must be a list of numbers (or of lists of numbers)")
    return {"chart_type": chart, "x": [], "y": flat, "series": series}


@importer("realhitbench")
def read(paths: list[Path]) -> Imported:
    from curate.curation.answers import normalize_answer, split_list
    from curate.curation.sample import Sample
    from curate.curation.sources.errors import SourceError
    from curate.curation.sources.readers.xlsx import read as read_xlsx

    qa_files = [p for p in paths if p.is_file()]
    folders = [p for p in paths if p.is_dir()]
    if len(qa_files) != 1:
        raise BadInput(paths[0] if paths else "", "", "", "give the QA file (JSON with `queries`) and the spreadsheets folder")
    qa = qa_files[0]
    folder = folders[0] if folders else qa.parent / "tables"
    imported = Imported(benchmark="RealHiTBench", profile="realhitbench", citation=CITATION, licence=LICENCE)
    imported.sources.append(SourceFile(str(qa), sha256_of(qa), LICENCE))
    try:
        queries = json.loads(qa.read_text(encoding="utf-8")).get("queries")
    except (UnicodeDecodeError, json.JSONDecodeError, AttributeError) as e:
        raise BadInput(qa, "", "queries", f"not RealHiTBench's QA JSON ({e})") from None
    if not isinstance(queries, list):
        raise BadInput(qa, "", "queries", "must be a list of questions")
    read_files: dict[str, list[Any]] = {}
    for n, q in enumerate(queries):
        try:  # one question: unreadable, it is listed and left out (`--strict`: the import stops)
            where = f"queries[{n}]"
            if not isinstance(q, dict):
                raise BadInput(qa, where, "", "a question must be a JSON object")
            for name in REQUIRED:
                if not isinstance(q.get(name), str):
                    raise BadInput(qa, where, name, "missing" if name not in q else "must be text")
            if q["QuestionType"] not in TYPES:
                raise BadInput(qa, where, "QuestionType", f"{q['QuestionType']!r} is not one of {', '.join(TYPES)}")
            name = q["FileName"]
            if name not in read_files:
                path = folder / f"{name}.xlsx"
                if not path.is_file():
                    raise BadInput(qa, where, "FileName", f"no spreadsheet {path}")
                imported.sources.append(SourceFile(str(path), sha256_of(path), LICENCE))
                try:
                    tables = list(read_xlsx(str(path)))
                except SourceError as e:
                    raise BadInput(path, "", "", str(e)) from None
                if not tables:
                    raise BadInput(path, "", "", "no table found in the spreadsheet")
                read_files[name] = tables
                imported.tables += tables
            task = task_key(q["QuestionType"], q["SubQType"])
            raw = q["ProcessedAnswer"].strip()
            if not raw:  # published without a gold (all Structure Comprehending questions here): listed, not imported
                imported.skipped.append({"source_id": str(q.get("id", n)), "where": f"{qa}:{where}",
                                         "field": "ProcessedAnswer", "kind": "no_gold",
                                         "reason": "the published gold answer is empty"})
                continue
            if q["QuestionType"] == "Visualization":
                try:
                    answer, answer_type = chart_gold(raw, CHARTS.get(q["SubQType"], "bar")), "chart"
                except (ValueError, SyntaxError) as e:  # a gold the authors withheld ("masked"): left out, listed
                    imported.skipped.append({"source_id": str(q.get("id", n)), "where": f"{qa}:{where}",
                                             "field": "ProcessedAnswer", "kind": "no_gold",
                                             "reason": f"no chart values to score against ({e}): "
                                             + raw[:60]})
                    continue
            elif q["QuestionType"] == "Data Analysis":
                answer, answer_type = raw, "text"
            else:
                answer = split_list(raw)
                answer_type = "list" if isinstance(answer, list) else (
                    "number" if isinstance(normalize_answer(answer), float) else "text")
            provenance = {"source_id": str(q.get("id", n)), "source": "realhitbench", "source_file": str(qa),
                          "file_name": name, "question_type": q["QuestionType"], "subtype": q["SubQType"],
                          "structure": str(q.get("CompStrucCata", "")), "source_answer": raw,
                          "final_answer": str(q.get("FinalAnswer", "")), "licence": LICENCE}
            imported.samples.append(Sample(task=task, question=q["Question"], answer=answer, answer_type=answer_type,
                                           table_ids=tuple(t.id for t in read_files[name]), origin="import",
                                           quality="published", template="realhitbench", provenance=provenance))
        except BadInput as e:
            imported.refuse(e, str(q.get("id", n)) if isinstance(q, dict) else str(n))
    imported.notes.append(f"{len(imported.samples)} questions over {len(read_files)} spreadsheets, read by curate's "
                          "XLSX reader (header trees kept); gold: ProcessedAnswer (FinalAnswer in provenance).")
    if imported.skipped:
        imported.notes.append(f"{len(imported.skipped)} questions left out, each listed with the reason in the manifest "
                              "(build.import.skipped).")
    return imported
