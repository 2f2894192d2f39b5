"""`curate import` on every published benchmark in ../shared/data, then the gold self-test
(`--backend gold`: curate's metrics must give 1.000) with the official profile beside it, and
TableBench's o3-mini example replayed: print what was measured (seconds, counts, scores).

    python benchmarks/import_benchmarks.py [--shared ../shared/data]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--shared", default=str(ROOT.parent / "shared" / "data"))
    args = parser.parse_args()
    shared = Path(args.shared)
    from curate.evaluation.evaluate import Evaluator, Settings
    from curate.importers import write_import

    sources = {"tablebench": [shared / "tablebench" / "TableBench_DP_subset.jsonl"],
               "realhitbench": [shared / "realhitbench" / "QA_subset.json", shared / "realhitbench" / "tables"],
               "mmqa": [shared / "mmqa" / "mmqa_samples.json"],
               "spider": [shared / "spider" / "dev_questions.json"]}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for fmt, paths in sources.items():
            started = time.perf_counter()
            release = write_import(fmt, [str(p) for p in paths], fmt, None, root / "releases")
            imported = time.perf_counter() - started
            from curate.evaluation.gold import write_gold_replies
            from curate.evaluation.dataset import ReleaseData

            data = ReleaseData(release["path"])
            replies = write_gold_replies(["tcot"], root / f"{fmt}-gold.jsonl", data.samples())
            started = time.perf_counter()
            run = Evaluator(release["path"], root / f"{fmt}-gold", Settings(), replay=replies).run()
            scored = time.perf_counter() - started
            summary = json.loads((root / f"{fmt}-gold" / "summary.json").read_text())
            score = next(iter(summary["models"].values()))["score"]
            official = next(iter(run["official"]["runs"].values()))
            skipped = len(json.loads((Path(release["path"]) / "manifest.json").read_text())["build"]["import"]["skipped"])
            print(f"{fmt}: imported {release['counts']['samples']} samples ({skipped} left out, listed) in "
                  f"{imported:.1f} s; gold self-test {score:.3f} under curate's metrics in {scored:.1f} s; "
                  f"official profile beside it: {json.dumps(official['types'])}")
        examples = shared / "tablebench" / "eval_examples" / "o3-mini_DP_inference.jsonl"
        release = write_import("tablebench", [str(examples)], "o3-mini", None, root / "releases")
        replay = root / "o3-mini.jsonl"
        replay.write_text("".join(json.dumps({"source_id": r["id"], "reply": r["prediction"]}) + "\n"
                                  for r in map(json.loads, examples.read_text().splitlines())))
        started = time.perf_counter()
        run = Evaluator(release["path"], root / "o3-mini", Settings(), replay=replay).run()
        types = next(iter(run["official"]["runs"].values()))["types"]
        published = json.loads((examples.parent / "o3-mini_DP_type_results.json").read_text())["o3-mini-2025-01-31/DP"]
        print(f"o3-mini replay, scored in {time.perf_counter() - started:.1f} s (ours / the authors' script):")
        for qtype, scores in published.items():
            print(f"  {qtype}: " + ", ".join(f"{m} {types[qtype][m]} / {v}" for m, v in scores.items()))


if __name__ == "__main__":
    main()
