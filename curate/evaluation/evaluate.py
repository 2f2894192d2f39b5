"""`curate evaluate`: every sample x mode x table configuration, predicted, scored, reported.

Predictions are stored as they finish in `predictions.sqlite` (in `<out>`; beside the run folders
of one model where the CLI chose the folder), keyed by (model, sample, mode, configuration), where
"model" is the backend's identity and the generation settings: an interrupted run resumes with the
rest, and two models or two settings never share a prediction. The model's requests also go
through the LLM layer's response cache (`llm-cache.sqlite`, beside it). Free-text answers of
`llm_judge` tasks are graded by the judge model, if one is given, and its verdicts stored beside
the predictions (judge.py). Scores are computed from the stored predictions and verdicts at the
end of every run (cheap, deterministic), into `<out>/results.parquet` and the per-sample log
`<out>/samples.jsonl` (sample_log.py), and the report is written from the log. `run.json` states
the coverage: predictions scored of those selected.
"""

from __future__ import annotations

import json
import sqlite3
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from curate.curation.hashing import content_hash
from curate.evaluation.charts import NO_CHART, plotted_chart
from curate.evaluation.dataset import Configuration, EvalSample, ReleaseData, ReleaseError
from curate.evaluation.extract import extract_answer, extract_sql, last_code_block
from curate.evaluation.latency import UNTIMED, replayed_timing, timing
from curate.evaluation.modes import (ICOT_LAST, ICOT_OUTPUT, MODES, RUNS_AS, TREETHINKER_ANSWER, effective_mode,
                              header_tuples, program_tables, prompt, task_rules)


class RequestsFailing(RuntimeError):
    """Requests kept failing the same way (a bad key, an unknown model): the run stopped early."""


FAILURE_HINTS = {"HTTP 401": "Check the API key (--api-key-env names the variable)",
                 "HTTP 403": "Check the API key's permissions",
                 "HTTP 404": "Check --model and --base-url (the server does not know this model or path)",
                 "HTTP 400": "The server refuses the requests: check the model's settings (max tokens, context length)",
                 "malformed reply": "Check --base-url: the server does not answer like an OpenAI-compatible one",
                 "no choices": "The server answers without choices", "no content": "The server answers without content",
                 "deadline": "The server does not finish replies within --request-timeout: check it, or allow more"}


NO_ISOLATION = ("model-written code ran WITHOUT isolation (--sandbox none): programs could read and write "
                "outside their folder, see this machine's processes and outlive the run")


@dataclass
class Settings:
    modes: list[str] = field(default_factory=lambda: ["tcot"])
    configs: list[str] = field(default_factory=list)  # empty: the release's default configuration
    limit: int | None = None  # samples, drawn per task (selection.stratified)
    split: str | None = None
    tasks: list[str] = field(default_factory=list)  # task prefixes
    max_turns: int = 3  # ICoT
    sandbox_workers: int = 2
    sandbox: str = "bwrap"  # how model-written code is isolated: "bwrap", or "none" (the user's explicit choice)
    max_failures_in_a_row: int = 8  # requests failing the same way, one after another, before the run stops
    timeout: float = 10.0
    memory_mb: int = 1024
    batch: int = 256
    max_table_chars: int = 30000
    rel_tol: float = 0.01
    profile: str | None = None  # an official metric profile (evaluation.official); None: the release's, "none": off
    prompt: str = "curate"  # "official": an imported sample's own instruction (TableBench's), where it has one
    allow_partial: bool = False  # scoring fewer than selected is accepted (the report says so)


# which of a published benchmark's prompt variants a mode sends with --prompt official
OFFICIAL_VARIANTS = {"tcot": ("TCoT", "SCoT", "DP"), "pot": ("PoT",), "icot": ("PoT",), "treethinker": ("TCoT",)}


def official_instruction(sample: EvalSample, mode: str) -> str:
    """The benchmark's own prompt for this sample (TableBench ships one per variant, the table in
    it), the variant the mode asks for, else the only one the sample has."""
    kept = {k.removeprefix("instruction_"): v for k, v in sample.provenance.items() if k.startswith("instruction_")}
    for variant in OFFICIAL_VARIANTS.get(mode, ()):
        if kept.get(variant):
            return kept[variant]
    if len(kept) == 1:
        return next(iter(kept.values()))
    raise ReleaseError(f"sample {sample.id}: --prompt official needs the benchmark's own instruction for mode {mode} "
                       f"({'/'.join(OFFICIAL_VARIANTS.get(mode, ()))}); it has "
                       + (", ".join(sorted(kept)) or "none (only imported TableBench samples carry one)"))


# ------------------------------------------------------------------------------ the prediction store

SCHEMA = """CREATE TABLE IF NOT EXISTS predictions (
    key TEXT PRIMARY KEY, model TEXT, sample_id TEXT, mode TEXT, config TEXT, reply TEXT, answer TEXT,
    method TEXT, program TEXT, program_output TEXT, error TEXT, turns TEXT, prompt_tokens INTEGER,
    completion_tokens INTEGER, at REAL, finish_reason TEXT DEFAULT '', latency_s REAL, retries INTEGER)"""


# requests that got no usable reply: never scored, asked again by the next run, reported apart
FAILURES = """CREATE TABLE IF NOT EXISTS failures (
    key TEXT PRIMARY KEY, model TEXT, sample_id TEXT, mode TEXT, config TEXT, failure TEXT, error TEXT, at REAL,
    latency_s REAL, retries INTEGER)"""
PREDICTION_COLUMNS = ("key", "model", "sample_id", "mode", "config", "reply", "answer", "method", "program",
                      "program_output", "error", "turns", "prompt_tokens", "completion_tokens", "finish_reason",
                      "latency_s", "retries", "at")
FAILURE_COLUMNS = ("key", "model", "sample_id", "mode", "config", "failure", "error", "latency_s", "retries", "at")
# columns a store from before them lacks, added when it is opened (their old rows: the default)
ADDED_COLUMNS = {"predictions": (("finish_reason", "TEXT DEFAULT ''"), ("latency_s", "REAL"), ("retries", "INTEGER")),
                 "failures": (("latency_s", "REAL"), ("retries", "INTEGER"))}


JUDGEMENTS = """CREATE TABLE IF NOT EXISTS judgements (
    key TEXT PRIMARY KEY, judge TEXT, sample_id TEXT, answer TEXT, score REAL, reason TEXT, reply TEXT, at REAL)"""


class PredictionStore:
    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(str(path), timeout=60)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute(SCHEMA)
        self.db.execute(JUDGEMENTS)
        self.db.execute(FAILURES)
        for table, added in ADDED_COLUMNS.items():  # a store from before replies were marked truncated or timed
            columns = {r[1] for r in self.db.execute(f"PRAGMA table_info({table})")}
            for name, kind in added:
                if name not in columns:
                    self.db.execute(f"ALTER TABLE {table} ADD COLUMN {name} {kind}")
        # a store from before failures were kept apart held them as predictions scored 0: ask them again
        self.db.execute("DELETE FROM predictions WHERE error LIKE 'no reply: %'")
        self.db.commit()

    def judgements(self, keys: list[str]) -> dict[str, dict[str, Any]]:
        out: dict[str, dict[str, Any]] = {}
        for i in range(0, len(keys), 500):
            chunk = keys[i:i + 500]
            rows = self.db.execute("SELECT key, score, reason, reply FROM judgements "
                                   f"WHERE key IN ({','.join('?' * len(chunk))})", chunk)
            out.update({k: {"score": score, "reason": reason, "reply": reply} for k, score, reason, reply in rows})
        return out

    def put_judgements(self, rows: list[dict[str, Any]]) -> None:
        with self.db:
            self.db.executemany("INSERT OR REPLACE INTO judgements VALUES (:key, :judge, :sample_id, :answer, :score, "
                                ":reason, :reply, :at)", [{**r, "at": time.time()} for r in rows])

    @staticmethod
    def key(model: str, sample_id: str, mode: str, config: str) -> str:
        return content_hash("prediction", model, sample_id, mode, config)

    def done(self, keys: list[str]) -> set[str]:
        out: set[str] = set()
        for i in range(0, len(keys), 500):
            chunk = keys[i:i + 500]
            rows = self.db.execute(f"SELECT key FROM predictions WHERE key IN ({','.join('?' * len(chunk))})", chunk)
            out.update(r[0] for r in rows)
        return out

    def put(self, rows: list[dict[str, Any]]) -> None:
        """Predictions, and failures (rows with a `failure`): a prediction clears its key's failure."""
        now = time.time()
        failed = [{**UNTIMED, **r, "at": now} for r in rows if r.get("failure")]
        done = [{"finish_reason": "", **UNTIMED, **r, "at": now} for r in rows if not r.get("failure")]
        with self.db:
            self.db.executemany(f"INSERT OR REPLACE INTO predictions ({', '.join(PREDICTION_COLUMNS)}) VALUES "
                                f"({', '.join(':' + c for c in PREDICTION_COLUMNS)})", done)
            self.db.executemany("DELETE FROM failures WHERE key = ?", [(r["key"],) for r in done])
            self.db.executemany(f"INSERT OR REPLACE INTO failures ({', '.join(FAILURE_COLUMNS)}) VALUES "
                                f"({', '.join(':' + c for c in FAILURE_COLUMNS)})", failed)

    def failures(self, model: str, keys: set[str] | None = None) -> list[dict[str, Any]]:
        cursor = self.db.execute("SELECT * FROM failures WHERE model = ? ORDER BY at", [model])
        names = [d[0] for d in cursor.description]
        found = [dict(zip(names, r)) for r in cursor]
        return [f for f in found if keys is None or f["key"] in keys]

    def rows(self, model: str) -> list[dict[str, Any]]:
        cursor = self.db.execute("SELECT * FROM predictions WHERE model = ?", [model])
        names = [d[0] for d in cursor.description]
        return [dict(zip(names, r)) for r in cursor]

    def count(self) -> int:
        return self.db.execute("SELECT count(*) FROM predictions").fetchone()[0]


# ------------------------------------------------------------------------------ the run


@dataclass
class Item:
    sample: EvalSample
    mode: str
    config: Configuration
    key: str


class Evaluator:
    def __init__(self, release: str | Path, out: str | Path, settings: Settings, client: Any = None,
                 params: dict[str, Any] | None = None, replay: str | Path | None = None,
                 progress: Callable[[int, int], None] | None = None, judge: Any = None, run_id: str | None = None,
                 store: str | Path | None = None) -> None:
        """`judge`: an AnswerJudge for the tasks scored by `llm_judge` (without one they stay unscored).
        `run_id`: the run's id (runs.run_id; the CLI names the folder by it); RunConflict if `out`
        holds another run. `store`: the prediction store (default `<out>/predictions.sqlite`; the
        CLI's default folders share one per model, so runs of other settings reuse its predictions)."""
        self.data = ReleaseData(release)
        self.judge = judge
        self.out = Path(out)
        self.settings = settings
        if (client is None) == (replay is None):
            raise ValueError("evaluate needs either a model client or a predictions file to replay")
        from curate.curation.llm.backend import RecordedBackend
        from curate.curation.llm.client import ChatClient

        if replay is not None:  # a shorthand for a client of the replay backend
            from curate.curation.llm.backends.replay import ReplayBackend

            client = ChatClient(ReplayBackend(str(replay)))
        self.client, self.params = client, dict(params or {})
        # replies made elsewhere (a replay file): its lines, not the release, say what is scored
        self.recorded = client.backend if isinstance(client.backend, RecordedBackend) else None
        self.progress = progress or (lambda done, total: None)
        unknown = [m for m in settings.modes if m not in MODES]
        if unknown:
            raise ValueError(f"unknown mode(s) {', '.join(unknown)}; known: {', '.join(MODES)}")
        self.configs = [self.data.configuration(c) for c in (settings.configs or [None])]
        from curate.evaluation.official import PROFILES

        profile = settings.profile or self.data.imported.get("profile")
        if profile and profile != "none" and profile not in PROFILES:  # before any work, not after it
            raise ReleaseError(f"unknown metric profile {profile!r}; known: {', '.join(PROFILES.names())}, none")
        from curate.evaluation.runs import check_folder, model_key
        from curate.evaluation.runs import run_id as run_id_of

        self.model = model_key(self.client, self.params, self.settings.prompt)
        self.run_id = run_id or run_id_of(self.data, self.model, settings)
        check_folder(self.out, self.run_id, self.data.name)
        self.store = PredictionStore(Path(store) if store else self.out / "predictions.sqlite")
        self._streak: tuple[str, int] = ("", 0)  # the kind of the last failures in a row, and how many
        self._csv_dir = tempfile.TemporaryDirectory(prefix="curate-eval-tables-")
        self._csv: dict[tuple[str, str], str] = {}

    @property
    def model_name(self) -> str:
        return f"{self.client.identity['backend']}:{self.client.identity['model']}"

    def samples(self) -> list[EvalSample]:
        from curate.evaluation.selection import select

        return select(self.data, self.settings.split, self.settings.tasks, self.settings.limit)

    def run(self) -> dict[str, Any]:
        started = time.perf_counter()
        samples = self.samples()
        keys: set[str] = set()
        if self.recorded:
            sent, pairs = self._run_replay(samples)
            todo_count = sent
            # a file without a line still selected the samples, in the modes and configurations asked
            pairs = pairs or {(m, c.name) for m in self.settings.modes for c in self.configs}
            selected = len(samples) * len(pairs)
            replayed = (sorted({m for m, _ in pairs}), sorted({c for _, c in pairs}))
        else:
            items = [Item(s, mode, c, self.store.key(self.model, s.id, mode, c.name))
                     for s in samples for mode in self.settings.modes for c in self.configs]
            keys = {i.key for i in items}
            selected = len(items)
            replayed = None
            done = self.store.done([i.key for i in items])
            # grouped by configuration and table: a perturbed table is made once for all its questions
            todo = sorted((i for i in items if i.key not in done),
                          key=lambda i: (i.config.name, i.sample.table_ids, i.sample.id, i.mode))
            todo_count = len(todo)
            self.progress(len(items) - len(todo), len(items))
            finished = len(items) - len(todo)
            from curate.evaluation.sandbox import Sandbox

            needs_code = any(effective_mode(i.mode, i.sample.task) in ("pot", "chart") for i in todo)
            limits = self._limits()
            sandbox = Sandbox(self.settings.sandbox_workers, limits, self.settings.sandbox) if needs_code else None
            try:
                for mode in RUNS_AS:
                    group = [i for i in todo if effective_mode(i.mode, i.sample.task) == mode]
                    size = self.settings.batch if mode != "icot" else max(1, 4 * self.settings.sandbox_workers)
                    for start in range(0, len(group), size):
                        chunk = group[start:start + size]
                        rows = (self._icot(chunk, limits) if mode == "icot" else self._treethinker(chunk)
                                if mode == "treethinker" else self._single(chunk, sandbox))
                        self.store.put(rows)
                        self._stop_on_a_streak(rows)
                        finished += len(chunk)
                        self.progress(finished, len(items))
            finally:
                if sandbox:
                    sandbox.close()
        from curate.evaluation.scoring import score_predictions

        rows = self.store.rows(self.model)
        if not self.recorded:  # this run's modes and configurations (the folder may hold others)
            names = {c.name for c in self.configs}
            rows = [r for r in rows if r["mode"] in self.settings.modes and r["config"] in names]
        judged = self._judge(rows, samples)
        results = score_predictions(self.data, rows, samples, self.model_name, self.settings.rel_tol, judged)
        self.out.mkdir(parents=True, exist_ok=True)
        import pyarrow as pa
        import pyarrow.parquet as pq

        from curate.evaluation.scoring import RESULT_COLUMNS

        table = pa.Table.from_pylist(results) if results else pa.table(
            {c: pa.array([], pa.float64() if c == "score" else pa.string()) for c in RESULT_COLUMNS})
        pq.write_table(table, self.out / "results.parquet")
        run = {"release": self.data.name, "release_path": str(self.data.path),
               "fingerprint": self.data.manifest.get("fingerprint"), "model": self.model_name, "model_key": self.model,
               "backend": self.client.identity,
               "generation": self.params, "modes": replayed[0] if replayed else self.settings.modes,
               "configs": replayed[1] if replayed else [c.name for c in self.configs],
               "samples": len(samples), "predicted_now": todo_count, "seconds": round(time.perf_counter() - started, 2),
               "settings": {k: v for k, v in self.settings.__dict__.items()},
               "usage": {} if self.recorded else self.client.usage.as_dict(),
               "judge": self.judge.record() if self.judge else None, "sandbox": self._sandbox_record(),
               "failures": self._failure_summary(keys),
               "truncated": sum(1 for r in rows if r.get("finish_reason") == "length"),
               "warnings": [NO_ISOLATION] if self.settings.sandbox == "none" else [],
               "run_id": self.run_id, "coverage": self._coverage(selected, results, keys)}
        official = self._official(samples, rows, results)
        if official:
            (self.out / "official.json").write_text(json.dumps(official, indent=2, ensure_ascii=False))
            run["official"] = official
        self._write_log(results, rows, samples, keys)
        (self.out / "run.json").write_text(json.dumps(run, indent=2, default=str))
        from curate.evaluation.report import write_report

        write_report([self.out], self.out)
        return {**run, "results": len(results)}

    def _official(self, samples: list[EvalSample], rows: list[dict[str, Any]],
                  results: list[dict[str, Any]]) -> dict[str, Any] | None:
        """The benchmark's own scoring beside curate's: the profile named, else the one an imported
        release names (`curate import`), else none."""
        name = self.settings.profile or self.data.imported.get("profile")
        if not name or name == "none":
            return None
        from curate.evaluation.official import apply

        def rerun(programs: list[tuple[EvalSample, str, str]]) -> list[Any]:
            """Programs run as a live run's are (tables as `df`/`dfs`), several at once."""
            from curate.evaluation.sandbox import Sandbox

            jobs = []
            for sample, config, code in programs:
                configuration = self.data.configuration(config)
                variables, prelude = program_tables(
                    [self.data.table_name(t).split("/")[-1] for t in sample.table_ids],
                    [self._table_csv(t, configuration) for t in sample.table_ids])
                jobs.append((prelude + code, variables))
            sandbox = Sandbox(self.settings.sandbox_workers, self._limits(), self.settings.sandbox)
            try:
                with ThreadPoolExecutor(max_workers=sandbox.size) as pool:
                    return list(pool.map(lambda job: sandbox.run(*job), jobs))
            finally:
                sandbox.close()

        return apply(name, self.data, samples, rows, results, self.data.seed, rerun)

    def _coverage(self, selected: int, results: list[dict[str, Any]], keys: set[str]) -> dict[str, Any]:
        """Predictions scored of those selected (samples x modes x configurations; a replay's modes
        and configurations are those its file holds), and why the others were not."""
        scored = sum(1 for r in results if r["score"] is not None)
        failed = len(self.store.failures(self.model, keys)) if keys else 0
        return {"selected": selected, "scored": scored, "unscored": len(results) - scored, "failed": failed,
                "missing": max(0, selected - len(results) - failed), "complete": scored >= selected > 0,
                "allow_partial": self.settings.allow_partial}

    def _write_log(self, results: list[dict[str, Any]], rows: list[dict[str, Any]], samples: list[EvalSample],
                   keys: set[str]) -> None:
        from curate.evaluation.sample_log import log_rows, write_log

        def messages(sample: EvalSample, mode: str, config: str) -> Any:
            return self._messages(Item(sample, mode, self.data.configuration(config), ""))

        failures = self.store.failures(self.model, keys) if keys else []
        lines, prompts = log_rows(results, rows, failures, samples, self.model_name, self.run_id, messages)
        write_log(self.out, lines, prompts)

    def _failure_summary(self, keys: set[str]) -> dict[str, Any]:
        """This run's requests still without a usable reply (not scored; the next run asks again)."""
        failed = self.store.failures(self.model, keys)
        by_kind: dict[str, int] = {}
        for f in failed:
            by_kind[f["failure"]] = by_kind.get(f["failure"], 0) + 1
        return {"count": len(failed), "by_kind": by_kind, "example": printable(failed[0]["error"][:500]) if failed else ""}

    def _sandbox_record(self) -> dict[str, Any]:
        """How model-written code was isolated in this run (what `curate sandbox check` reports)."""
        from curate.evaluation.isolation import support

        return {"isolation": self.settings.sandbox, **({"machine": support().as_dict()}
                                                       if self.settings.sandbox != "none" else {})}

    def _limits(self) -> Any:
        from curate.evaluation.sandbox import Limits

        return Limits(timeout=self.settings.timeout, cpu_seconds=self.settings.timeout,
                      memory_mb=self.settings.memory_mb)

    # ---------------------------------------------------------------- the judge

    def _judge(self, rows: list[dict[str, Any]], samples: list[EvalSample]) -> dict[tuple[str, str], dict[str, Any]]:
        """Judgements of every extracted answer of an `llm_judge` task, by (sample id, answer json):
        from the store, the missing ones asked now (each distinct answer once)."""
        if self.judge is None:
            return {}
        from curate.curation.taxonomy import tasks
        from curate.evaluation.metrics import JUDGED_METRICS

        taxonomy = tasks()
        by_id = {s.id: s for s in samples}
        wanted: dict[tuple[str, str], str] = {}
        for row in rows:
            sample = by_id.get(row["sample_id"])
            task = taxonomy.get(sample.task) if sample else None
            if task and task.metric in JUDGED_METRICS and row["answer"] and json.loads(row["answer"]) is not None:
                wanted[(sample.id, row["answer"])] = self.judge.key(sample.id, row["answer"])
        stored = self.store.judgements(list(wanted.values()))
        missing = [pair for pair, key in wanted.items() if key not in stored]
        for start in range(0, len(missing), self.settings.batch):
            chunk = missing[start:start + self.settings.batch]
            verdicts = self.judge.judge([(sample_id, by_id[sample_id].question, by_id[sample_id].answer,
                                          json.loads(answer)) for sample_id, answer in chunk])
            new = [{"key": wanted[pair], "judge": self.judge.name, "sample_id": pair[0], "answer": pair[1], **v}
                   for pair, v in zip(chunk, verdicts)]
            self.store.put_judgements(new)
            stored.update({r["key"]: r for r in new})
        return {pair: stored[key] for pair, key in wanted.items()}

    # ---------------------------------------------------------------- prompts and tables

    def _texts(self, sample: EvalSample, config: Configuration) -> tuple[list[str], list[str]]:
        names, texts = [], []
        for table_id in sample.table_ids:
            name = self.data.table_name(table_id)
            text = self.data.table_text(table_id, config)
            if len(text) > self.settings.max_table_chars:
                text = text[:self.settings.max_table_chars] + f"\n... (cut at {self.settings.max_table_chars} characters)"
            names.append(name.split("/")[-1] if len(sample.table_ids) > 1 else name)
            texts.append(text)
        return names, texts

    def _table_csv(self, table_id: str, config: Configuration) -> str:
        key = (table_id, config.perturbation)
        if key not in self._csv:
            table = self.data.table(table_id, config)
            path = Path(self._csv_dir.name) / f"{table_id}-{config.perturbation}.csv"
            table.body.to_pandas().to_csv(path, index=False)
            self._csv[key] = str(path)
        return self._csv[key]

    def _table_file_prelude(self, item: Item) -> str:
        """An imported benchmark whose programs read their table from a file (TableBench's
        `table.csv`) finds it in the program's working folder, as the authors' harness leaves it."""
        name = self.data.imported.get("settings", {}).get("table_file")
        return f"df.to_csv({name!r}, index=False)\n" if name and len(item.sample.table_ids) == 1 else ""

    def _messages(self, item: Item) -> tuple[dict[str, str], ...]:
        from curate.curation.llm.types import user

        if self.settings.prompt == "official":
            return user(official_instruction(item.sample, item.mode))
        rules = task_rules(item.sample.task)
        names, texts = ([], []) if rules.get("tables") == "pool" else self._texts(item.sample, item.config)
        trees = None
        if effective_mode(item.mode, item.sample.task) == "treethinker":
            trees = [header_tuples(self.data.table(t, item.config).header_tree()) for t in item.sample.table_ids]
        captions = [self.data.table_caption(t) for t in item.sample.table_ids] if texts else None
        notes = [self.data.table_notes(t) for t in item.sample.table_ids] if texts else None
        keys = [self.data.table_key(t) for t in item.sample.table_ids] if texts else None
        return user(prompt(item.mode, item.sample.question, names, texts, item.sample.task, self.data.retrieval_pool,
                           trees, captions, notes, keys, self.data.retrieval_keys))

    def _row(self, item: Item, reply: str = "", answer: Any = None, method: str = "none", program: str = "",
             output: str = "", error: str = "", turns: list[Any] | None = None, prompt_tokens: int = 0,
             completion_tokens: int = 0, finish_reason: str = "", latency_s: float | None = None,
             retries: int | None = None) -> dict[str, Any]:
        return {"key": item.key, "model": self.model, "sample_id": item.sample.id, "mode": item.mode,
                "config": item.config.name, "reply": reply, "answer": json.dumps(answer, ensure_ascii=False),
                "method": method, "program": program, "program_output": output, "error": error,
                "turns": json.dumps(turns or [], ensure_ascii=False), "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens, "finish_reason": finish_reason, "latency_s": latency_s,
                "retries": retries}

    def _failed(self, item: Item, response: Any, timed: dict[str, Any] | None = None) -> dict[str, Any]:
        """A request that got no usable reply: stored apart, never scored, asked again next run
        (`timed`: latency.timing of the sample's turns, the failed one included)."""
        return {"key": item.key, "model": self.model, "sample_id": item.sample.id, "mode": item.mode,
                "config": item.config.name, "failure": response.failure or "error", "error": response.error,
                **(timed or UNTIMED)}

    def _stop_on_a_streak(self, rows: list[dict[str, Any]]) -> None:
        """Stop when `max_failures_in_a_row` requests failed the same way in a row (a bad key, an
        unknown model): going on would only burn through the release. A request waiting in a batch
        file (`pending`) burns nothing: it never counts."""
        from curate.curation.llm.types import PENDING

        for row in rows:
            kind = row.get("failure")
            if kind == PENDING:
                continue
            self._streak = (kind, self._streak[1] + 1 if kind and kind == self._streak[0] else 1) if kind else ("", 0)
            if kind and self._streak[1] >= self.settings.max_failures_in_a_row:
                raise RequestsFailing(
                    f"{self.model_name}: {self._streak[1]} requests in a row failed with {kind} ({row['error'][:300]}); "
                    f"stopped. {FAILURE_HINTS.get(kind, 'Fix the cause and rerun')}: finished predictions are kept, "
                    "and the failed requests are asked again")

    # ---------------------------------------------------------------- tcot and pot

    def _single(self, chunk: list[Item], sandbox: Any, replies: list[Any] | None = None) -> list[dict[str, Any]]:
        """One reply per item (asked now, or `replies` given by a replay); programs run in the sandbox."""
        from curate.curation.llm.types import ChatRequest, ModelUnavailable

        if replies is None:
            responses = self.client.complete([ChatRequest(self._messages(i), self.params, tag=i.sample.id)
                                              for i in chunk])
        else:
            responses = replies
        down = [r for r in responses if r.unreachable]
        if down:
            raise ModelUnavailable(f"{self.model_name}: {len(down)} requests got no reply ({down[0].error}); "
                                   "rerun to go on: finished predictions are kept")
        programs: dict[int, tuple[str, dict[str, str]]] = {}
        for n, (item, response) in enumerate(zip(chunk, responses)):
            mode = effective_mode(item.mode, item.sample.task)
            if mode in ("pot", "chart") and response.ok:
                code = last_code_block(response.text)
                if code:
                    variables, prelude = program_tables(
                        [self.data.table_name(t).split("/")[-1] for t in item.sample.table_ids],
                        [self._table_csv(t, item.config) for t in item.sample.table_ids])
                    programs[n] = (prelude + self._table_file_prelude(item) + code, variables)
        ran: dict[int, Any] = {}
        if programs:
            with ThreadPoolExecutor(max_workers=sandbox.size) as pool:
                futures = {n: pool.submit(sandbox.run, code, variables) for n, (code, variables) in programs.items()}
                ran = {n: f.result() for n, f in futures.items()}
        rows = []
        for n, (item, response) in enumerate(zip(chunk, responses)):
            common = {"reply": response.text, "prompt_tokens": response.prompt_tokens,
                      "completion_tokens": response.completion_tokens, **timing([response])}
            common["finish_reason"] = response.finish_reason
            if not response.ok:
                rows.append(self._failed(item, response, timing([response])))
            elif effective_mode(item.mode, item.sample.task) == "tcot":
                sql = task_rules(item.sample.task).get("answer") == "sql"
                found = extract_sql(response.text) if sql else extract_answer(response.text)
                rows.append(self._row(item, answer=found.answer, method=found.method, **common))
            elif n not in programs:
                rows.append(self._row(item, error="no code block in the reply", **common))
            elif effective_mode(item.mode, item.sample.task) == "chart":
                result = ran[n]
                try:
                    chart = plotted_chart(result.figures) if result.ok else None
                except (TypeError, ValueError, KeyError, AttributeError, IndexError):
                    chart = None  # figures that are not what the worker writes: a program forged its result
                error = result.error or ("" if chart else NO_CHART)
                rows.append(self._row(item, answer=chart, method="figure" if chart else "none",
                                      program=programs[n][0], output=result.stdout, error=error, **common))
            else:
                result = ran[n]
                found = extract_answer("", result.stdout) if result.ok else None
                rows.append(self._row(item, answer=found.answer if found else None,
                                      method=found.method if found else "none", program=programs[n][0],
                                      output=result.stdout, error=result.error, **common))
        return rows

    # ---------------------------------------------------------------- treethinker

    def _treethinker(self, chunk: list[Item]) -> list[dict[str, Any]]:
        """Two turns per sample: align the question to the header tree, then reason to the answer."""
        from curate.curation.llm.types import ChatRequest, ModelUnavailable

        conversations = [list(self._messages(item)) for item in chunk]
        first = self.client.complete([ChatRequest(tuple(c), self.params, tag=i.sample.id)
                                      for c, i in zip(conversations, chunk)])
        if any(r.unreachable for r in first):
            raise ModelUnavailable(f"{self.model_name}: the server stopped answering; rerun to go on")
        second_at = [n for n, r in enumerate(first) if r.ok]
        for n in second_at:
            conversations[n] += [{"role": "assistant", "content": first[n].text},
                                 {"role": "user", "content": TREETHINKER_ANSWER}]
        second = dict(zip(second_at, self.client.complete(
            [ChatRequest(tuple(conversations[n]), self.params, tag=chunk[n].sample.id) for n in second_at])))
        if any(r.unreachable for r in second.values()):
            raise ModelUnavailable(f"{self.model_name}: the server stopped answering; rerun to go on")
        rows = []
        for n, item in enumerate(chunk):
            alignment, answer = first[n], second.get(n)
            turns = [{"turn": 1, "alignment": alignment.text}]
            tokens = {"prompt_tokens": alignment.prompt_tokens + (answer.prompt_tokens if answer else 0),
                      "completion_tokens": alignment.completion_tokens + (answer.completion_tokens if answer else 0)}
            timed = timing([alignment] + ([answer] if answer is not None else []))  # both turns
            if answer is None or not answer.ok:
                rows.append(self._failed(item, answer if answer is not None else alignment, timed))
                continue
            found = extract_answer(answer.text)
            rows.append(self._row(item, reply=answer.text, answer=found.answer, method=found.method, turns=turns,
                                  finish_reason=answer.finish_reason, **tokens, **timed))
        return rows

    # ---------------------------------------------------------------- icot

    def _icot(self, chunk: list[Item], limits: Any) -> list[dict[str, Any]]:
        from curate.curation.llm.types import ChatRequest, ModelUnavailable
        from curate.evaluation.sandbox import Session

        conversations = {n: list(self._messages(item)) for n, item in enumerate(chunk)}
        sessions: dict[int, Any] = {}
        turns: dict[int, list[dict[str, Any]]] = {n: [] for n in conversations}
        tokens = {n: [0, 0] for n in conversations}
        answered: dict[int, list[Any]] = {n: [] for n in conversations}  # every turn's response, timed
        final: dict[int, dict[str, Any]] = {}
        try:
            for turn in range(1, self.settings.max_turns + 2):  # the last turn only answers
                active = [n for n in conversations if n not in final]
                if not active:
                    break
                requests = [ChatRequest(tuple(conversations[n]), self.params, tag=chunk[n].sample.id) for n in active]
                responses = self.client.complete(requests)
                if any(r.unreachable for r in responses):
                    raise ModelUnavailable(f"{self.model_name}: the server stopped answering; rerun to go on")
                for n, response in zip(active, responses):
                    answered[n].append(response)
                    tokens[n][0] += response.prompt_tokens
                    tokens[n][1] += response.completion_tokens
                    conversations[n].append({"role": "assistant", "content": response.text})
                    if not response.ok:
                        final[n] = {"failed": response}
                        continue
                    code = last_code_block(response.text)
                    if code is None or turn > self.settings.max_turns:
                        found = extract_answer(response.text)
                        final[n] = {"reply": response.text, "answer": found.answer, "method": found.method,
                                    "error": "", "finish_reason": response.finish_reason}
                        continue
                    item = chunk[n]
                    if n not in sessions:
                        sessions[n] = Session(limits, self.settings.sandbox)
                    variables, prelude = program_tables(
                        [self.data.table_name(t).split("/")[-1] for t in item.sample.table_ids],
                        [self._table_csv(t, item.config) for t in item.sample.table_ids])
                    first = not turns[n]
                    result = sessions[n].run((prelude if first else "") + code, variables if first else None)
                    output = result.stdout + (("\n" + result.error) if result.error else "")
                    turns[n].append({"turn": turn, "code": code, "ok": result.ok, "output": output[-2000:]})
                    follow = ICOT_LAST if turn == self.settings.max_turns else ICOT_OUTPUT
                    conversations[n].append({"role": "user", "content": follow.format(output=output[-4000:] or "(none)")})
        finally:
            for session in sessions.values():
                session.close()
        return [self._failed(chunk[n], f["failed"], timing(answered[n])) if "failed" in f else
                self._row(chunk[n], reply=f["reply"], answer=f["answer"], method=f["method"], error=f["error"],
                          turns=turns[n], program="\n# ---\n".join(t["code"] for t in turns[n]),
                          prompt_tokens=tokens[n][0], completion_tokens=tokens[n][1], finish_reason=f["finish_reason"],
                          **timing(answered[n]))
                for n, f in final.items()]

    # ---------------------------------------------------------------- replay

    def _run_replay(self, samples: list[EvalSample]) -> tuple[int, set[tuple[str, str]]]:
        """(predictions made now, the (mode, configuration) pairs the file holds)."""
        by_id = {s.id: s for s in samples}
        every = self.data.samples()
        known = {s.id for s in every}
        by_source: dict[str, list[str]] = {}
        for s in every:
            if s.provenance.get("source_id"):
                by_source.setdefault(s.provenance["source_id"], []).append(s.id)
        rows, seen = [], set()
        pairs: set[tuple[str, str]] = set()
        to_run: list[tuple[Item, str, dict[str, Any]]] = []
        for number, record in self.recorded.records():  # each line's shape checked by the backend
            if "sample_id" not in record:  # a benchmark's own id (imported releases)
                record = {**record, "sample_id": self._sample_of_source(record["source_id"], by_source, number,
                                                                        record.get("task"))}
            sample_id, reply = record["sample_id"], record["reply"]
            if sample_id not in known:
                raise ReleaseError(f"{self.recorded.path}:{number}: sample {sample_id!r} is not in the release "
                                   f"{self.data.name}")
            try:
                config = self.data.configuration(record.get("config"))
            except ReleaseError as e:
                raise ReleaseError(f"{self.recorded.path}:{number}: {e}") from None
            mode = record.get("mode", "tcot")
            if mode not in MODES:
                raise ReleaseError(f"{self.recorded.path}:{number}: unknown mode {mode!r}; known: {', '.join(MODES)}")
            try:
                timed = replayed_timing(record)  # measured where the replies were made, if the line says
            except ValueError as e:
                raise ReleaseError(f"{self.recorded.path}:{number}: {e}") from None
            pairs.add((mode, config.name))
            if sample_id not in by_id:
                continue  # outside --limit / --tasks / --split
            item = Item(by_id[sample_id], mode, config, self.store.key(self.model, sample_id, mode, config.name))
            if item.key in seen:
                continue
            seen.add(item.key)
            runs_as = effective_mode(mode, by_id[sample_id].task)
            if runs_as == "chart" or (runs_as == "pot" and record.get("program_output") is None):
                to_run.append((item, str(reply), timed))
                continue
            if task_rules(by_id[sample_id].task).get("answer") == "sql":
                found = extract_sql(str(reply))
            else:
                found = extract_answer(str(reply), record.get("program_output"))
            rows.append(self._row(item, reply=str(reply), answer=found.answer, method=found.method,
                                  output=str(record.get("program_output") or ""), **timed))
        for start in range(0, len(rows), 5000):
            self.store.put(rows[start:start + 5000])
        self._run_replayed_programs(to_run)
        return len(rows) + len(to_run), pairs

    def _sample_of_source(self, source_id: Any, by_source: dict[str, list[str]], number: int,
                          task: Any = None) -> str:
        """The sample an imported benchmark's id names (`provenance.source_id`); `task` (a task
        key or prefix) chooses among the samples one published item became (MMQA's QA and SQL)."""
        if not isinstance(source_id, str) or not isinstance(task, (str, type(None))):
            raise ReleaseError(f"{self.recorded.path}:{number}: 'source_id' and 'task' must be str")
        found = by_source.get(source_id, [])
        if task and len(found) > 1:
            tasks = {s.id: s.task for s in self.data.samples()}
            found = [i for i in found if tasks[i].startswith(task)]
        if len(found) != 1:
            raise ReleaseError(f"{self.recorded.path}:{number}: source_id {source_id!r} names "
                               + ("no sample" if not found else f"{len(found)} samples (name the \"task\" too)")
                               + f" of {self.data.name}"
                               + ("" if found else " (only imported releases keep their benchmark's ids)"))
        return found[0]

    def _run_replayed_programs(self, to_run: list[tuple[Item, str, dict[str, Any]]]) -> None:
        """Replayed PoT programs (without their output) and chart programs run here, as a live run's
        would; each keeps its line's timing (latency.replayed_timing)."""
        done = self.store.done([item.key for item, _, _ in to_run])
        to_run = [job for job in to_run if job[0].key not in done]  # ran in an earlier replay
        if not to_run:
            return
        from curate.curation.llm.types import ChatResponse
        from curate.evaluation.sandbox import Sandbox

        sandbox = Sandbox(self.settings.sandbox_workers, self._limits(), self.settings.sandbox)
        try:
            for start in range(0, len(to_run), self.settings.batch):
                chunk = to_run[start:start + self.settings.batch]
                rows = self._single([i for i, _, _ in chunk], sandbox, [ChatResponse(text=r) for _, r, _ in chunk])
                self.store.put([{**row, **timed} for row, (_, _, timed) in zip(rows, chunk)])
        finally:
            sandbox.close()


def printable(text: str) -> str:
    """A server's or model's text as a terminal may show it: control characters (an escape sequence
    that retitles the window, clears the screen or forges a line) written as escapes."""
    return "".join(c if c.isprintable() or c == " " else repr(c)[1:-1] for c in text)
