"""SQL synthesis over one database: bind templates to join paths, execute, validate, keep.

For each template and each oriented join path, a generator seeded by the database, the template
and the path (so results never depend on order) binds the slots to columns of the right roles
and draws values from the joined data. Queries are built by substituting into the parsed
skeleton, so identifiers and values are never pasted into SQL text. A candidate is kept only if
it survives every check, and each rejection is counted by its reason:

- `no_values`: too few distinct values to draw from;
- `duplicate`: the same query (template, path, columns, values) was already tried;
- `same_question`: a kept query on the same tables already reads the same (a slot that the
  question does not name, bound to another column, would make one text ask two things);
- `error`: the database refused the query;
- `empty`: no rows, a NULL aggregate or a count of zero;
- `null_answer`: the answer contains a missing value;
- `too_large`: a list longer than `max_list`;
- `ties`: one answer asked, but the top of the ORDER BY is tied or several values match;
- `join_adds_nothing`: dropping an end table of the path leaves the answer unchanged;
- `counts_rows_twice`: a SUM, AVG or COUNT over a table whose rows the join repeats (a state's
  value summed once per murder record), or a grouping over a one-to-one join (groups of one);
- `fixed_by_construction`: a count of the rows that one named row reaches through many-to-one
  steps only ("how many catalogues hold the entry "51 kr"?" is 1 whatever the data);
- `dialects_disagree`: the SQLite translation, run by SQLite, gives another answer;
- `same_count_everywhere`: a count of one named row's rows where every row has as many ("how many
  years belong to the country "SLE"?": 12 for every country);
- `names_a_partner`: a row named (a label) on a table joined one to one to another: the row named on one
  side is the row on the other ("which `sowc_maternal_newborn` row is linked to the `sowc_child_mortality`
  row "Togo"?");
- `counts_partners`: a count of one table's rows joined one to one to another's, which counts the same
  things in database words ("how many `sowc_child_mortality` rows belong to a `sowc_demographics` row ...");
- `parent_attribute`: a question contrasting a parent's children by a child column that is constant
  within each parent ("countries with years, but none with continent Europe").

When two tables are joined by more than one key (flights' origin and dest both name an airport),
the question says which, by the role the key's column names ("the flights whose origin airport ..."),
or where the column has no words, in parentheses ("... (flights are linked to airports by their `dest`)?").
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from curate.curation.answers import answers_match, format_answer, plain
from curate.curation.pipeline.rng import record_rng
from curate.curation.semantics import NAME, QUANTITIES, opaque_code, says_itself
from curate.generators.sql.personal import personal_columns
from curate.generators.sql.render import english_schema, label, natural_name, quoted, render, table_noun
from curate.generators.sql.roles import column_roles, is_code, is_month, life_detail, summable
from curate.generators.sql.schema import PAIRED_SHARE, SchemaGraph, siblings
from curate.generators.sql.templates import ALIASES, SqlTemplate
from curate.generators.sql.wording import QuestionWording

if TYPE_CHECKING:  # pragma: no cover
    import pyarrow as pa

    from curate.curation.database import Database
    from curate.curation.table import Table

REJECTIONS = ("no_values", "duplicate", "same_question", "error", "empty", "null_answer", "too_large", "ties",
              "join_adds_nothing", "counts_rows_twice", "fixed_by_construction", "dialects_disagree",
              "parent_attribute", "counts_partners", "same_count_everywhere", "names_a_partner")
NUMBER_FORMAT = "round:4"
MAX_VALUES = 5000  # distinct values fetched per column to draw from
_ONE_IN_N = re.compile(r"\(1 in [A-Z]\)")  # "Lifetime risk of maternal death (1 in X)"
# a threshold is drawn among at least this many values: "airports with a latitude of more than 40.7" among
# three names one airport by a number nobody would pick
MIN_THRESHOLD_VALUES = 5
MIN_DISTINCT_COUNTED = 3  # a category whose different values a question counts has at least this many
MIN_GROUPS = 3  # parents with two children or more that must agree before a child column is read as the parent's
DEFAULTS: dict[str, Any] = {
    "seed": 0, "templates": [], "exclude": [],
    "per_path": 2,  # queries kept per template and oriented join path
    "attempts": 4,  # candidates tried per template and path
    "max_list": 20,  # longest list answer
    "sqlite_check_rows": 5_000,  # paths of up to this many rows are checked in SQLite too (else DuckDB only)
    "max_join_rows": 1_000_000,  # a path whose join is larger is skipped (flights x weather by airport)
    # oriented join paths tried per database (0: all), chosen by a content hash, 2- and 3-table paths in turn:
    # a database of many tables (Lahman's 22 give 73) then costs what a small one does
    "path_budget": 0,
    # a table of more cells is not serialized in a release ([release] max_serialized_cells, which a build
    # passes on): questions over it are released only as text-to-SQL and key selection, which need no contents
    "max_visible_cells": 50_000,
    # nor one longer than `curate evaluate` puts in a prompt (its max_table_chars): the model sees its first rows only
    "max_table_chars": 30_000,
}


@dataclass(frozen=True)
class Orientation:
    """A join path with its tables in template order (A, B[, C]) and, per edge, the columns
    on each side: `edges[0]` joins A and B, `edges[1]` joins B and C."""

    tables: tuple[str, ...]
    edges: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...]

    @property
    def key(self) -> str:
        return repr((self.tables, self.edges))


@dataclass
class SqlQuery:
    """One kept query, with everything the MMQA task samples need."""

    template: SqlTemplate
    orientation: Orientation
    columns: dict[str, str]
    values: dict[str, Any]
    duckdb: str
    sqlite: str
    answer: Any
    question: str
    short: str
    sqlite_checked: bool
    unnamed: str = ""  # the question with its tables unnamed (multi-table retrieval)


@dataclass
class Stats:
    candidates: int = 0
    kept: int = 0
    rejected: dict[str, int] = field(default_factory=dict)
    by_template: dict[str, int] = field(default_factory=dict)
    by_category: dict[str, int] = field(default_factory=dict)
    sqlite_checked: int = 0
    paths: int = 0
    paths_too_large: int = 0
    paths_over_budget: int = 0  # oriented join paths left untried by `path_budget`
    disagreements: list[dict[str, Any]] = field(default_factory=list)

    def reject(self, reason: str) -> None:
        self.rejected[reason] = self.rejected.get(reason, 0) + 1

    def as_dict(self) -> dict[str, Any]:
        return {"candidates": self.candidates, "kept": self.kept, "rejected": self.rejected,
                "by_template": self.by_template, "by_category": self.by_category,
                "sqlite_checked": self.sqlite_checked, "paths": self.paths, "paths_too_large": self.paths_too_large,
                "paths_over_budget": self.paths_over_budget,
                "disagreements": self.disagreements[:5]}


def settings(config: dict[str, Any]) -> dict[str, Any]:
    from curate.curation.config import with_defaults

    out = with_defaults("generate.sql", config, DEFAULTS)
    for name in ("seed", "per_path", "attempts", "max_list", "sqlite_check_rows", "max_join_rows", "path_budget",
                 "max_visible_cells", "max_table_chars"):
        if not isinstance(out[name], int) or isinstance(out[name], bool) or out[name] < 0:
            raise ValueError(f"[generate.sql] {name} must be a non-negative integer, got {out[name]!r}")
    return out


def orientations(graph: SchemaGraph) -> list[Orientation]:
    """Every join path in each direction a template can read it: a 2-table path as
    (referencing table, referenced table); a 3-table path from either end, unless it pairs two
    children through their shared parent (`schema.siblings`)."""
    def sides(key: Any, first: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
        return (key.columns, key.ref_columns) if key.table == first else (key.ref_columns, key.columns)

    out = []
    for tables, edges in graph.join_paths():
        if siblings(tables, edges):
            continue  # two children paired through their parent: a join nobody means
        if len(tables) == 2:
            key = edges[0].key
            out.append(Orientation((key.table, key.ref_table), ((key.columns, key.ref_columns),)))
        else:
            x, middle, z = tables
            first, second = edges[0].key, edges[1].key
            out.append(Orientation((x, middle, z), (sides(first, x), sides(second, middle))))
            out.append(Orientation((z, middle, x), (sides(second, z), sides(first, middle))))
    return out


def within_budget(paths: list[Orientation], budget: int, seed: int, database: str) -> list[Orientation]:
    """At most `budget` of the paths (0: all): each length's paths in content-hash order (seed,
    database, path), taken from the 2- and 3-table lists in turn, so neither length crowds out the
    other and the choice never depends on the order the paths were found in."""
    if not budget or len(paths) <= budget:
        return paths
    from curate.curation.pipeline.rng import record_seed

    by_length: dict[int, list[Orientation]] = {}
    for path in paths:
        by_length.setdefault(len(path.tables), []).append(path)
    queues = [sorted(group, key=lambda o: (record_seed(seed, database, o.key), o.key))
              for _, group in sorted(by_length.items())]
    chosen: list[Orientation] = []
    while len(chosen) < budget:
        for queue in queues:
            if queue and len(chosen) < budget:
                chosen.append(queue.pop(0))
    return chosen


def _literal(value: Any) -> Any:
    from sqlglot import exp

    if value is None:
        return exp.Null()
    if isinstance(value, bool):
        return exp.Boolean(this=value)
    if isinstance(value, int):
        return exp.Literal.number(value)
    if isinstance(value, float):  # an exponent makes DuckDB read a DOUBLE, not a DECIMAL
        text = repr(value)
        return exp.Literal.number(text if "e" in text else text + "e0")
    return exp.Literal.string(str(value))


def round_threshold(value: Any, pool: list[Any]) -> Any:
    """A threshold as a person sets one: the drawn value to 1, else 2, else 3 significant figures,
    the first that equals no value of the column and still leaves 20-80% of its distinct values
    above it ("more than 8000", not "more than 8382", Israel's population copied from one cell)."""
    numbers = [v for v in pool if isinstance(v, (int, float)) and not isinstance(v, bool)]
    if not numbers or isinstance(value, bool) or not isinstance(value, (int, float)) or value == 0:
        return value
    present = set(numbers)
    for significant in (1, 2, 3):
        t: Any = float(f"{value:.{significant}g}")
        if isinstance(value, int):
            t = int(t)
        above = sum(v > t for v in numbers)
        if t not in present and 0.2 * len(numbers) <= above <= 0.8 * len(numbers):
            return t
    return float(f"{value:.3g}") if isinstance(value, float) else value  # "above 0.455", not 0.4550069531760242


class Synthesizer(QuestionWording):
    """One database loaded in DuckDB, and its small tables in SQLite too; how its questions are worded is
    `wording.QuestionWording`'s."""

    def __init__(self, database: "Database", tables: dict[str, "Table"], config: dict[str, Any]) -> None:
        from curate.curation.programs import data_view
        from curate.curation.programs.sql import SqlRunner, sqlite_copy

        self.database = database
        self.settings = settings(config)
        self.views: dict[str, "pa.Table"] = {name: data_view(t) for name, t in tables.items()}
        self.runner = SqlRunner()  # loaded as `curate verify` loads them: the data views, by name
        self.runner.load(list(tables.values()), list(tables))
        self.con = self.runner.connection
        self.graph = SchemaGraph(database, self.views)
        keys: dict[str, set[str]] = {name: set() for name in self.views}
        for pk in self.graph.primary_keys:
            keys.get(pk.table, set()).update(pk.columns)
        for fk in self.graph.foreign_keys:
            keys.get(fk.table, set()).update(fk.columns)
            keys.get(fk.ref_table, set()).update(fk.ref_columns)
        self.infos = {name: {info.name: info for info in t.semantics} for name, t in tables.items()}
        # a key that is the row's name as people say it (a country's name) names a row, as a label does; a code
        # (an airport's "EWR") does not
        natural = {name: {c for c in keys[name] if getattr(self.infos[name].get(c), "role", "") == NAME
                          and not is_code(self.views[name].column(c))} for name in self.views}
        self.roles = {name: column_roles(view, keys[name] - natural[name]) for name, view in self.views.items()}
        for name in self.views:  # and only that: a name is never a category or a measure
            for role in ("num", "cat", "date"):
                self.roles[name][role] = [c for c in self.roles[name][role] if c not in natural[name]]
        self._keyed: dict[str, frozenset[str]] = {}  # per table: the columns its column key names (column_words)
        self._words: dict[tuple[str, str], str] = {}  # (table, column) -> how questions name it (column_words)
        for name, infos in self.infos.items():  # the clean stage's roles: an ICPSR state code is no measure
            # nor a risk written "1 in N", where "more than 2400" picks the countries of least risk
            self.roles[name]["num"] = [c for c in self.roles[name]["num"]
                                       if infos.get(c) is None or infos[c].role in ("", *QUANTITIES)
                                       and not _ONE_IN_N.search(infos[c].description)]
            # "with firm 1", "whose y is 0": a number standing for a category nobody names
            self.roles[name]["cat"] = [c for c in self.roles[name]["cat"]
                                       if not opaque_code(infos.get(c), self.views[name].column(c).unique().to_pylist())]
        for name, infos in self.infos.items():
            cats = self.roles[name]["cat"]
            # a count with few values (a postseason line's 0 to 5 doubles) is compared, never named: "more than 2
            # doubles", not "with doubles 3"
            counted = [c for c in cats if getattr(infos.get(c), "role", "") in QUANTITIES
                       and len(self.views[name].column(c).unique()) >= 3]
            self.roles[name]["num"] += counted
            # the month of a birth or a death, or where one died, is trivia, not a group anyone asks about ("born in June")
            self.roles[name]["cat"] = [c for c in cats if c not in counted and not life_detail(c, infos.get(c))]
        self.months = {(name, c) for name, view in self.views.items() for c in self.roles[name]["cat"]
                       if is_month(c, self.infos[name].get(c), view.column(c))}
        # personal data (passwords, hashes, e-mail, phone, login, national ids) is never a label, a filter or an answer
        self.personal = {name: personal_columns(view) for name, view in self.views.items()}
        for name, found in self.personal.items():
            for role, columns in self.roles[name].items():
                self.roles[name][role] = [c for c in columns if c not in found]
        self.english = english_schema([*self.views, *(c for v in self.views.values() for c in v.column_names)])
        primary = {pk.table: pk.columns for pk in self.graph.primary_keys}
        self.names = {name: natural_name(name, t.caption) for name, t in tables.items()}
        # how a table without a noun is said: its name as words in an English schema ("child rows"), else its identifier
        # (a natural name the source gives, tables.json's "singer in concert", wins)
        self.said = {name: (self.names[name] if self.names[name] != label(name)
                            else label(name) if self.english and says_itself(name) else quoted(name))
                     for name in self.views}
        self.nouns = {name: table_noun(name, primary.get(name, ()), self.infos[name],
                                       self.names[name] if self.names[name] != label(name) else "")
                      for name in self.views}
        # an English question names its columns in words: "`under5_reduction`" pasted in one is not; where the column
        # keys say what some columns stand for, a column they leave out is an unlabelled code (stevedata's `lemprac`)
        documented = any(self.keyed(name, c) for name, view in self.views.items() for c in view.column_names)
        for name in self.views:
            for role, columns in self.roles[name].items():
                self.roles[name][role] = [c for c in columns if not self.column_words(name, c).startswith("`") or not (
                    self.english or documented and not self.keyed(name, c))]
        small = {n: v for n, v in self.views.items() if v.num_rows <= self.settings["sqlite_check_rows"]}
        self.sqlite = sqlite_copy(small, indexes=keys) if small else None
        self._values: dict[tuple, list[Any]] = {}
        self._facts: dict[tuple, Any] = {}  # what one path or column always answers (counts, joined columns), once
        self._joins: dict[tuple, Any] = {}
        self._unique: dict[tuple[str, tuple[str, ...]], bool] = {}
        self._constant: dict[tuple[str, tuple[str, ...], str], bool] = {}
        self._loosened: dict[tuple, Any] = {}  # a loosened query's answer by what it reads: the attempts of one path share it
        self.keys_between: dict[frozenset[str], int] = {}  # how many keys join each pair of tables
        for edge in self.graph.edges:
            pair = frozenset(edge.tables)
            self.keys_between[pair] = self.keys_between.get(pair, 0) + 1

    def close(self) -> None:
        self.runner.close()
        if self.sqlite is not None:
            self.sqlite.close()

    # ------------------------------------------------------------------ join shape

    def distinct_values(self, table: str, column: str) -> int:
        """How many different values the column holds (once per column)."""
        key = ("distinct_values", table, column)
        if key not in self._facts:
            self._facts[key] = len(self.views[table].column(column).unique())
        return self._facts[key]

    def unique(self, table: str, columns: tuple[str, ...]) -> bool:
        """Do these columns hold each value once (no NULLs) in the table?"""
        key = (table, tuple(columns))
        if key not in self._unique:
            view = self.views[table].select(list(columns))
            self._unique[key] = (all(view.column(c).null_count == 0 for c in columns)
                                 and view.group_by(list(columns)).aggregate([]).num_rows == view.num_rows)
        return self._unique[key]

    def parent_attribute(self, template: SqlTemplate, orientation: Orientation, columns: dict[str, str]) -> bool:
        """Does a template that contrasts a parent's children bind a child column that is constant within
        each parent (gapminder's `continent` within a country): a property of the parent stored on every
        child? "How many countries have years, but none with continent Europe" then asks about the parent
        in database words, and "both ... and ..." is never true."""
        if ".parents_" not in template.id:
            return False
        for i, (left, right) in enumerate(orientation.edges):
            for many, keys, one, one_keys in ((orientation.tables[i], left, orientation.tables[i + 1], right),
                                              (orientation.tables[i + 1], right, orientation.tables[i], left)):
                if not self.unique(one, tuple(one_keys)) or self.unique(many, tuple(keys)):
                    continue
                letter = "ABC"[orientation.tables.index(many)]
                if any(slot[:1].upper() == letter and column not in keys and self.constant_within(many, tuple(keys), column)
                       for slot, column in columns.items()):
                    return True
        return False

    def one_to_one_letters(self, orientation: Orientation) -> set[str]:
        """The letters whose table is joined one to one to a neighbour on the path: their rows are the
        neighbour's very things (a country's demographics and its mortality)."""
        out: set[str] = set()
        for i in range(len(orientation.edges)):
            if self.paired(orientation, i):
                out |= {"ABC"[i], "ABC"[i + 1]}
        return out

    def paired(self, orientation: Orientation, index: int) -> bool:
        """Are the two tables of step `index` rows of the same things: the key unique on each side, and the
        smaller table holding PAIRED_SHARE of the larger's rows or more (a country's demographics and its
        mortality; not the postseason rounds a team season lost, unique only by chance)?"""
        (left, right), first, second = orientation.edges[index], orientation.tables[index], orientation.tables[index + 1]
        fewer, more = sorted((self.views[first].num_rows, self.views[second].num_rows))
        return self.unique(first, tuple(left)) and self.unique(second, tuple(right)) and fewer >= PAIRED_SHARE * more

    def constant_within(self, table: str, keys: tuple[str, ...], column: str) -> bool:
        """Is the column one value within each group of rows sharing `keys`, over at least
        MIN_GROUPS groups of two rows or more (groups of one prove nothing)?"""
        key = (table, keys, column)
        if key not in self._constant:
            groups = (self.views[table].select([*keys, column]).group_by(list(keys))
                      .aggregate([(column, "count_distinct"), (column, "count")]))
            several = [n >= 2 for n in groups.column(f"{column}_count").to_pylist()]
            self._constant[key] = (sum(several) >= MIN_GROUPS
                                   and max(groups.column(f"{column}_count_distinct").to_pylist(), default=0) <= 1)
        return self._constant[key]

    def rows_kept_once(self, orientation: Orientation, alias: str) -> bool:
        """Does each row of this alias's table appear at most once in the path's join? It does when
        every join step away from it reaches a unique key (many-to-one)."""
        k = "abc".index(alias)
        for i, (left, right) in enumerate(orientation.edges):
            if i >= k and not self.unique(orientation.tables[i + 1], right):
                return False
            if i < k and not self.unique(orientation.tables[i], left):
                return False
        return True

    def counts_rows_twice(self, template: SqlTemplate, orientation: Orientation) -> bool:
        """Would the template add up a row more than once, or group a one-to-one join?"""
        if any(not self.rows_kept_once(orientation, alias) for alias in template.aggregated):
            return True
        one_to_one = len(orientation.tables) == 2 and self.unique(orientation.tables[0], orientation.edges[0][0])
        return template.groups and one_to_one

    def shape_rejection(self, template: SqlTemplate, orientation: Orientation) -> str:
        """Why the template asks nothing on this path whatever the draw, or "": the first check, in order,
        that the path's shape fails."""
        checks = (("counts_rows_twice", self.counts_rows_twice), ("fixed_by_construction", self.fixed_by_construction),
                  ("same_count_everywhere", self.same_count_everywhere), ("counts_partners", self.counts_partners),
                  ("names_a_partner", self.names_a_partner))
        return next((reason for reason, fails in checks if fails(template, orientation)), "")

    def same_count_everywhere(self, template: SqlTemplate, orientation: Orientation) -> bool:
        """Does every row the question could name have as many rows of the counted table (gapminder's 12
        years per country)? "How many years belong to the country "SLE"?" then asks about the data's
        design, not about the row named."""
        if len(orientation.tables) != 2 or not template.pinned or template.counted in ("", template.pinned):
            return False
        side = "ab".index(template.counted)
        table, keys = orientation.tables[side], list(orientation.edges[0][side])
        cached = ("same_count", table, tuple(keys))
        if cached not in self._facts:
            counts = self.views[table].select(keys).group_by(keys).aggregate([(keys[0], "count")]).column(f"{keys[0]}_count")
            self._facts[cached] = len(counts) >= MIN_GROUPS and len(counts.unique()) == 1
        return self._facts[cached]

    def counts_partners(self, template: SqlTemplate, orientation: Orientation) -> bool:
        """Does a count of the first table's rows reach the second one to one, so that it counts the
        second table's own things in database words ("how many `sowc_child_mortality` rows belong to a
        `sowc_demographics` row whose ...": each row of both is a country)?"""
        return template.counted == "a" and self.paired(orientation, 0)

    def names_a_partner(self, template: SqlTemplate, orientation: Orientation) -> bool:
        """Does the template name a row (a label slot) of a table joined one to one to its neighbour? The
        row named on one side is the row on the other: "which `sowc_maternal_newborn` row is linked to the
        `sowc_child_mortality` row "Togo"?" is Togo, "the highest rate among the rows of Italy" Italy's."""
        same = self.one_to_one_letters(orientation)
        return any(slot.role == "label" and slot.alias.upper() in same for slot in template.slots.values())

    def fixed_by_construction(self, template: SqlTemplate, orientation: Orientation) -> bool:
        """Does the count reach its counted rows from the one named row through many-to-one steps
        only (each step arrives at a unique key), so that the answer is 1 whatever the data?"""
        if not template.counted or not template.pinned or template.counted == template.pinned:
            return False
        start, end = "abc".index(template.pinned), "abc".index(template.counted)
        step = 1 if end > start else -1
        for i in range(start, end, step):
            edge = min(i, i + step)
            arriving = orientation.tables[i + step]
            columns = orientation.edges[edge][1] if step == 1 else orientation.edges[edge][0]
            if not self.unique(arriving, columns):
                return False
        return True

    def step_key(self, orientation: Orientation, index: int) -> Any:
        """The key (a ForeignKey) that joins step `index` of the path (0: A-B, 1: B-C)."""
        left, right = orientation.edges[index]
        pair = {orientation.tables[index], orientation.tables[index + 1]}
        return next(e.key for e in self.graph.edges if set(e.tables) == pair
                    and {tuple(e.key.columns), tuple(e.key.ref_columns)} == {tuple(left), tuple(right)})

    def partial_reference(self, orientation: Orientation) -> bool:
        """Whether a step of the path is an inferred reference some of whose values are not in the
        table referenced (MplsStops' "Near - North", a neighbourhood MplsDemo lacks): "how many
        neighborhoods ..." then depends on which table's neighbourhoods the reader counts."""
        keys = (self.step_key(orientation, i) for i in range(len(orientation.edges)))
        return any(key.origin == "inferred" and "not found" in key.evidence for key in keys)

    # ------------------------------------------------------------------ binding

    def _join(self, orientation: Orientation, index: int) -> Any:
        """The condition of edge `index` (0: A-B, 1: B-C), casting a text key to its partner's type."""
        key = (orientation.key, index)
        if key not in self._joins:
            self._joins[key] = self._make_join(orientation, index)
        return self._joins[key]

    def _make_join(self, orientation: Orientation, index: int) -> Any:
        import pyarrow as pa
        from sqlglot import exp

        first, second = orientation.tables[index], orientation.tables[index + 1]
        left_alias, right_alias = "abc"[index], "abc"[index + 1]
        parts = []
        for left_col, right_col in zip(*orientation.edges[index]):
            left = exp.column(left_col, table=left_alias, quoted=True)
            right = exp.column(right_col, table=right_alias, quoted=True)
            left_type = self.views[first].schema.field(left_col).type
            right_type = self.views[second].schema.field(right_col).type
            if pa.types.is_string(left_type) and not pa.types.is_string(right_type):
                left = exp.TryCast(this=left, to=exp.DataType.build(_sql_type(right_type)))
            elif pa.types.is_string(right_type) and not pa.types.is_string(left_type):
                right = exp.TryCast(this=right, to=exp.DataType.build(_sql_type(left_type)))
            parts.append(exp.EQ(this=left, expression=right))
        return exp.and_(*parts)

    def _key_cast(self, orientation: Orientation, alias: str, name: str) -> str:
        """For a `key_ab`/`key_bc` slot whose column is text while its partner is not: the type to
        cast it to, so that IN compares like with like (Spider has TEXT keys referencing INTs)."""
        import pyarrow as pa

        if name not in ("key_ab", "key_bc"):
            return ""
        edge = 0 if name == "key_ab" else 1
        side = name[4:].index(alias)
        mine = orientation.tables[edge + side]
        theirs = orientation.tables[edge + 1 - side]
        column, partner = orientation.edges[edge][side][0], orientation.edges[edge][1 - side][0]
        kind, other = self.views[mine].schema.field(column).type, self.views[theirs].schema.field(partner).type
        return _sql_type(other) if pa.types.is_string(kind) and not pa.types.is_string(other) else ""

    def _bind(self, template: SqlTemplate, orientation: Orientation, rng: Any) -> dict[str, str] | None:
        """Slot -> column, or None when the path's tables lack columns of the roles asked for."""
        tables = dict(zip("abc", orientation.tables))
        columns: dict[str, str] = {}
        wanted: dict[tuple[str, str], list[str]] = {}
        for ref, slot in template.slots.items():
            if slot.role == "key":
                edge = 0 if slot.name == "key_ab" else 1
                side = orientation.edges[edge]["ab".index(slot.alias) if edge == 0 else "bc".index(slot.alias)]
                if len(side) != 1:
                    return None  # IN / NOT IN over a composite key
                columns[ref] = side[0]
            else:
                wanted.setdefault((slot.alias, slot.role), []).append(ref)
        for (alias, role), refs in sorted(wanted.items()):
            others = [set(self.views[t].column_names) for t in orientation.tables if t != tables[alias]]
            # a column another table of the join also has ("TDs" of two seasons, a school's "free"
            # copied on its students) would leave the question's reader to guess whose it is; the key
            # that joins them holds the same values on both sides ("the country "Belgium"")
            joined = self._joined_columns(orientation, tables[alias])
            choices = [c for c in self.roles[tables[alias]][role] if c in joined or not any(c in o for o in others)]
            if template.distinct.intersection(refs):  # "how many different league pennants": a Y/N flag has two
                choices = [c for c in choices if self.distinct_values(tables[alias], c) >= MIN_DISTINCT_COUNTED]
            if len(choices) < len(refs):
                return None
            for ref, pick in zip(sorted(refs), rng.choice(len(choices), size=len(refs), replace=False)):
                columns[ref] = choices[int(pick)]
        infos = self.infos
        if any(not summable(columns[ref], infos[tables[ref[0]]].get(columns[ref])) for ref in template.summed):
            return None  # SUM over a height or a rate: no total a reader asks for
        return columns

    def _joined_columns(self, orientation: Orientation, table: str) -> frozenset[str]:
        """The table's columns that join it to its neighbours on the path (once per path and table)."""
        key = ("joined", orientation.key, table)
        if key not in self._facts:
            self._facts[key] = frozenset(c for i, (left, right) in enumerate(orientation.edges)
                                         for side, cols in ((i, left), (i + 1, right))
                                         if orientation.tables[side] == table for c in cols)
        return self._facts[key]

    def _path_join(self, orientation: Orientation, target: Any) -> Any:
        """SELECT target FROM A AS a JOIN B AS b ON ab [JOIN C AS c ON bc]."""
        from sqlglot import exp

        query = exp.select(target).from_(self._aliased(orientation, 0))
        for i in range(len(orientation.tables) - 1):
            query = query.join(self._aliased(orientation, i + 1), on=self._join(orientation, i).copy())
        return query

    def join_too_large(self, orientation: Orientation) -> bool:
        """Does the path's join have more than `max_join_rows` rows? (A many-to-many path through
        a shared parent can multiply two large tables; counting stops at the limit.)"""
        from sqlglot import exp

        limit = self.settings["max_join_rows"]
        bound = 1
        for table in orientation.tables:
            bound *= max(1, self.views[table].num_rows)
        if bound <= limit:
            return False  # even a cross join of these tables fits
        inner = self._path_join(orientation, exp.Literal.number(1)).limit(limit + 1)
        query = exp.select(exp.Count(this=exp.Star())).from_(inner.subquery("j"))
        return self.con.execute(query.sql(dialect="duckdb")).fetchone()[0] > limit

    def _distinct(self, orientation: Orientation, ref: str, column: str) -> list[Any]:
        """The distinct non-null values of a column among the rows of the joined path, sorted."""
        from sqlglot import exp

        key = (orientation.key, ref, column)
        if key not in self._values:
            alias = ref.split(".")[0]
            target = exp.column(column, table=alias, quoted=True)
            present = exp.Not(this=exp.Is(this=target.copy(), expression=exp.Null()))
            query = self._path_join(orientation, target).distinct().where(present)
            query = query.order_by(exp.Literal.number(1)).limit(MAX_VALUES)
            dialect, execute = self._engine(orientation)
            self._values[key] = [plain(r[0]) for r in execute(query.sql(dialect=dialect)).fetchall()]
        return self._values[key]

    @staticmethod
    def _aliased(orientation: Orientation, index: int) -> Any:
        from sqlglot import exp

        return exp.Table(this=exp.to_identifier(orientation.tables[index], quoted=True),
                         alias=exp.TableAlias(this=exp.to_identifier("abc"[index])))

    def _draw_values(self, template: SqlTemplate, orientation: Orientation, columns: dict[str, str],
                     rng: Any) -> dict[str, Any] | None:
        values: dict[str, Any] = {}
        used: dict[str, set] = {}
        for name, spec in sorted(template.values.items()):
            if spec.kind == "count":
                values[name] = int(rng.integers(2, 4))
                continue
            pool = self._distinct(orientation, spec.slot, columns[spec.slot])
            taken = used.setdefault(spec.slot, set())
            if spec.kind == "threshold":
                if len(pool) < MIN_THRESHOLD_VALUES:
                    return None
                low = int(0.2 * len(pool))
                candidates = [i for i in range(low, max(low + 1, int(0.8 * len(pool))))]
            else:
                candidates = list(range(len(pool)))
            candidates = [i for i in candidates if repr(pool[i]) not in taken]
            if not candidates:
                return None
            value = pool[candidates[int(rng.integers(len(candidates)))]]
            if spec.kind == "threshold":
                value = round_threshold(value, pool)
            taken.add(repr(value))
            values[name] = value
        if template.interchangeable:  # "both X and Y" once, never again as "both Y and X"
            first, second = template.interchangeable
            if repr(values[first]) > repr(values[second]):
                values[first], values[second] = values[second], values[first]
        return values

    def _build(self, skeleton: Any, orientation: Orientation, columns: dict[str, str],
               values: dict[str, Any]) -> Any:
        from sqlglot import exp

        joins = {"ab": self._join(orientation, 0)}
        if len(orientation.tables) == 3:
            joins["bc"] = self._join(orientation, 1)
        tables = dict(zip("ABC", orientation.tables))

        def swap(node: Any) -> Any:
            if isinstance(node, exp.Table) and node.name in tables:
                return exp.Table(this=exp.to_identifier(tables[node.name], quoted=True),
                                 alias=exp.TableAlias(this=exp.to_identifier(ALIASES[node.name])))
            if isinstance(node, exp.Column) and f"{node.table}.{node.name}" in columns:
                column = exp.column(columns[f"{node.table}.{node.name}"], table=node.table, quoted=True)
                cast = self._key_cast(orientation, node.table, node.name)
                return exp.TryCast(this=column, to=exp.DataType.build(cast)) if cast else column
            if isinstance(node, exp.Placeholder):
                return joins[node.name].copy() if node.name in joins else _literal(values[node.name])
            return node

        return skeleton.transform(swap)

    # ------------------------------------------------------------------ checking

    def _engine(self, orientation: Orientation) -> tuple[str, Any]:
        """Where candidates are checked: SQLite when the path's tables are small (a query on them
        costs SQLite a tenth of DuckDB's planning time, and the kept query is then re-checked in
        both engines), else DuckDB (vectorised: faster on large joins)."""
        rows = sum(self.views[t].num_rows for t in orientation.tables)
        if self.sqlite is not None and rows <= self.settings["sqlite_check_rows"]:
            return "sqlite", self.sqlite.execute
        return "duckdb", self.con.execute

    def _answer(self, template: SqlTemplate, rows: list[tuple]) -> tuple[Any, str]:
        """(answer, rejection reason or "")."""
        if template.answer == "list":
            if not rows:
                return None, "empty"
            answer = [plain(r[0]) for r in rows]
            if any(v is None for v in answer):
                return None, "null_answer"
            if len(answer) > self.settings["max_list"]:
                return None, "too_large"
            return answer, ""
        if not rows:
            return None, "empty"
        if len(rows) > 1:
            return None, "ties"
        value = plain(rows[0][0])
        if value is None or (template.category == "count" and value == 0):
            return None, "empty"
        return value, ""

    def _check(self, template: SqlTemplate, orientation: Orientation, columns: dict[str, str],
               values: dict[str, Any], tree: Any) -> tuple[Any, str]:
        """Run a candidate and its derived queries on the checking engine: (answer, reason)."""
        dialect, execute = self._engine(orientation)
        answer, reason = self._answer(template, execute(tree.sql(dialect=dialect)).fetchall())
        if reason:
            return None, reason
        if template.tie_query is not None:
            tie = self._build(template.tie_query, orientation, columns, values).sql(dialect=dialect)
            if execute(tie).fetchone()[0] > 1:
                return None, "ties"
        for dropped in template.drops.values():
            rows = execute(self._build(dropped, orientation, columns, values).sql(dialect=dialect)).fetchall()
            if template.answer == "list":
                other: Any = [plain(r[0]) for r in rows]
            else:
                other = plain(rows[0][0]) if len(rows) == 1 else [plain(r[0]) for r in rows]
            if other == answer:
                return None, "join_adds_nothing"
        for name, loosened in template.loosened.items():
            # the loosened query reads every slot and every value but `name`: candidates that share them share it
            key = (template.id, name, orientation.key, tuple(sorted(columns.items())),
                   tuple(sorted((k, repr(v)) for k, v in values.items() if k != name)))
            if key not in self._loosened:
                sql = self._build(loosened, orientation, columns, values).sql(dialect=dialect)
                self._loosened[key] = self._answer(template, execute(sql).fetchall())[0]
            if self._loosened[key] == answer:
                return None, "filter_keeps_everything"  # the condition changes nothing: it means nothing
        return answer, ""

    # ------------------------------------------------------------------ the loop

    def synthesize(self, templates: list[SqlTemplate], stats: Stats) -> list[SqlQuery]:
        """Every template on every oriented path of its size; the queries that pass every check."""
        import sqlite3

        import duckdb

        kept: list[SqlQuery] = []
        s = self.settings
        every_path = [o for o in orientations(self.graph) if not self.partial_reference(o)]
        paths = within_budget(every_path, s["path_budget"], s["seed"], self.database.id)
        stats.paths_over_budget += len(every_path) - len(paths)
        too_large: dict[str, bool] = {}  # checked when a template first binds to the path
        tried: set[tuple] = set()
        asked: set[tuple] = set()  # (tables, question as `curate check` compares them)
        for template in templates:
            rule = f"list:{NUMBER_FORMAT}" if template.answer == "list" else NUMBER_FORMAT
            for orientation in paths:
                if len(orientation.tables) != template.tables:
                    continue
                rng = record_rng(s["seed"], self.database.id, f"{template.id}|{orientation.key}")
                found = 0
                for _ in range(s["attempts"]):
                    if found >= s["per_path"]:
                        break
                    columns = self._bind(template, orientation, rng)
                    if columns is None:
                        break  # no attempt can bind it: not a rejection, the path just lacks the roles
                    shape = self.shape_rejection(template, orientation)
                    if shape:
                        stats.candidates += 1
                        stats.reject(shape)
                        break  # the path's shape, not the draw: no attempt can do better
                    if self.parent_attribute(template, orientation, columns):
                        stats.candidates += 1
                        stats.reject("parent_attribute")
                        continue  # another draw may bind a column that varies among the children
                    if orientation.key not in too_large:
                        too_large[orientation.key] = self.join_too_large(orientation)
                        stats.paths += 1
                        stats.paths_too_large += too_large[orientation.key]
                    if too_large[orientation.key]:
                        break
                    stats.candidates += 1
                    values = self._draw_values(template, orientation, columns, rng)
                    if values is None:
                        stats.reject("no_values")
                        continue
                    identity = (template.id, orientation.key, tuple(sorted(columns.items())),
                                tuple(sorted((k, repr(v)) for k, v in values.items())))
                    if identity in tried:
                        stats.reject("duplicate")
                        continue
                    tried.add(identity)
                    tree = self._build(template.skeleton, orientation, columns, values)
                    in_sqlite = self._engine(orientation)[0] == "sqlite"
                    try:
                        checked, reason = self._check(template, orientation, columns, values, tree)
                        if not reason:  # the gold answer is DuckDB's (checked there already, or run now)
                            duck, lite = tree.sql(dialect="duckdb"), tree.sql(dialect="sqlite")
                            answer, reason = (self._answer(template, self.con.execute(duck).fetchall()) if in_sqlite
                                              else (checked, ""))
                            gold = format_answer(answer, rule)
                    except (duckdb.Error, sqlite3.Error):
                        reason = "error"
                    if not reason and in_sqlite and not answers_match(gold, checked, rule):
                        reason = "dialects_disagree"
                        stats.disagreements.append({"database": self.database.name, "template": template.id,
                                                    "duckdb": duck, "sqlite": lite, "duckdb_answer": gold,
                                                    "sqlite_answer": checked})
                    names = dict(zip("ABC", orientation.tables))
                    words = {slot: self.column_words(names[slot[0].upper()], column)
                             for slot, column in columns.items() if slot[:1].upper() in names}
                    meanings = self._meanings(template, names, columns, values)
                    spoken = self._spoken(template, names, columns, values)
                    question = (self._question(template, orientation, columns, values, words, meanings, spoken)
                                if not reason else "")
                    said = (tuple(sorted(orientation.tables)), _normalized(question))
                    if not reason and said in asked:
                        reason = "same_question"
                    if reason:
                        stats.reject(reason)
                        continue
                    asked.add(said)
                    stats.sqlite_checked += in_sqlite
                    stats.kept += 1
                    stats.by_template[template.id] = stats.by_template.get(template.id, 0) + 1
                    stats.by_category[template.category] = stats.by_category.get(template.category, 0) + 1
                    found += 1
                    kept.append(SqlQuery(
                        template=template, orientation=orientation, columns=columns, values=values,
                        duckdb=duck, sqlite=lite, answer=gold, question=question,
                        short=(render(template.short, names, columns, values, words=words, names=self.said,
                                      spoken=spoken) if template.short else ""),
                        sqlite_checked=in_sqlite,
                        unnamed=self._unnamed(template, orientation, columns, values, words, meanings, spoken)))
        return kept

def _normalized(question: str) -> str:
    return " ".join(re.sub(r"[\W_]+", " ", question.lower()).split())


def _sql_type(kind: Any) -> str:
    import pyarrow as pa

    if pa.types.is_integer(kind):
        return "BIGINT"
    if pa.types.is_floating(kind) or pa.types.is_decimal(kind):
        return "DOUBLE"
    if pa.types.is_date(kind):
        return "DATE"
    return "VARCHAR"


def synthesize_database(database: "Database", tables: dict[str, "Table"], templates: list[SqlTemplate],
                        config: dict[str, Any]) -> tuple[list[SqlQuery], Stats, Any, dict[str, dict[str, str]]]:
    """(kept queries, stats, schema graph, personal data by table: column -> kind) for one database."""
    synth = Synthesizer(database, tables, config)
    stats = Stats()
    try:
        kept = synth.synthesize(templates, stats)
    finally:
        synth.close()
    return kept, stats, synth.graph, {t: found for t, found in synth.personal.items() if found}
