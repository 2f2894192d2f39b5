"""`curate release verify`'s file checks: the release is exactly its checksummed files (`files.py`:
nothing unlisted, no link, nothing outside, every hash), the fingerprint recomputed, the sample ids
unique, and the files that describe the content held against the manifest.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from curate.exports.release.base import CARD, CHECKSUMS, DIFF, MANIFEST, content_fingerprint
from curate.curation.release_files import ReleaseFiles, ReleaseIntegrityError


def check_files(path: str) -> dict[str, Any]:
    """The file half of `curate release verify`: every checksum, nothing unlisted, no link, the fingerprint.
    The fingerprint and the content checks read only what the listing allows; a release with any
    problem fails, each problem named with its path and why."""
    try:
        files = ReleaseFiles(path, check_hashes=False)
    except ReleaseIntegrityError as e:
        raise SystemExit(str(e)) from None
    if not files.has(MANIFEST):
        raise SystemExit(f"{path}: not a release folder (no {MANIFEST} listed in {CHECKSUMS})")
    problems = files.problems()
    by_kind = lambda kind: [p.path for p in problems if p.kind == kind]  # noqa: E731
    manifest: dict[str, Any] = {}
    fingerprint = None
    inconsistent: list[str] = []
    try:
        manifest = json.loads(files.path(MANIFEST).read_text())
        if not any(p.kind in ("link", "outside", "not_regular", "unsafe_path") for p in problems):
            fingerprint = content_fingerprint(files.root, int(manifest.get("format", 1)))
        inconsistent = _inconsistent(files, manifest)
    except (ReleaseIntegrityError, ValueError, KeyError) as e:  # pyarrow's ArrowInvalid is a ValueError
        inconsistent.append(f"the content could not be read: {e}")
    recorded = manifest.get("fingerprint")
    ok = not (problems or inconsistent) and fingerprint is not None and fingerprint == recorded
    return {"path": path, "name": manifest.get("name"), "version": manifest.get("version"), "files": len(files.listed),
            "changed": by_kind("changed"), "missing": by_kind("missing"), "unlisted": by_kind("unlisted"),
            "links": by_kind("link"), "outside": by_kind("outside"),
            "malformed_lines": [p.path for p in problems if p.kind in ("malformed", "unsafe_path")][:20],
            "problems": [{"path": p.path, "kind": p.kind, "why": p.why} for p in problems],
            "inconsistent": inconsistent,
            "fingerprint": {"manifest": recorded,
                            "computed": fingerprint or "(not computed: the release holds links or unsafe paths)"},
            "ok": ok}


def _inconsistent(files: ReleaseFiles, manifest: dict[str, Any]) -> list[str]:
    """The files that describe the content (card, diff), held against the manifest; the manifest's
    counts held against the samples; every sample id once."""
    found = []
    card = files.path(CARD).read_text(errors="replace") if files.has(CARD) else ""
    if f"`{manifest['fingerprint']}`" not in card or str(manifest.get("version")) not in card:
        found.append(f"{CARD}: does not name the manifest's fingerprint {manifest['fingerprint']} and version")
    if files.has(DIFF):
        try:
            new = json.loads(files.path(DIFF).read_text()).get("new", {})
        except ValueError:
            new = {}
        if new.get("fingerprint") != manifest["fingerprint"] or new.get("version") != manifest.get("version"):
            found.append(f"{DIFF}: its new version is not the manifest's ({new.get('version')}, {new.get('fingerprint')})")
    counted = _count_samples(files)
    if counted is not None and counted != manifest.get("counts", {}).get("samples", counted):
        found.append(f"{MANIFEST}: counts {manifest['counts']['samples']} samples, the files hold {counted}")
    found.extend(f"samples: {d}" for d in duplicate_sample_ids(files))
    return found


def _count_samples(files: ReleaseFiles) -> int | None:
    import pyarrow.parquet as pq

    try:
        return sum(pq.ParquetFile(p).metadata.num_rows for p in files.sample_files())
    except Exception:  # noqa: BLE001 - an unreadable file is reported by its checksum and the fingerprint
        return None


def duplicate_sample_ids(files: ReleaseFiles, limit: int = 20) -> list[str]:
    """Each sample id held more than once, with the files that hold it: one must never silently win."""
    import pyarrow.parquet as pq

    seen: dict[str, str] = {}
    found = []
    for p in files.sample_files():
        rel = p.relative_to(files.root).as_posix()
        try:
            ids = pq.read_table(p, columns=["id"]).column("id").to_pylist()
        except Exception:  # noqa: BLE001 - an unreadable file is reported by its checksum and the fingerprint
            continue
        for sample_id in ids:
            if sample_id in seen and len(found) < limit:
                found.append(f"sample id {sample_id} is in {seen[sample_id]} and in {rel}")
            seen.setdefault(sample_id, rel)
    return found
