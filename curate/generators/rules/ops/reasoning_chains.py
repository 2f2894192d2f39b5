"""Multi-step questions (`chain`): a reasoning chain of one of six shapes, composed by
`curate.generators.chains` over the table's conditions."""

from __future__ import annotations

import json

from curate.generators.rules.engine import Context, table_masks, value_type
from curate.generators.rules.ops import op


@op("chain", params=("shape",))
def op_chain(ctx: Context) -> None:
    from curate.generators.chains import compose_chain

    p = ctx.profile
    shape = ctx.template.params["shape"]
    ctx.considered(ctx.cap)
    made = 0
    for attempt in range(8 * ctx.cap):  # most draws are rejected (ties, filters that change nothing)
        result = compose_chain(shape, p, ctx.rng, lambda which: table_masks(p, ctx.seed, which))
        if isinstance(result, str):
            ctx.reject(result)
            continue
        steps, slots, answer = result
        typed = value_type(p, p.key) if shape == "retrieval" and p.key else None  # a year is a number
        ctx.emit(slots, answer, program=("chain", json.dumps(steps, ensure_ascii=False)), answer_type=typed)
        made += 1
        if made == ctx.cap:
            break
