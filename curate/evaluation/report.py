"""The evaluation report: Markdown and a self-contained HTML page (plots embedded as PNG).

One results folder gives one model's scores by mode, skill, task and configuration, each with
its n and 95% interval, with robustness over configurations; its first line states the coverage
(predictions scored of those selected). Several folders (`curate report A B ...`) are compared on
the predictions they all scored, and add rankings with bootstrap intervals, separability, and
Kendall's W of the rankings across configurations; runs of different releases are refused unless
asked for. The report is built from each run's per-sample log (sample_log.py), and report.html
holds a viewer of its samples (viewer.py).
"""

from __future__ import annotations

import base64
import html
import io
import json
from pathlib import Path
from typing import Any

from curate.evaluation.latency import latency_summary
from curate.evaluation.robustness import bootstrap_interval, kendalls_w, performance, score_interval, separability


class Incomparable(ValueError):
    """Runs that cannot be compared: of different releases (unless asked), or sharing no prediction."""


def coverage_line(coverage: dict[str, Any] | None, label: str = "") -> str:
    """The run's coverage in one line, partial runs said first and loudly."""
    if not coverage:
        return f"Coverage{' of ' + label if label else ''}: unknown (a run from before coverage was recorded)."
    text = f"{coverage['scored']:,} of {coverage['selected']:,} scored"
    if coverage["complete"]:
        return f"Coverage{' of ' + label if label else ''}: {text} (complete)."
    why = [f"{coverage[k]:,} {what}" for k, what in (("missing", "without a prediction"), ("failed", "failed requests"),
                                                     ("unscored", "predicted but not scored")) if coverage.get(k)]
    return (f"PARTIAL RUN{' ' + label if label else ''}: {text}" + (f" ({', '.join(why)})" if why else "")
            + (": accepted with --allow-partial." if coverage.get("allow_partial")
               else ": every score below is over the scored predictions only (--allow-partial accepts this)."))


def load_results(folders: list[Path]) -> tuple[Any, list[dict[str, Any]]]:
    """Each run's per-sample log (results.parquet for a run from before the log), each run labelled
    by its model, made unique by release or run id where two runs share a model's name."""
    import pandas as pd

    from curate.evaluation.sample_log import SAMPLES_FILE, read_log

    frames, runs = [], []
    for folder in folders:
        folder = Path(folder)
        if (folder / SAMPLES_FILE).exists():
            frame = pd.DataFrame(read_log(folder))
        elif (folder / "results.parquet").exists():
            frame = pd.read_parquet(folder / "results.parquet")
        else:
            raise FileNotFoundError(f"{folder}: no samples.jsonl or results.parquet (run `curate evaluate` into it "
                                    "first)")
        if frame.empty:  # a run that scored nothing still has the columns every step reads
            from curate.evaluation.scoring import RESULT_COLUMNS

            frame = pd.DataFrame({c: pd.Series(dtype=float if c == "score" else object)
                                  for c in (*RESULT_COLUMNS, "failure")})
        if "failure" not in frame:
            frame["failure"] = ""
        frames.append(frame)
        run = folder / "run.json"
        runs.append({"folder": str(folder), **(json.loads(run.read_text()) if run.exists() else
                                               {"model": str(folder)})})
    names = [run.get("model") for run in runs]
    for run, frame in zip(runs, frames):
        label = run.get("model")
        if names.count(label) > 1:
            same_release = len({r.get("release") for r in runs if r.get("model") == label}) == 1
            label = f"{label} @ {run.get('release')}" if not same_release else f"{label} #{run.get('run_id') or run['folder']}"
        run["label"] = label
        frame["model"] = label
    return pd.concat(frames, ignore_index=True), runs


def comparable(results: Any, runs: list[dict[str, Any]], allow_mismatch: bool = False) -> tuple[Any, dict[str, Any]]:
    """Several runs restricted to the predictions (sample x mode x configuration) each of them
    scored; Incomparable for runs of different releases (unless `allow_mismatch`) or with nothing
    shared. Differences in scoring settings are warnings."""
    from curate.evaluation.runs import differences

    release_notes, setting_notes = differences(runs)
    if release_notes and not allow_mismatch:
        raise Incomparable("; ".join(release_notes) + ": their scores are not comparable (--allow-mismatch compares "
                           "them on the samples they share, with a warning)")
    scored = results[results["score"].notna()]
    keys = scored["sample_id"] + "|" + scored["mode"] + "|" + scored["config"]
    per_run = {label: set(keys[scored["model"] == label]) for label in (r["label"] for r in runs)}
    shared = set.intersection(*per_run.values()) if per_run else set()
    if not shared:
        raise Incomparable("the runs share no scored prediction (sample x mode x configuration): "
                           + "; ".join(f"{label} scored {len(k):,}" for label, k in per_run.items()))
    every = results["sample_id"] + "|" + results["mode"] + "|" + results["config"]
    note = (f"Compared on the {len(shared):,} predictions (sample x mode x configuration) every run scored: "
            + "; ".join(f"{label} scored {len(k):,}" for label, k in per_run.items()) + ".")
    return results[every.isin(shared)], {"shared": len(shared), "scored_by_run": {k: len(v) for k, v in per_run.items()},
                                         "note": note, "warnings": release_notes + setting_notes}


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


CELLS = {"by_mode": ["mode"], "by_skill_mode": ["skill", "mode"], "by_task": ["task"], "by_config": ["config"],
         "by_task_mode_config": ["task", "mode", "config"]}


def _cells(r: Any) -> dict[str, dict[str, dict[str, Any]]]:
    """Every cell of the report's tables with its n and 95% interval (robustness.score_interval)."""
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for key, columns in CELLS.items():
        out[key] = {}
        for name, group in r.groupby(columns):
            name = " / ".join(name) if isinstance(name, tuple) else name
            mean, low, high = score_interval(group["score"].tolist())
            out[key][name] = {"score": mean, "n": int(len(group)), "interval": [low, high]}
    return out


def summarize(results: Any) -> dict[str, Any]:
    """Every number the report shows, as plain data (also written as summary.json)."""
    scored = results[results["score"].notna()]
    predicted = results[results["failure"].fillna("") == ""] if "failure" in results else results
    out: dict[str, Any] = {"models": {}, "rows": int(len(predicted)), "scored": int(len(scored)),
                           "failed": int(len(results) - len(predicted)),
                           "unscored_by_metric": predicted[predicted["score"].isna()].groupby("metric").size().to_dict()}
    for model, r in scored.groupby("model"):
        by_config = {c: g["score"].tolist() for c, g in r.groupby("config")}
        mean, low, high = bootstrap_interval(r.groupby("sample_id")["score"].mean().tolist())
        out["models"][model] = {
            "score": mean, "interval": [low, high], "n": int(len(r)),
            "unextracted": int((~predicted[predicted["model"] == model]["extracted"].astype(bool)).sum()),
            "by_mode": r.groupby("mode")["score"].mean().to_dict(),
            "by_skill_mode": {f"{s} / {m}": v for (s, m), v in r.groupby(["skill", "mode"])["score"].mean().items()},
            "by_task": r.groupby("task")["score"].mean().to_dict(),
            "by_config": {c: float(sum(v) / len(v)) for c, v in by_config.items()},
            "performance": performance(by_config),
            "robustness": robustness_of(r) if len(by_config) > 1 else None,
            "config_range": {c: [float(min(v)), float(max(v))] for c, v in by_config.items()},
            "ecr_by_mode": _ecr(predicted[predicted["model"] == model]),
            "cells": _cells(r),
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
    out["latency"] = latency_summary(predicted)
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


def _cell(cell: dict[str, Any] | None) -> str:
    """A score with its n and 95% interval: "0.500 (n=6; 0.19-0.81)"."""
    if not cell:
        return "-"
    return f"{_fmt(cell['score'])} (n={cell['n']:,}; {cell['interval'][0]:.2f}-{cell['interval'][1]:.2f})"


FILTERS = {"by_mode": ("mode",), "by_skill_mode": ("skill", "mode"), "by_task": ("task",), "by_config": ("config",),
           "by_task_mode_config": ("task", "mode", "config")}


def _blocks(summary: dict[str, Any], runs: list[dict[str, Any]],
            comparison: dict[str, Any] | None = None) -> list[Block]:
    """The report's content once, for both renderings (Markdown and HTML). The first line is the
    coverage of each run; a partial one says so before anything else."""
    blocks: list[Block] = [("p", " ".join(coverage_line(run.get("coverage"), run.get("label", "") if len(runs) > 1
                                                        else "") for run in runs)),
                           ("h1", "Evaluation report")]
    if comparison:
        if comparison["warnings"]:
            blocks.append(("p", "WARNING: these runs differ: " + "; ".join(comparison["warnings"]) + "."))
        blocks.append(("p", comparison["note"]))
    items = []
    for run in runs:
        judge = run.get("judge")
        items.append(f"{run.get('label') or run.get('model')} on {run.get('release')} (fingerprint {run.get('fingerprint')}): "
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
    if summary.get("failed"):
        text += f" {summary['failed']:,} requests failed (no reply; not scored)."
    if summary["unscored_by_metric"]:
        text += " Not scored: " + ", ".join(f"{k} {v}" for k, v in summary["unscored_by_metric"].items()) + (
            " (llm_judge needs --judge-model)." if "llm_judge" in summary["unscored_by_metric"] else ".")
    blocks.append(("p", text))
    models = sorted(summary["models"])
    blocks += [("h2", "Models"), ("table", (
        ["model", "score", "n", "95% interval", "performance", "robustness", "unextracted"],
        [[m, _fmt(s["score"]), f"{s['n']:,}", f"{_fmt(s['interval'][0])}-{_fmt(s['interval'][1])}", _fmt(s["performance"]),
          _fmt(s["robustness"]), str(s["unextracted"])] for m, s in sorted(summary["models"].items())]))]
    if "ranking" in summary:
        text = f"Ranking: {' > '.join(summary['ranking'])}. Separability: {_fmt(summary['separability'])}."
        if "kendalls_w" in summary:
            text += f" Kendall's W of the rankings across configurations: {_fmt(summary['kendalls_w'])}."
        blocks.append(("p", text))
    several = any(len(s["cells"]["by_task_mode_config"]) > len(s["cells"]["by_task"])
                  for s in summary["models"].values() if "cells" in s)
    for title, key in (("By mode", "by_mode"), ("By skill and mode", "by_skill_mode"), ("By task", "by_task"),
                       ("By configuration", "by_config"),
                       ("By task, mode and configuration", "by_task_mode_config" if several else ""),
                       ("Code execution rate (ECR) by mode: programs that ran without an error", "ecr_by_mode")):
        if not key:
            continue
        if key in FILTERS:  # each cell a score with its n and interval, and a way into its samples (viewer.py)
            names = sorted({k for s in summary["models"].values() for k in s.get("cells", {}).get(key, {})})
            rows = [[n] + [_cell(summary["models"][m]["cells"][key].get(n)) for m in models] for n in names]
            filters = [dict(zip(FILTERS[key], n.split(" / "))) for n in names]
            blocks += [("h2", title + " (score, n, 95% interval)"), ("table", ([""] + models, rows, filters))]
            continue
        names = sorted({k for s in summary["models"].values() for k in s.get(key, {})})
        if not names:
            continue
        blocks += [("h2", title), ("table", ([""] + models, [[n] + [_fmt(summary["models"][m].get(key, {}).get(n))
                                                                    for m in models] for n in names]))]
    blocks += _latency_blocks(summary.get("latency") or {})
    for run in runs:
        blocks += _official_blocks(run)
    return blocks


def _latency_blocks(latency: dict[str, dict[str, dict[str, Any]]]) -> list[Block]:
    """Seconds per sample (its model calls, summed over turns) by model and mode, and the retries."""
    if not latency:
        return [("h2", "Latency"), ("p", "Not timed: none of these predictions has a latency (replayed, batch and "
                                         "cached replies carry none, nor do runs from before it was recorded).")]
    rows = [[model, mode, f"{c['n']:,}", f"{c['median']:.2f}", f"{c['p90']:.2f}", f"{c['max']:.2f}", f"{c['retries']:,}"]
            for model, modes in sorted(latency.items()) for mode, c in sorted(modes.items())]
    return [("h2", "Latency (seconds per sample: its model calls, summed over turns)"),
            ("table", (["model", "mode", "timed", "median", "p90", "max", "retries"], rows))]


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
            header, rows = content[0], content[1]
            lines += ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
            lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines).lstrip("\n") + "\n"


def _html(blocks: list[Block], plots: list[tuple[str, str]], viewer: str = "") -> str:
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
            header, rows = content[0], content[1]
            filters = content[2] if len(content) > 2 else [None] * len(rows)
            numeric = lambda cell: cell[:1].isdigit() or cell in ("-", "nan")  # noqa: E731

            def td(cell: str, column: int, where: dict[str, str] | None) -> str:
                attrs = " class=\"num\"" if numeric(cell) else ""
                if where is not None and column > 0:  # a cell opens its samples in the viewer
                    attrs = (f" class=\"num cell\" data-filter=\"{e(json.dumps({**where, 'run': header[column]}))}\""
                             " title=\"show these samples\"")
                return f"<td{attrs}>{e(cell)}</td>"

            parts.append("<table><thead><tr>" + "".join(f"<th>{e(h)}</th>" for h in header) + "</tr></thead><tbody>"
                         + "".join("<tr>" + "".join(td(c, j, where) for j, c in enumerate(row)) + "</tr>"
                                   for row, where in zip(rows, filters)) + "</tbody></table>")
    parts += [f"<h2>{e(t)}</h2><img alt=\"{e(t)}\" src=\"data:image/png;base64,{png}\">" for t, png in plots]
    parts.append(viewer)
    return ("<!doctype html><html><head><meta charset=\"utf-8\"><title>curate evaluation report</title><style>"
            "body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;color:#222}"
            "table{border-collapse:collapse;margin:.5em 0 1.5em}th{background:#f0f0f0;text-align:left}"
            "td,th{border:1px solid #ccc;padding:3px 10px}td.num{text-align:right;font-variant-numeric:tabular-nums}"
            "tbody tr:nth-child(even){background:#fafafa}img{max-width:100%}td.cell{cursor:pointer;color:#0645ad}"
            "td.cell:hover{text-decoration:underline}</style></head><body>"
            + "".join(parts) + "</body></html>")


def write_report(folders: list[Path], out: Path, allow_mismatch: bool = False) -> dict[str, Any]:
    """report.md, report.html (with its sample viewer) and summary.json; several runs compared on
    the predictions they share (Incomparable where they cannot be)."""
    from curate.evaluation.viewer import viewer_html

    results, runs = load_results(folders)
    comparison = None
    if len(runs) > 1:
        results, comparison = comparable(results, runs, allow_mismatch)
    summary = summarize(results)
    summary["coverage"] = {run["label"]: run.get("coverage") for run in runs}
    if comparison:
        summary["comparison"] = comparison
    out.mkdir(parents=True, exist_ok=True)
    blocks = _blocks(summary, runs, comparison)
    (out / "report.md").write_text(_markdown(blocks))
    (out / "summary.json").write_text(json.dumps(summary, indent=2, default=float))
    (out / "report.html").write_text(_html(blocks, _plots(summary), viewer_html(results, runs)))
    return summary
