"""Which samples a run evaluates: a split, task prefixes, and `--limit N` drawn per task.

A selection that matches nothing is the user's mistake, not an empty result: `EmptySelection`
names what matched nothing (the CLI makes it a usage error). `--limit N` is stratified: tasks take
turns, each giving its next sample in content-hash order, so a 300-sample run of a release whose
smallest task has 47 samples still holds that task, and the same N draws the same samples.
"""

from __future__ import annotations

from typing import Any

from curate.evaluation.dataset import EvalSample, ReleaseData, ReleaseError


class EmptySelection(ReleaseError):
    """--split or --tasks matched nothing in the release."""


def splits(data: ReleaseData) -> list[str]:
    """The release's splits, from the sample files its SHA256SUMS lists (nothing is read)."""
    found = set()
    for rel in data.files.listed:
        parts = rel.split("/")
        if len(parts) == 3 and parts[0] == "samples" and parts[2].endswith(".parquet"):
            found.add(parts[2].removesuffix(".parquet"))
    return sorted(found)


def select(data: ReleaseData, split: str | None = None, tasks: list[str] | None = None,
           limit: int | None = None) -> list[EvalSample]:
    """The samples of `split` whose task starts with one of `tasks`, at most `limit` of them (drawn
    per task); EmptySelection naming the split or the task prefixes that matched nothing."""
    if split and split not in splits(data):
        raise EmptySelection(f"--split {split}: {data.name} has no such split (its splits: "
                             f"{', '.join(splits(data)) or 'none'})")
    samples = data.samples(split, tasks or None)
    unmatched = [t for t in tasks or [] if not any(s.task.startswith(t) for s in samples)]
    if unmatched:
        families = sorted({s.task.split("/")[0] + "/" for s in data.samples(split)})
        raise EmptySelection(f"--tasks {', '.join(unmatched)}: no task of {data.name}"
                             + (f" (split {split})" if split else "") + " starts with "
                             + ("it" if len(unmatched) == 1 else "them") + f" (its task families: {', '.join(families)})")
    if not samples:
        raise EmptySelection(f"{data.name}" + (f" split {split}" if split else "") + " holds no sample")
    if limit is not None and limit < 1:
        raise EmptySelection(f"--limit {limit}: choose at least 1")
    return stratified(samples, limit) if limit and limit < len(samples) else samples


def stratified(samples: list[EvalSample], limit: int) -> list[EvalSample]:
    """`limit` samples, the tasks taking turns (in an order of their names' hashes), each giving its
    next sample in content-hash order; the result in id order, as every selection is."""
    from curate.curation.hashing import content_hash

    by_task: dict[str, list[EvalSample]] = {}
    for sample in samples:
        by_task.setdefault(sample.task, []).append(sample)
    queues: list[list[Any]] = [sorted(group, key=lambda s: content_hash("limit", s.id))
                               for _, group in sorted(by_task.items(), key=lambda kv: content_hash("limit", kv[0]))]
    chosen: list[EvalSample] = []
    depth = 0
    while len(chosen) < limit:
        for queue in queues:
            if depth < len(queue) and len(chosen) < limit:
                chosen.append(queue[depth])
        depth += 1
    return sorted(chosen, key=lambda s: s.id)
