"""The review loop with Label Studio: push the review queue, pull the decisions, say what is open.

State lives in the workspace (`<workspace>/review/review.sqlite`): the project of each review
kind, the task of each pushed sample, and every annotation pulled, keyed by Label Studio's
annotation id. So nothing is done twice:

- push lists the tasks the project already holds (the sample id travels in each task's data) and
  imports only the samples it lacks, in chunks, recording each chunk's task ids; a push cut off
  anywhere (the server stopped, the process killed) is finished by the next one, with no sample
  imported twice, even when the server took a chunk whose answer never came back;
- pull exports every task and upserts each submitted annotation by its id: an annotation pulled
  twice is one decision, an annotation changed since is replaced, one deleted since is forgotten;
  nothing is stored until the whole export is in, so a pull cut off anywhere applies nothing;
- a sample's decision is the majority verdict of its annotators (a tie stays open, as a
  conflict); agreement is computed where several annotators reviewed one task.

The API token is read from an environment variable named by the caller, passed to the SDK and
never written anywhere.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections import Counter
from itertools import combinations
from pathlib import Path
from typing import Any

from curate.annotation.tasks import KINDS, audit_task_data, decision, label_config, task_data
from curate.curation.pipeline.graph import declared
from curate.curation.sample import ReviewState as SampleReview

SCHEMA = """
CREATE TABLE IF NOT EXISTS projects (kind TEXT PRIMARY KEY, project_id INTEGER, title TEXT, url TEXT);
CREATE TABLE IF NOT EXISTS tasks (sample_id TEXT, kind TEXT, project_id INTEGER, task_id INTEGER, reason TEXT,
    pushed_at REAL, PRIMARY KEY (sample_id, kind));
CREATE TABLE IF NOT EXISTS decisions (annotation_id INTEGER PRIMARY KEY, sample_id TEXT, kind TEXT, task_id INTEGER,
    annotator TEXT, verdict TEXT, answer TEXT, reason TEXT, difficulty INTEGER, comment TEXT, criteria TEXT,
    updated_at TEXT, pulled_at REAL);
"""
CHUNK = 50
OPEN_EXAMPLES = 20  # open samples shown with their reasons
HIGH_QUALITY = ("rule-based", "executed", "human-annotated", "unanimous", "high")
# the review queue is read from the latest of these (the stages the review stage reads, as declared)
CHECK_STAGES = tuple(reversed(declared("review").reads))


class ReviewError(RuntimeError):
    """No workspace to review, or a Label Studio that cannot be reached (the message says which)."""


AUDIT_QUEUE = "audit-queue.json"


def state_path(workspace_root: str | Path) -> Path:
    return Path(workspace_root) / "review" / "review.sqlite"


def audit_queue_path(workspace_root: str | Path) -> Path:
    return Path(workspace_root) / "review" / AUDIT_QUEUE


class ReviewState:
    """The review state of a workspace; creating it (a push does) makes `curate build` apply reviews."""

    def __init__(self, workspace_root: str | Path) -> None:
        path = state_path(workspace_root)
        path.parent.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(str(path), timeout=60)
        self.db.executescript(SCHEMA)

    def project(self, kind: str) -> int | None:
        row = self.db.execute("SELECT project_id FROM projects WHERE kind = ?", [kind]).fetchone()
        return row[0] if row else None

    def set_project(self, kind: str, project_id: int, title: str, url: str) -> None:
        with self.db:
            self.db.execute("INSERT OR REPLACE INTO projects VALUES (?, ?, ?, ?)", [kind, project_id, title, url])

    def pushed(self, kind: str) -> dict[str, int]:
        return dict(self.db.execute("SELECT sample_id, task_id FROM tasks WHERE kind = ?", [kind]))

    def record_tasks(self, kind: str, project_id: int, rows: list[tuple[str, int, str]]) -> None:
        with self.db:
            self.db.executemany("INSERT OR REPLACE INTO tasks VALUES (?, ?, ?, ?, ?, ?)",
                                [(s, kind, project_id, t, reason, time.time()) for s, t, reason in rows])

    def upsert_decisions(self, rows: list[dict[str, Any]]) -> tuple[int, int]:
        """(new, changed): an annotation seen before with the same update time changes nothing."""
        new = changed = 0
        with self.db:
            for r in rows:
                old = self.db.execute("SELECT updated_at FROM decisions WHERE annotation_id = ?",
                                      [r["annotation_id"]]).fetchone()
                if old and old[0] == r["updated_at"]:
                    continue
                new += old is None
                changed += old is not None
                self.db.execute("INSERT OR REPLACE INTO decisions VALUES (:annotation_id, :sample_id, :kind, :task_id, "
                                ":annotator, :verdict, :answer, :reason, :difficulty, :comment, :criteria, "
                                ":updated_at, :pulled_at)", {**r, "pulled_at": time.time()})
        return new, changed

    def retract(self, kind: str, task_ids: set[int], present: set[int]) -> int:
        """Forget the annotations of these tasks that the server no longer holds (deleted or
        cancelled there); those of tasks it no longer shows at all are kept: a person's work is
        not dropped because a project was deleted."""
        gone = [a for a, t in self.db.execute("SELECT annotation_id, task_id FROM decisions WHERE kind = ?", [kind])
                if t in task_ids and a not in present]
        with self.db:
            self.db.executemany("DELETE FROM decisions WHERE annotation_id = ?", [(a,) for a in gone])
        return len(gone)

    def decisions(self, kind: str) -> list[dict[str, Any]]:
        cursor = self.db.execute("SELECT * FROM decisions WHERE kind = ? ORDER BY annotation_id", [kind])
        names = [d[0] for d in cursor.description]
        return [dict(zip(names, row)) for row in cursor]


# ------------------------------------------------------------------------------ the queue


def checked_datasets(workspace: Any) -> list[Any]:
    """The samples the checks left: the current output of the latest of vote, classify, select."""
    return next((d for d in (workspace.current(s) for s in CHECK_STAGES) if d), [])


def review_queue(workspace: Any, audit_rate: float = 0.0, seed: int = 0) -> list[tuple[Any, str]]:
    """(sample, reason) for every sample the checks queued for review, plus an audit sample of
    high-quality ones at `audit_rate` (chosen by content hash: the same ones every time)."""
    from curate.curation.pipeline.rng import record_seed

    datasets = checked_datasets(workspace)
    if not datasets:
        raise ReviewError(f"{workspace.root}: no checked samples to review (run `curate build` first)")
    out = []
    for dataset in datasets:
        for sample in dataset.records("samples"):
            if sample.review_state is SampleReview.QUEUED:
                if sample.provenance.get("task_check") == "disagrees":
                    why = "task disputed"
                else:
                    why = f"vote {sample.judge_verdict}" if sample.judge_verdict else "queued"
                out.append((sample, why))
            elif audit_rate and sample.quality in HIGH_QUALITY and \
                    record_seed(seed, sample.id, "audit") / 2.0 ** 64 < audit_rate:
                out.append((sample, "audit"))
    return sorted(out, key=lambda pair: pair[0].id)


def _tables(workspace: Any) -> Any:
    """A function table id -> Table over every current dataset that holds tables."""
    from curate.curation.arrow_io import table_at, table_index

    files = [str(p) for names in workspace.state()["current"] for d in workspace.current(names)
             for p in d.files("tables")]
    index = table_index(files)
    return lambda table_id: table_at(*index[table_id]) if table_id in index else None


def queue_audit(workspace_root: str | Path, report: dict[str, Any]) -> dict[str, Any]:
    """`curate audit RELEASE --queue`: the findings a person should look at (`needs_review`: a gold that
    may be wrong, a question without a single answer, a question naming what its SQL does not; not a
    gold only shaped differently) queued for `curate review push --kind audit`. One audit queue per
    workspace: the latest audit's (earlier decisions stay, by sample id)."""
    from curate.curation.pipeline.store import atomic_write_json

    release = Path(report["release"]).resolve()
    manifest = json.loads((release / "manifest.json").read_text())
    findings = [f for f in report["findings"] if f.get("needs_review")]
    path = audit_queue_path(workspace_root)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_json(path, {"release": str(release), "name": manifest["name"], "version": manifest["version"],
                             "fingerprint": manifest["fingerprint"], "findings": findings})
    return {"queued": len(findings), "path": str(path)}


def audit_queue(workspace_root: str | Path) -> dict[str, Any] | None:
    path = audit_queue_path(workspace_root)
    return json.loads(path.read_text()) if path.exists() else None


def _audit_items(workspace: Any) -> tuple[list[tuple[Any, str, dict[str, Any]]], Any]:
    """(sample, reason, finding) for every queued finding, read from the audited release, and a function
    table id -> Table over the release's tables."""
    from curate.curation.arrow_io import release_samples, samples_from_arrow, table_at, table_index

    queue = audit_queue(workspace.root)
    if queue is None:
        raise ReviewError(f"{workspace.root}: no audit queued (run `curate audit RELEASE --queue -w {workspace.root}`)")
    release = Path(queue["release"])
    if not (release / "manifest.json").exists():
        raise ReviewError(f"the audited release {release} is gone")
    if json.loads((release / "manifest.json").read_text()).get("fingerprint") != queue["fingerprint"]:
        raise ReviewError(f"{release} is not the release that was audited (its fingerprint changed): audit it again")
    wanted = {f["sample_id"]: f for f in queue["findings"]}
    samples = {}
    for path in sorted((release / "samples").glob("*/*.parquet")):
        for sample in samples_from_arrow(release_samples(str(path))):
            if sample.id in wanted:
                samples[sample.id] = sample
    index = table_index([str(release / "tables" / "tables.parquet")])
    items = [(samples[i], f"audit: {f['kind']}", f) for i, f in sorted(wanted.items()) if i in samples]
    return items, (lambda table_id: table_at(*index[table_id]) if table_id in index else None)


# ------------------------------------------------------------------------------ push, pull, status


def connect(url: str, token: str) -> Any:
    from label_studio_sdk import LabelStudio

    return LabelStudio(base_url=url.rstrip("/"), api_key=token)


def _project(client: Any, state: ReviewState, kind: str, title: str, url: str) -> int:
    """The kind's project: the one recorded, else one of that title on the server, else a new one."""
    known = state.project(kind)
    if known is not None:
        try:
            client.projects.get(id=known)
            return known
        except Exception:  # noqa: BLE001 - deleted on the server: find or create it again
            pass
    for project in client.projects.list(title=title):
        if project.title == title:
            state.set_project(kind, project.id, title, url)
            return project.id
    project = client.projects.create(title=title, label_config=label_config(kind),
                                      description="curate review queue (samples by sample_id)")
    state.set_project(kind, project.id, title, url)
    return project.id


def _server_tasks(client: Any, project_id: int) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for task in client.tasks.list(project=project_id, fields="all"):
        sample_id = (task.data or {}).get("sample_id")
        if sample_id:
            out.setdefault(sample_id, []).append(task.id)
    return out


def push(workspace: Any, url: str, token: str, kind: str = "answer", title: str | None = None,
         audit_rate: float = 0.0, seed: int = 0, chunk: int = CHUNK) -> dict[str, Any]:
    state = ReviewState(workspace.root)
    findings: dict[str, dict[str, Any]] = {}
    tables: Any = None
    if kind == "audit":  # the findings `curate audit --queue` left, over the audited release
        items, tables = _audit_items(workspace)
        queue = [(s, why) for s, why, _ in items]
        findings = {s.id: f for s, _, f in items}
    else:
        queue = review_queue(workspace, audit_rate, seed)
    client = connect(url, token)
    title = title or f"curate {kind} review: {Path(workspace.root).resolve().name}"
    try:
        project_id = _project(client, state, kind, title, url)
        on_server = _server_tasks(client, project_id)
    except Exception as e:  # noqa: BLE001 - the SDK raises httpx and ApiError kinds
        raise ReviewError(f"Label Studio at {url}: {type(e).__name__}: {str(e)[:300]}") from None
    state.record_tasks(kind, project_id, [(s, ids[0], "") for s, ids in on_server.items()])
    decided = {d["sample_id"] for d in state.decisions(kind)}
    todo = [(s, why) for s, why in queue if s.id not in on_server and s.id not in decided]
    if tables is None and todo:
        tables = _tables(workspace)
    imported = 0
    for start in range(0, len(todo), chunk):
        part = todo[start:start + chunk]
        data = [{"data": audit_task_data(s, [t for t in map(tables, s.table_ids) if t is not None], findings[s.id])
                 if kind == "audit" else task_data(s, [t for t in map(tables, s.table_ids) if t is not None], why)}
                for s, why in part]
        try:
            response = client.projects.import_tasks(id=project_id, request=data, return_task_ids=True)
        except Exception as e:  # noqa: BLE001
            raise ReviewError(f"Label Studio at {url} stopped answering after {imported} of {len(todo)} new tasks "
                              f"({type(e).__name__}); push again to finish: what it holds is not imported twice") from None
        ids = list(getattr(response, "task_ids", None) or [])
        if len(ids) != len(part):  # no ids back: learn them from the server
            on_server = _server_tasks(client, project_id)
            ids = [on_server.get(s.id, [0])[0] for s, _ in part]
        state.record_tasks(kind, project_id, [(s.id, t, why) for (s, why), t in zip(part, ids)])
        imported += len(part)
    return {"project_id": project_id, "project_url": f"{url.rstrip('/')}/projects/{project_id}", "title": title,
            "queued": len(queue), "already_there": sum(1 for s, _ in queue if s.id in on_server),
            "already_decided": sum(1 for s, _ in queue if s.id in decided and s.id not in on_server),
            "imported": imported, "duplicates_on_server": sum(len(v) - 1 for v in on_server.values())}


def _user_names(client: Any) -> dict[int, str]:
    """User id -> email. A token that may not list users (403) gets ids; a server that does not
    answer is an error (names that changed from pull to pull would make one annotator two)."""
    from label_studio_sdk.core.api_error import ApiError

    try:
        return {u.id: u.email or u.username for u in client.users.list()}
    except ApiError as e:
        if e.status_code in (401, 403):
            return {}
        raise


def _annotator(value: Any, users: dict[int, str]) -> str:
    if isinstance(value, dict):
        return str(value.get("email") or value.get("username") or value.get("id"))
    return users.get(value) or str(value)


def pull(workspace: Any, url: str, token: str, kind: str = "answer") -> dict[str, Any]:
    project_id = ReviewState(workspace.root).project(kind) if state_path(workspace.root).exists() else None
    if project_id is None:
        raise ReviewError(f"no {kind} review project yet: run `curate review push` first")
    client = connect(url, token)
    try:
        users = _user_names(client)  # first: once the export is in, nothing can fail before it is stored
        exported = json.loads(b"".join(client.projects.exports.download_sync(
            id=project_id, export_type="JSON", download_all_tasks=True)) or b"[]")
    except Exception as e:  # noqa: BLE001 - the SDK raises httpx and ApiError kinds; a cut-off body, JSON errors
        raise ReviewError(f"Label Studio at {url}: {type(e).__name__}: {str(e)[:300]}; nothing was applied: "
                          "pull again") from None
    state = ReviewState(workspace.root)
    rows = []
    for task in exported:
        sample_id = task.get("data", {}).get("sample_id")
        for annotation in task.get("annotations", []):
            if not sample_id or annotation.get("was_cancelled"):
                continue
            d = decision(kind, annotation.get("result", []), task.get("data", {}))
            rows.append({"annotation_id": annotation["id"], "sample_id": sample_id, "kind": kind, "task_id": task["id"],
                         "annotator": _annotator(annotation.get("completed_by"), users), "verdict": d["verdict"],
                         "answer": json.dumps(d["answer"], ensure_ascii=False), "reason": d["reason"],
                         "difficulty": d["difficulty"], "comment": d["comment"],
                         "criteria": json.dumps(d["criteria"]),
                         "updated_at": str(annotation.get("updated_at") or annotation.get("created_at"))})
    new, changed = state.upsert_decisions(rows)
    retracted = state.retract(kind, {t["id"] for t in exported}, {r["annotation_id"] for r in rows})
    return {**status(workspace, kind), "pulled_new": new, "pulled_changed": changed, "pulled_retracted": retracted}


# ------------------------------------------------------------------------------ decisions


def sample_decisions(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per sample: the majority verdict of its annotators (each annotator's latest annotation),
    the corrected answer most of the fixers gave, the reject reasons, and the annotators' agreement.
    A tie between verdicts is a conflict: the sample stays open."""
    latest: dict[tuple[str, str], dict[str, Any]] = {}
    for r in rows:
        if r["verdict"]:
            latest[(r["sample_id"], r["annotator"])] = r
    by_sample: dict[str, list[dict[str, Any]]] = {}
    for (sample_id, _), r in sorted(latest.items()):
        by_sample.setdefault(sample_id, []).append(r)
    out = {}
    for sample_id, reviews in by_sample.items():
        counts = Counter(r["verdict"] for r in reviews).most_common()
        conflict = len(counts) > 1 and counts[0][1] == counts[1][1]
        verdict = "conflict" if conflict else counts[0][0]
        answers = Counter(r["answer"] for r in reviews if r["verdict"] == "fix" and json.loads(r["answer"] or "null"))
        pairs = list(combinations([r["verdict"] for r in reviews], 2))
        out[sample_id] = {
            "verdict": verdict, "annotators": [r["annotator"] for r in reviews],
            "answer": json.loads(answers.most_common(1)[0][0]) if verdict == "fix" and answers else None,
            "reasons": sorted({r["reason"] for r in reviews if r["verdict"] == "reject" and r["reason"]}),
            "agreement": sum(a == b for a, b in pairs) / len(pairs) if pairs else None,
            "reviews": reviews}
    return out


def fleiss_kappa(ratings: list[list[str]]) -> float | None:
    """Fleiss' kappa over items each rated by the same number (>= 2) of annotators; None if undefined."""
    items = [r for r in ratings if len(r) >= 2]
    if not items or len({len(r) for r in items}) != 1:
        return None
    n = len(items[0])
    categories = sorted({c for r in items for c in r})
    counts = [[r.count(c) for c in categories] for r in items]
    p_items = [(sum(x * x for x in row) - n) / (n * (n - 1)) for row in counts]
    shares = [sum(row[j] for row in counts) / (len(items) * n) for j in range(len(categories))]
    expected = sum(p * p for p in shares)
    observed = sum(p_items) / len(p_items)
    return None if expected == 1 else (observed - expected) / (1 - expected)


def review_snapshot(workspace_root: str | Path) -> dict[str, Any] | None:
    """Everything the review stage applies: per kind, the pushed samples and every pulled
    annotation (its Label Studio id and content, not when it was pulled). None with no review yet.
    The stage's signature holds its hash: a new or changed decision reruns the stage and what follows."""
    if not state_path(workspace_root).exists():
        return None
    state = ReviewState(workspace_root)
    return {"pushed": {kind: sorted(state.pushed(kind)) for kind in KINDS},
            "decisions": {kind: [{k: v for k, v in row.items() if k != "pulled_at"} for row in state.decisions(kind)]
                          for kind in KINDS}}


def snapshot_digest(snapshot: dict[str, Any] | None) -> str:
    from curate.curation.hashing import content_hash

    return content_hash("review", snapshot)[:16] if snapshot else ""


def reviewed_samples(snapshot: dict[str, Any] | None) -> dict[str, dict[str, Any]]:
    """sample id -> {"kinds": the review kinds it was pushed under, "decisions": kind -> its
    `sample_decisions` entry}, for every sample pushed or decided."""
    out: dict[str, dict[str, Any]] = {}
    for kind in KINDS:
        for sample_id in (snapshot or {}).get("pushed", {}).get(kind, []):
            out.setdefault(sample_id, {"kinds": [], "decisions": {}})["kinds"].append(kind)
        for sample_id, decided in sample_decisions((snapshot or {}).get("decisions", {}).get(kind, [])).items():
            entry = out.setdefault(sample_id, {"kinds": [], "decisions": {}})
            entry["decisions"][kind] = decided
            if kind not in entry["kinds"]:
                entry["kinds"].append(kind)
    return out


def outcome(reviewed: dict[str, Any], answer_type: str | None) -> dict[str, Any]:
    """One sample's review outcome over every kind it was pushed under: "reject" (any review kind
    rejects it), else "open" (a review not done, annotators in conflict, a fix without a readable
    corrected answer: `why` says which), else "fix" (`answer` typed as the task wants it), else "accept"."""
    from curate.curation.answers import parse_typed_text

    decisions = reviewed["decisions"]
    rows = [r for kind in KINDS for r in decisions.get(kind, {}).get("reviews", [])]
    base = {"reviews": rows, "agreement": {k: d["agreement"] for k, d in decisions.items()}}
    rejecting = [k for k in KINDS if decisions.get(k, {}).get("verdict") == "reject"]
    if rejecting:
        reasons = [f"{k}: {r}" if k != "answer" else r for k in rejecting for r in decisions[k]["reasons"]]
        return {**base, "verdict": "reject", "reasons": reasons or ["rejected (no reason given)"]}
    why: dict[str, str] = {}  # a short code -> what to do about it
    for kind in reviewed["kinds"]:
        d = decisions.get(kind)
        if d is None:
            why[f"{kind} review not done"] = f"no annotator has submitted the {kind} review yet"
        elif d["verdict"] == "conflict":
            why[f"{kind} review in conflict"] = "the annotators disagree ({}): another annotator settles it".format(
                ", ".join(sorted({r["verdict"] for r in d["reviews"]})))
    fixing = next((k for k in ("answer", "audit") if decisions.get(k, {}).get("verdict") == "fix"), None)
    fix = fixing is not None
    answer = None
    if fixing:
        written = decisions[fixing]["answer"]
        if written is None:
            why["fix without an answer"] = "the fix gives no corrected answer"
        else:
            try:
                answer = parse_typed_text(str(written), answer_type or "text")
            except ValueError as e:
                why["unreadable fix"] = f"the corrected answer {str(written)[:80]!r} does not fit the task: {e}"
    if why:
        return {**base, "verdict": "open", "why": why}
    return {**base, "verdict": "fix" if fix else "accept", "answer": answer}


def _answer_types(workspace: Any) -> dict[str, str]:
    import pyarrow.parquet as pq

    out: dict[str, str] = {}
    for dataset in checked_datasets(workspace):
        for path in dataset.files("samples"):
            columns = pq.read_table(path, columns=["id", "answer_type"]).to_pydict()
            out.update(zip(columns["id"], columns["answer_type"]))
    return out


def status(workspace: Any, kind: str = "answer") -> dict[str, Any]:
    """The review as the next build will apply it: per pushed sample, its outcome over every kind
    it was pushed under (`outcome`); open ones with the reason. `kind` picks whose agreement is shown."""
    snapshot = review_snapshot(workspace.root)
    if snapshot is None:  # nothing pushed yet; a status does not create review state
        return {"kind": kind, "project_id": None, "pushed": 0, "samples": 0, "decided": 0, "verdicts": {}, "open": 0,
                "open_ids": [], "open_why": {}, "open_examples": {},
                "agreement": {"tasks_with_several_annotators": 0, "mean_pairwise": None, "fleiss_kappa": None}}
    state = ReviewState(workspace.root)
    reviewed = reviewed_samples(snapshot)
    types = _answer_types(workspace) if reviewed else {}
    outcomes = {sample_id: outcome(r, types.get(sample_id)) for sample_id, r in reviewed.items()}
    verdicts = Counter(o["verdict"] for o in outcomes.values())
    open_ids = sorted(s for s, o in outcomes.items() if o["verdict"] == "open")
    several = [r["decisions"][kind] for r in reviewed.values()
               if kind in r["decisions"] and r["decisions"][kind]["agreement"] is not None]
    return {"kind": kind, "project_id": state.project(kind), "pushed": len(snapshot["pushed"].get(kind, [])),
            "samples": len(outcomes), "decided": len(outcomes) - len(open_ids), "verdicts": dict(verdicts),
            "open": len(open_ids), "open_ids": open_ids,
            "open_why": dict(Counter(code for s in open_ids for code in outcomes[s]["why"])),
            "open_examples": {s: outcomes[s]["why"] for s in open_ids[:OPEN_EXAMPLES]},
            "agreement": {"tasks_with_several_annotators": len(several),
                          "mean_pairwise": sum(d["agreement"] for d in several) / len(several) if several else None,
                          "fleiss_kappa": fleiss_kappa([[r["verdict"] for r in d["reviews"]] for d in several])}}
