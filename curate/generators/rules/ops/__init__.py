"""Rule-question ops: the computations a template names (`op = "aggregate"` in its TOML entry).

Each op is a function of a `curate.generators.rules.engine.Context` in a module of this package, one module
per family (`lookups`, `naming`, `facts`, `aggregates`, `rankings`, `dates`, `formulas`, `analysis`,
`reasoning_chains`, and `tree`, the hierarchical track), marked with

    @op("aggregate", params=("agg", "conditions", "min_rows", "p"))

`params` are the template keys the op reads: a template entry with any other key is refused when the
catalog loads, naming the keys the op takes (`fense = 2` would otherwise leave the fence at its default
without a word). `tree=True` marks an op that reads the header tree: it is asked of every table (a
correlation matrix or simulated data too), and its cap is not scaled down on hierarchical tables as
the flat ops' caps are. `OPS` lists the ops from the modules' source (nothing imported until an op
runs), so adding an op is one new module here, and the rules stage's code fingerprint covers every
module of the package.
"""

from __future__ import annotations

from curate.curation.registry import Registry

OPS = Registry("op", plugins="curate.generators.rules.ops.*")
op = OPS.decorator


def op_params(name: str) -> frozenset[str]:
    """The template keys op `name` reads (its mark's `params`)."""
    return frozenset(OPS.meta(name).get("params", ()))


def reads_the_tree(name: str) -> bool:
    """Whether op `name` is of the hierarchical track (its mark's `tree=True`)."""
    return bool(OPS.meta(name).get("tree", False))
