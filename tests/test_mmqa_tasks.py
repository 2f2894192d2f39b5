"""MMQA's task samples over a database's keys (issue 24): complete key golds, named from the data.

A primary-key question names only tables whose key is the one key their data allows, and its gold
holds that whole key (composite keys in full); measures are never keys.
"""

from __future__ import annotations

import json

import pyarrow as pa

from curate.curation.database import Database, ForeignKey, PrimaryKey
from curate.curation.keys import infer_keys
from curate.generators.sql.schema import SchemaGraph
from curate.generators.sql.tasks import FK_SELECTION, PK_SELECTION, key_samples

STATES = [f"State {i}" for i in range(12)]


def graph_of(bodies, declared=None):
    if declared:
        pks, fks = declared
    else:
        pks, fks = infer_keys(bodies)
    db = Database("panel", tuple((n, f"tbl-{n}") for n in bodies), tuple(pks), tuple(fks))
    return db, SchemaGraph(db, bodies)


def test_every_table_asked_about_has_its_whole_key_in_the_gold_and_composites_come_in_full():
    states = pa.table({"state": STATES, "region": ["N", "S", "E"] * 4})
    votes = pa.table({"state": STATES * 2, "year": [1990] * 12 + [1994] * 12,
                      "turnout": [float(i) for i in range(24)], "count": list(range(100, 124))})
    db, graph = graph_of({"states": states, "votes": votes})
    (pk,) = [s for s in key_samples(db, graph, {n: f"tbl-{n}" for n in ("states", "votes")}) if s.task == PK_SELECTION]
    assert pk.answer == ["states.state", "votes.state", "votes.year"]
    asked = json.loads(pk.provenance["tables"])
    assert asked == ["states", "votes"] and all(f'"{t}"' in pk.question for t in asked)
    assert "count" not in " ".join(pk.answer)  # a measure unique by chance is no key


def test_a_table_with_two_possible_keys_or_none_is_not_asked_about():
    """customer_id and customer_code both identify a customer: either is a right answer, so neither is asked."""
    customers = pa.table({"customer_id": [1, 2, 3, 4], "customer_code": ["A", "B", "C", "D"],
                          "spend": [1.0, 2.0, 3.0, 4.0]})
    orders = pa.table({"order_id": [10, 11, 12, 13, 14], "customer_id": [1, 1, 2, 4, 4]})
    notes = pa.table({"customer_id": [1, 1, 2], "note": ["x", "x", "y"]})  # no key at all
    pks = [PrimaryKey("customers", ("customer_id",)), PrimaryKey("orders", ("order_id",))]
    fks = [ForeignKey("orders", ("customer_id",), "customers", ("customer_id",)),
           ForeignKey("notes", ("customer_id",), "customers", ("customer_id",))]
    bodies = {"customers": customers, "orders": orders, "notes": notes}
    db, graph = graph_of(bodies, (pks, fks))
    samples = key_samples(db, graph, {n: f"tbl-{n}" for n in bodies})
    primary = [s for s in samples if s.task == PK_SELECTION]
    assert [s.answer for s in primary] == [["orders.order_id"]]  # customers has two keys, notes none
    assert [json.loads(s.provenance["tables"]) for s in primary] == [["orders"]]
    assert len(primary[0].table_ids) == 1
    foreign = [s for s in samples if s.task == FK_SELECTION]
    assert sorted({a for s in foreign for a in s.answer}) == ["notes.customer_id -> customers.customer_id",
                                                            "orders.customer_id -> customers.customer_id"]


def test_a_foreign_key_of_several_columns_is_one_item():
    """Lahman's SeriesPost names a season's winner and loser, each by (yearID, teamID): two references,
    not `yearID -> yearID` twice."""
    teams = pa.table({"yearID": [2000, 2000, 2001, 2001], "teamID": ["NYA", "NYN", "ARI", "NYA"]})
    series = pa.table({"yearID": [2000, 2001], "round": ["WS", "WS"], "teamIDwinner": ["NYA", "ARI"],
                       "teamIDloser": ["NYN", "NYA"]})
    pks = [PrimaryKey("teams", ("yearID", "teamID")), PrimaryKey("series", ("yearID", "round"))]
    fks = [ForeignKey("series", ("yearID", "teamIDwinner"), "teams", ("yearID", "teamID")),
           ForeignKey("series", ("yearID", "teamIDloser"), "teams", ("yearID", "teamID"))]
    bodies = {"teams": teams, "series": series}
    db, graph = graph_of(bodies, (pks, fks))
    (fk,) = [s for s in key_samples(db, graph, {n: f"tbl-{n}" for n in bodies}) if s.task == FK_SELECTION]
    assert fk.answer == ["series.(yearID, teamIDloser) -> teams.(yearID, teamID)",
                         "series.(yearID, teamIDwinner) -> teams.(yearID, teamID)"]
    assert "several columns is one item" in fk.question


def test_no_foreign_key_question_between_tables_of_one_row_per_key_each():
    """openintro's sowc_demographics and sowc_maternal_newborn hold one row per country each: which
    refers to which is the schema's choice (or a guess from which holds a few more countries), so no
    reader could find the gold's direction."""
    countries = [f"Country {i}" for i in range(20)]
    demographics = pa.table({"country": countries, "population": [float(10 + i) for i in range(20)]})
    newborn = pa.table({"country": countries[::-1], "births": [float(3 + i) for i in range(20)]})
    pks = [PrimaryKey("demographics", ("country",)), PrimaryKey("newborn", ("country",))]
    fks = [ForeignKey("newborn", ("country",), "demographics", ("country",))]
    bodies = {"demographics": demographics, "newborn": newborn}
    db, graph = graph_of(bodies, (pks, fks))
    assert not [s for s in key_samples(db, graph, {n: f"tbl-{n}" for n in bodies}) if s.task == FK_SELECTION]
    # one country fewer (SOWC's 195 of 202): a guess at the direction, not something a reader finds
    one_fewer = {"demographics": demographics, "newborn": newborn.slice(1)}
    db, graph = graph_of(one_fewer, (pks, fks))
    assert not [s for s in key_samples(db, graph, {n: f"tbl-{n}" for n in bodies}) if s.task == FK_SELECTION]
    half = {"demographics": demographics, "newborn": newborn.slice(10)}  # half of the countries: a direction
    db, graph = graph_of(half, (pks, fks))
    (fk,) = [s for s in key_samples(db, graph, {n: f"tbl-{n}" for n in bodies}) if s.task == FK_SELECTION]
    assert fk.answer == ["newborn.country -> demographics.country"]


def test_an_id_beside_a_unique_name_is_still_one_key():
    teachers = pa.table({"teacher_id": [1, 2, 3], "full_name": ["Ann Li", "Bo Ek", "Cy Ma"]})
    courses = pa.table({"course_id": [1, 2, 3, 4], "teacher_id": [1, 1, 2, 3], "level": ["a", "b", "a", "b"]})
    bodies = {"teachers": teachers, "courses": courses}
    db, graph = graph_of(bodies, ([PrimaryKey("teachers", ("teacher_id",)), PrimaryKey("courses", ("course_id",))],
                                  [ForeignKey("courses", ("teacher_id",), "teachers", ("teacher_id",))]))
    (pk,) = [s for s in key_samples(db, graph, {n: f"tbl-{n}" for n in bodies}) if s.task == PK_SELECTION]
    assert pk.answer == ["courses.course_id", "teachers.teacher_id"]


def test_questions_over_a_table_the_release_does_not_serialize_need_no_contents(tmp_path):
    """schüler (120 rows x 6 columns = 720 cells) is over a limit of 500: its queries are released only
    as text-to-SQL, which is written from the schema; tables under the limit keep all three tasks."""
    from tests.test_cli import invoke
    from tests.test_sql_synthesis import _samples, school_sqlite

    ws = tmp_path / "ws"
    assert invoke("ingest", school_sqlite(tmp_path / "schule.sqlite"), "-w", ws, "-q").exit_code == 0
    assert invoke("clean", "-w", ws, "-q").exit_code == 0
    config = tmp_path / "build.toml"
    config.write_text("[generate.sql]\nmax_visible_cells = 500\n")
    out = invoke("generate", "sql", "-w", ws, "--config", config, "--json", "-q")
    assert out.exit_code == 0, out.output
    report = json.loads(out.output)
    samples = _samples(ws)
    by_task: dict[str, list] = {}
    for s in samples:
        by_task.setdefault(s.task, []).append(s)
    over_schueler = lambda s: "schüler" in json.loads(s.provenance["tables"])  # noqa: E731
    assert not any(over_schueler(s) for t in ("MMQA/multi_table_qa", "MMQA/multi_table_retrieval")
                   for s in by_task[t])
    hidden = [s for s in by_task["MMQA/text_to_sql"] if over_schueler(s)]
    assert hidden and all(json.loads(s.provenance["not_serialized"]) == ["schüler"] for s in hidden)
    assert report["queries_over_unserialized_tables"] == len(hidden)
    assert by_task["MMQA/multi_table_qa"]  # the small tables still give every task


# ---------------------------------------------------------------------------- joins a question names

def _synth(bodies, pks, fks, templates):
    from curate.curation.table import Provenance, Table
    from curate.generators.sql.synth import Stats, Synthesizer
    from curate.generators.sql.templates import build_template

    tables = {n: Table(name=n, body=b, provenance=Provenance(source="test", database="toy")) for n, b in bodies.items()}
    db = Database("toy", tuple((n, t.id) for n, t in tables.items()), tuple(pks), tuple(fks))
    synth = Synthesizer(db, tables, {"attempts": 6, "per_path": 6})
    stats = Stats()
    built = [build_template({"id": name[0] if name else f"t.{i}", "tables": 2, "sql": sql, "question": q}, "t", category)
             for i, (sql, q, category, *name) in enumerate(templates)]
    try:
        return synth.synthesize(built, stats), stats
    finally:
        synth.close()


AIRPORTS = pa.table({"faa": ["JFK", "LGA", "EWR", "BOS"], "name": ["Kennedy", "LaGuardia", "Newark", "Logan"],
                     "zone": ["east", "east", "west", "west"]})
# passengers: a count that adds up (a SUM template takes additive measures only)
FLIGHTS = pa.table({"flight_id": list(range(1, 13)), "origin": ["JFK", "LGA", "EWR"] * 4,
                    "dest": ["BOS", "BOS", "JFK", "LGA"] * 3, "passengers": [float(100 + 7 * i) for i in range(12)]})


def test_when_two_keys_join_the_same_tables_the_question_names_the_one_it_uses():
    fks = [ForeignKey("flights", ("origin",), "airports", ("faa",)), ForeignKey("flights", ("dest",), "airports", ("faa",))]
    pks = [PrimaryKey("airports", ("faa",)), PrimaryKey("flights", ("flight_id",))]
    kept, _ = _synth({"airports": AIRPORTS, "flights": FLIGHTS}, pks, fks, [(
        "SELECT SUM(a.num) FROM A AS a JOIN B AS b ON :ab WHERE b.cat = :v",
        "What is the total {a.num} of the {A} whose {B} entry has {b.cat} {v}?", "numerical")])
    by_key = {q.orientation.edges[0][0]: q for q in kept}
    assert set(by_key) == {("origin",), ("dest",)}
    # the key's column says the airport's role: "origin airport", no parenthesis
    assert "the flights whose origin airport has zone" in by_key[("origin",)].question
    assert "linked" not in by_key[("origin",)].question
    # `dest` says itself in no English word: the header the model sees, as it is, in parentheses
    assert by_key[("dest",)].question.endswith("(flights are linked to airports by their `dest`)?")


def test_one_key_between_two_tables_needs_no_words_for_the_join():
    kept, _ = _synth({"airports": AIRPORTS, "flights": FLIGHTS}, [PrimaryKey("airports", ("faa",))],
                     [ForeignKey("flights", ("origin",), "airports", ("faa",))], [(
                         "SELECT SUM(a.num) FROM A AS a JOIN B AS b ON :ab WHERE b.cat = :v",
                         "What is the total {a.num} of the {A} whose {B} entry has {b.cat} {v}?", "numerical")])
    assert kept and not any("linked" in q.question for q in kept)


def test_no_aggregate_adds_up_a_row_the_join_repeats_and_no_grouping_of_one_to_one_rows():
    states = pa.table({"state": ["A", "B", "C", "D"], "deaths": [10.0, 20.0, 30.0, 40.0], "region": ["n", "s", "n", "s"],
                       "name": ["Alabama", "Boston", "Carolina", "Dakota"]})
    murders = pa.table({"murder_id": list(range(1, 13)), "state": ["A", "B", "C", "D"] * 3,
                        "kind": ["x", "y", "z"] * 4, "victims": [float(i) for i in range(12)]})
    kept, stats = _synth({"states": states, "murders": murders}, [PrimaryKey("states", ("state",))],
                         [ForeignKey("murders", ("state",), "states", ("state",))], [(
                             "SELECT SUM(b.num) FROM A AS a JOIN B AS b ON :ab WHERE a.cat = :v",
                             "Summed over the {A} with {a.cat} {v}, what is the total {b.num} of their {B} entries?",
                             "numerical")])
    assert kept == [] and stats.rejected.get("counts_rows_twice") == 1  # each state once per murder record
    twin = pa.table({"state": ["A", "B", "C", "D"], "income": [1.0, 2.0, 3.0, 4.0], "zone": ["n", "n", "s", "s"]})
    kept, stats = _synth({"states": states, "income": twin}, [PrimaryKey("states", ("state",))],
                         [ForeignKey("income", ("state",), "states", ("state",))], [(
                             "SELECT b.label FROM A AS a JOIN B AS b ON :ab GROUP BY b.label ORDER BY AVG(a.num) DESC LIMIT 1",
                             "Which {B} entry has the highest average {a.num} over its {A} entries?", "select")])
    assert kept == [] and stats.rejected.get("counts_rows_twice") == 1  # one income row per state: groups of one


def test_children_are_not_contrasted_by_a_column_that_is_their_parents():
    """gapminder's `continent` repeats the country's on each of its years: "countries with a year in
    Europe and one in Asia" is never true, and "with years, but none in Europe" means "not in Europe"
    said in database words. A column that varies among a parent's children is asked."""
    countries = pa.table({"country": ["A", "B", "C", "D", "E"], "pop": [1.0, 2.0, 3.0, 4.0, 5.0]})
    years = pa.table({"country": ["A", "B", "C", "D", "E"] * 3, "year": [2000] * 5 + [2001] * 5 + [2002] * 5,
                      "continent": ["Europe", "Asia", "Europe", "Africa", "Asia"] * 3,
                      "regime": ["open", "closed", "open", "open", "closed", "open", "closed", "closed", "open", "open",
                                 "closed", "closed", "open", "open", "closed"]})
    both = ("SELECT COUNT(*) FROM (SELECT b.key_ab FROM A AS a JOIN B AS b ON :ab WHERE a.cat = :v INTERSECT "
            "SELECT b.key_ab FROM A AS a JOIN B AS b ON :ab WHERE a.cat = :w) AS g",
            "How many {B} entries have both an {A} entry with {a.cat} {v} and one with {a.cat} {w}?", "count",
            "t.parents_in_both_categories")
    kept, stats = _synth({"countries": countries, "years": years}, [PrimaryKey("countries", ("country",))],
                         [ForeignKey("years", ("country",), "countries", ("country",))], [both])
    assert stats.rejected.get("parent_attribute", 0) >= 1
    assert kept and all(q.columns["a.cat"] == "regime" for q in kept)
    assert all("continent" not in q.question for q in kept)
    # "both open and closed" is asked once, never again as "both closed and open"
    assert all(repr(q.values["v"]) < repr(q.values["w"]) for q in kept)


def test_a_retrieval_question_names_the_columns_and_values_it_uses_never_its_tables():
    from curate.generators.sql.tasks import RETRIEVAL, query_samples

    airports = pa.table({"faa": ["JFK", "LGA", "EWR", "BOS"], "name": ["Kennedy", "LaGuardia", "Newark", "Logan"],
                         "zone": ["east", "east", "west", "west"]})
    carriers = pa.table({"carrier": ["AA", "UA"], "fleet_name": ["American", "United"]})
    bodies = {"airports": airports, "flights": FLIGHTS, "carriers": carriers}
    pks, fks = [PrimaryKey("airports", ("faa",))], [ForeignKey("flights", ("origin",), "airports", ("faa",))]
    kept, _ = _synth(bodies, pks, fks, [(
        "SELECT SUM(a.num) FROM A AS a JOIN B AS b ON :ab WHERE b.cat = :v",
        "What is the total {a.num} of the {A} whose {B} entry has {b.cat} {v}?", "numerical")])
    db = Database("toy", tuple((n, f"tbl-{n}") for n in bodies), tuple(pks), tuple(fks))
    graph = SchemaGraph(db, bodies)
    samples = query_samples(db, graph, kept[0], {n: f"tbl-{n}" for n in bodies}, {"size": 3, "hash": "h"})
    (retrieval,) = [s for s in samples if s.task == RETRIEVAL]
    assert retrieval.answer == ["toy.airports", "toy.flights"]
    assert not any(name in retrieval.question.lower() for name in ("airport", "flight", "carrier"))
    assert "passengers" in retrieval.question and "zone" in retrieval.question and kept[0].values["v"] in retrieval.question
    assert json.loads(retrieval.provenance["candidates"]) == ["toy.airports", "toy.carriers", "toy.flights"]


def test_a_question_whose_gold_has_a_fraction_states_its_rounding():
    from curate.generators.sql.tasks import with_rounding

    assert with_rounding("What is the average pop of the states?", 36.6667) == \
        "What is the average pop of the states? Round to 4 decimals."
    assert with_rounding("Which states ...?", [["Ohio", 1.25], ["Utah", 2.0]]).endswith("Round to 4 decimals.")
    assert with_rounding("How many flights?", 12) == "How many flights?"
    assert with_rounding("List the airports.", ["JFK", "LGA"]) == "List the airports."


def test_inferred_keys_are_asked_only_of_tables_the_model_sees_whole():
    """Uniqueness and inclusion are properties of every row: a table cut short in the prompt gets
    no inferred-key question (declared keys are the schema's and are asked of any table)."""
    plots = pa.table({"plot_id": list(range(1, 25)), "plot_type": ["Control", "Rodent exclosure", "Krat"] * 8})
    surveys = pa.table({"record_id": list(range(1, 201)), "plot_id": [1 + i % 24 for i in range(200)],
                        "weight": [10 + i % 37 for i in range(200)]})
    database = Database(name="ratdat", tables=(("plots", "p"), ("surveys", "s")))
    graph = SchemaGraph(database, {"plots": plots, "surveys": surveys})
    ids = {"plots": "p", "surveys": "s"}
    asked = {(s.task, s.table_ids) for s in key_samples(database, graph, ids)}
    assert (FK_SELECTION, ("p", "s")) in asked
    cut_short = {(s.task, s.table_ids) for s in key_samples(database, graph, ids, frozenset({"surveys"}))}
    assert all(task != FK_SELECTION and "s" not in tables for task, tables in cut_short)
    assert (PK_SELECTION, ("p",)) in cut_short


def test_a_table_is_named_by_what_its_rows_are_and_a_column_by_its_documented_label():
    from curate.curation.semantics import ColumnInfo
    from curate.generators.sql.render import Noun, column_words, counted_in_number, render, table_noun

    documented = {"State": ColumnInfo("State", label="state name"),
                  "countries_and_areas": ColumnInfo("countries_and_areas", label="country or area name"),
                  "neighborhood": ColumnInfo("neighborhood", label="name of the neighborhood")}
    assert table_noun("Election16", ["State"], documented) == Noun("state", "states", from_key=True)
    assert table_noun("sowc_demographics", ["countries_and_areas"], documented).many == "countries"
    assert table_noun("MplsDemo", ["neighborhood"], documented).one == "neighborhood"
    assert table_noun("flights", [], {}) == Noun("flight", "flights")  # its own plural name
    assert table_noun("MplsStops", [], {}) is None and table_noun("weather", ["origin", "time_hour"], {}) is None

    income = ColumnInfo("Income", label="per capita income in the state")
    assert column_words("Income", income) == "per capita income in the state"  # the label names the header
    grads = ColumnInfo("HS", label="percent high school grads")
    assert column_words("HS", grads) == "percent high school grads"  # H(igh) S(chool): the reader finds `HS`
    assert column_words("dep_delay", None) == "`dep_delay`"  # "dep" is no English word
    assert column_words("arr_time", None) == "`arr_time`" and column_words("air_time", None) == "air time"
    assert column_words("wind_dir", None) == "`wind_dir`"  # shorthand for direction, or directory
    assert (column_words("pop", None), column_words("lat", None)) == ("population", "latitude")  # one meaning anywhere
    assert column_words("delivery_care_1519", None) == "`delivery_care_1519`"  # ages 15-19, not a number
    assert column_words("life_expectancy_1970", None) == "life expectancy in 1970"
    neonatal = ColumnInfo("neonatal_mortality_2000", label="neonatal mortality rate 2000")
    assert column_words("neonatal_mortality_2000", neonatal, keyed=True) == "neonatal mortality rate in 2000"
    assert column_words("getötet", None, english=False) == "`getötet`"
    assert column_words("alter", None, english=False) == "`alter`"  # German for age, in a German schema

    nouns = {"Election16": table_noun("Election16", ["State"], documented),
             "Election08": table_noun("Election08", ["State"], documented)}
    question = render("What is the average {a.num} of the {A} whose {B} entry has {b.cat} {v}?",
                      {"A": "Election16", "B": "Election08"}, {"a.num": "HS", "b.cat": "ObamaWin"},
                      {"v": 1}, nouns, {"a.num": column_words("HS", grads)})
    # two tables whose rows are both states: each keeps its name, so a reader tells them apart ("How many
    # countries belong to a `sowc_demographics` row ..." was read as counting sowc_demographics' countries)
    assert question == ("What is the average percent high school grads of the `Election16` rows whose "
                        "`Election08` row has obama win 1?")
    # where the question no longer names the other table (its column said without it), the rows are states again
    question = render("What is the average {a.num} of the {A} with {b.cat} {v}?",
                      {"A": "Election16", "B": "Election08"}, {"a.num": "HS", "b.cat": "ObamaWin"},
                      {"v": 1}, nouns, {"a.num": column_words("HS", grads)})
    assert question == "What is the average percent high school grads of the states with obama win 1?"
    # a count named in the plural is said as a number of things: "with more than 9 shutouts", not "a shutouts of"
    text = "How many {A} have a {B} entry with a {b.num} of more than {v}?"
    said = {"b.num": "shutouts (`SHO`)"}
    assert render(counted_in_number(text, said, ["b.num"]), {"A": "Teams", "B": "Pitching"}, {"b.num": "SHO"},
                  {"v": 9}, words=said).endswith("with more than 9 shutouts (`SHO`)?")
    said = {"b.num": "height in inches"}  # a measure in a plural unit stays one
    assert counted_in_number(text, said, ["b.num"]) == text
    # "the lowest losses", "the average games": the number of them
    said = {"a.num": "losses (`L`)", "b.num": "home runs allowed (`HRA`)"}
    assert counted_in_number("What is the lowest {a.num} and the average {b.num}?", said, ["a.num", "b.num"]) == \
        "What is the smallest number of {a.num} and the average number of {b.num}?"
    spread = "What is the difference between the highest and the lowest {a.num}?"
    assert counted_in_number(spread, said, ["a.num"]) == \
        "What is the difference between the largest and the smallest number of {a.num}?"
    assert counted_in_number("What is the total {b.num}?", said, ["b.num"]) == "What is the total number of {b.num}?"


def test_a_long_documented_label_gives_way_to_a_header_that_says_itself_and_a_year_keyed_table_is_years():
    """"type of experimental manipulation conducted on the plot (`plot_type`)" defines the column; the
    question says "plot type". A label holding the header qualifies it and stays; a header that is no
    English keeps a long label. A table keyed by a country and a year holds years of countries."""
    from curate.curation.semantics import ColumnInfo
    from curate.generators.sql.render import Noun, column_words, table_noun

    plot = ColumnInfo("plot_type", label="type of experimental manipulation conducted on the plot")
    assert column_words("plot_type", plot) == "plot type"
    # in a schema that is not English the label is said, the header left for the reader to find in it
    assert column_words("plot_type", plot, english=False) == "type of experimental manipulation conducted on the plot"
    assert column_words("hindfoot_length", ColumnInfo("hindfoot_length", label="length of a back foot"), False) == \
        "length of a back foot (`hindfoot_length`)"  # "hindfoot" begins no word of it
    gdp = ColumnInfo("gdpPercap", label="GDP per capita (US$, inflation-adjusted)")
    assert column_words("gdpPercap", gdp) == "GDP per capita"  # the aside dropped; its header spelled by it
    assert table_noun("gapminder", ["country", "year"], {}) == Noun("year", "years")
    assert table_noun("Teams", ["yearID", "teamID"], {}, said="team seasons") == Noun("team season", "team seasons")
    assert table_noun("school", ["schid"], {}) == Noun("school", "schools")
    assert table_noun("department_store_chain", ["dept_store_chain_id"], {}).many == "department store chains"
    assert table_noun("product_pricing", [], {}) is None and table_noun("bestellungen_lieferungen", [], {}) is None
    assert table_noun("complete_old", [], {}) is None  # "old" is no thing to count: "complete olds"
    senators = {"name": ColumnInfo("name", label="senator name, party and state")}
    assert table_noun("iraqVote", ["name"], senators) == Noun("senator", "senators", from_key=True)


def test_a_retrieval_question_is_asked_only_where_its_columns_point_to_its_tables():
    from types import SimpleNamespace

    from curate.generators.sql.tasks import columns_point_to

    states = [f"S{i}" for i in range(10)]
    e08 = pa.table({"State": states, "BA": [20.0 + i for i in range(10)], "ObamaWin": [i % 2 for i in range(10)]})
    e16 = pa.table({"State": states, "BA": [22.0 + i for i in range(10)], "Adv": [8.0 + i for i in range(10)]})
    polls = pa.table({"State": states, "margin": [float(i) for i in range(10)]})
    graph = SchemaGraph(Database(name="Stat2Data", tables=(("Election08", "a"), ("Election16", "b"), ("polls", "c"))),
                        {"Election08": e08, "Election16": e16, "polls": polls})

    def query(tables, columns):
        return SimpleNamespace(orientation=SimpleNamespace(tables=tables), columns=columns)

    # BA and ObamaWin are both Election08's: a reader would take that table alone
    assert not columns_point_to(graph, query(("Election16", "Election08"), {"a.num": "BA", "b.cat": "ObamaWin"}))
    # Adv is only Election16's and ObamaWin only Election08's: the two tables, and no others
    assert columns_point_to(graph, query(("Election16", "Election08"), {"a.num": "Adv", "b.cat": "ObamaWin",
                                                                      "a.key_ab": "State"}))
    # margin is polls', but BA is also a column of a table the query does not use
    assert not columns_point_to(graph, query(("polls", "Election16"), {"a.num": "margin", "b.num": "BA"}))


def test_an_unnamed_question_reads_as_entries_and_leaves_the_linking_table_for_the_reader_to_find():
    from curate.generators.sql.render import Noun, without_table_names

    text = without_table_names("What is the lowest {c.num} among the {C} entries linked through {B} to {A} entries "
                               "with {a.cat} {v}?", {"A": Noun("student", "students", from_key=True), "B": None, "C": None})
    assert text == "What is the lowest {c.num} among the entries linked to students with {a.cat} {v}?"
    text = without_table_names("Which {B} entry (give its {b.label}) has the most recent {A} entry by {a.date}?")
    assert text == "Which entry (give its {b.label}) has the most recent entry by {a.date}?"
    text = without_table_names("What is the average {a.num} of the {A} whose {B} entry has a {b.num2} of more than {v}?",
                               {"A": Noun("country", "countries", from_key=True)})
    assert text == "What is the average {a.num} of the countries with a {b.num2} of more than {v}?"  # not "whose entry has"


def test_a_table_named_by_a_plural_phrase_is_counted_by_it_not_by_its_entries():
    from curate.generators.sql.render import table_noun

    assert table_noun("autohersteller", (), None, "car makers").many == "car makers"
    assert table_noun("Department_Stores", ()).one == "department store"
    assert table_noun("sowc_demographics", ()) is None  # "sowc demographic" names nothing: "sowc demographics entries"


def test_no_foreign_key_question_where_the_data_holds_a_link_the_schema_does_not_declare():
    """world_1: `land.hauptstadt` (capital) holds ids of `stadt`, undeclared; a gold of the declared
    keys alone would mark the reader who finds it wrong."""
    from curate.generators.sql.tasks import FK_SELECTION, key_samples, undeclared_links

    land = pa.table({"code": ["A", "B", "C"], "hauptstadt": [1, 3, None]})
    stadt = pa.table({"id": [1, 2, 3], "ländercode": ["A", "A", "B"]})
    pks = (PrimaryKey("land", ("code",)), PrimaryKey("stadt", ("id",)))
    fks = (ForeignKey("stadt", ("ländercode",), "land", ("code",)),)
    db = Database("w", (("land", "t1"), ("stadt", "t2")), pks, fks)
    graph = SchemaGraph(db, {"land": land, "stadt": stadt})
    assert undeclared_links(graph, ("land", "stadt")) == ["land.hauptstadt -> stadt.id"]
    assert not [s for s in key_samples(db, graph, {"land": "t1", "stadt": "t2"}) if s.task == FK_SELECTION]
    declared = Database("w", db.tables, pks, (*fks, ForeignKey("land", ("hauptstadt",), "stadt", ("id",))))
    graph = SchemaGraph(declared, {"land": land, "stadt": stadt})
    assert [s for s in key_samples(declared, graph, {"land": "t1", "stadt": "t2"}) if s.task == FK_SELECTION]


def test_a_documented_label_is_carried_as_a_noun_phrase_never_as_a_clause_or_coding_note():
    from curate.curation.semantics import ColumnInfo
    from curate.generators.sql.render import column_words

    # "team seasons with won a wild card (Y or N) (`WCWin`) "N"": a clause with its coding note, pasted
    assert column_words("WCWin", ColumnInfo("WCWin", label="won a wild card (Y or N)")) == "`WCWin`"
    assert column_words("sex", ColumnInfo("sex", label="sex (1 = male, 0 = female)")) == "sex"
    assert column_words("vote", ColumnInfo("vote", label="whether the senator voted yes")) == "vote"
    assert column_words("male", ColumnInfo("male", label="1 if male")) == "male"
    # a unit in parentheses is part of the name, not a coding note; `pop` begins "population": no need to show it
    assert column_words("pop", ColumnInfo("pop", label="population (thousands)")) == "population (thousands)"
    assert column_words("WCWin", ColumnInfo("WCWin", label="wild card berth")) == "wild card berth (`WCWin`)"
