"""ToRR's reliability statistics over table configurations, and bootstrap intervals.

- performance: the mean over configurations of each configuration's mean score
- robustness: 1 - the mean, over examples, of the range (max - min) of an example's score across
  configurations (1: every configuration gives every example the same score)
- Kendall's W: how much configurations agree on the ranking of models (1: the same ranking under
  every configuration; 0: no agreement), with the correction for ties
- bootstrap: a confidence interval of a model's mean score, resampling examples; separability is
  the share of model pairs whose intervals do not overlap
"""

from __future__ import annotations

from typing import Sequence

import numpy as np


def performance(scores_by_config: dict[str, Sequence[float]]) -> float:
    means = [float(np.mean(v)) for v in scores_by_config.values() if len(v)]
    return float(np.mean(means)) if means else float("nan")


def robustness(scores_by_example: dict[str, Sequence[float]]) -> float:
    """`scores_by_example`: an example's scores, one per configuration."""
    ranges = [max(v) - min(v) for v in scores_by_example.values() if len(v) > 1]
    return 1.0 - float(np.mean(ranges)) if ranges else float("nan")


def kendalls_w(scores: np.ndarray) -> float:
    """`scores[c, m]`: model m's score under configuration c (a rater ranking the models).
    W = 12 S / (k^2 (n^3 - n) - k T), ranks averaged over ties (T corrects for them)."""
    from scipy.stats import rankdata

    scores = np.asarray(scores, dtype=float)
    k, n = scores.shape
    if n < 2 or k < 2:
        return float("nan")
    ranks = np.vstack([rankdata(row) for row in scores])
    totals = ranks.sum(axis=0)
    s = float(((totals - totals.mean()) ** 2).sum())
    ties = 0.0
    for row in scores:
        _, counts = np.unique(row, return_counts=True)
        ties += float((counts ** 3 - counts).sum())
    denominator = k ** 2 * (n ** 3 - n) - k * ties
    return 12.0 * s / denominator if denominator > 0 else 1.0


def bootstrap_interval(values: Sequence[float], resamples: int = 1000, level: float = 0.95, seed: int = 0
                       ) -> tuple[float, float, float]:
    """(mean, low, high): the percentile interval of the mean over `resamples` resamplings."""
    data = np.asarray(values, dtype=float)
    if data.size == 0:
        return float("nan"), float("nan"), float("nan")
    rng = np.random.default_rng(seed)
    means = data[rng.integers(0, data.size, size=(resamples, data.size))].mean(axis=1)
    alpha = (1.0 - level) / 2.0
    return float(data.mean()), float(np.quantile(means, alpha)), float(np.quantile(means, 1.0 - alpha))


def separability(intervals: dict[str, tuple[float, float, float]]) -> float:
    """The share of model pairs whose intervals do not overlap."""
    names = sorted(intervals)
    pairs = [(a, b) for i, a in enumerate(names) for b in names[i + 1:]]
    if not pairs:
        return float("nan")
    apart = sum(1 for a, b in pairs if intervals[a][2] < intervals[b][1] or intervals[b][2] < intervals[a][1])
    return apart / len(pairs)


def score_interval(values: Sequence[float], level: float = 0.95) -> tuple[float, float, float]:
    """(mean, low, high) of one cell of a report (a task, a mode, a configuration): Wilson's interval
    where every score is 0 or 1 (honest at n = 1: one right answer is 0.21-1.00, not 1.00-1.00),
    else the bootstrap's, a normal one past 2,000 values (the bootstrap's cost grows with n)."""
    from statistics import NormalDist  # not scipy.stats: its import alone takes seconds

    data = np.asarray(values, dtype=float)
    if data.size == 0:
        return float("nan"), float("nan"), float("nan")
    z = NormalDist().inv_cdf(0.5 + level / 2.0)
    mean = float(data.mean())
    if np.isin(data, (0.0, 1.0)).all():
        n = data.size
        centre = (mean + z * z / (2 * n)) / (1 + z * z / n)
        half = z * np.sqrt(mean * (1 - mean) / n + z * z / (4 * n * n)) / (1 + z * z / n)
        return mean, float(max(0.0, centre - half)), float(min(1.0, centre + half))
    if data.size > 2000:
        half = z * float(data.std(ddof=1)) / np.sqrt(data.size)
        return mean, mean - half, mean + half
    return bootstrap_interval(data, level=level)
