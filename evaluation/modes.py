"""Inference modes: how a sample becomes a prompt, and how a reply (and its code) becomes an answer.

- **tcot** (textual chain of thought): the table in the prompt, in the configuration's
  serialization; the model reasons and ends with "Final Answer: ...".
- **pot** (program of thought): the model writes one Python program over the table loaded as a
  DataFrame (`df`; several tables: `dfs[name]`); it runs in the sandbox and what it prints is
  the answer. A program that fails scores zero.
- **icot** (interleaved): the model may write a code block per turn; each runs in one sandboxed
  session (variables persist), its output or error goes back, for up to `max_turns` turns; then
  a final answer.

Several tables (MMQA's multi-table tasks) are shown one after another, each under its name.
"""

from __future__ import annotations

import tomllib
from functools import lru_cache
from pathlib import Path
from typing import Any

MODES = ("tcot", "pot", "icot")
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
                "with commas. For a yes/no question, answer True or False.")

TCOT = """You are given {what} and a question about {it}.

{tables}

Question: {question}

Think step by step. {final}"""

POT = """You are given {what} and a question about {it}.

{tables}

The {data} already loaded as {frames} (pandas is `pd`, numpy is `np`).
Question: {question}

Write one Python program, in a ```python code block, that computes the answer and prints only the
answer (several values: one print, separated by commas). Do not load the data again."""

ICOT = """You are given {what} and a question about {it}.

{tables}

The {data} loaded as {frames} in a Python session (pandas is `pd`, numpy is `np`).
Question: {question}

You may run Python: write one ```python code block per reply and you will get its output back.
When you know the answer, reply without code. {final}"""

ICOT_OUTPUT = "Output:\n{output}\n\nContinue: run more code, or give the final answer."
ICOT_LAST = "Output:\n{output}\n\nNo more code can run. Give the final answer now. " + FINAL_FORMAT


def effective_mode(mode: str, task: str) -> str:
    """A task answered with a query or a choice of names is prompted as TCoT in every mode."""
    rules = task_rules(task)
    return "tcot" if rules.get("answer") == "sql" or rules.get("tables") == "pool" else mode


def table_block(names: list[str], texts: list[str]) -> str:
    if len(texts) == 1:
        return f"Table:\n{texts[0]}"
    return "\n\n".join(f"Table {name}:\n{text}" for name, text in zip(names, texts))


def frame_names(names: list[str]) -> str:
    if len(names) == 1:
        return "a pandas DataFrame `df`"
    return "a dict of pandas DataFrames `dfs`, keyed by table name: " + ", ".join(f"`dfs[{n!r}]`" for n in names)


def prompt(mode: str, question: str, names: list[str], texts: list[str], task: str = "",
           pool: list[str] | None = None) -> str:
    rules = task_rules(task)
    if rules.get("tables") == "pool" and pool:
        names, texts = ["(candidates)"], ["\n".join(f"- {name}" for name in pool)]
        mode = "tcot"  # nothing to compute: a choice among names
    several = len(texts) > 1
    if rules.get("instruction"):
        question = f"{question}\n{rules['instruction']}"
    final = "" if rules.get("answer") == "sql" else FINAL_FORMAT
    if rules.get("answer") == "sql":
        mode = "tcot"  # the query is the answer: no program of thought
    fields: dict[str, Any] = {
        "what": "several tables" if several else "a table", "it": "them" if several else "it",
        "tables": table_block(names, texts), "question": question, "final": final,
        "data": "tables are" if several else "table is", "frames": frame_names(names)}
    template = {"tcot": TCOT, "pot": POT, "icot": ICOT}[mode]
    return template.format(**fields)


def program_tables(names: list[str], csv_paths: list[str]) -> tuple[dict[str, str], str]:
    """The sandbox's table variables, and the code that builds `dfs` for several tables."""
    if len(names) == 1:
        return {"df": csv_paths[0]}, ""
    variables = {f"_t{i}": path for i, path in enumerate(csv_paths)}
    code = "dfs = {" + ", ".join(f"{name!r}: _t{i}" for i, name in enumerate(names)) + "}\n"
    return variables, code
