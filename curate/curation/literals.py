"""Python values as benchmarks publish them, read without running anything.

TableBench's chart golds are Python code (`y_references = [[34, 4, np.nan]]`) and MMQA writes many
answers as a pandas `split` dict's Python repr (`{'columns': [...], 'index': [...], 'data': [...]}`),
both beyond `ast.literal_eval` once they hold `np.nan`, `nan` or `float('nan')`. Here the syntax tree
is walked and only literals are accepted: numbers, strings, lists, tuples, dicts, True/False/None,
a sign, and the spellings of a missing number (`np.nan`, `numpy.nan`, `math.nan`, `pd.NA`, `nan`,
`NaN`, `float('nan')`), which become None (JSON's null). Anything else (a call, a name, an
operation) is refused with the reason: the text is never evaluated.
"""

from __future__ import annotations

import ast
from typing import Any

# the spellings of "no number" the benchmarks' code uses; all read as None
_MISSING_NAMES = {"nan", "NaN", "NAN", "NA", "NaT", "None"}
_MISSING_MODULES = {"np", "numpy", "math", "pd", "pandas"}


class LiteralError(ValueError):
    """Text that is not a plain Python literal (what it holds instead is named)."""


def _missing(node: ast.AST) -> bool:
    if isinstance(node, ast.Name):
        return node.id in _MISSING_NAMES
    if isinstance(node, ast.Attribute):
        return (isinstance(node.value, ast.Name) and node.value.id in _MISSING_MODULES
                and node.attr in _MISSING_NAMES)
    if isinstance(node, ast.Call):  # float('nan'), np.float64('nan')
        return (len(node.args) == 1 and not node.keywords and isinstance(node.args[0], ast.Constant)
                and str(node.args[0].value).strip().lower() == "nan")
    return False


def _value(node: ast.AST) -> Any:
    if _missing(node):
        return None
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float, str, bool, type(None))):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        inner = _value(node.operand)
        if isinstance(inner, (int, float)) and not isinstance(inner, bool):
            return -inner if isinstance(node.op, ast.USub) else inner
        if inner is None:  # -np.nan is still no number
            return None
    if isinstance(node, (ast.List, ast.Tuple)):
        return [_value(e) for e in node.elts]
    if isinstance(node, ast.Dict) and all(k is not None for k in node.keys):
        return {_key(k): _value(v) for k, v in zip(node.keys, node.values)}
    raise LiteralError(f"not a literal: {ast.dump(node)[:80]}")


def _key(node: ast.AST | None) -> Any:
    key = _value(node) if node is not None else None
    if isinstance(key, list):
        raise LiteralError("a dict key must be a string or a number")
    return key


def literal(text: str) -> Any:
    """A Python literal's value (lists for tuples; None for the spellings of NaN)."""
    try:
        return _value(ast.parse(text.strip(), mode="eval").body)
    except SyntaxError as e:
        raise LiteralError(f"not Python ({e.msg})") from None
    except (RecursionError, MemoryError):  # nested beyond reason: hostile input is refused, not a crash
        raise LiteralError("nested too deeply") from None


def assignment(text: str, name: str) -> Any:
    """The literal assigned to `name` in code such as `y_references = [[1, 2, np.nan]]` (the last
    assignment to it; other statements, imports and comments are ignored, never run)."""
    try:
        tree = ast.parse(text.strip())
        found: list[ast.AST] = [node.value for node in tree.body if isinstance(node, ast.Assign)
                                and any(isinstance(t, ast.Name) and t.id == name for t in node.targets)]
        if not found:
            raise LiteralError(f"no assignment to {name}")
        return _value(found[-1])
    except SyntaxError as e:
        raise LiteralError(f"not Python ({e.msg})") from None
    except (RecursionError, MemoryError):
        raise LiteralError("nested too deeply") from None
