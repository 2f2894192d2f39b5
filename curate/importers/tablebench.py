"""TableBench's JSONL (Wu et al., 2024): one question per line, its flat table inline.

Fields: `id, qtype, qsubtype, table {columns, data}, question, answer, instruction_type,
instruction`, and `chart_type` for Visualization, whose answer is `y_references = [[...]]`. The
release ships each question four times, once per prompt variant (DP, TCoT, SCoT, PoT); here a
question is one sample and each variant's instruction is kept in its provenance
(`instruction_DP`, ...), which `--prompt official` sends as is.

The table body keeps the cells as published ("1,510" stays text, as TableBench's own
`table.csv` has it): the official scoring runs model-written code over that CSV. The gold answer
is kept verbatim in `provenance["source_answer"]` (what the official metric compares) and read as
curate reads a Final Answer line ("a, b" a list, "1,157" a number) for curate's own metrics.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path
from typing import Any

from curate.importers import BadInput, Imported, SourceFile, importer, json_object, require, sha256_of

LICENCE = "CC BY-SA 4.0 (data; the authors' code is MIT)"
CITATION = "TableBench: A Comprehensive and Complex Benchmark for Table Question Answering (Wu et al., AAAI 2025)"
VARIANTS = ("DP", "TCoT", "SCoT", "PoT")
SUBTYPES = {
    "FactChecking": ("MatchBased", "Multi-hop FactChecking"),
    "NumericalReasoning": ("Aggregation", "ArithmeticCalculation", "Comparison", "Counting", "Domain-Specific",
                           "Multi-hop NumericalReasoing", "Ranking", "Time-basedCalculation"),
    "DataAnalysis": ("AnomalyDetection", "CausalAnalysis", "CorrelationAnalysis", "DescriptiveAnalysis",
                     "ImpactAnalysis", "StatisticalAnalysis", "TrendForecasting"),
    "Visualization": ("ChartGeneration",),
}
REQUIRED = {"id": str, "qtype": str, "qsubtype": str, "table": dict, "question": str, "answer": str}


def task_key(qtype: str, qsubtype: str) -> str:
    """("NumericalReasoning", "Multi-hop NumericalReasoing") -> "TableBench/NumericalReasoning/Multi_hop_NumericalReasoing"."""
    return f"TableBench/{qtype}/{re.sub(r'[^A-Za-z0-9]+', '_', qsubtype)}"


def verbatim_body(columns: list[Any], rows: list[list[Any]]) -> Any:
    """A body typed by the JSON values themselves: text stays text ("1,510", "700+"), a column of
    JSON integers is int64, of numbers float64; a column mixing text and numbers is text."""
    import pyarrow as pa

    from curate.curation.table import unique_names

    out = []
    for j in range(len(columns)):
        values = [row[j] for row in rows]
        present = [v for v in values if v is not None]
        if present and all(isinstance(v, bool) for v in present):
            out.append(pa.array(values, type=pa.bool_()))
        elif present and all(isinstance(v, int) and not isinstance(v, bool) for v in present):
            out.append(pa.array(values, type=pa.int64()))
        elif present and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in present):
            out.append(pa.array([None if v is None else float(v) for v in values], type=pa.float64()))
        else:
            out.append(pa.array([None if v is None else str(v) for v in values], type=pa.string()))
    return pa.table(out, names=unique_names(list(columns)))


def chart_answer(text: str) -> dict[str, Any]:
    """"y_references = [[1, 2], [3, np.nan]]" -> the series and their values in one list (what
    PASS@1 compares). The gold is Python code: read by its syntax tree, never run
    (`curate.curation.literals`); `np.nan` and its other spellings become None."""
    from curate.curation.literals import LiteralError, assignment

    if not text.strip().startswith("y_references"):
        raise ValueError("a chart's answer must read 'y_references = [[...]]'")
    try:
        value = assignment(text, "y_references")
    except LiteralError as e:
        raise ValueError(f"y_references: {e}") from None
    if not isinstance(value, list):
        raise ValueError("y_references must be a list of numbers, or of lists of numbers")
    series = value if value and all(isinstance(v, list) for v in value) else [value]
    flat = [v for s in series for v in s]
    if not all(v is None or (isinstance(v, (int, float)) and not isinstance(v, bool)) for v in flat):
        raise ValueError("y_references must hold numbers")
    return {"series": series, "y": flat}


TABLE_SHAPE = 'a table is {"columns": [...], "data": [[...], ...]}, as an object or as that object in JSON text'


def _table_from_text(path: Path, where: str, text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError as e:
        raise BadInput(path, where, "table", f"is text that is not JSON ({e}); {TABLE_SHAPE}") from None


def _record(path: Path, number: int, line: str) -> dict[str, Any]:
    where = f"line {number}"
    record = json_object(path, where, line)
    if isinstance(record.get("table"), str):  # a common distribution stores the table as JSON text
        record["table"] = _table_from_text(path, where, record["table"])
    if "table" in record and not isinstance(record["table"], dict):
        raise BadInput(path, where, "table", f"has the wrong type ({type(record['table']).__name__}); {TABLE_SHAPE}")
    require(path, where, record, REQUIRED)
    if record["qsubtype"] not in SUBTYPES.get(record["qtype"], ()):
        raise BadInput(path, where, "qsubtype" if record["qtype"] in SUBTYPES else "qtype",
                       f"unknown {record['qtype']}/{record['qsubtype']}; TableBench's types: "
                       + "; ".join(f"{t}: {', '.join(s)}" for t, s in SUBTYPES.items()))
    table = record["table"]
    columns, data = table.get("columns"), table.get("data")
    if not isinstance(columns, list) or not columns:
        raise BadInput(path, where, "table.columns", f"must be a non-empty list; {TABLE_SHAPE}")
    if not isinstance(data, list) or not all(isinstance(r, list) for r in data):
        raise BadInput(path, where, "table.data", f"must be a list of rows (lists); {TABLE_SHAPE}")
    for n, row in enumerate(data):
        if len(row) != len(columns):
            raise BadInput(path, where, f"table.data[{n}]", f"has {len(row)} cells for {len(columns)} columns")
    variant = record.get("instruction_type", "DP")
    if variant not in VARIANTS:
        raise BadInput(path, where, "instruction_type", f"{variant!r} is not one of {', '.join(VARIANTS)}")
    if "instruction" in record and not isinstance(record["instruction"], str):
        raise BadInput(path, where, "instruction", f"must be str, got {type(record['instruction']).__name__}")
    if record["qtype"] == "Visualization":
        if not isinstance(record.get("chart_type"), str):
            raise BadInput(path, where, "chart_type", "a Visualization question needs its chart_type")
        try:
            chart_answer(record["answer"])
        except (ValueError, SyntaxError) as e:
            raise BadInput(path, where, "answer", str(e)) from None
    return record


def task_metric(record: dict[str, Any]) -> str:
    """curate's metric for the record's task (the taxonomy's)."""
    from curate.curation.taxonomy import task

    return task(task_key(record["qtype"], record["qsubtype"])).metric


def gold_of(record: dict[str, Any]) -> tuple[Any, str]:
    """The gold answer as curate's metrics read it, and its answer type."""
    from curate.curation.answers import normalize_answer, split_list

    if record["qtype"] == "Visualization":
        chart = chart_answer(record["answer"])
        return {"chart_type": record["chart_type"], "x": [], "y": chart["y"], "series": chart["series"]}, "chart"
    if task_metric(record) == "rouge_l":  # free text, compared as text: its commas are not list separators
        return record["answer"].strip(), "text"
    value = split_list(record["answer"].strip())
    if isinstance(value, list):
        return value, "list"
    return value, ("number" if isinstance(normalize_answer(value), float) else "text")


def answer_form(record: dict[str, Any]) -> str:
    """How the gold is written (the import's per-field counts)."""
    if record["qtype"] != "Visualization":
        return "text"
    return "python: y_references" + (" with np.nan" if None in chart_answer(record["answer"])["y"] else "")


SAME_QUESTION = ("question", "answer", "qtype", "qsubtype", "table")


def identity(seen: dict[str, Any], record: dict[str, Any]) -> str:
    """The record's key in the release. TableBench repeats each question once per prompt variant
    under one id: the same question under the same id is the same sample. Another question under
    an id already used (TableBench as first published: e067a40ab6736ac5a004d9dc69f2d5c0, an
    Aggregation and an ArithmeticCalculation) is kept as `ID#SUBTYPE`, or `ID#N` (its position
    among the questions that share the id, from 2) where the subtype does not tell them apart;
    the first keeps the plain id. Stable for the same file."""
    published = record["id"]
    keys = [published] + [k for k in seen if k.startswith(published + "#")]
    for key in keys:
        if key in seen and all(seen[key][2][n] == record[n] for n in SAME_QUESTION):
            return key
    if published not in seen:
        return published
    by_subtype = f"{published}#{record['qsubtype']}"
    return by_subtype if by_subtype not in seen else f"{published}#{len(keys) + 1}"


def _flag_shared_ids(imported: Imported, seen: dict[str, Any]) -> dict[str, str]:
    """Every id used by more than one question: flagged for the audit, never merged."""
    groups: dict[str, list[str]] = {}
    for key, (_, _, record) in seen.items():
        groups.setdefault(record["id"], []).append(key)
    shared = {published: ", ".join(keys) for published, keys in groups.items() if len(keys) > 1}
    for published, keys in groups.items():
        if len(keys) > 1:
            differ = [n for n in SAME_QUESTION if any(seen[k][2][n] != seen[keys[0]][2][n] for k in keys)]
            for key in keys:
                where = seen[key]
                imported.flags.append({"source_id": key, "kind": "duplicate_id", "where": f"{where[0]}:line {where[1]}",
                                       "detail": f"TableBench id {published} is used by {len(keys)} questions "
                                                 f"({', '.join(keys)}; they differ in {', '.join(differ)}): each "
                                                 "kept under its own source_id"})
    if shared:
        imported.notes.append(f"{len(shared)} TableBench id(s) used by more than one question, each question kept as "
                              "ID#SUBTYPE (or ID#N) and flagged for `curate audit`: " + "; ".join(shared.values()))
    return shared


def _id_of(line: str) -> str:
    """The id of a line that cannot be read, where one can be seen."""
    match = re.search(r'"id"\s*:\s*"([^"]*)"', line)
    return match.group(1) if match else ""


@importer("tablebench")
def read(paths: list[Path]) -> Imported:
    from curate.curation.sample import Sample
    from curate.curation.table import Provenance, Table

    imported = Imported(benchmark="TableBench", profile="tablebench", citation=CITATION, licence=LICENCE,
                        settings={"table_file": "table.csv"})
    files = sorted(p for path in paths for p in ([path] if path.is_file() else sorted(path.glob("*.jsonl"))))
    if not files:
        raise BadInput(paths[0] if paths else "", "", "", "no TableBench .jsonl file here")
    seen: dict[str, tuple[str, int, dict[str, Any]]] = {}  # identity -> where first read, the record
    for path in files:
        imported.sources.append(SourceFile(str(path), sha256_of(path), LICENCE))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            try:
                record = _record(path, number, line)
            except BadInput as e:
                imported.refuse(e, _id_of(line))
                continue
            key = identity(seen, record)
            if key not in seen:
                seen[key] = (str(path), number, {**record, "instructions": {}})
                imported.read_as("answer", answer_form(record))
                imported.read_as("table", "JSON text" if re.search(r'"table"\s*:\s*"', line) else "object {columns, data}")
            variant = record.get("instruction_type", "DP")
            seen[key][2]["instructions"][variant] = record.get("instruction", "")
    shared_ids = _flag_shared_ids(imported, seen)
    for source_id, (path_text, number, record) in seen.items():
        body = verbatim_body(record["table"]["columns"], record["table"]["data"])
        table = Table(name=f"tablebench/{source_id}", body=body,
                      provenance=Provenance(source="tablebench", path=path_text, sheet=source_id, licence=LICENCE))
        imported.tables.append(table)
        answer, answer_type = gold_of(record)
        provenance = {"source_id": source_id, "source": "tablebench", "source_file": path_text,
                      "source_line": str(number), "qtype": record["qtype"], "qsubtype": record["qsubtype"],
                      "source_answer": record["answer"], "licence": LICENCE,
                      **({"published_id": record["id"], "id_shared_by": shared_ids[record["id"]]}
                         if record["id"] in shared_ids else {}),
                      **({"chart_type": record["chart_type"]} if record["qtype"] == "Visualization" else {}),
                      **{f"instruction_{v}": text for v, text in sorted(record["instructions"].items())}}
        imported.samples.append(Sample(task=task_key(record["qtype"], record["qsubtype"]), question=record["question"],
                                       answer=answer, answer_type=answer_type, table_ids=(table.id,),
                                       origin="import", quality="published", template="tablebench",
                                       provenance=provenance))
    imported.notes.append(f"{len(seen)} questions from {len(files)} file(s); prompt variants per question kept in "
                          "provenance (instruction_DP, instruction_TCoT, instruction_SCoT, instruction_PoT).")
    return imported
