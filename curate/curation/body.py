"""Typed table bodies: from pandas frames or from raw cell grids, always as Arrow."""

from __future__ import annotations

import datetime as dt
import math
import re
from typing import TYPE_CHECKING, Any, Iterable, Sequence

from curate.curation.table import unique_names

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
    import pyarrow as pa


def from_pandas(df: "pd.DataFrame") -> "pa.Table":
    """A DataFrame as a canonical Arrow body: unique string names, no index, no dictionaries.

    Columns that Arrow cannot type (mixed Python objects) become strings rather than failing.
    """
    import pyarrow as pa

    names = unique_names(list(df.columns))
    arrays = []
    for i, _ in enumerate(names):
        series = df.iloc[:, i]
        try:
            arr = pa.array(series, from_pandas=True)
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError):
            arr = pa.array([None if _is_missing(v) else str(v) for v in series], type=pa.string())
        arr = plain_array(arr)
        if pa.types.is_float64(arr.type):
            arr = without_float_noise(arr)
        arrays.append(arr)
    return pa.table(arrays, names=names)


def without_float_noise(arr: "pa.Array") -> "pa.Array":
    """A double column as the decimals its values were: a single-precision value stored as a
    double (16.600000381469727) becomes the short decimal it was written as, and arithmetic noise
    (0.8400000000000001, 2119101.8000000003: a 12-digit decimal off in its last digits) is rounded
    off. Real digits (3.141592653589793) stay. It happens at ingest, so every gold and every
    rendering agree."""
    import numpy as np
    import pyarrow as pa

    x = arr.to_numpy(zero_copy_only=False).astype(np.float64)
    with np.errstate(all="ignore"):
        candidates = np.flatnonzero(np.isfinite(x) & (np.round(x, 6) != x) & (np.abs(x) >= 1e-8) & (np.abs(x) < 1e15))
    if not len(candidates):
        return arr
    values = x[candidates]
    size = np.abs(values)
    single = values.astype(np.float32)
    short = single.astype(str).astype(np.float64)  # the shortest decimal that reads back as that single: 2.0231023
    widened = single.astype(np.float64)
    was_single = (short.astype(np.float32) == single) & (np.abs(widened - values) <= 1e-14 * size)
    twelve = round_significant(values, 12)
    noise = np.abs(twelve - values) <= 5e-14 * size  # digits 14 to 16 only: arithmetic, not measurement
    tidy = np.where(was_single, short, np.where(noise, twelve, values))
    y = x.copy()
    y[candidates] = tidy
    y = _to_the_columns_decimals(y)
    if np.array_equal(y, x, equal_nan=True):
        return arr
    mask = arr.is_null().to_numpy(zero_copy_only=False) if arr.null_count else None
    return pa.array(y, type=pa.float64(), mask=mask)


def _to_the_columns_decimals(y: "np.ndarray") -> "np.ndarray":
    """A value one single-precision step off the decimals its column is written in: -1.0999999
    among values of one decimal (0.8 - 1.9 computed in single precision) is -1.1."""
    import numpy as np

    present = np.isfinite(y)
    values = y[present]
    if len(values) < 5:
        return y
    for d in range(0, 5):
        fits = np.round(values, d) == values
        if fits.mean() >= 0.8:
            break
    else:
        return y
    near = ~fits & (np.abs(np.round(values, d) - values) <= 5e-7 * np.maximum(np.abs(values), 1e-3))
    if not near.any():
        return y
    values = np.where(near, np.round(values, d), values)
    out = y.copy()
    out[present] = values
    return out


def round_significant(x: "np.ndarray", digits: int) -> "np.ndarray":
    """Each value to `digits` significant digits, as the double nearest that decimal (an exact
    power of ten divides or multiplies a whole number, and both are correctly rounded)."""
    import numpy as np

    exponent = np.floor(np.log10(np.abs(x))).astype(np.int64)
    shift = digits - 1 - exponent
    out = np.empty_like(x)
    up = shift >= 0
    scale = 10.0 ** shift[up]
    out[up] = np.round(x[up] * scale) / scale
    down = 10.0 ** (-shift[~up])
    out[~up] = np.round(x[~up] / down) * down
    return out


def plain_array(arr: "pa.Array") -> "pa.Array":
    """Decode dictionaries and replace types that Parquet or DuckDB handle poorly."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    if pa.types.is_dictionary(arr.type):
        arr = arr.dictionary_decode()
    t = arr.type
    if pa.types.is_null(t):
        return arr.cast(pa.string())
    if pa.types.is_large_string(t):
        return arr.cast(pa.string())
    if pa.types.is_float16(t) or pa.types.is_float32(t):
        return widened_floats(arr)
    if pa.types.is_duration(t) or pa.types.is_interval(t) or pa.types.is_nested(t) or pa.types.is_binary(t):
        return pc.cast(arr, pa.string()) if not pa.types.is_nested(t) else pa.array(
            [None if v is None else str(v) for v in arr.to_pylist()], type=pa.string()
        )
    return arr


def widened_floats(arr: "pa.Array") -> "pa.Array":
    """Single-precision floats as the decimals they were written as: 16.6, not the
    16.600000381469727 that a plain widening shows (each value through its shortest repr)."""
    import numpy as np
    import pyarrow as pa

    values = arr.to_numpy(zero_copy_only=False)
    present = ~np.isnan(values)
    widened = np.full(len(values), np.nan)
    widened[present] = values[present].astype(str).astype(np.float64)
    return pa.array(widened, type=pa.float64(), mask=~present if arr.null_count else None)


def _is_missing(v: Any) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def infer_column(values: Sequence[Any]) -> "pa.Array":
    """Type one column of raw cell values (from a spreadsheet or HTML) the way a reader expects.

    All integers -> int64; all numbers -> float64; all booleans -> bool; all dates -> timestamp;
    anything mixed -> strings (numbers written plainly, e.g. 17 not 17.0). Blank cells are null.
    """
    import pyarrow as pa

    cells = [None if (v is None or (isinstance(v, str) and not v.strip()) or _is_missing(v)) else v for v in values]
    present = [v for v in cells if v is not None]
    if not present:
        return pa.nulls(len(cells), type=pa.string())
    numeric = _as_numbers(cells)
    if numeric is not None:
        cells, present = numeric, [v for v in numeric if v is not None]
    if all(isinstance(v, bool) for v in present):
        return pa.array(cells, type=pa.bool_())
    if all(isinstance(v, int) and not isinstance(v, bool) for v in present):
        if all(-(2**63) <= v < 2**63 for v in present):
            return pa.array(cells, type=pa.int64())
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in present):
        return pa.array([None if v is None else float(v) for v in cells], type=pa.float64())
    if all(isinstance(v, dt.datetime) for v in present):
        return pa.array(cells, type=pa.timestamp("us"))
    if all(isinstance(v, dt.date) and not isinstance(v, dt.datetime) for v in present):
        return pa.array(cells, type=pa.date32())
    return pa.array([None if v is None else cell_text(v) for v in cells], type=pa.string())


_NUMBER = re.compile(r"^[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?$")
_GROUPED = re.compile(r"^[-+]?\d{1,3}(,\d{3})+(\.\d+)?$")
MISSING_MARKERS = frozenset({"na", "n/a", "n.a.", "nan", "null", "none", "-", "--", "\u2014", "\u2013", "..", "...",
                             "na*", "*", "(na)", "(x)"})
SUPPRESSED = "x"  # statistics offices' "suppressed" mark, always lower case; "X" is a value (the X chromosome)


def is_missing_marker(text: str) -> bool:
    """A cell that says "no value here" in a numeric column ("NA", "-", "..", a lower-case "x")."""
    t = text.strip()
    return t == SUPPRESSED or t.lower() in MISSING_MARKERS


def _parse_number(text: str) -> int | float | None:
    t = text.strip()
    if re.match(r"^[-+]?0\d", t):  # "007", "01234": codes, not numbers
        return None
    if _GROUPED.match(t):
        t = t.replace(",", "")
    elif not _NUMBER.match(t):
        return None
    if re.match(r"^[-+]?\d+$", t):
        return int(t)
    return float(t)


def _as_numbers(cells: list[Any]) -> list[Any] | None:
    """Numbers written as text ("60,000", "7.5") become numbers when the whole column is numeric;
    missing-value markers ("NA", "-", "..") in such a column become null. Otherwise None."""
    if not any(isinstance(v, str) for v in cells):
        return None
    out: list[Any] = []
    seen_number = False
    for v in cells:
        if v is None or isinstance(v, bool):
            if isinstance(v, bool):
                return None
            out.append(None)
        elif isinstance(v, (int, float)):
            out.append(v)
            seen_number = True
        elif isinstance(v, str):
            n = _parse_number(v)
            if n is not None:
                out.append(n)
                seen_number = True
            elif is_missing_marker(v):
                out.append(None)
            else:
                return None
        else:
            return None
    return out if seen_number else None


def cell_text(v: Any) -> str:
    """A cell value as a reader would write it."""
    if v is None:
        return ""
    if isinstance(v, float):
        if math.isnan(v):
            return ""
        return str(int(v)) if v.is_integer() and abs(v) < 1e15 else repr(v)
    if isinstance(v, dt.datetime):
        return v.isoformat(sep=" ") if (v.hour or v.minute or v.second) else v.date().isoformat()
    if isinstance(v, dt.date):
        return v.isoformat()
    return " ".join(str(v).split())


def from_rows(names: Iterable[Any], rows: Sequence[Sequence[Any]]) -> "pa.Table":
    """A body from column names and row-major raw values, each column typed by `infer_column`."""
    import pyarrow as pa

    names = unique_names(list(names))
    columns = [infer_column([row[j] if j < len(row) else None for row in rows]) for j in range(len(names))]
    return pa.table(columns, names=names)
