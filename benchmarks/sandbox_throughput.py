"""Model-written programs through the sandbox as `curate evaluate` runs PoT: N small pandas
programs over a 1,000-row table, `--workers` at once from a thread pool, each in a fresh warm
worker; print programs per second and the latency of one program.

    python benchmarks/sandbox_throughput.py [--programs N] [--workers W] [--isolation bwrap|none]

Run from another checkout's root (`python /path/to/benchmarks/sandbox_throughput.py`) to time
that checkout's sandbox with the same programs: the first `evaluation` on sys.path is this
file's repository.
"""

from __future__ import annotations

import argparse
import inspect
import statistics
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evaluation.sandbox import Limits, Sandbox  # noqa: E402

PROGRAM = """
result = df[df['value'] > {n}]['value'].sum()
print(f"Final Answer: {{result}}")
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--programs", type=int, default=200)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--isolation", default="bwrap", choices=["bwrap", "none"])
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        table = Path(tmp) / "t.csv"
        table.write_text("id,value\n" + "".join(f"{i},{(i * 37) % 1000}\n" for i in range(1000)))
        kwargs = {"isolation": options.isolation} if "isolation" in inspect.signature(Sandbox).parameters else {}
        if not kwargs and options.isolation != "none":
            print("this checkout's sandbox has no isolation setting: timing it as it is")
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
    failed = sum(1 for _, ok in timings if not ok)
    print(f"isolation {options.isolation if kwargs else 'as built'}: {options.programs} programs, "
          f"{options.workers} workers, first workers ready in {warm:.2f}s (started in the background)")
    print(f"  {seconds:.2f}s = {options.programs / seconds:.2f} programs/s; latency per program: median "
          f"{statistics.median(latencies):.3f}s, max {max(latencies):.3f}s; {failed} failed")


if __name__ == "__main__":
    main()
