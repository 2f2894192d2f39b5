"""`curate evaluate --backend gold`: every sample answered with its own gold, written the way the
mode asks (a Final Answer line, a program that prints it, a ```sql block, a chart program that
draws it). A release whose prompts, extraction and metrics agree scores exactly 1.000 on every
task and mode: a standing self-test of the evaluator and of the release's answer conventions.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

MODES = ("tcot", "pot")


def written(answer: Any) -> str:
    """An answer as a Final Answer line says it, unambiguously: a list as "a, b" unless an item
    holds a comma (then a JSON list), a text holding ", " as a JSON string, numbers plainly."""
    if isinstance(answer, list):
        items = [written_item(a) for a in answer]
        if any(needs_quotes(i) for i in items):
            return json.dumps(answer, ensure_ascii=False)
        return ", ".join(items)
    if isinstance(answer, str) and needs_quotes(answer):
        return json.dumps(answer, ensure_ascii=False)
    return written_item(answer)


def needs_quotes(text: str) -> bool:
    """Whether a text said plainly would be read back as something else: split at its commas, its
    emphasis marks or closing full stop cut ("*Kruger60A", "."), or parsed as JSON."""
    from curate.curation.answers import clean_answer

    return ("," in text or clean_answer(text) != text or text[:1] in ('"', "[")
            or "\n" in text)


def written_item(value: Any) -> str:
    if isinstance(value, bool):
        return "True" if value else "False"  # what the prompt asks of a yes/no question
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


def chart_program(gold: dict[str, Any]) -> str:
    """matplotlib code that draws the gold chart, on a figure of its own (TableBench's harness runs a
    chart program twice in one pyplot state: one that drew on the current axes would draw twice)."""
    return "plt.figure()\n" + _chart_call(gold)


def _chart_call(gold: dict[str, Any]) -> str:
    kind = str(gold.get("chart_type", "bar")).lower()
    # a missing value (TableBench's np.nan, None here) is drawn as NaN, as the benchmark's own code does
    y = json.dumps(gold.get("y", [])).replace("null", "float('nan')")
    x = json.dumps(gold.get("x") or [str(i) for i in range(len(gold.get("y", [])))])  # TableBench gives no x
    if "pie" in kind:
        return f"plt.pie({y}, labels={x})"
    if "line" in kind or kind in ("area", "radar"):
        return f"plt.plot({x}, {y})"
    if "scatter" in kind:
        return f"plt.scatter({x}, {y})"
    if "horizontal" in kind or kind == "hbar":
        return f"plt.barh({x}, {y})"
    return f"plt.bar({x}, {y})"


def gold_reply(sample: Any, mode: str, answers_with: str) -> str:
    """The reply a perfect model gives in `mode`. `answers_with`: the task's effective mode
    ("chart" for chart generation) or "sql" (a query is the answer)."""
    if answers_with == "sql":
        program = sample.program or {}
        return f"```sql\n{program.get('text', '') if isinstance(program, dict) else program.text}\n```"
    if answers_with == "chart":
        return f"```python\n{chart_program(sample.answer)}\n```"
    if answers_with == "pot":  # what the program prints is its answer
        return f"```python\nprint({written(sample.answer)!r})\n```"
    return f"Thinking done.\nFinal Answer: {written(sample.answer)}"


def write_gold_replies(modes: list[str], path: Path, samples: list[Any]) -> Path:
    """A replay file (`{"sample_id", "mode", "reply"}` per line) of gold replies."""
    from curate.evaluation.modes import effective_mode, task_rules

    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as f:
        for sample in samples:
            for mode in modes:
                runs_as = effective_mode(mode, sample.task)
                answers_with = "sql" if task_rules(sample.task).get("answer") == "sql" else runs_as
                f.write(json.dumps({"sample_id": sample.id, "mode": mode,
                                    "reply": gold_reply(sample, mode, answers_with)}, ensure_ascii=False) + "\n")
    return path
