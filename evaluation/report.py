"""The evaluation report: Markdown and a self-contained HTML page (plots embedded as PNG).

One results folder gives one model's scores by mode, skill, task and configuration, with
robustness over configurations. Several folders (`curate report A B ...`) add rankings with
bootstrap intervals, separability, and Kendall's W of the rankings across configurations.
"""

from __future__ import annotations

import base64
import html
import io
import json
from pathlib import Path
from typing import Any

from evaluation.robustness import bootstrap_interval, kendalls_w, performance, separability


def load_results(folders: list[Path]) -> tuple[Any, list[dict[str, Any]]]:
    import pandas as pd

    frames, runs = [], []
    for folder in folders:
        results = Path(folder) / "results.parquet"
        if not results.exists():
            raise FileNotFoundError(f"{folder}: no results.parquet (run `curate evaluate` into it first)")
        frames.append(pd.read_parquet(results))
        run = Path(folder) / "run.json"
        runs.append(json.loads(run.read_text()) if run.exists() else {"model": str(folder)})
    return pd.concat(frames, ignore_index=True), runs


def robustness_of(results: Any) -> float:
    """`robustness` over a results frame: per (sample, mode), the range across configurations."""
    groups = results.groupby(["sample_id", "mode"])["score"]
    spread = (groups.max() - groups.min())[groups.size() > 1]
    return 1.0 - float(spread.mean()) if len(spread) else float("nan")


def summarize(results: Any) -> dict[str, Any]:
    """Every number the report shows, as plain data (also written as summary.json)."""
    scored = results[results["score"].notna()]
    out: dict[str, Any] = {"models": {}, "rows": int(len(results)), "scored": int(len(scored)),
                           "unscored_by_metric": results[results["score"].isna()].groupby("metric").size().to_dict()}
    for model, r in scored.groupby("model"):
        by_config = {c: g["score"].tolist() for c, g in r.groupby("config")}
        mean, low, high = bootstrap_interval(r.groupby("sample_id")["score"].mean().tolist())
        out["models"][model] = {
            "score": mean, "interval": [low, high], "n": int(len(r)),
            "unextracted": int((~results[results["model"] == model]["extracted"]).sum()),
            "by_mode": r.groupby("mode")["score"].mean().to_dict(),
            "by_skill_mode": {f"{s} / {m}": v for (s, m), v in r.groupby(["skill", "mode"])["score"].mean().items()},
            "by_task": r.groupby("task")["score"].mean().to_dict(),
            "by_config": {c: float(sum(v) / len(v)) for c, v in by_config.items()},
            "performance": performance(by_config),
            "robustness": robustness_of(r) if len(by_config) > 1 else None,
            "config_range": {c: [float(min(v)), float(max(v))] for c, v in by_config.items()},
        }
    models = sorted(out["models"])
    if len(models) > 1:
        intervals = {m: (out["models"][m]["score"], *out["models"][m]["interval"]) for m in models}
        out["separability"] = separability(intervals)
        configs = sorted(set.intersection(*[set(out["models"][m]["by_config"]) for m in models]))
        if len(configs) > 1:
            import numpy as np

            matrix = np.array([[out["models"][m]["by_config"][c] for m in models] for c in configs])
            out["kendalls_w"] = kendalls_w(matrix)
        out["ranking"] = sorted(models, key=lambda m: -out["models"][m]["score"])
    return out


def _figure_png(fig: Any) -> str:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=100, bbox_inches="tight")
    import matplotlib.pyplot as plt

    plt.close(fig)
    return base64.b64encode(buffer.getvalue()).decode()


def _plots(summary: dict[str, Any]) -> list[tuple[str, str]]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plots = []
    models = sorted(summary["models"])
    if not models:
        return plots
    keys = sorted({k for m in models for k in summary["models"][m]["by_skill_mode"]})
    fig, ax = plt.subplots(figsize=(max(6, 0.5 * len(keys) * len(models)), 4))
    width = 0.8 / len(models)
    for i, m in enumerate(models):
        values = [summary["models"][m]["by_skill_mode"].get(k, 0.0) for k in keys]
        ax.bar([x + i * width for x in range(len(keys))], values, width, label=m)
    ax.set_xticks([x + 0.4 - width / 2 for x in range(len(keys))], keys, rotation=45, ha="right")
    ax.set_ylim(0, 1)
    ax.set_ylabel("mean score")
    ax.set_title("Scores by skill and mode")
    ax.legend(fontsize=8)
    plots.append(("Scores by skill and mode", _figure_png(fig)))
    configs = sorted({c for m in models for c in summary["models"][m]["by_config"]})
    if len(configs) > 1:
        fig, ax = plt.subplots(figsize=(max(6, 0.6 * len(configs)), 4))
        for i, m in enumerate(models):
            values = [summary["models"][m]["by_config"].get(c, float("nan")) for c in configs]
            ax.plot(range(len(configs)), values, marker="o", label=m)
        ax.set_xticks(range(len(configs)), configs, rotation=45, ha="right")
        ax.set_ylabel("mean score")
        ax.set_title("Scores by table configuration (serialization:perturbation)")
        ax.legend(fontsize=8)
        plots.append(("Robustness across configurations", _figure_png(fig)))
    if len(models) > 1:
        ranked = summary["ranking"]
        fig, ax = plt.subplots(figsize=(6, 0.5 * len(ranked) + 1.5))
        means = [summary["models"][m]["score"] for m in ranked]
        lows = [means[i] - summary["models"][m]["interval"][0] for i, m in enumerate(ranked)]
        highs = [summary["models"][m]["interval"][1] - means[i] for i, m in enumerate(ranked)]
        ax.errorbar(means, range(len(ranked)), xerr=[lows, highs], fmt="o", capsize=4)
        ax.set_yticks(range(len(ranked)), ranked)
        ax.invert_yaxis()
        ax.set_xlabel("mean score (95% bootstrap interval)")
        ax.set_title("Ranking")
        plots.append(("Ranking with intervals", _figure_png(fig)))
    return plots


def _fmt(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return "nan" if value != value else f"{value:.3f}"
    return str(value)


def _markdown(summary: dict[str, Any], runs: list[dict[str, Any]]) -> str:
    lines = ["# Evaluation report", ""]
    for run in runs:
        lines.append(f"- **{run.get('model')}** on {run.get('release')} (fingerprint {run.get('fingerprint')}): "
                     f"modes {', '.join(run.get('modes', []))}; configurations {', '.join(run.get('configs', []))}; "
                     f"{run.get('samples', 0)} samples; generation {json.dumps(run.get('generation', {}))}")
    lines += ["", f"{summary['scored']:,} of {summary['rows']:,} predictions scored."]
    if summary["unscored_by_metric"]:
        lines.append("Not scored (metric not computed by this evaluator yet): " + ", ".join(
            f"{k} {v}" for k, v in summary["unscored_by_metric"].items()) + ".")
    lines += ["", "## Models", "", "| model | score | 95% interval | performance | robustness | unextracted |",
              "| --- | --- | --- | --- | --- | --- |"]
    for m, s in sorted(summary["models"].items()):
        lines.append(f"| {m} | {_fmt(s['score'])} | {_fmt(s['interval'][0])}-{_fmt(s['interval'][1])} | "
                     f"{_fmt(s['performance'])} | {_fmt(s['robustness'])} | {s['unextracted']} |")
    if "ranking" in summary:
        lines += ["", f"Ranking: {' > '.join(summary['ranking'])}. Separability: {_fmt(summary['separability'])}."]
        if "kendalls_w" in summary:
            lines.append(f"Kendall's W of the rankings across configurations: {_fmt(summary['kendalls_w'])}.")
    for title, key in (("By mode", "by_mode"), ("By skill and mode", "by_skill_mode"), ("By task", "by_task"),
                       ("By configuration", "by_config")):
        names = sorted({k for s in summary["models"].values() for k in s[key]})
        models = sorted(summary["models"])
        lines += ["", f"## {title}", "", "| | " + " | ".join(models) + " |", "| --- " * (len(models) + 1) + "|"]
        for n in names:
            lines.append(f"| {n} | " + " | ".join(_fmt(summary["models"][m][key].get(n)) for m in models) + " |")
    return "\n".join(lines) + "\n"


def write_report(folders: list[Path], out: Path) -> dict[str, Any]:
    results, runs = load_results(folders)
    summary = summarize(results)
    out.mkdir(parents=True, exist_ok=True)
    markdown = _markdown(summary, runs)
    (out / "report.md").write_text(markdown)
    (out / "summary.json").write_text(json.dumps(summary, indent=2, default=float))
    body = "".join(f"<h2>{html.escape(t)}</h2><img alt=\"{html.escape(t)}\" src=\"data:image/png;base64,{png}\">"
                   for t, png in _plots(summary))
    page = ("<!doctype html><html><head><meta charset=\"utf-8\"><title>curate evaluation report</title>"
            "<style>body{font-family:sans-serif;max-width:1100px;margin:2em auto}table{border-collapse:collapse}"
            "td,th{border:1px solid #ccc;padding:3px 8px}pre{white-space:pre-wrap}</style></head><body>"
            f"<pre>{html.escape(markdown)}</pre>{body}</body></html>")
    (out / "report.html").write_text(page)
    return summary
