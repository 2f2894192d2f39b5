"""A rule question's *spec*: the small dict from which its SQL program is written.

Names the SQL introduces (aliases, CTEs) start with `__`: DuckDB folds identifier case, so an alias
`k` would silently capture a data column named "K".

The generator computes answers for many specs at once with numpy; `spec_sql` writes the program
that `curate verify` re-runs in DuckDB, and `naive_answer` computes one spec the slow, obvious
way with pandas (the benchmark's baseline, and a third opinion in tests).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from curate.curation.answers import plain
from curate.curation.programs.sql import quote_ident as q
from curate.curation.programs.sql import quote_literal as lit

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

AGG_SQL = {
    "count": "count({c})", "sum": "sum({c})", "mean": "avg({c})", "median": "median({c})",
    "min": "min({c})", "max": "max({c})", "std": "stddev_samp({c})", "var": "var_samp({c})",
    "range": "max({c}) - min({c})", "percentile": "quantile_cont({c}, {p})",
    "cv": "100.0 * stddev_samp({c}) / avg({c})", "skewness": "skewness({c})", "kurtosis": "kurtosis({c})",
}


def where_sql(where: list[list[Any]], extra: list[str] = ()) -> str:  # type: ignore[assignment]
    parts = [f"{q(c)} {'<>' if op == '!=' else '='if op == '==' else op} {lit(v)}" for c, op, v in where]
    parts += list(extra)
    return " WHERE " + " AND ".join(parts) if parts else ""


def _key_is(spec: dict[str, Any], value_key: str = "key_value") -> str:
    return f"{q(spec['key'])} = {lit(spec[value_key])}"


def spec_sql(spec: dict[str, Any]) -> str:
    kind = spec["kind"]
    if kind == "cell":
        return f"SELECT {q(spec['column'])} FROM t WHERE {_key_is(spec)}"
    if kind == "fuzzy":
        return (f"SELECT {q(spec['column'])} FROM t WHERE "
                f"lower(trim(regexp_replace(regexp_replace({q(spec['key'])}, '[^A-Za-z0-9 ]', '', 'g'), ' +', ' ', 'g')))"
                f" = {lit(spec['norm'])}")
    if kind == "reverse":
        return f"SELECT {q(spec['key'])} FROM t WHERE {q(spec['column'])} = {lit(spec['value'])}"
    if kind == "aggregate":
        column = spec.get("column")
        expr = "count(*)" if spec["agg"] == "count" and not column else \
            AGG_SQL[spec["agg"]].format(c=q(column), p=spec.get("p"))
        return f"SELECT {expr} FROM t{where_sql(spec.get('where', []))}"
    if kind == "select":
        return f"SELECT list({q(spec['key'])} ORDER BY rowid) FROM t{where_sql(spec['where'])}"
    if kind == "argext":
        order = "DESC" if spec["direction"] == "max" else "ASC"
        where = where_sql(spec.get("where", []), [f"{q(spec['column'])} IS NOT NULL"])
        return f"SELECT {q(spec['key'])} FROM t{where} ORDER BY {q(spec['column'])} {order} LIMIT 1"
    if kind == "rank":
        order = "DESC" if spec["direction"] == "max" else "ASC"
        return (f"SELECT __rank FROM (SELECT {q(spec['key'])} AS __key, "
                f"rank() OVER (ORDER BY {q(spec['column'])} {order}) AS __rank "
                f"FROM t WHERE {q(spec['column'])} IS NOT NULL) WHERE __key = {lit(spec['key_value'])}")
    if kind == "topk":
        order = "DESC" if spec["direction"] == "max" else "ASC"
        c = q(spec["column"])
        return (f"SELECT list(__key ORDER BY __value {order}) FROM (SELECT {q(spec['key'])} AS __key, "
                f"{c} AS __value FROM t WHERE {c} IS NOT NULL ORDER BY {c} {order} LIMIT {int(spec['k'])})")
    if kind == "group_extreme":
        order = "DESC" if spec["direction"] == "max" else "ASC"
        agg = AGG_SQL[spec["agg"]].format(c=q(spec["column"]), p=None)
        return (f"SELECT {q(spec['by'])} FROM t WHERE {q(spec['by'])} IS NOT NULL GROUP BY 1 "
                f"ORDER BY {agg} {order} NULLS LAST LIMIT 1")
    if kind == "compare_rows":
        c = q(spec["column"])
        a = f"(SELECT {c} FROM t WHERE {_key_is(spec, 'a')})"
        b = f"(SELECT {c} FROM t WHERE {_key_is(spec, 'b')})"
        return f"SELECT {a} - {b}" if spec["func"] == "difference" else f"SELECT {a} / {b}"
    if kind == "share":
        c = q(spec["column"])
        return f"SELECT 100.0 * {c} / (SELECT sum({c}) FROM t) FROM t WHERE {_key_is(spec)}"
    if kind in ("growth", "cagr"):
        c, time = q(spec["column"]), q(spec["time"])
        a = f"(SELECT {c} FROM t WHERE {time} = {lit(spec['t1'])})"
        b = f"(SELECT {c} FROM t WHERE {time} = {lit(spec['t2'])})"
        if kind == "growth":
            return f"SELECT 100.0 * ({b} - {a}) / {a}"
        years = spec["t2"] - spec["t1"]
        return f"SELECT 100.0 * (power({b} / {a}, 1.0 / {lit(years)}) - 1)"
    if kind == "row_ratio":
        return f"SELECT {q(spec['num'])} / {q(spec['den'])} FROM t WHERE {_key_is(spec)}"
    if kind == "outliers":
        c, fence = q(spec["column"]), lit(spec["fence"])
        return (f"WITH __fence AS (SELECT quantile_cont({c}, 0.25) AS __q1, quantile_cont({c}, 0.75) AS __q3 FROM t) "
                f"SELECT list(t.{q(spec['key'])} ORDER BY t.rowid) FROM t, __fence f "
                f"WHERE t.{c} < f.__q1 - {fence} * (f.__q3 - f.__q1) OR t.{c} > f.__q3 + {fence} * (f.__q3 - f.__q1)")
    if kind == "corr":
        x, y = q(spec["x"]), q(spec["y"])
        if spec["method"] == "pearson":
            return f"SELECT corr({x}, {y}) FROM t WHERE {x} IS NOT NULL AND {y} IS NOT NULL"
        ranks = ", ".join(f"rank() OVER (ORDER BY {c}) + (count(*) OVER (PARTITION BY {c}) - 1) / 2.0 AS __rank{i}"
                          for i, c in ((1, x), (2, y)))
        return (f"SELECT corr(__rank1, __rank2) FROM (SELECT {ranks} FROM t "
                f"WHERE {x} IS NOT NULL AND {y} IS NOT NULL)")
    if kind == "fact":
        inner = spec_sql(spec["inner"])
        claim = spec["claim"]
        if isinstance(claim, (int, float)) and not isinstance(claim, bool) and spec.get("tolerance") is not None:
            return f"SELECT abs(({inner}) - {lit(claim)}) <= {lit(float(spec['tolerance']))}"
        return f"SELECT ({inner}) = {lit(claim)}"
    raise ValueError(f"unknown spec kind {kind!r}")


# ---------------------------------------------------------------------------- naive baseline

def _mask(df: "pd.DataFrame", where: list[list[Any]]) -> "pd.Series":
    import pandas as pd

    mask = pd.Series(True, index=df.index)
    for c, op, v in where:
        col = df[c]
        mask &= {"==": col == v, "!=": col != v, ">": col > v, ">=": col >= v, "<": col < v, "<=": col <= v}[op]
    return mask


def _agg(series: "pd.Series", agg: str, p: float | None = None) -> Any:
    s = series.dropna()
    return {
        "count": lambda: len(s), "sum": s.sum, "mean": s.mean, "median": s.median, "min": s.min, "max": s.max,
        "std": s.std, "var": s.var, "range": lambda: s.max() - s.min(), "percentile": lambda: s.quantile(p),
        "cv": lambda: 100.0 * s.std() / s.mean(), "skewness": s.skew, "kurtosis": s.kurt,
    }[agg]()


def naive_answer(df: "pd.DataFrame", spec: dict[str, Any]) -> Any:
    """One question, computed alone with a pandas filter and an aggregate."""
    kind = spec["kind"]
    if kind == "cell":
        return plain(df.loc[df[spec["key"]] == spec["key_value"], spec["column"]].iloc[0])
    if kind == "fuzzy":
        norm = (df[spec["key"]].str.replace(r"[^A-Za-z0-9 ]", "", regex=True).str.replace(r" +", " ", regex=True)
                .str.strip().str.lower())
        return plain(df.loc[norm == spec["norm"], spec["column"]].iloc[0])
    if kind == "reverse":
        return plain(df.loc[df[spec["column"]] == spec["value"], spec["key"]].iloc[0])
    if kind == "aggregate":
        rows = df[_mask(df, spec.get("where", []))]
        if spec["agg"] == "count" and not spec.get("column"):
            return len(rows)
        return plain(_agg(rows[spec["column"]], spec["agg"], spec.get("p")))
    if kind == "select":
        return [plain(v) for v in df.loc[_mask(df, spec["where"]), spec["key"]]]
    if kind == "argext":
        rows = df[_mask(df, spec.get("where", []))].dropna(subset=[spec["column"]])
        i = rows[spec["column"]].idxmax() if spec["direction"] == "max" else rows[spec["column"]].idxmin()
        return plain(rows.loc[i, spec["key"]])
    if kind == "rank":
        col = df[spec["column"]].dropna()
        ranks = col.rank(ascending=spec["direction"] == "min", method="min")
        return int(ranks[df.loc[col.index, spec["key"]] == spec["key_value"]].iloc[0])
    if kind == "topk":
        rows = df.dropna(subset=[spec["column"]]).sort_values(
            spec["column"], ascending=spec["direction"] == "min", kind="stable")
        return [plain(v) for v in rows[spec["key"]].head(spec["k"])]
    if kind == "group_extreme":
        groups = df.dropna(subset=[spec["by"]]).groupby(spec["by"])[spec["column"]]
        values = groups.agg(lambda s: _agg(s, spec["agg"]))
        return plain(values.idxmax() if spec["direction"] == "max" else values.idxmin())
    if kind == "compare_rows":
        a = df.loc[df[spec["key"]] == spec["a"], spec["column"]].iloc[0]
        b = df.loc[df[spec["key"]] == spec["b"], spec["column"]].iloc[0]
        return plain(a - b if spec["func"] == "difference" else a / b)
    if kind == "share":
        col = df[spec["column"]]
        return plain(100.0 * col[df[spec["key"]] == spec["key_value"]].iloc[0] / col.sum())
    if kind in ("growth", "cagr"):
        a = df.loc[df[spec["time"]] == spec["t1"], spec["column"]].iloc[0]
        b = df.loc[df[spec["time"]] == spec["t2"], spec["column"]].iloc[0]
        if kind == "growth":
            return plain(100.0 * (b - a) / a)
        return plain(100.0 * ((b / a) ** (1.0 / (spec["t2"] - spec["t1"])) - 1))
    if kind == "row_ratio":
        row = df[df[spec["key"]] == spec["key_value"]].iloc[0]
        return plain(row[spec["num"]] / row[spec["den"]])
    if kind == "outliers":
        col = df[spec["column"]]
        q1, q3 = col.quantile(0.25), col.quantile(0.75)
        fence = spec["fence"] * (q3 - q1)
        return [plain(v) for v in df.loc[(col < q1 - fence) | (col > q3 + fence), spec["key"]]]
    if kind == "corr":
        pair = df[[spec["x"], spec["y"]]].dropna()
        return plain(pair[spec["x"]].corr(pair[spec["y"]], method=spec["method"]))
    if kind == "fact":
        value = naive_answer(df, spec["inner"])
        if spec.get("tolerance") is not None:
            return bool(abs(value - spec["claim"]) <= spec["tolerance"])
        return value == spec["claim"]
    raise ValueError(f"unknown spec kind {kind!r}")
