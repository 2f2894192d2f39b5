"""How long a sample's model calls took, and how many retries the client made for them.

Each prediction records `latency_s`, the wall time of its requests (from each request's first try
to its reply, retries and their waits included) summed over its turns, and `retries`, the retries
the client made for them. Both are None where a turn was not timed (a cache hit, a replay, a batch
reply): part of a sample's time is not its time. A replay line may carry its own `latency_s` and
`retries` (measured where the replies were made); they are kept as they are. Neither is part of a
request's identity: cache and prediction keys are the same with or without them.
"""

from __future__ import annotations

import math
from typing import Any, Iterable

UNTIMED: dict[str, Any] = {"latency_s": None, "retries": None}


def timing(responses: Iterable[Any]) -> dict[str, Any]:
    """`latency_s` and `retries` of one sample's responses (ChatResponses, one per turn)."""
    responses = list(responses)
    if not responses or any(r.latency_s is None for r in responses):
        return dict(UNTIMED)
    return {"latency_s": round(sum(r.latency_s for r in responses), 4),
            "retries": sum(max(0, r.attempts - 1) for r in responses)}


def replayed_timing(record: dict[str, Any]) -> dict[str, Any]:
    """A replay line's own `latency_s` (seconds, >= 0) and `retries` (an integer >= 0), where it
    carries them; ValueError naming the field that is neither that nor null."""
    latency, retries = record.get("latency_s"), record.get("retries")
    if latency is not None and (isinstance(latency, bool) or not isinstance(latency, (int, float))
                                or not math.isfinite(latency) or latency < 0):
        raise ValueError(f"'latency_s' must be seconds (a number >= 0) or null, got {latency!r}"[:200])
    if retries is not None and (isinstance(retries, bool) or not isinstance(retries, int) or retries < 0):
        raise ValueError(f"'retries' must be an integer >= 0 or null, got {retries!r}"[:200])
    return {"latency_s": None if latency is None else float(latency), "retries": retries}


def latency_summary(results: Any) -> dict[str, dict[str, dict[str, Any]]]:
    """{model: {mode: {n, median, p90, max, retries}}} over the timed predictions that got a reply
    (a log's rows, a DataFrame); models and modes with none timed are left out."""
    if "latency_s" not in results or results.empty:
        return {}
    replied = results[results["failure"].fillna("") == ""] if "failure" in results else results
    timed = replied[replied["latency_s"].notna()]
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for (model, mode), group in timed.groupby(["model", "mode"]):
        seconds = group["latency_s"].astype(float)
        retries = group["retries"].dropna() if "retries" in group else []
        out.setdefault(model, {})[mode] = {
            "n": int(len(seconds)), "median": float(seconds.median()), "p90": float(seconds.quantile(0.9)),
            "max": float(seconds.max()), "retries": int(sum(int(r) for r in retries))}
    return out
