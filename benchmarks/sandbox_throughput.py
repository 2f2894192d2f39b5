"""Model-written programs through the sandbox as `curate evaluate` runs PoT: N small pandas
programs over a 1,000-row table, `--workers` at once from a thread pool; print programs per
second and the latency of one program.

    python benchmarks/sandbox_throughput.py [--programs N] [--workers W] [--isolation bwrap|none]
                                            [--baseline CHECKOUT]

`--baseline /path/to/other/checkout` first times that checkout's sandbox with the same programs
(in a process of its own, its `evaluation` imported first), then this one's: before and after in
one run, on the same machine at the same load. `--root` says which checkout's sandbox a run times
(this file's by default).
"""

from __future__ import annotations

import argparse
import inspect
import json
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

PROGRAM = """
result = df[df['value'] > {n}]['value'].sum()
print(f"Final Answer: {{result}}")
"""
HERE = Path(__file__).resolve().parents[1]


def measure(options: argparse.Namespace) -> dict:
    import importlib

    sys.path.insert(0, str(options.root))
    # a checkout from before the one namespace (issue 42) keeps `evaluation` at its top
    module = "curate.evaluation.sandbox" if (options.root / "curate").is_dir() else "evaluation.sandbox"
    sandbox = importlib.import_module(module)
    assert Path(sandbox.__file__).resolve().is_relative_to(options.root.resolve()), sandbox.__file__
    Limits, Sandbox = sandbox.Limits, sandbox.Sandbox

    with tempfile.TemporaryDirectory() as tmp:
        table = Path(tmp) / "t.csv"
        table.write_text("id,value\n" + "".join(f"{i},{(i * 37) % 1000}\n" for i in range(1000)))
        kwargs = {"isolation": options.isolation} if "isolation" in inspect.signature(Sandbox).parameters else {}
        started = time.perf_counter()
        with Sandbox(options.workers, Limits(timeout=20), **kwargs) as box:
            warm = time.perf_counter() - started

            def one(n: int) -> tuple[float, bool]:
                begun = time.perf_counter()
                result = box.run(PROGRAM.format(n=n), {"df": str(table)})
                return time.perf_counter() - begun, result.ok and "Final Answer" in result.stdout

            started = time.perf_counter()
            with ThreadPoolExecutor(options.workers) as pool:
                timings = list(pool.map(one, range(options.programs)))
            seconds = time.perf_counter() - started
    latencies = [t for t, _ in timings]
    return {"root": str(options.root), "isolation": options.isolation if kwargs else "as built",
            "programs": options.programs, "workers": options.workers, "warm": warm, "seconds": seconds,
            "per_second": options.programs / seconds, "median": statistics.median(latencies),
            "max": max(latencies), "failed": sum(1 for _, ok in timings if not ok)}


def show(found: dict, label: str) -> None:
    print(f"{label} ({found['root']}): isolation {found['isolation']}, {found['programs']} programs, "
          f"{found['workers']} workers, first workers ready in {found['warm']:.2f}s")
    print(f"  {found['seconds']:.2f}s = {found['per_second']:.2f} programs/s; latency per program: median "
          f"{found['median']:.3f}s, max {found['max']:.3f}s; {found['failed']} failed")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--programs", type=int, default=200)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--isolation", default="bwrap", choices=["bwrap", "none"])
    parser.add_argument("--root", type=Path, default=HERE, help="the checkout whose sandbox is timed")
    parser.add_argument("--baseline", type=Path, default=None, help="another checkout, timed first (before)")
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    options = parser.parse_args()
    before = None
    if options.baseline:
        done = subprocess.run([sys.executable, __file__, "--root", str(options.baseline.resolve()), "--json",
                               "--programs", str(options.programs), "--workers", str(options.workers),
                               "--isolation", options.isolation], capture_output=True, text=True, cwd=options.baseline)
        if done.returncode != 0:
            raise SystemExit(f"the baseline failed: {done.stderr[-2000:]}")
        before = json.loads(done.stdout.splitlines()[-1])
    after = measure(options)
    if options.json:
        print(json.dumps(after))
        return
    if before:
        show(before, "before")
    show(after, "after" if before else "sandbox")
    if before:
        print(f"  {after['per_second'] / before['per_second']:.1f}x the baseline's throughput")


if __name__ == "__main__":
    main()
