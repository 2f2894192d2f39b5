"""Run in the Ray environment by tests/test_ray_executor.py: a part that raises, a part whose worker
always dies, and a driver whose code differs from the nodes', through the Ray executor on the
test's cluster. Prints one JSON line.

Each call appends a line to a file, so the test counts how often a part really ran."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path


def fails_on_its_own(log: str, value: int) -> int:
    with open(log, "a") as f:
        f.write(f"{value}\n")
    if value == 3:
        raise ValueError(f"value {value} is not allowed")
    return value


def kills_its_worker(log: str, value: int) -> int:
    with open(log, "a") as f:
        f.write(f"{value}\n")
    os._exit(1)  # the process dies, as if killed: no exception reaches Ray


def main(address: str, folder: str) -> None:
    from curate.curation.pipeline.ray_executor import PartLost, RayExecutor

    executor = RayExecutor(address=address, memory_per_part=1 << 28, retries=2)
    out: dict[str, object] = {}
    own = str(Path(folder) / "own.log")
    try:
        list(executor.map_unordered(fails_on_its_own, [(own, 3)]))
    except ValueError as e:
        out["own_error"] = f"ValueError: {e}"
    out["own_runs"] = Path(own).read_text().split()
    lost = str(Path(folder) / "lost.log")
    try:
        list(executor.map_unordered(kills_its_worker, [(lost, 7)]))
    except PartLost as e:
        out["lost_error"] = str(e)
    out["lost_runs"] = Path(lost).read_text().split()
    from curate.curation.pipeline import ray_executor

    ray_executor.code_hash = lambda: "edited-here"  # this driver's code is now other than the nodes'
    try:
        RayExecutor(address=address).connect()
    except ray_executor.ClusterUnavailable as e:
        out["other_code"] = str(e)
    print(json.dumps(out))


if __name__ == "__main__":
    main(*sys.argv[1:])
