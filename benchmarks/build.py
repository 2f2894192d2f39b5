"""The default build (`curate build`, no config: the built-in corpus), stage by stage; print what was measured.

Each step runs as its own `curate build --until STEP` command in a fresh workspace, so each
command's wall time (process start-up included, the earlier stages found finished and reused)
and peak memory (the CLI and its workers, sampled every 20 ms) belong to that step alone. Then
the whole build again with nothing changed, and a whole build in a second, fresh workspace, whose
fingerprint must equal the first.

    python benchmarks/build.py [--workers N]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.ingest_clean import run  # noqa: E402
from curate.curation.build import resolve_config  # noqa: E402
from curate.curation.pipeline.graph import CORE, DECLARED  # noqa: E402

# the steps the default build runs, read from the stages' declarations
STEPS = (*(d.name for d in DECLARED if d.kind == CORE or d.name in resolve_config(None)["build"]["stages"]), "release")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=None)
    options = parser.parse_args()
    workers = ["--workers", str(options.workers)] if options.workers else []
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        common = ["-w", str(Path(tmp) / "ws"), "--releases", str(Path(tmp) / "releases"), "--json", *workers]
        for step in STEPS:
            until = [] if step == "release" else ["--until", step]
            seconds, peak, result = run(["build", *until, *common])
            ran = [s for s in result["steps"] if s["stage"] == step]
            rows.append((step, seconds, peak, ran[0]["summary"] if ran else ""))
        release = result["release"]
        rerun_seconds, _, rerun = run(["build", *common])
        fresh = ["-w", str(Path(tmp) / "ws2"), "--releases", str(Path(tmp) / "releases2"), "--json", *workers]
        whole_seconds, whole_peak, whole = run(["build", *fresh])
        size = sum(p.stat().st_size for p in Path(release["path"]).rglob("*") if p.is_file())
    print(f"{'step':<10} {'wall':>8} {'peak':>10}  result")
    for step, seconds, peak, summary in rows:
        print(f"{step:<10} {seconds:7.1f}s {peak / 2**20:7.0f} MiB  {summary}")
    total = sum(r[1] for r in rows)
    print(f"{'sum':<10} {total:7.1f}s {max(r[2] for r in rows) / 2**20:7.0f} MiB  (peak of any step)")
    print(f"whole build in one command, fresh workspace: {whole_seconds:.1f}s, peak {whole_peak / 2**20:.0f} MiB")
    print(f"release {release['name']} {release['version']}: {release['counts']['samples']:,} samples, "
          f"{release['counts']['tables']:,} tables, {size / 2**20:.1f} MiB on disk, fingerprint {release['fingerprint']}")
    print(f"rerun with nothing changed: {rerun_seconds:.1f}s, stages rerun: {rerun['reran'] or 'none'}, "
          f"fingerprint {rerun['release']['fingerprint']}")
    same = whole["release"]["fingerprint"] == release["fingerprint"]
    print(f"fresh build's fingerprint {whole['release']['fingerprint']}: {'the same' if same else 'DIFFERENT'}")


if __name__ == "__main__":
    main()
