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

from curate.evaluation.robustness import bootstrap_interval, kendalls_w, performance, separability


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


def _ecr(results: Any) -> dict[str, float]:
    """Share of programs that ran without an error, by mode (chart-generation tasks apart: they are
    programs in every mode)."""
    if "executed" not in results:
        return {}
    code = results[results["executed"].notna()]
    runs_as = code["mode"].where(code["metric"] != "chart_pass", "chart (CG tasks)")
    return {m: float(g["executed"].astype(bool).mean()) for m, g in code.groupby(runs_as)}


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
            "ecr_by_mode": _ecr(results[results["model"] == model]),
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


Block = tuple[str, Any]  # ("h1" | "h2" | "p" | "list", text or items) or ("table", (header, rows))


def _blocks(summary: dict[str, Any], runs: list[dict[str, Any]]) -> list[Block]:
    """The report's content once, for both renderings (Markdown and HTML)."""
    blocks: list[Block] = [("h1", "Evaluation report")]
    items = []
    for run in runs:
        judge = run.get("judge")
        items.append(f"{run.get('model')} on {run.get('release')} (fingerprint {run.get('fingerprint')}): "
                     f"modes {', '.join(run.get('modes', []))}; configurations {', '.join(run.get('configs', []))}; "
                     f"{run.get('samples', 0)} samples; generation {json.dumps(run.get('generation', {}))}"
                     + (f"; judge {judge['name']} (prompt {judge['prompt_hash']}, in run.json)" if judge else ""))
    blocks.append(("list", items))
    warnings = sorted({w for run in runs for w in run.get("warnings") or []})
    for run in runs:
        failed = run.get("failures") or {}
        if failed.get("count"):
            kinds = ", ".join(f"{k} {v}" for k, v in sorted(failed["by_kind"].items()))
            warnings.append(f"{run.get('model')}: {failed['count']} requests got no usable reply ({kinds}); they are "
                            "not scored, and the next run asks them again.")
        if run.get("truncated"):
            warnings.append(f"{run.get('model')}: {run['truncated']} replies were cut at max_tokens (marked "
                            "`truncated` in results.parquet).")
    if warnings:
        blocks.append(("p", "Warning: " + " ".join(warnings)))
    text = f"{summary['scored']:,} of {summary['rows']:,} predictions scored."
    if summary["unscored_by_metric"]:
        text += " Not scored: " + ", ".join(f"{k} {v}" for k, v in summary["unscored_by_metric"].items()) + (
            " (llm_judge needs --judge-model)." if "llm_judge" in summary["unscored_by_metric"] else ".")
    blocks.append(("p", text))
    models = sorted(summary["models"])
    blocks += [("h2", "Models"), ("table", (
        ["model", "score", "95% interval", "performance", "robustness", "unextracted"],
        [[m, _fmt(s["score"]), f"{_fmt(s['interval'][0])}-{_fmt(s['interval'][1])}", _fmt(s["performance"]),
          _fmt(s["robustness"]), str(s["unextracted"])] for m, s in sorted(summary["models"].items())]))]
    if "ranking" in summary:
        text = f"Ranking: {' > '.join(summary['ranking'])}. Separability: {_fmt(summary['separability'])}."
        if "kendalls_w" in summary:
            text += f" Kendall's W of the rankings across configurations: {_fmt(summary['kendalls_w'])}."
        blocks.append(("p", text))
    for title, key in (("By mode", "by_mode"), ("By skill and mode", "by_skill_mode"), ("By task", "by_task"),
                       ("By configuration", "by_config"),
                       ("Code execution rate (ECR) by mode: programs that ran without an error", "ecr_by_mode")):
        names = sorted({k for s in summary["models"].values() for k in s.get(key, {})})
        if not names:
            continue
        blocks += [("h2", title), ("table", ([""] + models, [[n] + [_fmt(summary["models"][m].get(key, {}).get(n))
                                                                    for m in models] for n in names]))]
    for run in runs:
        blocks += _official_blocks(run)
    return blocks


def _official_blocks(run: dict[str, Any]) -> list[Block]:
    """The benchmark's own scoring (evaluation.official), its numbers beside curate's."""
    official = run.get("official")
    if not official:
        return []
    blocks: list[Block] = []
    for key, result in official.get("runs", {}).items():
        blocks.append(("h2", f"Official scoring ({official['profile']}): {run.get('model')}, {key}"))
        if result.get("note"):
            blocks.append(("p", result["note"] + "."))
        blocks.append(("table", (["subtype", "official metric", "official", "curate", "questions"],
                                 [[r["subtype"], r["metric"], _fmt(r["official"]), _fmt(r["curate"]), str(r["total"])]
                                  for r in result.get("side_by_side", [])])))
        types = result.get("types", {})
        if types:
            names = sorted({m for scores in types.values() for m in scores if m != "total"})
            blocks.append(("table", (["type"] + names, [[t] + [_fmt(scores.get(m)) for m in names]
                                                         for t, scores in types.items()])))
        if "curate_overall" in result:
            blocks.append(("p", f"curate's own metrics over the same predictions: {_fmt(result['curate_overall'])} "
                                f"(mean score x 100). {len(result.get('disagreements', []))} questions score "
                                "differently under the official code and curate's (listed in official.json)."))
    return blocks


def _markdown(blocks: list[Block]) -> str:
    lines: list[str] = []
    for kind, content in blocks:
        if kind == "h1":
            lines += [f"# {content}", ""]
        elif kind == "h2":
            lines += ["", f"## {content}", ""]
        elif kind == "p":
            lines += ["", content]
        elif kind == "list":
            lines += [f"- {item}" for item in content]
        elif kind == "table":
            header, rows = content
            lines += ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
            lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def _html(blocks: list[Block], plots: list[tuple[str, str]]) -> str:
    e = html.escape
    parts = []
    for kind, content in blocks:
        if kind in ("h1", "h2"):
            parts.append(f"<{kind}>{e(content)}</{kind}>")
        elif kind == "p":
            parts.append(f"<p>{e(content)}</p>")
        elif kind == "list":
            parts.append("<ul>" + "".join(f"<li>{e(item)}</li>" for item in content) + "</ul>")
        elif kind == "table":
            header, rows = content
            numeric = lambda cell: cell.replace(".", "", 1).replace("-", "", 1).isdigit() or cell in ("-", "nan")  # noqa: E731
            parts.append("<table><thead><tr>" + "".join(f"<th>{e(h)}</th>" for h in header) + "</tr></thead><tbody>"
                         + "".join("<tr>" + "".join(f"<td class=\"num\">{e(c)}</td>" if numeric(c) else f"<td>{e(c)}</td>"
                                                    for c in row) + "</tr>" for row in rows) + "</tbody></table>")
    parts += [f"<h2>{e(t)}</h2><img alt=\"{e(t)}\" src=\"data:image/png;base64,{png}\">" for t, png in plots]
    return ("<!doctype html><html><head><meta charset=\"utf-8\"><title>curate evaluation report</title><style>"
            "body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;color:#222}"
            "table{border-collapse:collapse;margin:.5em 0 1.5em}th{background:#f0f0f0;text-align:left}"
            "td,th{border:1px solid #ccc;padding:3px 10px}td.num{text-align:right;font-variant-numeric:tabular-nums}"
            "tbody tr:nth-child(even){background:#fafafa}img{max-width:100%}</style></head><body>"
            + "".join(parts) + "</body></html>")


def write_report(folders: list[Path], out: Path) -> dict[str, Any]:
    results, runs = load_results(folders)
    summary = summarize(results)
    out.mkdir(parents=True, exist_ok=True)
    blocks = _blocks(summary, runs)
    (out / "report.md").write_text(_markdown(blocks))
    (out / "summary.json").write_text(json.dumps(summary, indent=2, default=float))
    (out / "report.html").write_text(_html(blocks, _plots(summary)))
    return summary
