"""MMQA's five tasks as Samples, from kept SQL queries and a database's keys.

Each kept query becomes three samples: multi-table QA (gold: the executed answer), text-to-SQL (the
same question and result, which any correct SQL reproduces; the reference SQL is the program) and
multi-table retrieval (gold: the tables the SQL uses; its question leaves them unnamed, and its
distractors are the other tables of the database, `provenance.candidates`). A query over a table too
large to be serialized in a release gives only its text-to-SQL sample (SQL is written from the
schema; the rows are never needed). Each join path also gives one primary-key and one foreign-key
selection sample: the primary-key question names only the tables whose key is the one key their
data allows, so every table asked about has its whole key in the gold; the foreign-key question is
not asked where a reference reads either way (one row per key on both sides).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from curate.curation.sample import Program, Sample
from curate.generators.sql.render import quoted
from curate.generators.sql.schema import PAIRED_SHARE, second_routes

if TYPE_CHECKING:  # pragma: no cover
    import pyarrow as pa

    from curate.curation.database import Database
    from curate.generators.sql.schema import SchemaGraph
    from curate.generators.sql.synth import SqlQuery

QA, TEXT_TO_SQL, RETRIEVAL = "MMQA/multi_table_qa", "MMQA/text_to_sql", "MMQA/multi_table_retrieval"
PK_SELECTION, FK_SELECTION = "MMQA/primary_key_selection", "MMQA/foreign_key_selection"


def qualified(database: str, table: str) -> str:
    """A table's name in the retrieval pool: tables of different databases may share a name."""
    return f"{database}.{table}"


def keys_of(graph: "SchemaGraph", tables: tuple[str, ...]) -> dict[str, Any]:
    """The primary keys of these tables and the foreign keys among them."""
    chosen = set(tables)
    return {
        "primary_keys": {k.table: list(k.columns) for k in graph.primary_keys if k.table in chosen},
        "foreign_keys": [[f"{k.table}.{c}", f"{k.ref_table}.{r}"] for k in graph.foreign_keys
                         if k.table in chosen and k.ref_table in chosen for c, r in zip(k.columns, k.ref_columns)],
    }


def _answer_type(value: Any) -> str:
    if isinstance(value, list):
        return "list"
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return "number"
    return "text"


def query_samples(database: "Database", graph: "SchemaGraph", query: "SqlQuery", table_ids: dict[str, str],
                  pool: dict[str, Any], hidden: frozenset[str] = frozenset()) -> list[Sample]:
    """QA, text-to-SQL and retrieval samples of one query; over a `hidden` table (too large to be
    serialized in a release) only text-to-SQL, whose SQL is written from the schema."""
    from curate.generators.sql.synth import NUMBER_FORMAT

    tables = query.orientation.tables
    ids = tuple(table_ids[t] for t in tables)
    rule = f"list:{NUMBER_FORMAT}" if query.template.answer == "list" else NUMBER_FORMAT
    provenance = {
        "database": database.name, "category": query.template.category, "hops": str(len(tables) - 1),
        "tables": json.dumps(list(tables), ensure_ascii=False),
        "keys": json.dumps(keys_of(graph, tables), ensure_ascii=False, sort_keys=True),
        "sql_sqlite": query.sqlite, "format": rule, "sqlite_checked": "yes" if query.sqlite_checked else "no",
    }
    program = Program("sql", query.duckdb, "duckdb")
    common = {"question": query.question, "question_short": query.short, "table_ids": ids, "origin": "sql",
              "template": query.template.id, "quality": "executed"}
    retrieval = {**provenance, "format": "list:exact", "pool_size": str(pool["size"]), "pool": pool["hash"],
                 "candidates": json.dumps(sorted(qualified(database.name, t) for t in database.table_names),
                                          ensure_ascii=False)}
    unseen = sorted(t for t in tables if t in hidden)
    if unseen:
        provenance["not_serialized"] = json.dumps(unseen, ensure_ascii=False)
        return [Sample(task=TEXT_TO_SQL, answer=query.answer, answer_type="table", program=program,
                       provenance=provenance, **common)]
    qa = {**common, "question": with_rounding(query.question, query.answer)}
    samples = [
        Sample(task=QA, answer=query.answer, answer_type=_answer_type(query.answer), program=program,
               provenance=provenance, **qa),
        Sample(task=TEXT_TO_SQL, answer=query.answer, answer_type="table", program=program,
               provenance=provenance, **common),
    ]
    if columns_point_to(graph, query) and not second_routes(graph, tables):
        samples.append(Sample(task=RETRIEVAL, answer=sorted(qualified(database.name, t) for t in tables),
                              answer_type="list", provenance=retrieval,
                              **{**common, **retrieval_question(database, query)}))
    return samples


def columns_point_to(graph: "SchemaGraph", query: "SqlQuery") -> bool:
    """Whether the columns a retrieval question names point to exactly its tables: none of them is
    also a column of a table the query does not use, and no one of its tables holds them all (a
    reader would take that table alone). Election08 and Election16 both have `BA` and `Income`:
    "the average BA of the records whose state has ObamaWin 1" names no table set of its own."""
    tables = set(query.orientation.tables)
    named = {column for slot, column in query.columns.items() if not slot.split(".")[-1].startswith("key")}
    if not named:
        return False
    holding = {t: set(body.column_names) for t, body in graph.bodies.items()}
    if any(column in holding[t] for column in named for t in holding if t not in tables):
        return False
    return not any(named <= holding[t] for t in tables)


def with_rounding(question: str, answer: Any) -> str:
    """The question with the rounding its gold was given ("Round to 4 decimals."), where the
    answer holds a number with a fraction: 36.6667, not 36.666666666666664."""
    from curate.generators.sql.synth import NUMBER_FORMAT

    values = answer if isinstance(answer, list) else [answer]
    flat = [v for x in values for v in (x if isinstance(x, list) else [x])]
    if any(isinstance(v, float) and not v.is_integer() for v in flat):
        return f"{question.rstrip()} Round to {NUMBER_FORMAT.split(':')[1]} decimals."
    return question


def retrieval_question(database: "Database", query: "SqlQuery") -> dict[str, str]:
    """MMQA's retrieval asks which tables a question needs without naming them: the question with
    its tables unnamed, among the tables of its database (the distractors)."""
    asked = query.unnamed or query.question
    return {"question": f"Which tables of the {database.name} database are needed to answer this question: "
                        f"{asked}",
            "question_short": f"tables for: {asked}"}


def key_samples(database: "Database", graph: "SchemaGraph", table_ids: dict[str, str],
                hidden: frozenset[str] = frozenset()) -> list[Sample]:
    """Primary- and foreign-key selection over the tables of each join path (once per table set).
    Keys inferred from the data are asked only of tables the model sees whole (a `hidden` table is
    shown cut short): whether a column is unique, or its values all found in another, is a
    property of every row. Declared keys are the schema's, and are asked of any table."""
    samples: list[Sample] = []
    seen: set[tuple[str, ...]] = set()
    declared = all(k.origin == "declared" for k in graph.primary_keys + graph.foreign_keys)
    quality = "declared-keys" if declared else "inferred-keys"
    unambiguous = unambiguous_primary_keys(graph)
    seen_primary: set[tuple[str, ...]] = set()
    for tables, _ in graph.join_paths():
        chosen = tuple(sorted(tables))
        if chosen in seen:
            continue
        seen.add(chosen)
        keys = keys_of(graph, chosen)
        listed = _listing(chosen)
        ids = tuple(table_ids[t] for t in chosen)
        provenance = {"database": database.name, "tables": json.dumps(list(chosen), ensure_ascii=False),
                      "keys": json.dumps(keys, ensure_ascii=False, sort_keys=True), "format": "list:exact",
                      "key_origin": "declared" if declared else "inferred"}
        seen_whole = declared or not hidden.intersection(chosen)
        asked = tuple(t for t in chosen if t in unambiguous and (declared or t not in hidden))
        if asked and asked not in seen_primary:
            seen_primary.add(asked)
            asked_keys = {t: keys["primary_keys"][t] for t in asked}
            primary = sorted(f"{t}.{c}" for t, cols in asked_keys.items() for c in cols)
            named = _listing(asked)
            tables_word = "the table" if len(asked) == 1 else "each of the tables"
            samples.append(Sample(
                task=PK_SELECTION, answer=primary, answer_type="list", table_ids=tuple(table_ids[t] for t in asked),
                origin="sql", template="sql.keys.primary", quality=quality,
                provenance={**provenance, "tables": json.dumps(list(asked), ensure_ascii=False),
                            "keys": json.dumps({"primary_keys": asked_keys, "foreign_keys": []}, ensure_ascii=False,
                                               sort_keys=True)},
                question=f"In the {quoted(database.name)} database, which columns form the primary key of "
                         f"{tables_word} {named}? A key is the fewest columns that identify what each row is (one column "
                         "or several; not a measured amount that merely differs from row to row); answer with "
                         "table.column for every key column.",
                question_short=f"primary keys of {named}?"))
        foreign = foreign_key_items(graph, chosen)
        if foreign and seen_whole and not (declared and undeclared_links(graph, chosen)) \
                and not one_to_one_links(graph, chosen):
            several = " A key of several columns is one item: table.(column, column) -> " \
                "referenced_table.(column, column), with the fewest columns that pick one referenced row." \
                if any("(" in item for item in foreign) else ""
            samples.append(Sample(
                task=FK_SELECTION, answer=foreign, answer_type="list", table_ids=ids, origin="sql",
                template="sql.keys.foreign", quality=quality, provenance=provenance,
                question=f"In the {quoted(database.name)} database, which foreign keys link the tables {listed}? "
                         f"Answer each as table.column -> referenced_table.column.{several}",
                question_short=f"foreign keys between {listed}?"))
    return samples


def foreign_key_items(graph: "SchemaGraph", tables: tuple[str, ...]) -> list[str]:
    """The foreign keys among these tables, one item each: a key of several columns (Lahman's
    `SeriesPost (yearID, teamIDwinner) -> Teams (yearID, teamID)`) is one reference, not one per
    column, which would list `yearID -> yearID` once for the winner and again for the loser."""
    def side(table: str, columns: tuple[str, ...]) -> str:
        return f"{table}.{columns[0]}" if len(columns) == 1 else f"{table}.({', '.join(columns)})"

    chosen = set(tables)
    return sorted({f"{side(k.table, tuple(k.columns))} -> {side(k.ref_table, tuple(k.ref_columns))}"
                   for k in graph.foreign_keys if k.table in chosen and k.ref_table in chosen})


def one_to_one_links(graph: "SchemaGraph", tables: tuple[str, ...]) -> list[str]:
    """References between these tables that a reader could read either way: the referencing
    columns unique, so each row of one table is one row of the other (openintro's
    `sowc_demographics` and `sowc_child_mortality`, one row per country each). Which table
    refers to which is then the schema's choice, or a guess from which holds a few more
    countries, not something a reader can find."""
    found = []
    for key in graph.foreign_keys:
        if key.table not in tables or key.ref_table not in tables:
            continue
        child, parent = graph.bodies[key.table], graph.bodies[key.ref_table]
        if child.num_rows < PAIRED_SHARE * parent.num_rows:
            continue  # a few of the referenced rows: a direction (and no grouping of a large table to find out)
        mine = child.select(list(key.columns)).drop_null()
        if len(mine) == child.num_rows and _distinct_rows(mine) == child.num_rows:
            found.append(f"{key.table} <-> {key.ref_table}")
    return found


def _distinct_rows(table: "pa.Table") -> int:
    return table.group_by(table.column_names).aggregate([]).num_rows


def undeclared_links(graph: "SchemaGraph", tables: tuple[str, ...]) -> list[str]:
    """References the data holds but the schema does not declare: a column named after another of
    the tables (world_1's `hauptstadt`, capital, after `stadt`) whose values all are that table's
    key. A reader who finds it would be marked wrong by a gold of the declared keys alone."""
    import pyarrow.compute as pc

    declared = {(k.table, c) for k in graph.foreign_keys for c in k.columns}
    declared |= {(k.table, c) for k in graph.primary_keys for c in k.columns}
    found = []
    for key in graph.primary_keys:
        ref = key.table
        if ref not in tables or len(key.columns) != 1 or len(ref) < 4:
            continue
        values = set(graph.bodies[ref].column(key.columns[0]).drop_null().to_pylist())
        for table in tables:
            if table == ref:
                continue
            body = graph.bodies[table]
            for name in body.column_names:
                if (table, name) in declared or ref.casefold().rstrip("s") not in name.casefold():
                    continue
                column = body.column(name).drop_null()
                if len(column) and column.type == graph.bodies[ref].column(key.columns[0]).type \
                        and set(pc.unique(column).to_pylist()) <= values:
                    found.append(f"{table}.{name} -> {ref}.{key.columns[0]}")
    return found


def unambiguous_primary_keys(graph: "SchemaGraph") -> set[str]:
    """Tables whose primary key is the one key a reader would pick from the data: a table with two
    unique identifiers (`customer_id`, `customer_code`), two unique names, or no unique key has no
    single gold. An id beside a unique name is still one answer (the id is the key, the name a label)."""
    from curate.curation.keys import id_like, key_candidates

    out = set()
    for key in graph.primary_keys:
        body = graph.bodies.get(key.table)
        if body is None:
            continue
        candidates = {frozenset(c): all(id_like(x) for x in c) for c in key_candidates(body)}
        mine = frozenset(key.columns)
        if mine in candidates and not any(kind == candidates[mine] for c, kind in candidates.items() if c != mine):
            out.add(key.table)
    return out


def _listing(names: tuple[str, ...]) -> str:
    quoted = [f'"{n}"' for n in names]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " and " + quoted[-1]
