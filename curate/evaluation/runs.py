"""A run's identity and folder: runs are never overwritten, and only like runs are compared.

A run is a release (name, version, fingerprint), a model (its backend identity and generation
settings, or a replay file's content) and the settings that change what is scored. Its id is a
hash of those; the default folder is `results/<release>/<version>/<model>/run-<id>`, so a rerun
with the same settings resumes its run and a different one gets its own folder. A folder given
with --out that holds another run is refused rather than overwritten.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from curate.evaluation.dataset import ReleaseData, ReleaseError

# the settings that change which predictions are made or how they are scored (not how fast)
RUN_SETTINGS = ("modes", "configs", "limit", "split", "tasks", "max_turns", "max_table_chars", "rel_tol", "profile",
                "prompt")
# the settings two runs must share for their scores to be compared (the selection may differ:
# runs are compared on the predictions they share)
COMPARED_SETTINGS = ("max_turns", "max_table_chars", "rel_tol", "profile", "prompt")


class RunConflict(ReleaseError):
    """The results folder holds another run."""


def model_key(client: Any, params: dict[str, Any], prompt: str = "curate") -> str:
    """The model's identity in the prediction store: backend, model and generation settings, or a
    replay file's content."""
    from curate.curation.hashing import content_hash
    from curate.curation.llm.backend import RecordedBackend

    if isinstance(client.backend, RecordedBackend):
        recorded = client.backend
        return f"{recorded.kind}:" + content_hash(recorded.kind, recorded.path.read_bytes())[:16]
    identity = client.identity
    asked = (identity, params) if prompt == "curate" else (identity, params, prompt)
    return f"{identity['backend']}:{identity['model']}:" + content_hash(*asked)[:12]


def run_settings(settings: Any) -> dict[str, Any]:
    return {name: getattr(settings, name) for name in RUN_SETTINGS}


def run_id(data: ReleaseData, model: str, settings: Any) -> str:
    from curate.curation.hashing import content_hash

    return content_hash("run", data.name, data.manifest.get("fingerprint"), model, run_settings(settings))[:12]


def default_folder(data: ReleaseData, model_name: str, run: str) -> Path:
    """results/<release>/<version>/<model>/run-<id>: each part a plain folder name."""
    safe = lambda text: "".join(c if c.isalnum() or c in "-_.+" else "-" for c in str(text)).strip(".-") or "_"  # noqa: E731
    return (Path("results") / safe(data.manifest.get("name")) / safe(data.manifest.get("version"))
            / safe(model_name) / f"run-{run}")


def check_folder(out: Path, run: str, release: str) -> None:
    """RunConflict if `out` already holds a different run (its run.json names another id)."""
    file = out / "run.json"
    if not file.exists():
        return
    try:
        held = json.loads(file.read_text())
    except (OSError, ValueError):
        return
    if held.get("run_id") and held["run_id"] != run:  # a folder from before run ids is resumed as it was
        what = (f"a run of {held.get('release')}" if held.get("release") != release
                else "a run with other settings or replies")
        raise RunConflict(f"{out} holds {what} (run {held['run_id']} of "
                          f"{held.get('model')}); this is run {run}: choose another --out, or leave --out out "
                          "(each run gets its own folder under results/)")


def differences(runs: list[dict[str, Any]]) -> tuple[list[str], list[str]]:
    """(release differences, settings differences) among runs, each said in words."""
    label = lambda run: run.get("label") or run.get("model")  # noqa: E731
    releases = {(r.get("release"), r.get("fingerprint")) for r in runs}
    release_notes = []
    if len(releases) > 1:
        release_notes.append("the runs are of different releases: " + "; ".join(
            f"{label(r)} on {r.get('release')} (fingerprint {r.get('fingerprint')})" for r in runs))
    setting_notes = []
    for name in COMPARED_SETTINGS:
        values = {json.dumps((r.get("settings") or {}).get(name), default=str) for r in runs}
        if len(values) > 1:
            setting_notes.append(f"{name} differs: " + "; ".join(
                f"{label(r)} {json.dumps((r.get('settings') or {}).get(name), default=str)}" for r in runs))
    return release_notes, setting_notes
