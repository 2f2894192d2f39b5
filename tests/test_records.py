"""Records: content-hash ids, and a lossless Arrow/Parquet round trip."""

from __future__ import annotations

import datetime as dt

import pyarrow as pa
import pyarrow.parquet as pq
from hypothesis import given, settings
from hypothesis import strategies as st

from curate.curation.arrow_io import (databases_from_arrow, databases_to_arrow, samples_from_arrow, samples_to_arrow,
                               tables_from_arrow, tables_to_arrow)
from curate.curation.database import Database, ForeignKey, PrimaryKey
from curate.curation.sample import Program, Review, Sample, Vote
from curate.curation.table import HeaderNode, Provenance, Table

text = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=12)
column_types = st.sampled_from(["int", "float", "str", "bool", "date"])


@st.composite
def bodies(draw):
    n_rows = draw(st.integers(0, 6))
    n_cols = draw(st.integers(1, 5))
    names = [f"c{j} {draw(text)}" for j in range(n_cols)]
    columns = []
    for _ in range(n_cols):
        kind = draw(column_types)
        if kind == "int":
            values, typ = draw(st.lists(st.none() | st.integers(-2**62, 2**62), min_size=n_rows, max_size=n_rows)), pa.int64()
        elif kind == "float":
            values, typ = draw(st.lists(st.none() | st.floats(allow_nan=False), min_size=n_rows, max_size=n_rows)), pa.float64()
        elif kind == "str":
            values, typ = draw(st.lists(st.none() | text, min_size=n_rows, max_size=n_rows)), pa.string()
        elif kind == "bool":
            values, typ = draw(st.lists(st.none() | st.booleans(), min_size=n_rows, max_size=n_rows)), pa.bool_()
        else:
            values, typ = draw(st.lists(st.none() | st.dates(), min_size=n_rows, max_size=n_rows)), pa.date32()
        columns.append(pa.array(values, type=typ))
    return pa.table(columns, names=names)


@st.composite
def tables(draw):
    body = draw(bodies())
    header = ()
    if draw(st.booleans()):
        header = tuple(HeaderNode(draw(st.sampled_from(["R", "C"])), draw(st.integers(0, 3)), a, a + draw(st.integers(0, 2)),
                                  draw(text)) for a in range(draw(st.integers(1, 4))))
    ints = st.lists(st.integers(0, 10), max_size=3).map(tuple)
    return Table(name=draw(text), body=body, header=header, caption=draw(text),
                 notes=tuple(draw(st.lists(text, max_size=3))), structure=tuple(draw(st.lists(text, max_size=2))),
                 provenance=Provenance(source=draw(text), path=draw(text), sheet=draw(text), licence=draw(text)),
                 summary_rows=draw(ints), summary_columns=draw(ints), empty_columns=draw(ints),
                 constant_columns=draw(ints), flags=tuple(draw(st.lists(text, max_size=2))))


@settings(max_examples=60, deadline=None)
@given(st.lists(tables(), max_size=4))
def test_tables_survive_a_parquet_round_trip_unchanged(tmp_path_factory, items):
    path = tmp_path_factory.mktemp("rt") / "tables.parquet"
    pq.write_table(tables_to_arrow(items), path)
    back = list(tables_from_arrow(pq.read_table(path)))
    assert back == items
    for a, b in zip(items, back):
        assert a.body.schema == b.body.schema and a.body.equals(b.body)


def test_table_id_is_a_content_hash():
    body = pa.table({"a": [1, 2], "b": ["x", "y"]})
    same = Table(name="t", body=pa.table({"a": [1, 2], "b": ["x", "y"]}))
    assert Table(name="t", body=body).id == same.id
    assert Table(name="t", body=body).id != Table(name="u", body=body).id  # the name is content
    assert Table(name="t", body=body).content_hash == Table(name="u", body=body).content_hash  # duplicates
    assert Table(name="t", body=pa.table({"a": [1, 3], "b": ["x", "y"]})).content_hash != same.content_hash
    # chunking is not content
    chunked = pa.Table.from_batches(pa.table({"a": [1, 2], "b": ["x", "y"]}).to_batches(max_chunksize=1))
    assert Table(name="t", body=chunked).id == same.id


def test_replace_recomputes_the_id_only_when_content_changes():
    t = Table(name="t", body=pa.table({"a": [1, 2]}))
    assert t.replace(flags=("hierarchical",)).id == t.id
    assert t.replace(body=pa.table({"a": [1, 5]})).id != t.id


def test_databases_and_samples_round_trip(tmp_path):
    db = Database(name="shop", tables=(("orders", "tbl-1"), ("customers", "tbl-2")),
                  primary_keys=(PrimaryKey("customers", ("id",)),),
                  foreign_keys=(ForeignKey("orders", ("customer_id",), "customers", ("id",), "inferred", 0.9, "98%"),))
    pq.write_table(databases_to_arrow([db]), tmp_path / "d.parquet")
    assert list(databases_from_arrow(pq.read_table(tmp_path / "d.parquet"))) == [db]

    sample = Sample(task="TCO.general_operations", question="What is the mean of x?", answer=2.5,
                    answer_type="number", table_ids=("tbl-1",), program=Program("sql", "SELECT avg(x) FROM t", "duckdb"),
                    votes=(Vote("m1", 2.5, True),), reviews=(Review("ann", "accept", None, "", dt.date(2026, 1, 1).isoformat()),),
                    provenance={"template": "mean"})
    pq.write_table(samples_to_arrow([sample]), tmp_path / "s.parquet")
    assert list(samples_from_arrow(pq.read_table(tmp_path / "s.parquet"))) == [sample]


def test_sample_id_ignores_the_answer():
    a = Sample(task="t", question="q", answer=1, answer_type="number", table_ids=("x",))
    b = Sample(task="t", question="q", answer=2, answer_type="number", table_ids=("x",))
    assert a.id == b.id


def test_review_state_is_a_typed_field_kept_where_releases_store_it():
    from curate.curation.sample import ReviewState, Sample

    sample = Sample(task="TCO/lookup", question="q?", answer=1, answer_type="number", table_ids=("t",))
    assert sample.review_state is None
    queued = sample.with_review(ReviewState.QUEUED, task_check="disagrees")
    assert queued.review_state is ReviewState.QUEUED and queued.review_state.waiting
    assert queued.provenance == {"task_check": "disagrees", "review": "queued"}  # the stored form is unchanged
    assert queued.id == sample.id
    assert not queued.with_review(ReviewState.FIXED).review_state.waiting
    try:  # a state no stage writes is refused when read
        Sample(task="t", question="q", answer=1, answer_type="number", table_ids=(),
               provenance={"review": "maybe"}).review_state
        raise AssertionError("an unknown review state was read")
    except ValueError:
        pass
