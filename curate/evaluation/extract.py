"""Answers read out of a model's reply.

In the order tried (the first that finds something wins):

1. a "Final Answer:" line (the last one: models restate)
2. a JSON answer block: {"answer": ...} (fenced or bare; the last one)
3. \\boxed{...} (the last one; nested braces kept)
4. for program modes: what the last code block printed (passed in by the caller); its own last
   "Final Answer:" line when it prints one

A reply with none of these has no answer: it scores zero and is counted as `unextracted`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from curate.curation.answers import clean_answer, final_answer, final_answer_line, split_list

_JSON_BLOCK = re.compile(r"```(?:json)?\s*(\{.*?\})\s*```", re.S)
_BARE_JSON = re.compile(r"\{[^{}]*\"answer\"\s*:[^{}]*\}", re.S)
_CODE_BLOCK = re.compile(r"```(?:python|py)?[ \t]*\n(.*?)```", re.S)


@dataclass(frozen=True)
class Extracted:
    answer: Any  # None when nothing was found
    method: str  # final_answer | json | boxed | program_output | none


def extract_answer(reply: str, program_output: str | None = None) -> Extracted:
    text = reply or ""
    if program_output is not None:  # `print(f"Final Answer: {x}")` in the code states nothing: its output does
        text = _CODE_BLOCK.sub("", text)
    stated = final_answer(text)
    if stated is not None:
        return Extracted(stated, "final_answer")
    for candidate in reversed([m.group(1) for m in _JSON_BLOCK.finditer(text)] + _BARE_JSON.findall(text)):
        try:
            value = json.loads(candidate)
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict) and "answer" in value and value["answer"] not in (None, ""):
            return Extracted(value["answer"], "json")
    boxed = last_boxed(text)
    if boxed:
        return Extracted(split_list(clean_answer(boxed)), "boxed")
    if program_output is not None and program_output.strip():
        printed = final_answer(program_output)
        if printed is not None:  # a program that prints "Final Answer: x" (TableBench's PoT prompt asks so)
            return Extracted(printed, "program_output")
        lines = [line for line in program_output.strip().splitlines() if line.strip()]
        return Extracted(split_list(clean_answer(lines[-1])) if len(lines) == 1 else program_output.strip(),
                         "program_output")
    return Extracted(None, "none")


_SQL_BLOCK = re.compile(r"```sql[ \t]*\n(.*?)```", re.S | re.I)


def extract_sql(reply: str) -> Extracted:
    """A SQL answer: the last ```sql block, else any last code block, else a Final Answer line."""
    blocks = _SQL_BLOCK.findall(reply or "") or _CODE_BLOCK.findall(reply or "")
    if blocks and blocks[-1].strip():
        return Extracted(blocks[-1].strip(), "sql_block")
    line = final_answer_line(reply)
    return Extracted(line, "final_answer") if line else Extracted(None, "none")


def last_code_block(reply: str) -> str | None:
    """The last fenced code block of a reply (PoT, ICoT), or None."""
    blocks = _CODE_BLOCK.findall(reply or "")
    return blocks[-1] if blocks else None


def last_boxed(text: str) -> str | None:
    start = text.rfind("\\boxed{")
    if start == -1:
        return None
    depth, i = 0, start + len("\\boxed")
    for j in range(i, len(text)):
        if text[j] == "{":
            depth += 1
        elif text[j] == "}":
            depth -= 1
            if depth == 0:
                return text[i + 1:j].strip()
    return None
