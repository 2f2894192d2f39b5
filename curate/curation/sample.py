"""The Sample record: one benchmark item, with everything needed to re-check it."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from curate.curation.hashing import content_hash

# a question as near-duplicate detection sees it: lower case, letters and digits of any script,
# single spaces (DuckDB SQL over a `question` column)
NORMALIZED_QUESTION_SQL = r"trim(regexp_replace(lower(question), '[^\pL\pN]+', ' ', 'g'))"


@dataclass(frozen=True, slots=True)
class Program:
    """What computes the gold answer: `kind` is "sql", "chain" or "pandas"; `dialect` for SQL."""

    kind: str
    text: str
    dialect: str = ""


@dataclass(frozen=True, slots=True)
class Vote:
    model: str
    answer: Any
    agrees_with_gold: bool | None = None
    raw: str = ""
    score: float | None = None  # RealHiTBench's vote: the judge's score of this answer (0-1)


@dataclass(frozen=True, slots=True)
class Review:
    annotator: str
    decision: str  # accept | fix | reject
    answer: Any = None
    comment: str = ""
    at: str = ""


class ReviewState(str, Enum):
    """Where a sample stands with human review (stored as `provenance["review"]`, so a release's files
    read the same): a check queued it, it was pushed and is still open (pending), or annotators
    accepted it or fixed its gold."""

    QUEUED = "queued"
    PENDING = "pending"
    ACCEPTED = "accepted"
    FIXED = "fixed"

    @property
    def waiting(self) -> bool:
        """Still waiting for a person: a release that requires review holds it back."""
        return self in (ReviewState.QUEUED, ReviewState.PENDING)


@dataclass(frozen=True, slots=True)
class Sample:
    """A question about one or more tables, with a typed gold answer.

    The id hashes task, tables, program and question, not the answer, so an answer fixed by
    voting or review keeps its sample's identity.
    """

    task: str
    question: str  # the long (analyst) form
    answer: Any
    answer_type: str  # number | text | bool | list | table | chart
    table_ids: tuple[str, ...]
    question_short: str = ""  # the short (casual user) form
    program: Program | None = None
    origin: str = "rule"  # rule | llm | import | sql
    template: str = ""
    votes: tuple[Vote, ...] = ()
    judge_verdict: str = ""
    quality: str = ""  # e.g. rule-based, unanimous, human-annotated, doubtful
    reviews: tuple[Review, ...] = ()
    split: str = "test"
    provenance: dict[str, str] = field(default_factory=dict)
    id: str = ""

    @property
    def review_state(self) -> ReviewState | None:
        """The sample's review state, typed (None: never queued for review)."""
        value = self.provenance.get("review")
        return ReviewState(value) if value else None

    def with_review(self, state: ReviewState, **provenance: str) -> "Sample":
        """A copy in review state `state` (with more provenance fields, if given)."""
        from dataclasses import replace

        return replace(self, provenance={**self.provenance, **provenance, "review": ReviewState(state).value})

    def __post_init__(self) -> None:
        if not self.id:
            program = [self.program.kind, self.program.text] if self.program else None
            object.__setattr__(self, "id", "smp-" + content_hash(
                "sample", self.task, list(self.table_ids), program, self.question))
