"""ToRR's structural perturbations of a table, seeded per table so results never depend on order.

`row_shuffle` and `column_shuffle` permute; `transpose` turns the first column into the header
(every cell becomes text, as after any transpose of mixed columns); `empty_rows` inserts rows of
missing values (one per ten rows, at least one). Each returns a new Table (new id) flagged
`perturbed:<kind>`. A table with a hierarchical header is refused: shuffling or transposing
would break its merged cells, which is a different question from robustness to layout.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from curate.curation.pipeline.rng import record_rng
from curate.curation.table import flat_header, unique_names

if TYPE_CHECKING:  # pragma: no cover
    from curate.curation.table import Table

PERTURBATIONS = ("row_shuffle", "column_shuffle", "transpose", "empty_rows")


def perturb(table: "Table", kind: str, seed: int = 0) -> "Table":
    import pyarrow as pa

    if kind not in PERTURBATIONS:
        raise ValueError(f"unknown perturbation {kind!r}; known: {', '.join(PERTURBATIONS)}")
    if table.is_hierarchical:
        raise ValueError(f"{table.name}: a hierarchical header cannot be {kind.replace('_', ' ')}d without "
                         "breaking its merged cells; perturb flat tables only")
    rng = record_rng(seed, table.id, f"perturb:{kind}")
    body = table.body
    if kind == "row_shuffle":
        body = body.take(pa.array(rng.permutation(body.num_rows)))
    elif kind == "column_shuffle":
        order = [int(i) for i in rng.permutation(body.num_columns)]
        body = body.select(order)
    elif kind == "transpose":
        from curate.curation.body import cell_text

        first = [cell_text(v) for v in body.column(0).to_pylist()]
        names = unique_names([body.column_names[0], *first])
        rows = [[name, *[cell_text(v) for v in body.column(j).to_pylist()]] for j, name in
                enumerate(body.column_names[1:], 1)]
        body = pa.table([pa.array([r[i] for r in rows], pa.string()) for i in range(len(names))], names=names)
    else:  # empty_rows
        n = max(1, body.num_rows // 10)
        positions = sorted(int(p) for p in rng.integers(0, body.num_rows + 1, size=n))
        empty = pa.table({c: pa.nulls(1, body.schema.field(c).type) for c in body.column_names})
        pieces, last = [], 0
        for p in positions:
            pieces += [body.slice(last, p - last), empty]
            last = p
        pieces.append(body.slice(last))
        body = pa.concat_tables(pieces).combine_chunks()
    return table.replace(body=body, header=flat_header(body.column_names), summary_rows=(), summary_columns=(),
                         empty_columns=(), constant_columns=(), flags=(*table.flags, f"perturbed:{kind}"))
