"""Inference modes: how a sample becomes a prompt, and how a reply (and its code) becomes an answer.

- **tcot** (textual chain of thought): the table in the prompt, in the configuration's
  serialization; the model reasons and ends with "Final Answer: ...".
- **pot** (program of thought): the model writes one Python program over the table loaded as a
  DataFrame (`df`; several tables: `dfs[name]`); it runs in the sandbox and what it prints is
  the answer. A program that fails scores zero.
- **icot** (interleaved): the model may write a code block per turn; each runs in one sandboxed
  session (variables persist), its output or error goes back, for up to `max_turns` turns; then
  a final answer.
- **treethinker** (RealHiTBench's method for hierarchical tables): the table with its header tree
  as TreeThinker's tuples (axis, level, start, end, text); first the model aligns the question's
  keywords to header paths in the tree, then it reasons step by step over those headers
  (thought, the cells read, the result) to a final answer.

Tasks whose answer is not a value (tasks.toml) are prompted the same way in every mode: a SQL
query (text-to-SQL: tcot), a choice among table names (retrieval: tcot), a chart (chart
generation: "chart", a plotting program run in the sandbox and read back).

Several tables (MMQA's multi-table tasks) are shown one after another, each under its name.
"""

from __future__ import annotations

import tomllib
from functools import lru_cache
from pathlib import Path
from typing import Any, Mapping, Sequence

MODES = ("tcot", "pot", "icot", "treethinker")
# what a (mode, task) runs as: the modes, and "chart" for chart-generation tasks in any mode
RUNS_AS = MODES + ("chart",)
TASKS_FILE = Path(__file__).with_name("tasks.toml")


@lru_cache(maxsize=1)
def _task_rules() -> dict[str, dict[str, str]]:
    return tomllib.loads(TASKS_FILE.read_text())


def task_rules(task: str) -> dict[str, str]:
    """The task's prompting rules (tasks.toml): an exact key, else the longest prefix key."""
    rules = _task_rules()
    if task in rules:
        return rules[task]
    prefixes = [k for k in rules if k.endswith("/") and task.startswith(k)]
    return rules[max(prefixes, key=len)] if prefixes else {}

FINAL_FORMAT = ('End your reply with one line: "Final Answer: <answer>". For several values, separate them '
                'with commas; if a value itself holds a comma, write the answer as JSON (["Breen, Mary", "Kim"], '
                'or "July 1, 2016" for one value). For a yes/no question, answer True or False.')

TCOT = """You are given {what} and a question about {it}.

{tables}

Question: {question}

Think step by step. {final}"""

POT = """You are given {what} and a question about {it}.

{tables}

The {data} already loaded as {frames} (pandas is `pd`, numpy is `np`).
Question: {question}

Write one Python program, in a ```python code block, that computes the answer and prints only the
answer (several values: one print, separated by commas; values that hold commas: one print of
their JSON). Do not load the data again."""

ICOT = """You are given {what} and a question about {it}.

{tables}

The {data} loaded as {frames} in a Python session (pandas is `pd`, numpy is `np`).
Question: {question}

You may run Python: write one ```python code block per reply and you will get its output back.
When you know the answer, reply without code. {final}"""

CHART = """You are given {what} and a question about {it}.

{tables}

The {data} already loaded as {frames} (pandas is `pd`, numpy is `np`, matplotlib.pyplot is `plt`).
Question: {question}

Write one Python program, in a ```python code block, that draws the chart with matplotlib: one
figure, the values plotted as they are (no sorting or rounding the question does not ask for).
Do not load the data again, and do not save or show the figure."""

TREETHINKER = """You are given {what} and a question about {it}.

{tables}

The header tree of {the_table}, one tuple per header cell: (axis, level, first, last, text), where
axis C is a column header spanning columns first..last (numbered from 0), axis R a row header
spanning body rows first..last, and level 0 is the outermost header:
{trees}

Question: {question}

Step 1 of 2: list the keywords of the question and, for each, the header path it refers to in the
tree (for example "C: Population > Male"). Do not answer yet."""

TREETHINKER_ANSWER = ("Step 2 of 2: answer the question using the headers you aligned. Reason step by step: "
                      "for each step say what you look for, which cells you read (by their header paths) and "
                      "what you find. " + FINAL_FORMAT)

ICOT_OUTPUT = "Output:\n{output}\n\nContinue: run more code, or give the final answer."
ICOT_LAST = "Output:\n{output}\n\nNo more code can run. Give the final answer now. " + FINAL_FORMAT


def effective_mode(mode: str, task: str) -> str:
    """What a mode runs as for this task: a query or a choice of names is prompted as TCoT in
    every mode, a chart as a plotting program ("chart")."""
    rules = task_rules(task)
    if rules.get("answer") == "chart":
        return "chart"
    return "tcot" if rules.get("answer") == "sql" or rules.get("tables") == "pool" else mode


def header_tuples(nodes: list[dict[str, Any]]) -> str:
    """A header tree as TreeThinker's tuples, one per line, column headers first."""
    ordered = sorted(nodes, key=lambda n: (n["axis"] != "C", n["level"], n["start"]))
    return "\n".join(f"({n['axis']}, {n['level']}, {n['start']}, {n['end']}, {n['text']!r})" for n in ordered)


MAX_NOTES = 8  # lines of a table's notes shown to the model (sources and footnotes can run long)
MAX_NOTE = 300  # characters of one line


def table_block(names: list[str], texts: list[str], captions: Sequence[str] | None = None,
                notes: Sequence[Sequence[str]] | None = None,
                keys: Sequence[Sequence[tuple[str, str]]] | None = None, named: bool = False) -> str:
    """The tables as the prompt shows them, each under its caption where it has one that its text
    does not already carry (HTML writes its own): the title says what the figures are ("Revisions
    since previously published estimates"), which the cells alone do not; and over its notes (the
    sheet's lines below or around the grid: a unit, a footnote a cell's marker points to, the
    source), which the serializations leave out; and over its column key (`curation.column_key`:
    "- W: wins"), by which a question names a column by what it means. A single table is shown under
    its name only where the question names it (`named`)."""
    from curate.curation.column_key import key_text

    captions = list(captions or [""] * len(texts))
    said = [f"{c}\n" if c and c not in text else "" for c, text in zip(captions, texts)]
    below = [key_text(k) + _notes_text(n, text)
             for k, n, text in zip(keys or [()] * len(texts), notes or [()] * len(texts), texts)]
    if len(texts) == 1 and not (named and len(names) == 1 and names[0]):  # no name to show: shown unnamed
        return f"Table:\n{said[0]}{texts[0]}{below[0]}"
    return "\n\n".join(f"Table {name}:\n{title}{text}{after}"
                       for name, title, text, after in zip(names, said, texts, below))


def _notes_text(notes: Sequence[str], text: str) -> str:
    lines = [" ".join(str(n).split()) for n in notes]
    lines = [n if len(n) <= MAX_NOTE else n[:MAX_NOTE - 3] + "..." for n in lines if n and n not in text]
    if not lines:
        return ""
    more = f"\n({len(lines) - MAX_NOTES} more lines of notes)" if len(lines) > MAX_NOTES else ""
    return "\nNotes:\n" + "\n".join(lines[:MAX_NOTES]) + more


def pool_key_text(pairs: Sequence[tuple[str, str]]) -> str:
    """A retrieval candidate's column key on the line under it: "  column key: WCWin: wild card berth; ..."."""
    return "\n  column key: " + "; ".join(f"{column}: {label}" for column, label in pairs) if pairs else ""


def frame_names(names: list[str]) -> str:
    if len(names) == 1:
        return "a pandas DataFrame `df`"
    return "a dict of pandas DataFrames `dfs`, keyed by table name: " + ", ".join(f"`dfs[{n!r}]`" for n in names)


def prompt(mode: str, question: str, names: list[str], texts: list[str], task: str = "",
           pool: Mapping[str, Sequence[str]] | None = None, trees: list[str] | None = None,
           captions: Sequence[str] | None = None, notes: Sequence[Sequence[str]] | None = None,
           keys: Sequence[Sequence[tuple[str, str]]] | None = None,
           pool_keys: Mapping[str, Sequence[tuple[str, str]]] | None = None) -> str:
    """The first user message. `trees` (treethinker): each table's header tuples; `captions`: each
    table's caption (its title); `notes`: each table's notes; `keys`: each table's column key;
    `pool_keys`: the column keys of a retrieval pool's tables, by name."""
    rules = task_rules(task)
    if rules.get("answer") == "chart":
        mode = "chart"
    listed = rules.get("tables") == "pool" and bool(pool)
    if listed:
        captions = notes = keys = None
        names, texts = ["(candidates)"], ["\n".join(f"- {name}" + (f" (columns: {', '.join(columns)})" if columns else "")
                                                    + pool_key_text((pool_keys or {}).get(name, ()))
                                                    for name, columns in pool.items())]
        mode = "tcot"  # nothing to compute: a choice among names
    several = len(texts) > 1
    if rules.get("instruction"):
        question = f"{question}\n{rules['instruction']}"
    final = "" if rules.get("answer") == "sql" else FINAL_FORMAT
    if rules.get("answer") == "sql":
        mode = "tcot"  # the query is the answer: no program of thought
    tree_text = trees or []
    if several and tree_text:
        tree_text = [f"Table {name}:\n{tree}" for name, tree in zip(names, tree_text)]
    # a retrieval pool is the names and columns of the tables to choose from, not a table's rows
    what = "a list of tables (each with its columns)" if listed else "several tables" if several else "a table"
    block = table_block(names, texts, captions, notes, keys, named=rules.get("names") == "always")
    fields: dict[str, Any] = {
        "what": what, "it": "them" if several or listed else "it",
        "tables": f"Tables:\n{texts[0]}" if listed else block,
        "question": question, "final": final,
        "data": "tables are" if several else "table is", "frames": frame_names(names),
        "the_table": "each table" if several else "the table", "trees": "\n\n".join(tree_text)}
    template = {"tcot": TCOT, "pot": POT, "icot": ICOT, "chart": CHART, "treethinker": TREETHINKER}[mode]
    return template.format(**fields)


def program_tables(names: list[str], csv_paths: list[str]) -> tuple[dict[str, str], str]:
    """The sandbox's table variables, and the code that builds `dfs` for several tables."""
    if len(names) == 1:
        return {"df": csv_paths[0]}, ""
    variables = {f"_t{i}": path for i, path in enumerate(csv_paths)}
    code = "dfs = {" + ", ".join(f"{name!r}: _t{i}" for i, name in enumerate(names)) + "}\n"
    return variables, code
