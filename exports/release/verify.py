"""`curate release verify`'s file checks: every file against `SHA256SUMS`, none unlisted, the fingerprint
recomputed, and the files that describe the content held against the manifest.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from exports.release.base import CARD, CHECKSUMS, DIFF, MANIFEST, content_fingerprint, read_manifest, sha256_file


def check_files(path: str) -> dict[str, Any]:
    """The file half of `curate release verify`: every checksum, no file unlisted, the fingerprint."""
    root = Path(path)
    if not (root / CHECKSUMS).exists() or not (root / MANIFEST).exists():
        raise SystemExit(f"{path}: not a release folder (no {CHECKSUMS} or {MANIFEST})")
    listed: dict[str, str] = {}
    malformed: list[str] = []
    for line in (root / CHECKSUMS).read_text().splitlines():
        digest, sep, rel = line.partition("  ")
        if not sep or len(digest) != 64:
            malformed.append(line)
            continue
        listed[rel] = digest
    changed, missing = [], []
    for rel, digest in sorted(listed.items()):
        p = root / rel
        if not p.is_file():
            missing.append(rel)
        elif sha256_file(p) != digest:
            changed.append(rel)
    present = {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file() and p.name != CHECKSUMS}
    unlisted = sorted(present - set(listed))
    manifest = read_manifest(root)
    fingerprint = content_fingerprint(root, int(manifest.get("format", 1)))
    inconsistent = _inconsistent(root, manifest)
    ok = not (changed or missing or unlisted or malformed or inconsistent) and fingerprint == manifest["fingerprint"]
    return {"path": path, "name": manifest.get("name"), "version": manifest.get("version"), "files": len(listed),
            "changed": changed, "missing": missing, "unlisted": unlisted, "malformed_lines": malformed[:5],
            "inconsistent": inconsistent,
            "fingerprint": {"manifest": manifest["fingerprint"], "computed": fingerprint}, "ok": ok}


def _inconsistent(root: Path, manifest: dict[str, Any]) -> list[str]:
    """The files that describe the content (card, diff), held against the manifest; the manifest's
    counts held against the samples."""
    found = []
    card = (root / CARD).read_text(errors="replace") if (root / CARD).exists() else ""
    if f"`{manifest['fingerprint']}`" not in card or str(manifest.get("version")) not in card:
        found.append(f"{CARD}: does not name the manifest's fingerprint {manifest['fingerprint']} and version")
    if (root / DIFF).exists():
        try:
            new = json.loads((root / DIFF).read_text()).get("new", {})
        except ValueError:
            new = {}
        if new.get("fingerprint") != manifest["fingerprint"] or new.get("version") != manifest.get("version"):
            found.append(f"{DIFF}: its new version is not the manifest's ({new.get('version')}, {new.get('fingerprint')})")
    counted = _count_samples(root)
    if counted is not None and counted != manifest.get("counts", {}).get("samples", counted):
        found.append(f"{MANIFEST}: counts {manifest['counts']['samples']} samples, the files hold {counted}")
    return found


def _count_samples(root: Path) -> int | None:
    import pyarrow.parquet as pq

    files = sorted((root / "samples").rglob("*.parquet")) if (root / "samples").is_dir() else []
    try:
        return sum(pq.ParquetFile(p).metadata.num_rows for p in files)
    except Exception:  # noqa: BLE001 - an unreadable file is reported by its checksum and the fingerprint
        return None
