"""Reasoning chains: a JSON list of atomic steps, run over a table's data view with numpy/scipy.

Each step reads the previous step's result (or the result it names in `input`; the table itself
is `t`) and may store its own under `name`. Values are a *frame* (columns of equal length), a
*column*, or a *scalar*.

  filter    {"where": [[column, op, value], ...]}    frame -> frame (all conditions; op: == != > >= < <=)
  sort      {"by": column, "descending": bool}        frame -> frame (rows missing `by` are left out)
  head      {"n": k}                                  frame -> frame
  select    {"column": c}                             frame -> column
  first     {}                                        column -> scalar
  aggregate {"func": f, "column": c}                  frame|column -> scalar
            f: count sum mean median min max std var range skewness kurtosis
  group     {"by": g, "func": f, "column": c}         frame -> frame [g, c], one row per group, sorted by g
  compare   {"cmp": op, "value": v | "ref": name}     scalar -> bool
  correlate {"x": c1, "y": c2, "method": pearson|spearman}   frame -> scalar
  test      {"test": t, ...}                          frame -> [statistic, p-value]
            ttest / mannwhitney / ks: "column", "by", "groups": [a, b]; chi2: "x", "y"; shapiro: "column";
            mannwhitney's optional "method": "asymptotic" (normal approximation with tie and continuity corrections)
  decide    {"alpha": a}                              [statistic, p] -> [statistic, p, "reject" | "do not reject"]
  combine   {"func": difference|ratio|percent_change, "left": name, "right": name}  -> scalar
"""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING, Any

import numpy as np

from curate.curation.answers import plain
from curate.curation.programs import ProgramError, data_view, program_kind

if TYPE_CHECKING:  # pragma: no cover
    import pyarrow as pa

    from curate.curation.table import Table

Frame = dict[str, np.ndarray]


def frame_from_arrow(body: "pa.Table") -> Frame:
    """Numbers as float64 (NaN for missing) or int64 (no missing); everything else as objects."""
    import pyarrow as pa

    frame: Frame = {}
    for name, col in zip(body.column_names, body.columns):
        t = col.type
        if pa.types.is_integer(t) and col.null_count == 0:
            frame[name] = col.to_numpy().astype(np.int64, copy=False)
        elif pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_decimal(t):
            frame[name] = col.cast(pa.float64()).to_numpy(zero_copy_only=False)
        else:
            frame[name] = np.array([plain(v) for v in col.to_pylist()], dtype=object)
    return frame


def _num(values: np.ndarray) -> np.ndarray:
    if values.dtype == object:
        raise ProgramError("a numeric step got a text column")
    return values.astype(np.float64, copy=False)


def _present(values: np.ndarray) -> np.ndarray:
    if values.dtype == object:
        return np.array([v is not None for v in values], dtype=bool)
    if values.dtype.kind == "f":
        return ~np.isnan(values)
    return np.ones(len(values), dtype=bool)


def condition_mask(frame: Frame, column: str, op: str, value: Any) -> np.ndarray:
    values = _column(frame, column)
    present = _present(values)
    if values.dtype == object:
        if op == "==":
            return present & (values == value)
        if op == "!=":
            return present & (values != value)
        raise ProgramError(f"cannot compare text column {column!r} with {op!r}")
    v = np.where(present, values, 0) if values.dtype.kind == "f" else values
    ops = {"==": np.equal, "!=": np.not_equal, ">": np.greater, ">=": np.greater_equal,
           "<": np.less, "<=": np.less_equal}
    if op not in ops or isinstance(value, (str, bool)) or value is None:
        raise ProgramError(f"bad condition {column!r} {op!r} {value!r}")
    return present & ops[op](v, value)


def _column(frame: Frame, column: str) -> np.ndarray:
    try:
        return frame[column]
    except KeyError:
        raise ProgramError(f"no column {column!r}") from None


def _take(frame: Frame, index: np.ndarray) -> Frame:
    return {k: v[index] for k, v in frame.items()}


def aggregate(values: np.ndarray, func: str) -> Any:
    """One aggregate over the non-missing values; None when there are too few of them."""
    if func == "count":
        return int(_present(values).sum())
    x = _num(values)
    x = x[~np.isnan(x)] if x.dtype.kind == "f" else x
    n = len(x)
    if n == 0 or (func in ("std", "var") and n < 2) or (func in ("skewness", "kurtosis") and n < 4):
        return None
    if func == "sum":
        return int(x.sum()) if values.dtype.kind == "i" else float(np.sum(x))
    if func == "mean":
        return float(np.mean(x))
    if func == "median":
        return float(np.median(x))
    if func in ("min", "max"):
        v = x.min() if func == "min" else x.max()
        return int(v) if values.dtype.kind == "i" else float(v)
    if func == "range":
        v = x.max() - x.min()
        return int(v) if values.dtype.kind == "i" else float(v)
    if func == "std":
        return float(np.std(x, ddof=1))
    if func == "var":
        return float(np.var(x, ddof=1))
    if func in ("skewness", "kurtosis"):
        value = moments(x.astype(np.float64)[None, :], func)[0]
        return None if np.isnan(value) else float(value)
    raise ProgramError(f"unknown aggregate {func!r}")


def moments(rows: np.ndarray, func: str) -> np.ndarray:
    """Bias-corrected sample skewness (G1) or excess kurtosis (G2) of each row, NaN-aware.

    The same definitions as scipy.stats.skew/kurtosis(bias=False) and DuckDB's skewness/kurtosis;
    NaN where fewer than 4 values or (nearly) no spread.
    """
    with np.errstate(all="ignore"):
        n = np.sum(~np.isnan(rows), axis=1).astype(np.float64)
        mean = np.nansum(rows, axis=1) / n
        d = rows - mean[:, None]
        m2 = np.nansum(d ** 2, axis=1) / n
        spread = np.nanmax(rows, axis=1) - np.nanmin(rows, axis=1) if rows.shape[1] else np.zeros(len(rows))
        flat = ~(spread > 1e-9 * np.maximum(1.0, np.nanmax(np.abs(rows), axis=1)))
        if func == "skewness":
            g1 = (np.nansum(d ** 3, axis=1) / n) / m2 ** 1.5
            out = g1 * np.sqrt(n * (n - 1)) / (n - 2)
        else:
            g2 = (np.nansum(d ** 4, axis=1) / n) / m2 ** 2 - 3.0
            out = ((n + 1) * g2 + 6) * (n - 1) / ((n - 2) * (n - 3))
    return np.where((n < 4) | flat, np.nan, out)


def _average_ranks(x: np.ndarray) -> np.ndarray:
    """Ranks 1..n, ties sharing their average rank (as scipy.stats.rankdata and Spearman's rho)."""
    order = np.argsort(x, kind="stable")
    ordered = x[order]
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
    ends = np.r_[starts[1:], len(x)]
    average = (starts + ends + 1) / 2.0  # mean of the 1-based positions start+1 .. end
    ranks = np.empty(len(x))
    ranks[order] = np.repeat(average, ends - starts)
    return ranks


def correlate(x: np.ndarray, y: np.ndarray, method: str) -> float | None:
    x, y = _num(x).astype(np.float64), _num(y).astype(np.float64)
    both = ~np.isnan(x) & ~np.isnan(y)
    x, y = x[both], y[both]
    if len(x) < 3:
        return None
    if method == "spearman":
        x, y = _average_ranks(x), _average_ranks(y)
    elif method != "pearson":
        raise ProgramError(f"unknown correlation {method!r}")
    if np.all(x == x[0]) or np.all(y == y[0]):
        return None
    return float(np.corrcoef(x, y)[0, 1])


def run_test(frame: Frame, step: dict[str, Any]) -> list[float] | None:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # near-constant samples: judged below, not printed
        return _run_test(frame, step)


def _run_test(frame: Frame, step: dict[str, Any]) -> list[float] | None:
    from scipy import special, stats

    test = step.get("test")
    if test == "chi2":
        x, y = _column(frame, step["x"]), _column(frame, step["y"])
        keep = _present(x) & _present(y)
        xs, ys = x[keep], y[keep]
        xu, xi = np.unique(xs.astype(str), return_inverse=True)
        yu, yi = np.unique(ys.astype(str), return_inverse=True)
        if len(xu) < 2 or len(yu) < 2:
            return None
        counts = np.zeros((len(xu), len(yu)))
        np.add.at(counts, (xi, yi), 1)
        expected = counts.sum(1, keepdims=True) * counts.sum(0, keepdims=True) / counts.sum()
        statistic = float(((counts - expected) ** 2 / expected).sum())
        dof = (len(xu) - 1) * (len(yu) - 1)
        return [statistic, float(special.chdtrc(dof, statistic))]
    if test == "shapiro":
        x = _num(_column(frame, step["column"])).astype(np.float64)
        x = x[~np.isnan(x)]
        if len(x) < 3 or np.all(x == x[0]):
            return None
        result = stats.shapiro(x)
        return [float(result.statistic), float(result.pvalue)]
    if test in ("ttest", "mannwhitney", "ks"):
        values = _num(_column(frame, step["column"])).astype(np.float64)
        groups = _column(frame, step["by"])
        samples = []
        for g in step["groups"]:
            x = values[(groups == g) & ~np.isnan(values)]
            samples.append(x)
        if any(len(s) < 2 for s in samples):
            return None
        if test == "ttest":
            a, b = samples
            va, vb = a.var(ddof=1) / len(a), b.var(ddof=1) / len(b)
            if va + vb <= 1e-12 * max(1.0, float(np.abs(np.concatenate(samples)).max())) ** 2:
                return None
            t = (a.mean() - b.mean()) / np.sqrt(va + vb)
            dof = (va + vb) ** 2 / (va ** 2 / (len(a) - 1) + vb ** 2 / (len(b) - 1))
            return [float(t), float(2 * special.stdtr(dof, -abs(t)))]
        elif test == "mannwhitney":
            if step.get("method") == "asymptotic":  # what the question states: normal approximation, continuity corrected
                result = stats.mannwhitneyu(samples[0], samples[1], alternative="two-sided", method="asymptotic",
                                            use_continuity=True)
            else:
                result = stats.mannwhitneyu(samples[0], samples[1], alternative="two-sided")
        else:
            result = stats.ks_2samp(samples[0], samples[1])
        stat, p = float(result.statistic), float(result.pvalue)
        return None if math.isnan(stat) or math.isnan(p) else [stat, p]
    raise ProgramError(f"unknown test {test!r}")


def _compare(value: Any, op: str, other: Any) -> bool:
    if value is None or other is None:
        raise ProgramError("compare step got no value")
    ops = {"==": value == other, "!=": value != other}
    if op in ops:
        return bool(ops[op])
    if isinstance(value, str) or isinstance(other, str):
        raise ProgramError(f"cannot order text with {op!r}")
    return bool({">": value > other, ">=": value >= other, "<": value < other, "<=": value <= other}[op])


def execute_chain(steps: list[dict[str, Any]], frame: Frame) -> Any:
    """Run the steps; return the last step's result as a plain value (None: no answer)."""
    env: dict[str, Any] = {"t": frame}
    current: Any = frame
    for i, step in enumerate(steps):
        op = step.get("op")
        value = env[step["input"]] if "input" in step else current
        try:
            current = _step(op, step, value, env)
        except (KeyError, TypeError, IndexError) as e:
            raise ProgramError(f"step {i + 1} ({op}): {type(e).__name__}: {e}") from None
        if current is None:
            return None
        if "name" in step:
            env[step["name"]] = current
    if isinstance(current, dict):
        raise ProgramError("a chain must end in a value, not a table")
    if isinstance(current, np.ndarray):
        return [plain(v) for v in current]
    return plain(current)


def _step(op: str | None, step: dict[str, Any], value: Any, env: dict[str, Any]) -> Any:
    if op == "filter":
        mask = np.ones(len(next(iter(value.values()))), dtype=bool)
        for column, cmp, v in step["where"]:
            mask &= condition_mask(value, column, cmp, v)
        return _take(value, np.flatnonzero(mask))
    if op == "sort":
        by = _num(_column(value, step["by"])).astype(np.float64)
        rows = np.flatnonzero(~np.isnan(by))
        keys = -by[rows] if step.get("descending") else by[rows]
        return _take(value, rows[np.argsort(keys, kind="stable")])
    if op == "head":
        return _take(value, np.arange(min(int(step["n"]), len(next(iter(value.values()))))))
    if op == "select":
        return _column(value, step["column"])
    if op == "first":
        return value[0] if len(value) else None
    if op == "aggregate":
        column = value if isinstance(value, np.ndarray) else (
            _column(value, step["column"]) if step.get("column") else next(iter(value.values())))
        if step["func"] == "count" and not isinstance(value, np.ndarray) and not step.get("column"):
            return len(column)
        return aggregate(column, step["func"])
    if op == "group":
        keys = _column(value, step["by"])
        present = _present(keys)
        out_keys, out_values = [], []
        for g in sorted({k for k in keys[present]}, key=lambda k: (str(type(k)), k)):
            result = aggregate(_column(value, step["column"])[present & (keys == g)], step["func"])
            if result is not None:
                out_keys.append(g)
                out_values.append(result)
        return {step["by"]: np.array(out_keys, dtype=keys.dtype if keys.dtype != object else object),
                step["column"]: np.array(out_values, dtype=np.float64)}
    if op == "compare":
        other = env[step["ref"]] if "ref" in step else step["value"]
        return _compare(plain(value), step["cmp"], plain(other))
    if op == "correlate":
        return correlate(_column(value, step["x"]), _column(value, step["y"]), step.get("method", "pearson"))
    if op == "test":
        return run_test(value, step)
    if op == "decide":
        stat, p = value
        return [stat, p, "reject" if p < float(step["alpha"]) else "do not reject"]
    if op == "combine":
        left, right = plain(env[step["left"]]), plain(env[step["right"]])
        if left is None or right is None:
            return None
        func = step["func"]
        if func == "difference":
            return left - right
        if right == 0:
            return None
        if func == "ratio":
            return left / right
        if func == "percent_change":
            return 100.0 * (left - right) / right
        raise ProgramError(f"unknown combine {func!r}")
    raise ProgramError(f"unknown step {op!r}")


@program_kind("chain")
class ChainRunner:
    def __init__(self) -> None:
        self._frames: dict[str, Frame] = {}

    def run(self, text: str, tables: list["Table"]) -> Any:
        try:
            steps = json.loads(text)
        except json.JSONDecodeError as e:
            raise ProgramError(f"chain is not JSON: {e}") from None
        if not isinstance(steps, list) or not tables:
            raise ProgramError("a chain is a list of steps over one table")
        table = tables[0]
        frame = self._frames.get(table.id)
        if frame is None:
            self._frames = {table.id: frame_from_arrow(data_view(table))}  # keep one: samples come grouped
            frame = self._frames[table.id]
        return execute_chain(steps, frame)
