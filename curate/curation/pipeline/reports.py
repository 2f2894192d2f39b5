"""Stage reports as typed objects: what the build, the CLI and the dataset card read of a stage.

A stage still writes its report as JSON (`report.json`, the same keys as ever, so stored workspaces
and releases read as they did); a report type reads it back with `from_json`: a key the JSON lacks
takes the field's default (a report written before the field existed), keys the type does not name
stay in `extra`. `summary()` is the stage's one line (`curate build` prints it after the stage's
name), written once here and not again by each reader. The types live beside the stage graph, in
`curation`, because readers in other packages (the card in `exports`) read them, and plain data
imports nothing heavy.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, TypeVar

R = TypeVar("R", bound="Report")


@dataclass
class Report:
    extra: dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls: type[R], data: dict[str, Any] | None) -> R:
        data = data or {}
        names = {f.name for f in fields(cls)} - {"extra"}
        return cls(**{k: v for k, v in data.items() if k in names},
                   extra={k: v for k, v in data.items() if k not in names})

    def summary(self) -> str:
        raise NotImplementedError


@dataclass
class IngestReport(Report):
    """One source: what was read, and what could not be (each with its path and reason)."""

    tables: int = 0
    databases: int = 0
    failed: int = 0
    failures: list[dict[str, Any]] = field(default_factory=list)
    skipped_files: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[dict[str, Any]] = field(default_factory=list)

    def summary(self) -> str:
        return (f"{self.tables:,} tables, {self.databases:,} databases"
                + (f", {self.failed:,} unreadable inputs skipped" if self.failed else ""))

    def passed_over(self) -> list[dict[str, Any]]:
        """Every file not read, with why: unreadable ones, and those skipped (by type, not a regular
        file); a Spider schema is read with its database, so it is not one of them."""
        return [*self.failures, *(f for f in self.skipped_files if not f["reason"].startswith("Spider schema"))]


@dataclass
class CleanReport(Report):
    tables_in: int = 0
    kept: int = 0
    dropped_tables: list[dict[str, Any]] = field(default_factory=list)  # {table, rule, reason}, each one
    dropped_by: dict[str, int] = field(default_factory=dict)

    def summary(self) -> str:
        why = ", ".join(f"{rule} {n:,}" for rule, n in sorted(self.dropped_by.items(), key=lambda kv: -kv[1]) if n)
        return f"kept {self.kept:,} of {self.tables_in:,} tables" + (f"; dropped: {why}" if why else "")


@dataclass
class SamplesReport(Report):
    """A stage that writes samples (a generator, selection): how many, and the tables or databases
    that failed."""

    samples: int = 0
    tables: int = 0
    failed: list[dict[str, Any]] = field(default_factory=list)

    def summary(self, detail: str = "") -> str:
        out = f"{self.samples:,} samples{detail}"
        if self.failed:
            out += (f"; {len(self.failed)} failed: "
                    + ", ".join(str(f.get("table") or f.get("database")) for f in self.failed[:3]))
        return out


@dataclass
class ImportedReport(Report):
    """A corrected build's source (`imported`): the release read back, by name and version."""

    samples: int = 0
    tables: int = 0
    release: str = ""
    version: str = ""

    def summary(self) -> str:
        of = f" of {self.release} {self.version}" if self.release else ""
        return f"{self.samples:,} samples, {self.tables:,} tables{of}"


@dataclass
class SqlReport(SamplesReport):
    """MMQA's synthesis: queries kept of the candidates, over how many databases."""

    queries: int = 0
    candidates: int = 0
    databases: int = 0
    queries_over_unserialized_tables: int = 0
    retrieval_pool: dict[str, Any] = field(default_factory=dict)  # database.table -> its columns
    retrieval_keys: dict[str, Any] = field(default_factory=dict)  # database.table -> its column key [[column, label]]
    without_samples: dict[str, str] = field(default_factory=dict)  # database -> why it gave no sample
    personal_data: dict[str, str] = field(default_factory=dict)  # database.table.column -> kind (never asked)

    def summary(self, detail: str = "") -> str:
        lost = ""
        if self.without_samples:
            shown = "; ".join(f"{db}: {why}" for db, why in list(self.without_samples.items())[:3])
            more = len(self.without_samples) - 3
            lost = (f"; {len(self.without_samples)} databases gave nothing ({shown}"
                    + (f"; {more} more in the report" if more > 0 else "") + ")")
        return super().summary(f" from {self.queries:,} queries over {self.databases} databases{lost}{detail}")


@dataclass
class AdversarialReport(SamplesReport):
    """The wording loop: template samples tried, reworded (`samples`), and the discriminator's verdicts
    (`verdicts`: how many, how many sent a rewrite back, and why)."""

    tried: int = 0
    by_status: dict[str, int] = field(default_factory=dict)
    verdicts: dict[str, int] = field(default_factory=dict)

    def summary(self, detail: str = "") -> str:
        statuses = ", ".join(f"{k} {v}" for k, v in sorted(self.by_status.items()))
        sent_back = (f"; the discriminator sent back {self.verdicts.get('rejected', 0):,} of "
                     f"{self.verdicts.get('verdicts', 0):,} rewrites") if self.verdicts else ""
        return super().summary(f" reworded of {self.tried:,} tried ({statuses}){sent_back}{detail}")


@dataclass
class PhraseReport(SamplesReport):
    tried: int = 0
    by_reason: dict[str, int] = field(default_factory=dict)

    def summary(self, detail: str = "") -> str:
        reasons = ", ".join(f"{k} {v}" for k, v in sorted(self.by_reason.items()))
        return super().summary(f" kept of {self.tried:,} tried ({reasons}){detail}")


@dataclass
class QuestionsReport(SamplesReport):
    requests: int = 0
    flagged: dict[str, int] = field(default_factory=dict)

    def summary(self, detail: str = "") -> str:
        return super().summary(f" from {self.requests:,} requests over {self.tables:,} tables; "
                               f"{sum(self.flagged.values()):,} flagged{detail}")


@dataclass
class SelectReport(SamplesReport):
    """The release's selection: per task, the samples dropped and why; the settings it ran with."""

    dropped: dict[str, dict[str, int]] = field(default_factory=dict)
    settings: dict[str, Any] = field(default_factory=dict)
    database_share: dict[str, Any] = field(default_factory=dict)  # MMQA tasks: the most one database gives
    reworded: dict[str, int] = field(default_factory=dict)  # task -> template questions replaced by their rewrite

    def dropped_for(self, reason: str) -> int:
        return sum(d.get(reason, 0) for d in self.dropped.values())

    def summary(self, detail: str = "") -> str:
        share = self.settings.get("max_database_share")
        over_share = (f", {self.dropped_for('over_database_share'):,} over a database's share of a multi-table task "
                      f"([select] max_database_share = {share:.3g})" if share else "")
        return (f"{self.samples:,} samples kept; dropped: {self.dropped_for('near_duplicate'):,} near-duplicates, "
                f"{self.dropped_for('over_cap'):,} over the per-task cap{over_share}"
                + (f"; {sum(self.reworded.values()):,} template questions in their rewrite's wording" if self.reworded else "")
                + detail)


@dataclass
class ClassifyReport(Report):
    checked: int = 0
    agrees: int = 0
    disagrees: int = 0
    relabelled: int = 0
    flagged: int = 0

    def summary(self) -> str:
        return (f"{self.checked:,} questions classified: {self.agrees:,} agree, {self.disagrees:,} disagree (queued "
                f"for review), {self.relabelled:,} relabelled, {self.flagged:,} flagged")


@dataclass
class VoteReport(Report):
    voted: int = 0
    agreement: dict[str, int] = field(default_factory=dict)
    replaced: int = 0
    queued: int = 0
    method: str = ""

    def summary(self) -> str:
        return (f"{self.voted:,} samples voted (" + ", ".join(f"{k} {v}" for k, v in sorted(self.agreement.items()))
                + f"); {self.replaced} gold answers replaced, {self.queued} queued for review")


@dataclass
class ReviewReport(Report):
    """Annotators' decisions applied: counts by decision, what still waits, and what was held back."""

    applied: dict[str, int] = field(default_factory=dict)
    open: int = 0
    queued_not_pushed: int = 0
    required: bool = False
    held_back: int = 0
    rejected: list[dict[str, Any]] = field(default_factory=list)

    def summary(self) -> str:
        out = (f"{self.applied.get('accept', 0):,} accepted, {self.applied.get('fix', 0):,} fixed, "
               f"{self.applied.get('reject', 0):,} rejected by annotators; {self.open:,} open in Label Studio, "
               f"{self.queued_not_pushed:,} queued and not pushed")
        if self.required:
            out += f"; {self.held_back:,} held back from the release until reviewed"
        return out


@dataclass
class ContractsReport(Report):
    """The data contracts (Great Expectations): each expectation with its result; `failed` in words."""

    ok: bool = True
    samples: int = 0
    expectations: list[dict[str, Any]] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)

    @property
    def met(self) -> int:
        return sum(1 for e in self.expectations if e["success"])

    def summary(self) -> str:
        return f"{self.met} of {len(self.expectations)} expectations met"


@dataclass
class VerifyReport(Report):
    """Every stored program re-run: how many agree with their gold, and the first mismatches and errors."""

    checked: int = 0
    matched: int = 0
    mismatch_count: int = 0
    error_count: int = 0
    human_fixed: int = 0  # gold answers an annotator fixed, which differ from their program on purpose
    no_program: int = 0  # samples whose gold has no program to re-run (retrieval, keys, imported answers)
    mismatches: list[dict[str, Any]] = field(default_factory=list)
    errors: list[dict[str, Any]] = field(default_factory=list)
    ok: bool = True

    def counts(self) -> str:
        return f"{self.mismatch_count} mismatches, {self.error_count} errors"

    def summary(self) -> str:
        return (f"{self.matched:,} of {self.checked:,} programs agree; {self.counts()}"
                + (f"; {self.human_fixed} gold answers fixed by annotators" if self.human_fixed else "")
                + (f"; {self.no_program:,} samples have no program to re-run" if self.no_program else ""))
