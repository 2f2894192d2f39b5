"""What scoring text-to-SQL by execution costs: every text-to-SQL sample of a release scored with its
own gold SQL as the reply (`execution_match`), and with `SELECT 42`, timed. Run it from two checkouts
(before and after a change) over the same release, on the same machine.

    python benchmarks/sql_scoring.py RELEASE [--dialect sqlite]
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

ROOT = Path.cwd()
sys.path.insert(0, str(ROOT))


def measure(release: str, dialect: str = "duckdb") -> dict:
    from curate.evaluation.dataset import ReleaseData
    from curate.evaluation.metrics import score
    from curate.evaluation.scoring import _execution_context

    data = ReleaseData(Path(release))
    samples = [s for s in data.samples() if s.task.endswith("text_to_sql")]
    contexts = [(s, {**_execution_context(data, s, "markdown:none"), **({"dialect": dialect} if dialect else {})})
                for s in samples]
    score("execution_match", "SELECT 1", None, contexts[0][1])  # imports, first connection
    out = {"release": release, "samples": len(samples), "dialect": dialect}
    for name, reply in (("gold", None), ("select_42", "SELECT 42")):
        start = time.perf_counter()
        values = [score("execution_match", reply or s.program["text"], None, c).value for s, c in contexts]
        seconds = time.perf_counter() - start
        out[name] = {"seconds": round(seconds, 2), "ms_per_sample": round(seconds / len(samples) * 1000, 1),
                     "mean_score": round(sum(values) / len(values), 3)}
    return out


if __name__ == "__main__":
    args = sys.argv[1:]
    dialect = args[args.index("--dialect") + 1] if "--dialect" in args else "duckdb"
    print(json.dumps(measure(args[0], dialect), indent=1))
