"""`curate evaluate` without a model: prompt building, and replaying 100,000 predictions (extraction,
scoring, report) through the command users run; print what was measured.

Needs a release: `--release PATH`, or the newest one under ./releases/curate-rdatasets (made by
`make demo` / `curate build`). The predictions cover every sample under the default configuration
and, to reach the count, samples again under csv:none; two in three replies state the gold
answer, one in three states nothing.

    python benchmarks/evaluate.py [--release PATH] [--predictions N]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def newest_release() -> Path:
    import os

    versions = sorted((ROOT / os.environ.get("RELEASES", "releases") / "curate-rdatasets").glob("*.*.*"),
                      key=lambda p: tuple(int(x) for x in p.name.split(".")))
    if not versions:
        raise SystemExit("no release: run `make demo` first, or pass --release PATH")
    return versions[-1]


def peak_memory_mb(process: subprocess.Popen, stop: threading.Event, out: list[float]) -> None:
    import psutil

    peak = 0
    root = psutil.Process(process.pid)
    while not stop.is_set():
        try:
            rss = root.memory_info().rss + sum(c.memory_info().rss for c in root.children(recursive=True))
            peak = max(peak, rss)
        except psutil.Error:
            pass
        time.sleep(0.02)
    out.append(peak / 2 ** 20)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--release", type=Path, default=None)
    parser.add_argument("--predictions", type=int, default=100_000)
    options = parser.parse_args()
    release = options.release or newest_release()

    from curate.evaluation.dataset import ReleaseData
    from curate.evaluation.evaluate import Evaluator, Item, Settings

    data = ReleaseData(release)
    samples = data.samples()
    configs = [data.default, data.configuration("csv:none")]
    pairs = [(s, c) for c in configs for s in samples][:options.predictions]
    pairs.sort(key=lambda p: (p[1].name, p[0].table_ids))  # as the evaluator orders its work
    print(f"release {data.name}: {len(samples):,} samples; {len(pairs):,} predictions")

    # prompt building (TCoT), in-process
    with tempfile.TemporaryDirectory() as tmp:
        # no model: an evaluator over a (dummy) replay file, used here only to build prompts
        evaluator = Evaluator(release, Path(tmp) / "out", Settings(), replay=__file__)
        started = time.perf_counter()
        for s, c in pairs:
            evaluator._messages(Item(s, "tcot", c, ""))
        seconds = time.perf_counter() - started
        print(f"prompt building: {len(pairs):,} TCoT prompts in {seconds:.1f}s ({len(pairs) / seconds:,.0f}/s)")

        lines = []
        for n, (s, c) in enumerate(pairs):
            answer = ", ".join(map(str, s.answer)) if isinstance(s.answer, list) else s.answer
            reply = "I cannot tell." if n % 3 == 0 else f"Reasoning...\nFinal Answer: {answer}"
            lines.append(json.dumps({"sample_id": s.id, "reply": reply, "config": c.name}))
        predictions = Path(tmp) / "predictions.jsonl"
        predictions.write_text("\n".join(lines))
        out = Path(tmp) / "replay"
        command = [sys.executable, "-m", "curate.curation.cli", "evaluate", str(release), "--backend", "replay",
                   "--predictions", str(predictions), "--configs", ",".join(c.name for c in configs),
                   "--out", str(out), "-q", "--json", "--allow-partial"]  # --predictions N may be fewer than all
        stop, peak = threading.Event(), []
        started = time.perf_counter()
        process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        watcher = threading.Thread(target=peak_memory_mb, args=(process, stop, peak))
        watcher.start()
        stdout, stderr = process.communicate()
        seconds = time.perf_counter() - started
        stop.set()
        watcher.join()
        if process.returncode != 0:
            raise SystemExit(f"curate evaluate failed:\n{stderr[-3000:]}")
        result = json.loads(stdout)
        summary = json.loads((out / "summary.json").read_text())
        model = next(iter(summary["models"].values()))
        print(f"curate evaluate --backend replay: {result['results']:,} predictions extracted, scored and "
              f"reported in {seconds:.1f}s ({result['results'] / seconds:,.0f}/s), peak memory {peak[0]:,.0f} MiB; "
              f"mean score {model['score']:.3f}, unextracted {model['unextracted']:,}")
        started = time.perf_counter()
        again = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
        print(f"the same command again (predictions stored): {time.perf_counter() - started:.1f}s "
              f"(exit {again.returncode})")


if __name__ == "__main__":
    main()
