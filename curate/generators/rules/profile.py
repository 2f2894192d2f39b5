"""What the templates need to know about one table, computed once: column roles and conditions.

The roles come from the table's semantics (`curate/curation/semantics.py`): a *key* is the row's natural
name (or a unique year or date), *numeric* columns are measures and counts, *categorical* columns
are categories, codes and flags (they filter and group), and *time* is a unique year axis (for
growth rates). Row indices and identifiers are never asked about. Rows and columns that cleaning
marked as summaries, empty or constant are left out, so no question counts a "Total" row.
A column is named in a question by its label and its header: "per capita crime rate (`crim`)".
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Iterable

import numpy as np
import pyarrow as pa

from curate.curation import column_key
from curate.curation import semantics as sem
from curate.curation.semantics import plural
from curate.curation.answers import plain
from curate.curation.header_tree import PATH_SEPARATOR
from curate.curation.programs import data_view
from curate.curation.programs.chain import Frame, condition_mask, frame_from_arrow
from curate.curation.table import Table

_NUMBER_TEXT = re.compile(r"^[\s\d.,%()+-]*$")  # a cell that is a figure, not a label

TIME_NAME = re.compile(r"^(year|yr|years|time|date|period|season)$", re.I)
MAX_CATEGORIES = 12
MOST_NAMED_ROWS = 10  # the rows a question leaves out are named up to this many
NOT_ADDITIVE = re.compile(r"\b(rate|ratio|rank|ranking|log|index|idx|mean|average|avg|median|percent|percentage|pct|per|"
                          r"proportion|prop|share|score|scale|temp|temperature|age|price|density|coefficient|"
                          r"lat|lon|latitude|longitude|height|weight|length|width|speed|pressure|level|grade|residual|resid|error|"
                          r"deviation|diff|difference|change|z|std|sd|se|record|time|duration|min|max|minimum|maximum|"
                          r"mortality|fertility|incidence|prevalence|depth|elevation|altitude|magnitude|diameter|radius|thickness|"
                          r"concentration|humidity)s?\b|%",
                          re.I)  # "record time", an earthquake's "Depth (km)": no part of a whole
NUISANCE = re.compile(r"^(?:(block|blk|blocks|plot|rep|reps|replicate|replication|batch|panel|run|stratum|strata|"
                      r"cluster|trial|occasion|session|lab|laboratory|row|col|column|center|centre|clinic|hospital)\d*|"
                      r"x|y|xcoord|ycoord|easting|northing)$", re.I)  # a trial's site, a plant's place in a plot
MODEL_OUTPUT = re.compile(r"\b(residuals?|resid|fitted|predicted|prediction|standard error|standardi[sz]ed|"
                          r"normali[sz]ed|z-?scores?|"
                          r"std error|confidence|upper bound|lower bound|bound of|weights? for|ub|lb|se|fit|pred)\b", re.I)
SIMULATED = re.compile(r"\b(fake|simulated|simulation|artificial|synthetic|randomly generated|random data|"
                       r"hypothetical|made-up|toy data|generated data)\b", re.I)
PER_UNIT = re.compile(r"\b(population|pop|people|persons|inhabitants|residents|households|families|employees|workers|"
                      r"staff|members|students|pupils|patients|area|acres|hectares|km2|sq|square|capita|units|"
                      r"doctors|physicians|teachers|schools)\b", re.I)
PARTS = re.compile(r"\b(state|county|country|region|province|district|city|municipality|department|party|candidate|"
                   r"sector|industry|company|firm|category|continent|territory|nation|ward|borough|constituency|"
                   r"commodity|crop|source|occupation|age group|product|brand|segment|division)$", re.I)  # rows that split one whole between them
INTERVAL = re.compile(r"\b(temp|temperature|celsius|fahrenheit|degrees?|log|ln|lat|lon|latitude|longitude|"
                      r"year|date|z|score|scale|index|level|elevation|altitude|stage|rank|ranking)s?\b", re.I)  # Lake Huron's level: feet above sea
MIN_DISTINCT_FOR_A_SHAPE = 8  # fewer values are no distribution whose skewness or normality says anything
# a row label that names a measure, not a case ("Number of M1 per FOV", "% Phagocytosis", "Mean age"):
# rows labelled so are a table's variables, transposed; comparing them compares unlike things
MEASURE_LABEL = re.compile(r"^\s*((number|count|total|sum|mean|average|median|percent(age)?|rate|ratio|share|"
                           r"proportion|index|amount)\b|no\.)|%|\bper\b|\((number|thousands|millions|percent|%)\)", re.IGNORECASE)
RELATIVE = re.compile(r"\b(rate|ratio|index|idx|percent|percentage|pct|proportion|prop|share|fraction|"
                      r"mortality|fertility|incidence|prevalence)s?\b|%", re.I)  # swiss' Infant.Mortality: a rate
WEIGHT_NAME = re.compile(r"^(freq|frequency|count|counts|n|cases|number|weight|wt|total)$", re.I)
FREQUENCY_NAME = re.compile(r"^(freq|frequency)$", re.I)  # beside a "count" level: how often each count occurs
TRIALS_NAME = re.compile(r"^(total|n|trials|size|number|tested|exposed|at_?risk)$", re.I)  # y of n: Menarche of Total
CENSORING_NAME = re.compile(r"^(cens|censor|censored|censoring|delta|event|status|dead|death|died|fail|failure)$", re.I)
CENSORING_LABEL = re.compile(r"\bcensor|\b(death|event|failure|infection|relapse|recurrence|status) indicator\b|"
                             r"\bindicator (of|for) (death|the event|an event|failure|infection|relapse)\b", re.I)
DURATION = re.compile(r"\b(time|times|duration|survival|surv|futime|followup|follow up|days|weeks|months|years|"
                      r"length of stay|stay)\b", re.I)
YEAR_SPAN = re.compile(r"\b(1[6-9]\d\d|20\d\d)\s*(?:-|\u2013|to)\s*(1[6-9]\d\d|20\d\d)\b")
ADDITIVE = re.compile(r"\b(total|amount|number|count|counts|sum|population|pop|sales|revenue|expenditures?|spending|"
                      r"costs?|income|earnings|wages?|gdp|exports?|imports?|deaths|cases|births|sold|volume|"
                      r"production|output|quantity|units|votes|dollars|euros?|pounds|tons|tonnes|acres|hectares|"
                      r"area|employees|workers|households|passengers|visitors|arrests|crimes|accidents|"
                      r"customers|orders|items|hours|minutes|days|miles|kilometers|km|budget|debt|assets|"
                      r"profit|loss|catch|yield|rainfall|precipitation|emissions|consumption|usage|children|"
                      r"people|persons|patients|students|members|trips|calls)\b", re.I)
SAYS_NOTHING = frozenset({"no", "nr", "num", "na", "var", "val", "col", "field", "item", "other", "misc"})  # "the total no"
# a header that is only a unit ("(mmol / l)", "(mmol / l).1", "[kg]"): what was measured is lost (a header row the
# source dropped), and "the highest (mmol / l).1" is nobody's question
UNIT_ONLY = re.compile(r"^\s*[(\[][^()\[\]]*[)\]]\s*(\.\d+)?\s*$")
ORDER_STATISTICS = ("min", "max", "range", "count")  # what a value repeated per subject's row still answers right
SIGNIFICANT = 3  # a threshold as a person writes it: 8310, not 8314.6396484375
MAX_EXACT = 2.0 ** 53
SCHEDULE_TOLERANCE = 0.02  # two groups sharing every value in shares this close share a design, not a finding
# Each comparison says whether its threshold is in or out: "more than 8" leaves 8 out, "8 or more" (or
# "at least 8") keeps it; "above 8" is read both ways, so no phrase says it.
HAVE = {"==": "equal to", "!=": "other than", ">": "of more than", ">=": "of at least", "<": "of less than",
        "<=": "of at most"}
WORDS = {"==": "is", "!=": "is not", ">": "is greater than", ">=": "is at least", "<": "is less than", "<=": "is at most"}
# a column that numbers places (a race's position, a league's rank): "the lowest place" is the last
# one to a reader and the smallest number to the gold, so a question about it compares numbers
_PLACE = (r"(rank|ranks|ranked|ranking|rankings|rk|place|placing|placed|position|pos|standing|finish|finished|"
          r"seed|seeding)")
# the name's head or its first word ("rank (2012)", "peak position", "rank by wealth"), not a word inside
# it: "first-place votes" counts votes
PLACE_NAME = re.compile(rf"^\W*{_PLACE}\b|\b{_PLACE}(\s*\([^()]*\))?\W*$", re.I)
BY_NUMBER = {"highest": "largest", "lowest": "smallest", "higher": "larger", "lower": "smaller"}
_DIRECTION = re.compile(r"\b(" + "|".join(BY_NUMBER) + r")\b", re.I)


def by_number(text: str) -> str:
    """"Which team has the lowest position?" as "... the smallest position?": the direction said of
    the number, which a place word ("lowest place", "highest rank") leaves open."""
    def swap(m: re.Match) -> str:
        word = BY_NUMBER[m.group(1).casefold()]
        return word.capitalize() if m.group(1)[0].isupper() else word
    return _DIRECTION.sub(swap, text)


@dataclass(frozen=True, slots=True)
class Condition:
    """One row condition: `column op value`, with its row mask and its English phrase."""

    column: str
    op: str  # == != > >= < <=
    value: Any
    mask: np.ndarray = field(compare=False, repr=False)
    label: str = field(default="", compare=False)  # how the question names the column
    meaning: str = field(default="", compare=False)  # what a code's value stands for

    def phrase(self, have: bool = False, it: bool = False) -> str:
        """"population is greater than 5000", after "have": "population of more than 5000", and when the
        sentence named the column already: "it is greater than 5000"."""
        value = show(self.value) + (f" ({self.meaning})" if self.meaning else "")
        return f"{'it' if it else self.label or self.column} {(HAVE if have else WORDS)[self.op]} {value}"

    def triple(self) -> list[Any]:
        return [self.column, self.op, self.value]


def rounded(value: Any, significant: int = SIGNIFICANT) -> Any:
    """A number to a few significant figures, an int staying an int (1309570 -> 1310000)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value == 0:
        return value
    if isinstance(value, float) and not np.isfinite(value):
        return value
    r = float(f"{value:.{significant}g}")
    return int(r) if isinstance(value, int) else r


def show(value: Any) -> str:
    """A value as a question writes it: 6 not 6.0, 0.1 not 0.1000000000000000055."""
    if isinstance(value, float):
        text = repr(value)
        return text[:-2] if text.endswith(".0") else text
    return str(value)


def _stem(column: str) -> str:
    """"lrd" and "rd", "length_hrs" and "length_min", "log_income" and "income": one variable."""
    name = sem.snake(column).casefold().replace(".", "_")
    name = re.sub(r"^(log|ln|l|sqrt|sq)_?(?=[a-z]{2})", "", name) if not name.startswith(("lat", "len", "lev", "lab", "lo")) else name
    return re.sub(r"_?(hrs|hours|min|mins|minutes|sec|secs|seconds|pct|percent|log|sq|squared)$", "", name)


def adjusted_from(x: str, y: str) -> bool:
    """Whether one header is the other with a modifier in front: `adjfatal` of `fatalism`,
    `stdincome` of `income`, the same scale adjusted, standardised or centred."""
    a, b = (sem.snake(c).casefold().replace(".", "_").replace("_", "") for c in (x, y))
    for u, v in ((a, b), (b, a)):
        m = re.match(r"(adj|adjusted|std|standardi[sz]ed|z|c|centered|centred|resid|detrended|corr|corrected)(?=[a-z]{3})", u)
        if m:
            rest = u[m.end():]
            if v.startswith(rest) or rest.startswith(v) and len(v) >= 3:
                return True
    return False


def average_ranks(x: np.ndarray) -> np.ndarray:
    """Average ranks of the present values (NaN stays NaN)."""
    out = np.full(len(x), np.nan)
    present = ~np.isnan(x)
    values = x[present]
    order = np.argsort(values, kind="stable")
    ranks = np.empty(len(values))
    ranks[order] = np.arange(1, len(values) + 1)
    _, inverse, counts = np.unique(values, return_inverse=True, return_counts=True)
    sums = np.bincount(inverse, weights=ranks)
    out[present] = (sums / counts)[inverse]
    return out


def _shares(values: np.ndarray) -> dict[Any, float]:
    """Each distinct value's share of the values."""
    if not len(values):
        return {}
    distinct, counts = np.unique(values, return_counts=True)
    return {v: round(c / len(values), 12) for v, c in zip(distinct.tolist(), counts.tolist())}


class TableProfile:
    def __init__(self, table: Table) -> None:
        self.table = table
        self.view = data_view(table)
        self.frame: Frame = frame_from_arrow(self.view)
        self.n_rows = self.view.num_rows
        self.text_columns = {f.name for f in self.view.schema if pa.types.is_string(f.type)}
        self.date_columns = {f.name for f in self.view.schema if pa.types.is_date(f.type) or pa.types.is_timestamp(f.type)}
        excluded = set(table.summary_columns) | set(table.empty_columns) | set(table.constant_columns)
        # SQL identifiers ignore case: "IOD" and "iod" cannot both be named in a program
        folded = [c.casefold() for c in table.columns]
        excluded |= {i for i, f in enumerate(folded) if folded.count(f) > 1}
        infos = table.semantics if len(table.semantics) == len(table.columns) else sem.infer(table)
        self.info = {i.name: i for i in infos}
        self.role = {i.name: i.role for i in infos}
        never = (sem.ROW_INDEX, sem.IDENTIFIER, sem.EMPTY)
        self.usable = [c for i, c in enumerate(table.columns) if i not in excluded and self.role.get(c) not in never
                       and self.nameable(c)]
        self.key = self._find_key()
        self.time = self._find_time()
        self.numeric = [c for c in self.usable if self.role.get(c) in sem.QUANTITIES and self._is_measure(c)
                        and not self._model_output(c) and not NUISANCE.match(c)]
        self.categorical = self._without_duplicate_groupings(
            [c for c in self.usable if c != self.key and self.role.get(c) in sem.GROUPINGS
             and self._is_categorical(c) and not NUISANCE.match(c)
             and not sem.opaque_code(self.info.get(c), self.frame[c].tolist())])
        self.numeric = [c for c in self.numeric if not self._set_by_design(c)]
        self.dates = [c for c in self.usable if c in self.date_columns and c != self.key]
        self.is_matrix = self._is_matrix()
        self.weights, self.levels = self._weights()
        self.numeric = [c for c in self.numeric if c not in self.levels]  # a level's plain median weighs no case
        self.counts_cells = self._cell_counts()
        self.simulated = bool(SIMULATED.search(f"{table.name} {table.caption}"))

    @cached_property
    def rows_left_out(self) -> str:
        """What a question over this table's rows must say it leaves out: the rows that total others,
        which its program never reads (the data view) but the reader sees ("Leave out the rows that
        total others: "Total, 16 years and over", "16 to 19 years" and "20 to 24 years"."); "" when there
        are none. Each is named (up to MOST_NAMED_ROWS): an unnamed one can decide the answer.
        Without it a reader's skewness over all 40 rows is "wrong" against a gold over the 39 parts.
        A label several of them carry is said once, with how many ("Yr Jan-Dec" (4 rows)): each
        year's total, not one row named four times."""
        rows = [r for r in sorted(self.table.summary_rows) if r < self.table.n_rows]
        if not rows:
            return ""
        from curate.curation.arithmetic import rows_under_grand_total

        under = rows_under_grand_total(self.table, rows)  # "voter turnout in %" under the total: no total itself
        totals = [r for r in rows if r not in under]
        said = f" Leave out the {'row that totals' if len(totals) == 1 else 'rows that total'} others: {self._named(totals)}"
        if under:
            said += f", and the {'row' if len(under) == 1 else 'rows'} under the total: {self._named(sorted(under))}"
        return said + "."

    def _named(self, rows: list[int]) -> str:
        """Rows as the table shows them, each by its label and its place in the row tree ("Total / 16 to
        19 years"); a label several carry said once with how many; past MOST_NAMED_ROWS, how many more."""
        from curate.curation.body import cell_text
        from curate.curation.header_tree import row_paths

        paths = row_paths(self.table.header, self.table.n_rows)
        labels = []
        for r in rows:
            cells = [cell_text(v) for v in self.table.body.slice(r, 1).to_pylist()[0].values()]
            own = next((c for c in cells if c and not _NUMBER_TEXT.match(c)), None)
            path = [x for x in paths[r] if x != own]  # "Total / 16 to 19 years", as the table shows it
            text = " / ".join([*path, own]) if own else " / ".join(path)
            labels.append(f'"{text}"' if text else f"row {r + 1} from the top")
        repeats = Counter(labels)
        labels = [f"{label} ({repeats[label]} rows)" if repeats[label] > 1 else label
                  for label in dict.fromkeys(labels)]
        if len(labels) > MOST_NAMED_ROWS:
            return ", ".join(labels[:MOST_NAMED_ROWS]) + f" and {len(labels) - MOST_NAMED_ROWS} more"
        return labels[0] if len(labels) == 1 else ", ".join(labels[:-1]) + " and " + labels[-1]

    # -- column roles -----------------------------------------------------------------------
    def present(self, column: str) -> np.ndarray:
        v = self.frame[column]
        if v.dtype == object:
            return np.array([x is not None for x in v], dtype=bool)
        if v.dtype.kind == "f":
            return np.isfinite(v)  # infinities are no answer anyone can check by eye
        return np.ones(len(v), dtype=bool)

    def _unique(self, column: str) -> bool:
        v = self.frame[column]
        if not self.present(column).all():
            return False
        return len(set(v.tolist())) == len(v)

    def _find_key(self) -> str | None:
        """The column that names rows as people do: a natural name, else a unique year or date."""
        names = [c for c in self.usable if self.role.get(c) == sem.NAME and self._unique(c)]
        if any(self._short_form(other, c) for c in names for other in self.text_columns if other != c):
            return None  # `baker` "Manon" beside `baker_full` "Manon Lagrève": "which baker" has two right answers
        if names:  # "Ghana" over its code "GH", when a table holds both
            codes = [c for c in names if all(str(v).isupper() and (len(str(v)) <= 5 and " " not in str(v)
                                                                   or len(names) > 1) for v in self.frame[c].tolist())]
            return next((c for c in names if c not in codes), names[0])
        for c in self.usable:
            if self.role.get(c) == sem.TIME and self._unique(c) and (c in self.date_columns or self.holds_years(c)):
                return c
        return None

    def _short_form(self, short: str, full: str) -> bool:
        """Whether most values of `short` are the first words of `full`'s ("Manon" of "Manon Lagrève")."""
        pairs = [(a, b) for a, b in zip(self.frame[short].tolist(), self.frame[full].tolist())
                 if isinstance(a, str) and isinstance(b, str) and a.strip()]
        return len(pairs) >= 0.8 * self.n_rows and sum(b.startswith(a.strip() + " ") for a, b in pairs) >= 0.8 * len(pairs)

    def restates_key(self, column: str) -> bool:
        """Whether a column is the key plus a constant (`SeasonEnd` = `SeasonStart` + 1): reading it
        off a row named by the key tells nothing."""
        if not self.key or self.frame[self.key].dtype.kind not in "if" or self.frame[column].dtype.kind not in "if":
            return False
        keep = self.present(column) & self.present(self.key)
        diff = self.frame[column][keep].astype(np.float64) - self.frame[self.key][keep].astype(np.float64)
        return bool(len(diff) >= 2 and np.ptp(diff) == 0)

    def spells_key(self, column: str) -> bool:
        """Whether a text column is the key written another way (`district name` "Westfield" beside
        the key `municipa` "WESTFIELD"): looking one up by the other asks for the same name."""
        if not self.key or column not in self.text_columns or self.key not in self.text_columns:
            return False
        def norm(v: Any) -> str:
            return re.sub(r"[\W_]+", "", str(v)).casefold() if v is not None else ""
        same = sum(norm(a) == norm(b) != "" for a, b in zip(self.frame[column].tolist(), self.frame[self.key].tolist()))
        return same >= 0.5 * self.n_rows

    def holds_years(self, column: str) -> bool:
        v = self.frame[column]
        if v.dtype.kind not in "if":
            return False
        x = v.astype(np.float64)
        return bool(np.all(x == np.round(x)) and x.min() >= 1000 and x.max() <= 2200)

    def _weights(self) -> tuple[str | None, tuple[str, ...]]:
        """A frequency table's count column ("Freq", "cases", "n"), and the count columns that are
        its levels: every other column groups, so each row stands for that many cases. Beside a
        `count` (words used once, twice, ...) the `Freq` is the weight and the `count` a level."""
        counts = [c for c in self.usable if self.role.get(c) == sem.COUNT and WEIGHT_NAME.match(c)]
        levels: list[str] = []
        if len(counts) == 1 and FREQUENCY_NAME.match(counts[0]):  # Jevons' beans: how often each `actual` count was seen
            levels = [c for c in self.usable if c != counts[0] and self.role.get(c) in sem.QUANTITIES and self.is_int(c)]
        if len(counts) > 1:
            named = [c for c in counts if FREQUENCY_NAME.match(c)]
            if len(named) != 1:
                return None, ()
            levels = [c for c in counts if c != named[0] and self.is_int(c)]
            counts = named if len(levels) == len(counts) - 1 else []
        others = [c for c in self.usable if c not in counts and c not in levels]
        if len(counts) == 1 and (others or levels) and all(self.role.get(c) in (*sem.GROUPINGS, sem.NAME, sem.TIME)
                                                           for c in others):
            return counts[0], tuple(levels)
        return None, ()

    def _cell_counts(self) -> frozenset[str]:
        """Columns that count the cases in a cell of a cross-classification, which are only ever
        added up: a frequency table's weight; every count of a table whose other columns all group
        its rows (esoph's `ncases` and `ncontrols` by age, alcohol and tobacco); and a count of
        successes beside the count of trials it is out of (menarche's `Menarche` of `Total`)."""
        if self.weights:
            return frozenset({self.weights})
        counts = [c for c in self.usable if self.role.get(c) == sem.COUNT]
        others = [c for c in self.usable if c not in counts]
        if counts and others and all(self.role.get(c) in sem.GROUPINGS for c in others):
            return frozenset(counts)
        out: set[str] = set()
        wholes = [c for c in self.usable if self.role.get(c) in sem.QUANTITIES and self.is_int(c)]
        for t in self.table.columns:  # the trials may be flagged a summary column ("Total"), still a count
            if not TRIALS_NAME.match(t) or t not in self.frame or self.frame[t].dtype.kind not in "iu":
                continue
            for y in wholes:
                if y != t and self.present(y).all() \
                        and np.all(self.frame[y] <= self.frame[t]) and np.any(self.frame[y] < self.frame[t]):
                    out |= {y, t}
        return frozenset(out)

    def _is_matrix(self) -> bool:
        """A correlation or distance matrix: rows named after the columns, or a square block of
        numbers equal to its transpose (psych's Chen, whose rows are "Social_functioning" for `soc`).
        Not data to ask about."""
        block = [c for c in self.table.columns if c in self.frame and self.frame[c].dtype.kind in "if"]
        if len(block) == self.n_rows >= 3:
            square = np.column_stack([self.frame[c].astype(np.float64) for c in block])
            if np.allclose(square, square.T, rtol=1e-6, atol=1e-9, equal_nan=True):
                return True
        if not self.key or self.key not in self.text_columns:
            return False
        names = {c.casefold() for c in self.table.columns}
        # "cov.general", "cor_picture": the matrix's columns may carry a common prefix
        names |= {re.sub(r"^[a-z]{1,5}[._]", "", n) for n in names}
        # a flattened cross-tabulation: "Certain.Winnipeg", "Certain.New Orleans" over rows named "Certain"
        names |= {part for n in names for part in re.split(r"[._/:]| - ", n) if part}
        return sum(str(k).casefold() in names for k in self.frame[self.key]) >= max(2, 0.6 * self.n_rows)

    def words(self, column: str, with_unit: bool = False) -> str:
        """What a column is called, for the vocabulary rules below: its header's words and its label
        ("UrbanPop per capita income" -> "Urban Pop per capita income")."""
        info = self.info.get(column)
        unit = f" {info.unit}" if with_unit and info else ""
        return f"{sem.snake(column)} {info.label if info else ''}{unit}".replace("_", " ")

    def additive(self, column: str) -> bool:
        """Whether parts of the column add up to a whole (counts, amounts), so that a total and a
        share of the total mean something: not rates, ratios, logs, indexes, averages or scores."""
        if self.role.get(column) == sem.COUNT:  # 4, 6 or 8 cylinders a car: their total counts the cars
            return len(set(self.frame[column][self.present(column)].tolist())) > 4
        words = self.words(column, with_unit=True)
        return self.role.get(column) == sem.MEASURE and bool(ADDITIVE.search(words)) and not NOT_ADDITIVE.search(words)

    def counts_units(self, column: str) -> bool:
        """Whether the column counts what an amount is shared by (people, area, units), so that
        "income per person" is a per-unit figure and "population per birth" is not."""
        return bool(PER_UNIT.search(self.words(column)))

    @cached_property
    def additive_numeric(self) -> np.ndarray:
        """`additive` for each numeric column, in `numeric`'s order."""
        return np.array([self.additive(c) for c in self.numeric], dtype=bool)

    @cached_property
    def blocks(self) -> list[str]:
        """Columns that could pair or block rows: ids, nuisance factors, codes and categories with
        more than two levels (each level of a block appearing in every group means paired data)."""
        out = []
        for c in self.table.columns:
            role = self.role.get(c)
            if role in (sem.IDENTIFIER, sem.CODE, sem.CATEGORY, sem.NAME) or NUISANCE.match(c):
                distinct = len(set(v for v in self.frame[c].tolist() if v is not None))
                if 2 < distinct < self.n_rows:
                    out.append(c)
        return out

    def _model_output(self, column: str) -> bool:
        """A residual, a fitted value, a confidence bound or a model weight: output of someone's
        analysis, not a measurement of the things in the table."""
        return bool(MODEL_OUTPUT.search(self.words(column)))

    def _without_duplicate_groupings(self, columns: list[str]) -> list[str]:
        """One grouping per partition of the rows: `SexMale` 0/1 beside `Sex` F/M says it again,
        and a person says "women", not "SexMale is 0". Words win over codes."""
        kept: list[str] = []
        seen: set[tuple] = set()
        for c in sorted(columns, key=lambda c: (self.role.get(c) != sem.CATEGORY, columns.index(c))):
            labels: dict[Any, int] = {}
            signature = tuple(labels.setdefault(v, len(labels)) for v in self.frame[c].tolist())
            if signature not in seen:
                seen.add(signature)
                kept.append(c)
        return [c for c in columns if c in kept]

    @cached_property
    def balanced(self) -> frozenset[str]:
        """Groupings whose levels all hold the same number of rows: a design's layout, where
        "how many rows have Tree 1" counts the design, not the data."""
        return frozenset(c for c in self.categorical if len({n for _, n in self.categories(c)}) == 1)

    @cached_property
    def related(self) -> np.ndarray:
        """(numeric x numeric): True where one column is a function of the other (`awake` = 24 -
        `sleep_total`, `lrd` = ln(`rd`), hours and minutes of one runtime, a product or a difference
        of two columns and each of them), so that filtering one
        and asking about the other, or correlating them, restates a definition."""
        import pandas as pd

        n = len(self.numeric)
        stems = np.array([_stem(c) for c in self.numeric], dtype=object)
        out = (stems[:, None] == stems[None, :]) & np.array([len(s) >= 2 for s in stems])[:, None]
        out |= np.array([[adjusted_from(a, b) for b in self.numeric] for a in self.numeric], dtype=bool).reshape(n, n)
        if n > 1:  # Spearman over the rows where both are present (pandas' pairwise rank correlation)
            rho = pd.DataFrame(self.matrix).corr(method="spearman", min_periods=5).to_numpy()
            out |= np.abs(np.nan_to_num(rho)) >= 0.98
        index = {c: j for j, c in enumerate(self.numeric)}
        for c, j in index.items():  # `AltLat` = `Altitude` x `Lateral`: computed from its inputs (curation.arithmetic)
            for source in self.info[c].inputs if c in self.info else ():
                if source in index:
                    out[j, index[source]] = out[index[source], j] = True
        np.fill_diagonal(out, True)
        return out

    def same_variable(self, x: str, y: str) -> bool:
        """Whether two columns hold one variable (`Area` and `logArea`): "Area above 100 and
        logArea below 5" is one condition said twice."""
        if x == y:
            return True
        if x in self.numeric and y in self.numeric:
            return bool(self.related[self.numeric.index(x), self.numeric.index(y)])
        return False

    def crossed_by_design(self, x: str, y: str) -> bool:
        """Whether every combination of two groupings occurs equally often (Source x Site, 12 rows
        each): the layout of an experiment, independent by construction."""
        both = self.present(x) & self.present(y)
        pairs: dict[tuple, int] = {}
        for u, v in zip(self.frame[x][both].tolist(), self.frame[y][both].tolist()):
            pairs[(u, v)] = pairs.get((u, v), 0) + 1
        levels = len({u for u, _ in pairs}) * len({v for _, v in pairs})
        return len(pairs) == levels and len(set(pairs.values())) == 1

    def bins(self, by: str, column: str) -> bool:
        """Whether the grouping is the measure cut into bands: three or more levels whose ranges of
        the measure do not overlap (wine's `rating` 1 for a `response` of 12-19, 2 for 20-39, ...),
        so that any comparison of the measure between its levels is decided in advance."""
        cache = self.__dict__.setdefault("_binned", {})
        if (by, column) not in cache:
            cache[by, column] = self._bins(by, column)
        return cache[by, column]

    def _bins(self, by: str, column: str) -> bool:
        keep = self.present(by) & self.present(column)
        if column not in self.numeric or keep.sum() < 6:
            return False
        ranges: dict[Any, list[float]] = {}
        for g, x in zip(self.frame[by][keep].tolist(), self.frame[column][keep].astype(np.float64).tolist()):
            low_high = ranges.setdefault(g, [x, x])
            low_high[0], low_high[1] = min(low_high[0], x), max(low_high[1], x)
        if len(ranges) < 3:
            return False
        ordered = sorted(ranges.values())
        return all(a[1] < b[0] for a, b in zip(ordered, ordered[1:]))

    def censoring(self, column: str) -> bool:
        """Whether a two-level column says whether a survival time ended in the event or was
        censored (`cens`, `status`, `delta`: "infection indicator")."""
        if column not in self.categorical or len(self.categories(column)) != 2:
            return False
        info = self.info.get(column)
        return bool(CENSORING_NAME.match(column) or (info and CENSORING_LABEL.search(f"{info.label} {info.description}")))

    def duration(self, column: str) -> bool:
        """Whether a measure is a length of time (survival, follow-up, stay)."""
        return bool(DURATION.search(self.words(column, with_unit=True)))

    @cached_property
    def time_series(self) -> bool:
        """Whether the rows are successive periods: a column of years or dates orders them, or the
        caption spans as many years as there are rows, quarters or months (USGasG, 1960-1995)."""
        if self.time or (self.key and (self.key in self.date_columns or self.holds_years(self.key))):
            return True
        m = YEAR_SPAN.search(f"{self.table.name} {self.table.caption}")
        if m:
            years = int(m.group(2)) - int(m.group(1)) + 1
            return years > 2 and self.n_rows in (years, 4 * years, 12 * years)
        return False

    def trending(self, column: str) -> bool:
        """Whether a time series' column moves with time (a price index from 1960 to 1995): its
        values are no sample from one distribution, so a normality test of them says nothing, and
        an outlier fence cuts off the real end of the climb, not only planted values."""
        if not self.time_series:
            return False
        x = self.frame[column].astype(np.float64)
        keep = np.isfinite(x)
        if keep.sum() < 8:  # five points are no series to speak of
            return False
        order = self._when()
        rho = np.corrcoef(average_ranks(x[keep]), average_ranks(order[keep]))[0, 1]
        return bool(np.isfinite(rho) and abs(rho) >= 0.7)

    def _when(self) -> np.ndarray:
        """Each row's place in time: its year or date, whatever order the rows are in, else its position."""
        column = self.time or self.key
        if column and column in self.date_columns:
            return np.asarray(self.frame[column]).astype("datetime64[s]").astype(np.float64)
        if column and (column == self.time or self.holds_years(column)):
            return self.frame[column].astype(np.float64)
        return np.arange(self.n_rows, dtype=np.float64)

    def exclusive_flags(self, x: str, y: str) -> bool:
        """Whether two 0/1 flags are never 1 together (`west` and `south`: dummies of one region),
        so that their "relation" is the partition they were made from."""
        if self.role.get(x) != sem.FLAG or self.role.get(y) != sem.FLAG:
            return False
        both = self.present(x) & self.present(y)
        a, b = (np.asarray([bool(v) for v in self.frame[c][both].tolist()]) for c in (x, y))
        return bool(a.any() and b.any() and not (a & b).any())

    def nested(self, x: str, y: str) -> bool:
        """Whether each level of `x` lies within one level of `y` (sites within regions)."""
        both = self.present(x) & self.present(y)
        within: dict[Any, set] = {}
        for u, v in zip(self.frame[x][both].tolist(), self.frame[y][both].tolist()):
            within.setdefault(u, set()).add(v)
        return len(within) > len({v for vs in within.values() for v in vs}) and all(len(v) == 1 for v in within.values())

    def relative(self, column: str) -> bool:
        """Whether the column is a rate, ratio, index or share, whose compound growth means nothing."""
        return bool(RELATIVE.search(self.words(column)))

    def positive(self, column: str) -> bool:
        """Whether every value is above zero, so that a ratio or a percentage change of it means
        something (not for a signed index averaging 0.025)."""
        x = self.frame[column][self.present(column)].astype(np.float64)
        return bool(len(x) and np.all(x > 0))

    @cached_property
    def entity(self) -> str:
        """What one row is, in a word a question can use: "county", "year", "car model". From the
        key's label ("county", read from the documentation) or its header."""
        if not self.key:
            return "observation"  # what R's documentation calls a row: "a data frame with 252 observations"
        info = self.info.get(self.key)
        if info is not None and re.fullmatch(r"[A-Za-z][A-Za-z -]*", info.label) and len(info.label.split()) <= 2 \
                and not re.search(r"\b(of|and|or)\b", info.label):
            return info.label  # "county", not "address of houses" or "Make and Model"
        if self.holds_years(self.key):
            return "year"
        if self.key.casefold() in ("name", "row label") or not sem.says_itself(self.key):
            return "entry"  # "Which name has ...", "Which iso2cs have ...": no noun is better than a wrong one
        words = sem.snake(self.key).replace("_", " ").replace(".", " ").strip()
        words = re.sub(r"(?<=\w) (full|name|names|label)$", "", words, flags=re.I)  # "baker_full": a baker
        return words if words.isupper() and len(words) <= 4 else words.lower()

    @cached_property
    def entities(self) -> str:
        return plural(self.entity)

    def nameable(self, column: str) -> bool:
        """Whether a question can name the column so a reader knows what it is: it has a label
        from documentation, its header is made of English words or common abbreviations
        ("UrbanPop", "life_exp", "GDP"), or it is a path of a spreadsheet's header. "X3", "e143",
        "cunem", "pNA.nwound.us" and "(mmol / l).1" are not asked about."""
        info = self.info.get(column)
        if info is not None and info.label:
            return True
        if UNIT_ONLY.match(column):  # before paths: "(mmol / l)" holds the separator
            return False
        if PATH_SEPARATOR in column or self.table.is_hierarchical:
            return True
        return column.strip().casefold() not in SAYS_NOTHING and sem.says_itself(column.strip())

    @cached_property
    def keyed(self) -> frozenset[str]:
        """The columns the table's column key lets a question name by their label alone."""
        return column_key.keyed_columns(self.info.values(), self.table.columns)

    def label(self, column: str) -> str:
        """How a question names a column: its documented label ("per capita crime rate", which the
        table's column key ties to `crim`), with the header beside it where the key cannot tell it
        apart ("population (`pop_2018`)"), or the header alone when nothing says more."""
        cache = self.__dict__.setdefault("_labels", {})
        if column not in cache:
            cache[column] = self._label(column)
        return cache[column]

    def _label(self, column: str) -> str:
        info = self.info.get(column)
        if (info is None or not info.label) and column == self.weights:
            return f"number of cases (`{column}`)"  # a frequency table's weight: "the total Freq" says nothing
        if info is None or not info.label:
            return column
        if re.search(rf"(?<![\w`]){re.escape(column)}(?![\w`])", info.label, re.I) \
                and not any(c != column and column.casefold() in c.casefold() for c in self.table.columns):
            return info.label  # "fentanyl pain medication (micrograms)" already names `fentanyl` (not beside `inflation2`)
        if column in self.keyed:
            return info.label  # the model finds `crim` in the column key
        return f"{info.label} (`{column}`)"

    def the(self, column: str) -> str:
        """The column as the subject of "What is ... of X?": "the per capita crime rate (`crim`)",
        or "the value of eggs" for a bare header, which "the eggs of 1958" would misuse."""
        info = self.info.get(column)
        return f"the {self.label(column)}" if info is not None and info.label else f"the value of {column}"

    def ratio_scale(self, column: str) -> bool:
        """Whether the column has a true zero, so that its coefficient of variation or a ratio of
        two of its values means something: positive amounts, not temperatures, logs or coordinates,
        nor the minutes of a time whose hours another column holds (`length_min`)."""
        split = sum(_stem(c) == _stem(column) for c in self.numeric) > 1
        return self.positive(column) and not INTERVAL.search(self.words(column, with_unit=True)) \
            and not self.holds_years(column) and not split

    def _set_by_design(self, column: str) -> bool:
        """Whether a few-valued number is fixed by a grouping (strep_tb's dose: 0 g for every control
        patient, 2 g for every treated one): it says which group a row is in, so a mean, a test or a
        correlation of it measures the design, not the subjects."""
        values = self.frame[column]
        keep = self.present(column)
        if len(set(values[keep].tolist())) > 4:
            return False
        for by in self.categorical:
            fixed: dict[Any, Any] = {}
            levels = self.frame[by]
            rows = keep & self.present(by)
            if rows.sum() < 3 * len(set(levels[rows].tolist())):
                continue
            if all(fixed.setdefault(g, v) == v for g, v in zip(levels[rows].tolist(), values[rows].tolist())):
                return True
        return False

    @cached_property
    def cell_counts(self) -> np.ndarray:
        """`numeric`'s order: True for a frequency table's count column, which is only ever added up."""
        return np.array([c in self.counts_cells for c in self.numeric], dtype=bool)

    @cached_property
    def subject_level(self) -> frozenset[str]:
        """Measures that hold one value per subject, repeated on each of its rows (a patient's
        frailty on both of its kidney rows, a family's number of children on each child's row): an
        average or a skewness over the rows counts each subject as often as it has rows, so only
        their extremes are asked."""
        out: set[str] = set()
        for ids in self.blocks:  # patients, families, quakes: any column that several rows share a value of
            if ids not in self.frame:
                continue
            subjects = self.frame[ids].tolist()
            if len(set(subjects)) >= 0.9 * self.n_rows or None in subjects:
                continue
            for c in self.numeric:
                seen: dict[Any, Any] = {}
                if all(seen.setdefault(k, v) == v or (v != v and seen[k] != seen[k])
                       for k, v in zip(subjects, self.frame[c].tolist())):
                    out.add(c)
        return frozenset(out)

    def aggregates(self, column: str, options: Iterable[str]) -> list[str]:
        """The options that mean something for the column: a total only of amounts, and of a
        frequency table's counts nothing but their total (not the median of `Freq`); of a value
        repeated on each of a subject's rows, only its extremes."""
        if column in self.counts_cells:
            return ["sum"]
        if column in self.subject_level:
            return [a for a in options if a in ORDER_STATISTICS]
        return [a for a in options if a != "sum" or self.additive(column)]

    @cached_property
    def parts_of_a_whole(self) -> bool:
        """Whether the rows split one whole between them (states of a country, parties of a vote),
        so that a row's share of a column's total means something; a sample of houses does not."""
        return bool(PARTS.search(self.entity))

    def shown(self, column: str, value: Any) -> str:
        """A value of a code with what it stands for: "1 (manual)"."""
        meaning = self.meaning(column, value)
        return f"{show(value)} ({meaning})" if meaning else show(value)

    def meaning(self, column: str, value: Any) -> str:
        """What a code's value stands for: its documented meaning, else "male" for a sex of "m",
        and "yes" or "no" for a 0/1 flag ("TrumpWin is 0 (no)")."""
        return sem.value_meaning(self.info.get(column), value)

    def _find_time(self) -> str | None:
        for c in self.usable:
            v = self.frame[c]
            if TIME_NAME.match(c) and v.dtype.kind in "if" and self._unique(c) and self.n_rows >= 3:
                x = v.astype(np.float64)
                if np.all(x == np.round(x)) and x.min() >= 1000 and x.max() <= 2200:
                    return c
        return None

    def row_name(self, key: Any) -> str:
        """A row as a question names it: "Mazda RX4", or "the year 1975" for a key of years."""
        if self.role.get(self.key or "") == sem.NAME:
            return str(key)
        if self.key and self.holds_years(self.key):
            return f"the year {show(key)}"
        return f"the {self.key} {show(key)}"

    def _is_measure(self, column: str) -> bool:
        v = self.frame[column]
        if v.dtype.kind not in "if" or column in (self.key, self.time):
            return False
        if v.dtype.kind == "f" and np.isinf(v).any():
            return False
        x = v[self.present(column)].astype(np.float64)
        return not (len(x) < 2 or np.all(x == x[0]) or np.abs(x).max() >= MAX_EXACT)

    def _is_categorical(self, column: str) -> bool:
        if column in self.date_columns:
            return False
        v = self.frame[column]
        present = self.present(column)
        if present.sum() < 4 or v.dtype.kind == "f":
            return False
        if v.dtype == object and not all(isinstance(x, str) for x in v[present]):
            return False
        if v.dtype == object and any(", " in x for x in v[present]):
            return False  # "T3a, T3b": a list in a cell, where "is T3a" would read as "includes T3a"
        distinct = len(set(v[present].tolist()))
        return 2 <= distinct <= min(MAX_CATEGORIES, present.sum() // 2)

    # -- values -------------------------------------------------------------------------
    @cached_property
    def matrix(self) -> np.ndarray:
        """The numeric columns as one float matrix (rows x columns), NaN where missing."""
        if not self.numeric:
            return np.zeros((self.n_rows, 0))
        return np.column_stack([self.frame[c].astype(np.float64) for c in self.numeric])

    def is_int(self, column: str) -> bool:
        return self.frame[column].dtype.kind == "i"

    @cached_property
    def rows_are_measures(self) -> bool:
        """Whether the rows name measures, not cases ("irrigated land per capita", "index of
        agricultural production", "arable land as % of total land area"): the table's variables
        written as rows, so the values down a column are unlike figures, no sample of anything."""
        labels = [v for v in self.frame[self.key].tolist() if isinstance(v, str)] if self.key else []
        return len(labels) >= 2 and 2 * sum(bool(MEASURE_LABEL.search(v)) for v in labels) >= len(labels)

    def not_a_sample(self, column: str) -> str:
        """Why a column's values are no sample whose shape (skewness, kurtosis, normality) means
        something, or "": places (ranks 1, 2, 7, 7, 7 are positions), a handful of values (six
        experimental conditions), rows that are different measures."""
        if self.numbers_places(column):
            return "places_are_no_sample"
        values = self.frame[column].astype(np.float64)
        if len(np.unique(values[np.isfinite(values)])) < MIN_DISTINCT_FOR_A_SHAPE:
            return "too_few_distinct_values"
        if self.rows_are_measures:
            return "rows_are_measures"
        return ""

    def numbers_places(self, name: str) -> bool:
        """Whether a question's column (a header here, or a tree question's column label) numbers
        places: rank, position, standing."""
        cache = self.__dict__.setdefault("_places", {})
        if name not in cache:
            info = self.info.get(name)
            names = [sem.snake(name).replace("_", " "), info.label if info else ""] if name in self.frame else [name]
            cache[name] = any(PLACE_NAME.search(n) for n in names if n) and (
                name not in self.frame or self.frame[name].dtype.kind in "if")
        return cache[name]

    def cell(self, row: int, column: str) -> Any:
        cache = self.__dict__.setdefault("_plain_columns", {})
        values = cache.get(column)
        if values is None:
            array = self.frame[column]
            values = array.tolist()  # Python ints, floats and strings already
            if array.dtype.kind == "f":
                values = [None if v != v else v for v in values]
            cache[column] = values
        return values[row]

    @cached_property
    def keys(self) -> list[Any]:
        return [plain(v) for v in self.frame[self.key]] if self.key else []

    def categories(self, column: str) -> list[tuple[Any, int]]:
        """(value, count) for each value of a categorical column, most frequent first, then by value."""
        cache = self.__dict__.setdefault("_category_counts", {})
        if column not in cache:
            cache[column] = self._categories(column)
        return cache[column]

    def _categories(self, column: str) -> list[tuple[Any, int]]:
        v = self.frame[column][self.present(column)].tolist()
        counts: dict[Any, int] = {}
        for x in v:
            counts[x] = counts.get(x, 0) + 1
        return sorted(counts.items(), key=lambda kv: (-kv[1], str(kv[0])))

    # -- conditions ---------------------------------------------------------------------
    @staticmethod
    def _threshold(ordered: np.ndarray, q: float) -> Any:
        """The roundest number near the `q` quantile that still splits the column, as a person
        would write it: 1,300,000 not 1309570, -4 not -4.01, 6 not 5.99. The fewest significant
        figures (1, then 2, then 3) that leave between 15% and 85% of the values above."""
        target = plain(ordered[int(q * (len(ordered) - 1))])
        n = len(ordered)
        for digits in (1, 2, SIGNIFICANT):
            threshold = rounded(target, digits)
            above = n - int(np.searchsorted(ordered, threshold, side="right"))
            if 0.15 * n <= above <= 0.85 * n:
                return threshold
        return rounded(target, SIGNIFICANT)

    def mask(self, column: str, op: str, value: Any) -> np.ndarray:
        """The rows where `column op value` holds: the chain interpreter's own test, so a
        condition means the same in generation and in a re-run chain."""
        return self.present(column) & condition_mask(self.frame, column, op, value)

    def condition(self, column: str, op: str, value: Any) -> Condition:
        """`column op value` with its rows, named as questions name it ("transmission (`am`) is 1 (manual)")."""
        meaning = self.meaning(column, value) if op == "==" else ""
        return Condition(column, op, value, self.mask(column, op, value), self.label(column), meaning)

    def group_problem(self, column: str, by: str, groups: list[Any], rows: np.ndarray | None = None) -> str | None:
        """Why comparing `column` between two groups of `by` would say nothing, or None: the same
        values in both (t = 0, p = 1 by design), or one value throughout a group (10.0 km for
        every 10000 m race: the grouping decides the test)."""
        if any(self.crossed_by_design(by, other) for other in self.blocks if other != by):
            return "paired_or_blocked"  # every subject (or block) in both groups: an unpaired test ignores it
        if column in self.subject_level:
            return "one_value_per_subject"  # a patient's age on each of its rows: counted once per row
        if self.bins(by, column):
            return "grouping_bins_the_measure"  # wine's rating is its bitterness score in bands
        if self.censoring(by) and self.duration(column):
            return "censoring_splits_follow_up"  # censored times are when follow-up ended, not when the event came
        keep = self.present(column) if rows is None else rows & self.present(column)
        a, b = (np.sort(self.frame[column][keep & self.mask(by, "==", g)]) for g in groups)
        shares_a, shares_b = _shares(a), _shares(b)
        if shares_a == shares_b:  # the same values in the same proportions: a schedule, not a result
            return "groups_identical"
        # the same days sampled in both varieties, a plot or two missing: a schedule all the same
        if len(shares_a) >= 3 and set(shares_a) == set(shares_b) and max(
                abs(shares_a[v] - shares_b[v]) for v in shares_a) <= SCHEDULE_TOLERANCE:
            return "groups_identical"
        if len(np.unique(a)) < 2 or len(np.unique(b)) < 2:
            return "constant_within_a_group"
        return None

    def conditions(self, rng: np.random.Generator, limit: int) -> list[Condition]:
        """Single-column conditions that keep some rows but not all, chosen at random."""
        out: list[Condition] = []
        for c in self.categorical:
            values = [(v, n) for v, n in self.categories(c) if n < self.n_rows]
            for value, _ in values[:6]:
                out.append(self.condition(c, "==", value))
        for c in self.numeric:
            ordered = np.sort(self.frame[c][self.present(c)])
            for q in (0.25, 0.5, 0.75):
                threshold = self._threshold(ordered, q)
                for op in (">", "<"):
                    cond = self.condition(c, op, threshold)
                    if 0 < cond.mask.sum() < self.n_rows:
                        out.append(cond)
        unique: dict[tuple, Condition] = {}
        for cond in out:
            unique.setdefault((cond.column, cond.op, cond.value), cond)
        out = list(unique.values())
        if len(out) > limit:
            out = [out[i] for i in sorted(rng.choice(len(out), size=limit, replace=False))]
        return out
