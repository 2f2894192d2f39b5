"""Key inference for tables that declare none: uniqueness, name similarity, value inclusion.

Each inferred key carries its evidence and a confidence, so a user (and `curate keys`) can see
why it was proposed. Composite keys are not inferred.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from curation.database import ForeignKey, PrimaryKey

if TYPE_CHECKING:  # pragma: no cover
    import pyarrow as pa

MIN_INCLUSION_NAMED = 0.8  # a foreign key whose names match may reference an incomplete table
MIN_INCLUSION_UNNAMED = 0.95
MAX_DISTINCT = 200_000
ROW_NUMBER_NAMES = {"rownames", "row_names", "index", "unnamed: 0", "x"}


@dataclass
class _Column:
    table: str
    name: str
    kind: str  # "int" | "str"
    distinct: frozenset
    unique: bool  # unique and non-null over the whole column


def _norm(name: str) -> str:
    return re.sub(r"[^0-9a-z\u00c0-\uffff]+", "", name.lower())


def _singular(name: str) -> str:
    n = _norm(name)
    for suffix in ("ies", "es", "s"):
        if n.endswith(suffix) and len(n) > len(suffix) + 2:
            return n[: -len(suffix)] + ("y" if suffix == "ies" else "")
    return n


def _profile(table: str, body: "pa.Table") -> list[_Column]:
    import pyarrow as pa
    import pyarrow.compute as pc

    out = []
    for name, col in zip(body.column_names, body.columns):
        t = col.type
        if pa.types.is_integer(t):
            kind = "int"
        elif pa.types.is_string(t) or pa.types.is_large_string(t):
            kind = "str"
        else:
            continue
        unique_values = pc.unique(col)
        if len(unique_values) > MAX_DISTINCT:
            continue
        values = frozenset(v for v in unique_values.to_pylist() if v is not None)
        unique = col.null_count == 0 and len(values) == len(col) and len(col) >= 2
        out.append(_Column(table, name, kind, values, unique))
    return out


def _pk_score(c: _Column) -> float:
    n = _norm(c.name)
    if n in ROW_NUMBER_NAMES:
        return 0.1
    score = 0.5
    if n == "id" or n.endswith("id") or n.endswith(("code", "key", "num", "no")):
        score += 0.4
    if n.startswith(_singular(c.table)[:4]):
        score += 0.05
    if c.kind == "str":
        score += 0.05
    return score


def _id_like(name: str) -> bool:
    n = _norm(name)
    return n == "id" or n.endswith(("id", "code", "key")) or n in ("faa", "iso", "iso2", "iso3")


def _names_match(fk: _Column, pk: _Column) -> bool:
    a, b = _norm(fk.name), _norm(pk.name)
    target = _singular(pk.table)
    return a == b or (b == "id" and a in (target + "id", target)) or (len(b) > 2 and a.endswith(b)) or a == target


def infer_keys(bodies: dict[str, "pa.Table"], declared_pks: dict[str, tuple[str, ...]] | None = None
               ) -> tuple[list[PrimaryKey], list[ForeignKey]]:
    """Primary keys (tables without a declared one) and foreign keys between the given tables."""
    declared_pks = declared_pks or {}
    profiles = {t: _profile(t, body) for t, body in bodies.items()}
    pks: list[PrimaryKey] = []
    pk_columns: dict[str, _Column] = {}
    for table, cols in profiles.items():
        if table in declared_pks:
            if len(declared_pks[table]) == 1:
                match = [c for c in cols if c.name == declared_pks[table][0]]
                if match:
                    pk_columns[table] = match[0]
            continue
        candidates = sorted((c for c in cols if c.unique), key=lambda c: -_pk_score(c))
        if candidates and _pk_score(candidates[0]) > 0.1:
            best = candidates[0]
            pk_columns[table] = best
            pks.append(PrimaryKey(table, (best.name,), "inferred", round(_pk_score(best), 3),
                                  f"unique and non-null in all {len(bodies[table])} rows"))
    fks: list[ForeignKey] = []
    for table, cols in profiles.items():
        for c in cols:
            if _norm(c.name) in ROW_NUMBER_NAMES or _norm(c.name) == "id" or len(c.distinct) < 2:
                continue  # a bare "id" names its own rows; it is no reference to another table
            best: tuple[float, _Column, float, bool] | None = None
            for ref_table, pk in pk_columns.items():
                if ref_table == table or pk.kind != c.kind:
                    continue
                named = _names_match(c, pk)
                if c.kind == "int" and not (named and (_id_like(pk.name) or _id_like(c.name))):
                    continue  # integer ranges (years, ages, counts) overlap by chance everywhere
                if not named and (len(c.distinct) < 3 or pk_columns.get(table) is c):
                    continue  # too little evidence, or a 1:1 pair that could point either way
                inclusion = len(c.distinct & pk.distinct) / len(c.distinct)
                if inclusion < (MIN_INCLUSION_NAMED if named else MIN_INCLUSION_UNNAMED):
                    continue
                confidence = inclusion * (1.0 if named else 0.75)
                if best is None or confidence > best[0]:
                    best = (confidence, pk, inclusion, named)
            if best:
                confidence, pk, inclusion, named = best
                evidence = f"{inclusion:.1%} of {len(c.distinct)} distinct values found in {pk.table}.{pk.name}"
                if named:
                    evidence += "; names match"
                fks.append(ForeignKey(table, (c.name,), pk.table, (pk.name,), "inferred", round(confidence, 3), evidence))
    return pks, fks
