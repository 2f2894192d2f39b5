"""The cost of distribution: the default build with the Ray executor against the local pool, stage by stage.

Starts a real Ray cluster on this machine (a head and a second node, `--cpus` CPUs each, as the
tests do; `.envs/ray` is built on first use), then runs the default build (`curate build`, no
config: the built-in corpus) twice in fresh workspaces, in this process: once with the local
process pool (`--cpus` x 2 workers), once on the cluster. Per stage it prints the parts, both
wall times and the difference, what the Ray executor moved (task arguments, data put once into
the object store, what came back) and what the stage wrote to the workspace (which a cluster's
shared filesystem carries). Both releases must have the same fingerprint.

    python benchmarks/ray_executor.py [--cpus 1] [--config build.toml]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def in_ray_env() -> None:
    """Run again in `.envs/ray` (Ray, and curate's dependencies) unless Ray is importable here."""
    try:
        import ray  # noqa: F401
    except ImportError:
        from tests.ray_env import ensure_env, run_env

        python = ensure_env()
        os.execve(str(python), [str(python), *sys.argv], run_env())


def folder_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def records_hash(ws: Path, datasets: str) -> str:
    """The hash of a step's record files (its datasets' Parquet parts, in order)."""
    import hashlib

    digest = hashlib.sha256()
    for name in datasets.split(","):
        for part in sorted((ws / "stages" / name.strip()).glob("*.parquet")):
            digest.update(part.name.encode() + part.read_bytes())
    return digest.hexdigest()[:12]


def build(executor, tmp: Path, name: str, config: dict | None) -> tuple[float, dict]:
    from curate.curation.build import run_build
    from curate.curation.workspace import Workspace

    started = time.perf_counter()
    result = run_build(Workspace(tmp / name), config, tmp / f"{name}-releases", executor=executor)
    return time.perf_counter() - started, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cpus", type=int, default=1, help="CPUs of each of the two nodes")
    parser.add_argument("--config", default=None, help="a build config (default: the default build)")
    parser.add_argument("--keep", default=None, help="keep both workspaces and releases in this folder")
    options = parser.parse_args()
    in_ray_env()
    from curate.curation.build import load_build_config
    from curate.curation.pipeline.executor import LocalExecutor
    from curate.curation.pipeline.ray_executor import RayExecutor
    from tests.ray_cluster import RayCluster

    config = load_build_config(options.config)
    started = time.perf_counter()
    cluster = RayCluster(nodes=2, cpus=options.cpus, memory_gb=6).start()
    cluster_seconds = time.perf_counter() - started
    try:
        with tempfile.TemporaryDirectory() as scratch:
            tmp = options.keep or scratch
            local_seconds, local = build(LocalExecutor(2 * options.cpus), Path(tmp), "local", config)
            ray = RayExecutor(address=cluster.address, memory_per_part=1 << 30, measure=True)
            connect_started = time.perf_counter()
            ray.connect()
            connect_seconds = time.perf_counter() - connect_started
            ray_seconds, remote = build(ray, Path(tmp), "ray", config)
            written = {s["stage"]: folder_bytes(Path(tmp) / "ray" / "stages" / s["dataset"])
                       for s in remote["steps"] if s["stage"] not in ("ingest", "release")}
            written["ingest"] = sum(folder_bytes(Path(tmp) / "ray" / "stages" / d.strip())
                                    for s in remote["steps"] if s["stage"] == "ingest" for d in s["dataset"].split(","))
            same_records = {s["stage"]: records_hash(Path(tmp) / "ray", s["dataset"]) == records_hash(
                Path(tmp) / "local", s["dataset"]) for s in remote["steps"] if s["stage"] != "release"}
    finally:
        cluster.stop()

    moved: dict[str, dict[str, int]] = {}
    for stats in ray.stats:
        label = "release" if stats.label == "serialize_chunk" else stats.label
        row = moved.setdefault(label, {"tasks": 0, "sent": 0, "shared": 0, "returned": 0})
        row["tasks"] += stats.tasks
        row["sent"] += stats.bytes_sent
        row["shared"] += stats.bytes_shared
        row["returned"] += stats.bytes_returned
    local_steps = {s["stage"]: s for s in local["steps"]}
    print(f"Ray cluster: 2 nodes x {options.cpus} CPU, started in {cluster_seconds:.1f} s; driver connect and "
          f"node code check {connect_seconds:.1f} s; local pool: {2 * options.cpus} workers")
    print(f"{'stage':<10} {'parts':>6} {'local':>8} {'ray':>8} {'overhead':>9} {'args':>10} {'shared':>10} "
          f"{'returned':>10} {'written':>10}  records")
    kib = lambda n: f"{n / 1024:,.0f} KiB"  # noqa: E731
    for step in remote["steps"]:
        name = step["stage"]
        here = local_steps[name]
        m = moved.get(name, {"tasks": 0, "sent": 0, "shared": 0, "returned": 0})
        print(f"{name:<10} {m['tasks']:>6} {here['seconds']:7.1f}s {step['seconds']:7.1f}s "
              f"{step['seconds'] - here['seconds']:+8.1f}s {kib(m['sent']):>10} {kib(m['shared']):>10} "
              f"{kib(m['returned']):>10} {kib(written.get(name, 0)):>10}  "
              f"{'' if name == 'release' else 'same' if same_records[name] else 'DIFFERENT'}")
    print(f"{'whole':<10} {'':>6} {local_seconds:7.1f}s {ray_seconds:7.1f}s {ray_seconds - local_seconds:+8.1f}s")
    same = remote["release"]["fingerprint"] == local["release"]["fingerprint"]
    print(f"fingerprints: local {local['release']['fingerprint']}, ray {remote['release']['fingerprint']}: "
          f"{'the same' if same else 'DIFFERENT'}")
    if not same:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
