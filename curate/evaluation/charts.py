"""Chart generation (RealHiTBench's CG tasks): the chart a program drew, read back, against the gold.

The model writes matplotlib code; the sandbox runs it headless and reads back what each figure
shows (`sandbox_worker._plotted`). `plotted_chart` turns that into the gold's shape,
{"chart_type", "x", "y"}, and the `chart_pass` metric (`curate/evaluation/metrics/chart.py`) is PASS@1: the
same kind of chart showing the same values. As in TableBench's chart metric (which RealHiTBench uses), the y values are compared as a
sorted multiset, so the order of bars or points does not matter; numbers match to 1% (relative)
or 0.01 (absolute); a pie is compared by shares of its total. ECR (the share of programs that ran)
is the `executed` column of the results.
"""

from __future__ import annotations

from typing import Any

NO_CHART = "the program drew no chart"

_KINDS = {"bar": "bar", "barh": "bar", "hbar": "bar", "column": "bar", "histogram": "bar", "waterfall": "bar",
          "line": "line", "area": "line", "radar": "line", "pie": "pie", "donut": "pie", "scatter": "scatter",
          "point": "scatter"}  # TableBench's chart types too (hbar, waterfall, area, radar)


def chart_kind(name: Any) -> str:
    """"Horizontal bar chart" -> "bar"; "scatter plot" -> "scatter"; unknown names stay as they are."""
    text = str(name or "").lower().replace("_", " ").replace("-", " ")
    for word in text.replace("chart", " ").replace("plot", " ").replace("graph", " ").split():
        if word in _KINDS:
            return _KINDS[word]
    return text.strip()


def plotted_chart(figures: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The first figure with a chart on it, as {"chart_type", "x", "y"} (None: nothing was drawn)."""
    for figure in figures:
        kind = figure.get("type") or ""
        if not kind:
            continue
        x: list[Any] = []
        y: list[float] = []
        for axes in figure.get("axes", []):
            if kind == "bar":
                x += axes.get("bar_labels", [])
                y += axes.get("bars", [])
            elif kind == "pie":
                x += axes.get("pie_labels", [])
                y += axes.get("wedges", [])
            elif kind == "line":
                for line in axes.get("lines", []):
                    x += line["x"] if isinstance(line, dict) else []
                    y += line["y"] if isinstance(line, dict) else line
            elif kind == "scatter":
                for points in axes.get("points", []):
                    x += [p[0] for p in points]
                    y += [p[1] for p in points]
        return {"chart_type": kind, "x": x, "y": y}
    return None
