"""The `imported` build stage: a release (an imported benchmark, or any release) read back as the
samples and tables of a workspace, so that `curate build RELEASE` can apply what annotators decided
about it (`curate audit --queue`, `curate review push --kind audit`, `curate review pull`) and write
the corrected release as the next version of the same name.

The release's files are checked first: exactly its checksummed files (`curate.curation.release_files`: nothing
unlisted, no link, every hash) and its manifest's fingerprint, so a corrected release is made only
from the release it names, never from files edited or added since.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from curate.curation.pipeline.graph import stage
from curate.curation.pipeline.reports import ImportedReport
from curate.curation.pipeline.stage import Plan, Stage


@stage("imported", outputs=("samples", "tables"), kind="correction")
class ImportedStage(Stage):
    version = "2"  # 2: the report names the release and its version

    report_type = ImportedReport

    def fingerprint(self, config: dict[str, Any]) -> Any:
        from curate.exports.release import open_release

        return json.loads(open_release(config["release"]).path("manifest.json").read_text())["fingerprint"]

    def plan(self, config: dict[str, Any], inputs: list[Any]) -> Plan:
        from curate.exports.release import content_fingerprint, open_release

        root = Path(config["release"])
        problems = open_release(root).problems(hashes=False)  # the content: by the fingerprint, below
        if problems:
            raise ValueError(f"{root}: not exactly its checksummed files: "
                             + "; ".join(str(p) for p in problems[:5])
                             + (f"; and {len(problems) - 5} more" if len(problems) > 5 else "")
                             + " (`curate release verify` lists them all)")
        manifest = json.loads(open_release(root).path("manifest.json").read_text())
        scheme = int(manifest.get("format", 1))
        found = content_fingerprint(root, scheme)
        if found != manifest["fingerprint"]:
            raise ValueError(f"{root}: its content fingerprint is {found}, the manifest says {manifest['fingerprint']}: "
                             "the release was changed since it was written (`curate release verify` says where)")
        return Plan(tasks=[str(root)])

    def run_part(self, task: str, shared: dict[str, Any], config: dict[str, Any]):
        import pyarrow as pa
        import pyarrow.parquet as pq

        from curate.curation.arrow_io import SAMPLE_SCHEMA, TABLE_SCHEMA, release_samples

        from curate.exports.release import open_release

        files = open_release(task)
        parts = [release_samples(str(p)) for p in files.sample_files()]
        samples = pa.concat_tables(parts) if parts else SAMPLE_SCHEMA.empty_table()
        tables = pq.read_table(files.path("tables/tables.parquet")).select(TABLE_SCHEMA.names).cast(TABLE_SCHEMA)
        manifest = json.loads(files.path("manifest.json").read_text())
        return {"samples": samples, "tables": tables}, {"samples": samples.num_rows, "tables": tables.num_rows,
                                                        "release": manifest["name"], "version": manifest["version"]}
