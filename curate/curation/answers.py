"""Answer normalisation and comparison, shared by generation, `curate verify` and evaluation.

A format rule (from the task taxonomy or a template) says how a computed value becomes a gold
answer: `exact` (the value as stored), `round:N`, `int`, `bool`, `text`, or `list:<rule>`
(the inner rule applied to every number inside a list).
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import math
import re
from dataclasses import dataclass
from typing import Any

from curate.curation.header_tree import PATH_SEPARATOR


def plain(value: Any) -> Any:
    """A JSON-ready Python value: numpy scalars, decimals and dates become int/float/str."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):  # numpy's float64 too
        return None if math.isnan(value) else float(value)
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, dict):  # a DuckDB struct, a chart's {chart_type, x, y}
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, decimal.Decimal):
        return float(value)
    if isinstance(value, (dt.datetime, dt.date, dt.time)):
        return value.isoformat()
    item = getattr(value, "item", None)  # numpy scalars
    if item is not None:
        return plain(item())
    return str(value)


def format_answer(value: Any, rule: str) -> Any:
    """Normalise a computed value by `rule`; None (no answer) stays None."""
    value = plain(value)
    if value is None:
        return None
    if rule.startswith("list:"):
        inner = rule[5:]
        items = value if isinstance(value, list) else [value]
        return [format_answer(v, inner) if not isinstance(v, str) else v for v in items]
    if isinstance(value, list):
        return [format_answer(v, rule) for v in value]
    if rule.startswith("round:"):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return value
        if isinstance(value, int):
            return value
        return round_number(value, int(rule[6:]))
    if rule == "int":
        return int(round(value)) if isinstance(value, (int, float)) and not isinstance(value, bool) else value
    if rule == "bool":
        return bool(value)
    if rule == "text":
        return value if isinstance(value, str) else str(value)
    return value  # exact


def round_number(value: float, decimals: int) -> float:
    """Round as a person does: half away from zero, on the decimal the value stands for (15
    significant digits), so the median 1.255 of 1.15 and 1.36 is 1.26 although the float holds
    1.2549999999999999; -0.0 is written as 0.0."""
    if not math.isfinite(value) or abs(value) >= 1e15:
        return value  # 6.02e23 has no decimals to round (and Decimal's 28 digits cannot hold it at 2)
    exact = decimal.Decimal(f"{value:.15g}")
    out = float(exact.quantize(decimal.Decimal(1).scaleb(-decimals), rounding=decimal.ROUND_HALF_UP))
    return 0.0 if out == 0 else out


def answers_match(gold: Any, computed: Any, rule: str) -> bool:
    """Does a freshly computed raw value agree with a stored gold answer under `rule`?

    Numbers under `round:N` match when the gold is a correct rounding of the computed value (so
    two engines that differ in the last bits of a float still agree); under `exact` they match
    to 1e-9 relative.
    """
    computed = plain(computed)
    if isinstance(gold, dict) or isinstance(computed, dict):  # a chart: the same keys, each value matching
        return (isinstance(gold, dict) and isinstance(computed, dict) and gold.keys() == computed.keys()
                and all(answers_match(gold[k], computed[k], rule) for k in gold))
    if isinstance(gold, list) and computed is not None and not isinstance(computed, list):
        computed = [computed]  # a result set of one value is a list of one
    if isinstance(gold, list) or isinstance(computed, list):
        if not (isinstance(gold, list) and isinstance(computed, list)) or len(gold) != len(computed):
            return False
        inner = rule[5:] if rule.startswith("list:") else rule
        return all(answers_match(g, c, inner) for g, c in zip(gold, computed))
    if isinstance(gold, bool) or isinstance(computed, bool):
        return isinstance(gold, bool) and isinstance(computed, bool) and gold == computed
    if isinstance(gold, (int, float)) and isinstance(computed, (int, float)):
        scale = max(1.0, abs(float(computed)))
        if rule.startswith("round:"):
            return abs(float(gold) - float(computed)) <= 0.5 * 10 ** -int(rule[6:]) + 1e-9 * scale
        if rule == "int":
            return abs(float(gold) - float(computed)) <= 0.5
        return abs(float(gold) - float(computed)) <= 1e-9 * scale
    return gold == computed


_NUMBER = re.compile(r"^[-+]?(?=\.?\d)(\d{1,3}(,\d{3})+|\d+)?(\.\d+)?([eE][-+]?\d+)?%?$")  # 1,234.5 / 45% / 1.7e-07
_SPACES = re.compile(r"\s+")
_FINAL = re.compile(r"final\s+answer\s*[:：]\s*(.*)", re.I)
_WRAPPING = re.compile(r"^[\s*_`]+|[\s*_`.]+$")  # markdown emphasis around an answer, a closing full stop


def final_answer_line(text: str) -> str | None:
    """The last "Final Answer:" line of a reply (models restate), unwrapped; None if absent or empty."""
    found = _FINAL.findall(text or "")
    value = clean_answer(found[-1]) if found else ""
    return value or None


def final_answer(text: str) -> Any:
    """The last "Final Answer:" line as an answer: "a, b" is a list (see `split_list`). None if absent."""
    line = final_answer_line(text)
    return split_list(line) if line else None


def clean_answer(value: str) -> str:
    """The first line of an answer without the emphasis around it or a closing full stop."""
    value = value.strip().splitlines()[0] if value.strip() else ""
    return _WRAPPING.sub("", value)


def split_list(answer: str) -> Any:
    """"a, b, c" is a list; "1,234" (no space after the comma) is a number; a JSON list is a list,
    and a JSON string one text: the way to give back values that hold commas ("Breen, Mary")."""
    if (answer.startswith("[") and answer.endswith("]")) or (len(answer) > 1 and answer[0] == answer[-1] == '"'):
        try:
            value = json.loads(answer)
            if isinstance(value, (list, str)):
                return value
        except json.JSONDecodeError:
            pass
    parts = [p.strip() for p in answer.split(",")]
    if len(parts) > 1 and not _NUMBER.match(answer.strip()):
        return [p for p in parts if p]
    return answer


def normalize_answer(value: Any) -> Any:
    """An answer as judges and metrics compare it: numbers as floats ("42", "42.00", "1,234", "45%"),
    text folded (case, spacing, surrounding punctuation), "yes"/"true" and "no"/"false" as booleans,
    JSON lists as lists."""
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("[") and text.endswith("]"):
            try:
                return normalize_answer(json.loads(text))
            except json.JSONDecodeError:
                pass
        # surrounding punctuation, but not the point of ".5"
        folded = _SPACES.sub(" ", text.strip(" ,;:!?\"'").rstrip(".").strip(" ,;:!?\"'")).lower()
        if folded in ("true", "yes"):
            return True
        if folded in ("false", "no"):
            return False
        compact = folded.replace(" ", "")
        if compact and _NUMBER.match(compact) and any(ch.isdigit() for ch in compact):
            return float(compact.replace(",", "").rstrip("%"))
        return folded
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, (list, tuple)):
        return [normalize_answer(v) for v in value]
    return normalize_answer(str(value))


@dataclass(frozen=True)
class Equivalence:
    """When an answer counts as the reference answer: the one rule the vote, the judge and every
    metric ask (`curate verify` asks a different question, whether a stored gold is a correct
    rounding of a computed value: `answers_match`).

    - both sides normalised (`normalize_answer`): "42", "42.00" and 42 are one number, "45%" is 45,
      text folds case, spacing and surrounding punctuation, "yes"/"true" are True
    - numbers within `rel_tol` of the reference, relative to the reference (TableBench's +-10% is
      relative to the gold), plus `abs_tol`: at 1%, 0.95 is not 0.9405 (0.0095 > 0.009405)
    - booleans only equal booleans
    - text equal, or named together in `aliases`; a label written with its path in a hierarchical
      table ("Asia / Japan", as the table text shows nested rows) is the bare label of a reference
      that has no path ("Japan")
    - lists equal as multisets (order ignored) unless `ordered`; a single value is a list of one
    """

    rel_tol: float = 0.0
    abs_tol: float = 1e-9
    ordered: bool = False
    aliases: tuple[tuple[str, ...], ...] = ()

    def same(self, answer: Any, reference: Any) -> bool:
        return self._same(normalize_answer(answer), normalize_answer(reference))

    def _same(self, a: Any, r: Any) -> bool:
        if isinstance(a, list) or isinstance(r, list):
            a, r = (a if isinstance(a, list) else [a]), (r if isinstance(r, list) else [r])
            if len(a) != len(r):
                return False
            if self.ordered:
                return all(self._same(x, y) for x, y in zip(a, r))
            rest = list(r)
            for x in a:
                match = next((i for i, y in enumerate(rest) if self._same(x, y)), None)
                if match is None:
                    return False
                del rest[match]
            return True
        if isinstance(a, bool) or isinstance(r, bool):
            return isinstance(a, bool) and isinstance(r, bool) and a == r
        if isinstance(a, float) and isinstance(r, float):
            return abs(a - r) <= self.rel_tol * abs(r) + self.abs_tol
        if isinstance(a, str) and isinstance(r, str):
            return (a == r or _path_ends_in(a, r)
                    or any(a in group and r in group for group in self._alias_sets()))
        return a == r

    def _alias_sets(self) -> list[set[Any]]:
        return [{normalize_answer(x) for x in group} for group in self.aliases]


def _path_ends_in(answer: str, reference: str) -> bool:
    """"asia / japan" names "japan": the answer is the reference's label with the groups above it."""
    return (PATH_SEPARATOR in answer and PATH_SEPARATOR not in reference
            and answer.rsplit(PATH_SEPARATOR, 1)[1] == reference)


_TYPED_NUMBER = re.compile(r"^[-+]?\d[\d,]*(\.\d+)?$")


def parse_typed_answer(value: Any, answer_type: str) -> Any:
    """A model's answer held to the task's answer type (ValueError says why not)."""
    if answer_type == "bool":
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().lower() in ("true", "false", "yes", "no"):
            return value.strip().lower() in ("true", "yes")
        raise ValueError(f"the answer must be true or false, got {value!r}")
    if answer_type == "number":
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return value
        if isinstance(value, str) and _TYPED_NUMBER.match(value.strip()):
            number = float(value.strip().replace(",", ""))
            return int(number) if number.is_integer() else number
        raise ValueError(f"the answer must be a number, got {value!r}")
    if answer_type == "list":
        if isinstance(value, list) and value and all(isinstance(v, (str, int, float)) for v in value):
            return value
        raise ValueError(f"the answer must be a non-empty list of values, got {value!r}")
    if answer_type == "chart":
        if (isinstance(value, dict) and isinstance(value.get("chart_type"), str) and isinstance(value.get("x"), list)
                and isinstance(value.get("y"), list) and value["x"] and len(value["x"]) == len(value["y"])
                and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value["y"])):
            return {"chart_type": value["chart_type"], "x": value["x"], "y": value["y"]}
        raise ValueError('the answer must be {"chart_type": ..., "x": [...], "y": [numbers of the same length]}')
    if isinstance(value, str) and value.strip():
        return value.strip()
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    raise ValueError(f"the answer must be non-empty text, got {value!r}")


def parse_typed_text(text: str, answer_type: str) -> Any:
    """An answer a person typed (a reviewer's correction) held to the task's answer type: "a, b"
    or a JSON list for a list, JSON for a chart or a table (ValueError says why not)."""
    text = (text or "").strip()
    if answer_type == "list":
        value = split_list(text) if text else []
        return parse_typed_answer(value if isinstance(value, list) else [value], "list")
    if answer_type in ("chart", "table"):
        try:
            value = json.loads(text)
        except json.JSONDecodeError:
            raise ValueError(f"the answer must be written as JSON, got {text!r}") from None
        if answer_type == "table":
            if not isinstance(value, (list, dict)) or not value:
                raise ValueError(f"the answer must be a JSON list of rows or an object, got {text!r}")
            return value
        return parse_typed_answer(value, "chart")
    return parse_typed_answer(text, answer_type)
