"""Key inference (issue 24): keys a reader could defend, each with its evidence.

Foreign keys need full inclusion (a handful of unmatched values at most, each named in the
evidence), matching entities (no dates or row numbers as join columns), a referenced column that
names things (not a measure unique by chance) and one subject (a generic column such as
`country` joins only one dataset's tables, or a table about that entity).
"""

from __future__ import annotations

import json

import pyarrow as pa
import pytest

from curate.curation.keys import MAX_UNMATCHED, infer_keys
from tests.conftest import shared


def fk_set(fks):
    return {(f.table, f.columns, f.ref_table, f.ref_columns) for f in fks}


def pk_map(pks):
    return {k.table: k.columns for k in pks}


STATES = [f"State {i}" for i in range(40)]


def test_a_foreign_key_needs_every_value_in_the_referenced_key_save_a_handful_named_in_the_evidence():
    regions = pa.table({"region_id": [f"R{i}" for i in range(100)], "name": [f"n{i}" for i in range(100)]})
    few_missing = pa.table({"sale_id": list(range(1, 101)),
                            "region_id": [f"R{i}" for i in range(96)] + ["X1", "X2", "X3", "X4"]})
    many_missing = pa.table({"visit_id": list(range(1, 101)),
                             "region_id": [f"R{i}" for i in range(89)] + [f"Y{i}" for i in range(11)]})
    _, fks = infer_keys({"regions": regions, "sales": few_missing, "visits": many_missing})
    assert fk_set(fks) == {("sales", ("region_id",), "regions", ("region_id",))}
    (fk,) = fks
    assert "96 of 100" in fk.evidence and "not found: X1, X2, X3, X4" in fk.evidence
    assert MAX_UNMATCHED <= 5  # "a handful"


def test_dates_months_and_quarters_are_never_join_columns():
    days = [f"2020-01-{d:02d}" for d in range(1, 29)]
    prices = pa.table({"date": days, "price": [float(i) for i in range(28)]})
    polls = pa.table({"startdate": days[:20], "pollster": ["A", "B"] * 10})
    quarters = pa.table({"Quarter": [f"{1990 + i // 4} Q{i % 4 + 1}" for i in range(40)], "gdp": list(range(40))})
    arrivals = pa.table({"Quarter": [f"{1990 + i // 4} Q{i % 4 + 1}" for i in range(40)] * 2,
                         "origin": ["UK"] * 40 + ["US"] * 40})
    pks, fks = infer_keys({"prices": prices, "polls": polls, "gdp": quarters, "arrivals": arrivals})
    assert fks == []
    assert pk_map(pks)["prices"] == ("date",)  # a time series' date still names its rows
    assert pk_map(pks)["arrivals"] == ("Quarter", "origin")  # a thing and a time, together


def test_measures_unique_by_chance_are_no_keys():
    votes = pa.table({"state": STATES * 2, "year": [1990] * 40 + [1994] * 40,
                      "inexp90": list(range(1000, 1080)), "share": [i / 100 for i in range(80)],
                      "rate": [f"{i}/{1000 + i}" for i in range(80)], "count": list(range(80, 160))})
    pks, _ = infer_keys({"vote": votes})
    assert pk_map(pks) == {"vote": ("state", "year")}  # the composite key, in full


def test_the_code_column_is_the_key_not_its_wording():
    regions = pa.table({"x048wvs": [840001 + i for i in range(9)],
                        "x048wvsmeaning": [f"US: Region {i}" for i in range(9)]})
    pks, _ = infer_keys({"regions": regions})
    assert pk_map(pks) == {"regions": ("x048wvs",)}


def test_a_generic_column_joins_one_dataset_or_a_table_about_that_entity_never_unrelated_tables():
    coups = pa.table({"country": STATES[:30], "coups": list(range(30))})
    hegemony = pa.table({"country": STATES, "score": [float(i) for i in range(40)]})
    wvs_a = pa.table({"country": STATES, "immig": list(range(40))})
    wvs_b = pa.table({"country": STATES[:35] * 2, "wave": [1] * 35 + [2] * 35})
    state_info = pa.table({"state": STATES, "region": ["N", "S"] * 20})
    elections = pa.table({"state": STATES[:38] * 2, "year": [2000] * 38 + [2004] * 38})
    _, fks = infer_keys({"african_coups": coups, "GHR04": hegemony, "wvs_immig": wvs_a, "wvs_waves": wvs_b,
                         "state.info": state_info, "presidentialElections": elections})
    assert fk_set(fks) == {("wvs_waves", ("country",), "wvs_immig", ("country",)),  # one dataset: wvs_
                           ("presidentialElections", ("state",), "state.info", ("state",))}  # a table of states


def test_row_numbers_of_two_studies_are_no_reference():
    gbsg = pa.table({"pid": list(range(1, 687)), "age": [40 + i % 30 for i in range(686)]})
    rotterdam = pa.table({"pid": list(range(1, 2983)), "size": [i % 50 for i in range(2982)]})
    plots = pa.table({"plot_id": list(range(1, 25)), "plot_type": ["a", "b", "c"] * 8})
    surveys = pa.table({"record_id": list(range(1, 101)), "plot_id": [1 + i % 24 for i in range(100)]})
    _, fks = infer_keys({"gbsg": gbsg, "rotterdam": rotterdam, "plots": plots, "surveys": surveys})
    assert fk_set(fks) == {("surveys", ("plot_id",), "plots", ("plot_id",))}  # named after its table


def test_two_tables_that_include_each_other_keep_one_direction():
    bakers = pa.table({"baker_full": [f"Baker {i}" for i in range(20)], "age": list(range(20, 40))})
    bakers_raw = pa.table({"baker_full": [f"Baker {i}" for i in range(20)], "hometown": [f"t{i}" for i in range(20)]})
    _, fks = infer_keys({"bakers": bakers, "bakers_raw": bakers_raw})
    assert len(fks) == 1


def test_a_link_table_is_keyed_by_its_pair_of_references():
    students = pa.table({"student_id": [1001, 1002, 1003], "name": ["a", "b", "c"]})
    pets = pa.table({"pet_id": [2001, 2002, 2003], "kind": ["cat", "dog", "dog"]})
    has_pet = pa.table({"student_id": [1001, 1002, 1002], "pet_id": [2001, 2002, 2003]})
    pks, fks = infer_keys({"students": students, "pets": pets, "has_pet": has_pet})
    assert pk_map(pks)["has_pet"] == ("student_id", "pet_id")
    assert fk_set(fks) == {("has_pet", ("student_id",), "students", ("student_id",)),
                           ("has_pet", ("pet_id",), "pets", ("pet_id",))}


def test_text_holding_whole_numbers_references_an_integer_key():
    stadiums = pa.table({"stadion_id": [1, 2, 3, 4], "name": ["w", "x", "y", "z"]})
    concerts = pa.table({"konzert_id": [1, 2, 3, 4, 5], "stadion_id": ["1", "2", "2", "3", "4"]})
    _, fks = infer_keys({"stadion": stadiums, "konzert": concerts})
    assert fk_set(fks) == {("konzert", ("stadion_id",), "stadion", ("stadion_id",))}


@pytest.mark.integration
def test_key_inference_on_spider_and_mmqa_reaches_095_precision_and_recall():
    shared("spider")
    from benchmarks.key_inference import part_of, summarize
    from curate.generators.sql.schema import run_keys
    from tests.test_cli import invoke

    assert part_of("pets_1") == "held_out" and part_of("car_1") == "tuning"  # fixed by the name's md5
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as tmp:
        ws = str(Path(tmp) / "ws")
        # spider/database, not spider/more: the 40 databases added later are issue 45's unseen set, measured
        # by benchmarks/key_inference.py on their own
        sources = [str(shared("spider", "database")), str(shared("mmqa", "mmqa_samples.json"))]
        assert invoke("ingest", *sources, "-w", ws, "-q").exit_code == 0
        parts = summarize(run_keys(ws)["databases"])
    agree = sum(p["foreign_keys"]["agree"] for p in parts.values())
    inferred = sum(p["foreign_keys"]["inferred"] for p in parts.values())
    declared = sum(p["foreign_keys"]["declared"] for p in parts.values())
    assert agree / inferred >= 0.95 and agree / declared >= 0.95, json.dumps(parts)


def test_two_versions_of_one_dataset_are_joined_by_no_key():
    """A raw and a cleaned copy (the same columns, the same values) or two tables one help page
    documents (tidyr's reshapings of one dataset) are one table twice, not two related tables."""
    names = [f"Baker {i}" for i in range(30)]
    bakers = pa.table({"baker_full": names, "age": list(range(20, 50)), "hometown": [f"t{i}" for i in range(30)],
                       "technical_winner": [i % 4 for i in range(30)]})
    bakers_raw = pa.table({"baker_full": names[:20], "age": list(range(20, 40)), "hometown": [f"t{i}" for i in range(20)]})
    assert infer_keys({"bakers": bakers, "bakers_raw": bakers_raw})[1] == []

    school = pa.table({"school_id": list(range(1, 21)), "size": [100 + 7 * i for i in range(20)],
                       "region": ["north", "south"] * 10})
    student = pa.table({"school_id": [1 + i % 20 for i in range(200)], "score": [i % 97 for i in range(200)],
                        "age": [14 + i % 5 for i in range(200)], "hours": [i % 11 for i in range(200)],
                        "size": [3 * i for i in range(200)], "region": ["east"] * 200})  # same names, other values
    assert fk_set(infer_keys({"school": school, "student": student})[1]) == {
        ("student", ("school_id",), "school", ("school_id",))}

    table1 = pa.table({"country": ["Afghanistan", "Brazil", "China"] * 2, "year": [1999] * 3 + [2000] * 3,
                       "cases": [745, 37737, 212258, 2666, 80488, 213766]})
    table4a = pa.table({"country": ["Afghanistan", "Brazil", "China"], "1999": [745, 37737, 212258],
                        "2000": [2666, 80488, 213766]})
    bodies = {"table1": table1, "table4a": table4a}
    assert infer_keys(bodies)[1]  # on the data alone the countries match...
    one_page = {"table1": "Example tabular representations", "table4a": "Example tabular representations"}
    assert infer_keys(bodies, titles=one_page)[1] == []  # ...but one page documents both


def test_two_seasons_of_one_schema_are_not_related_tables():
    """NFL standings of 2007 and of 2016 hold the same columns for (mostly) the same teams: joining
    them on the team asks of one table in two periods, not of related things."""
    teams = [f"Team {i}" for i in range(32)]
    season = {"Wins": [i % 14 for i in range(32)], "Losses": [(i * 3) % 14 for i in range(32)],
              "PointsFor": [300 + 7 * i for i in range(32)], "TDs": [30 + i for i in range(32)]}
    y2007 = pa.table({"Team": teams, **season})
    y2016 = pa.table({"Team": teams[:31] + ["Los Angeles Rams"], **{k: v[::-1] for k, v in season.items()},
                      "Ties": [i % 2 for i in range(32)]})
    assert infer_keys({"NFL2007Standings": y2007, "NFLStandings2016": y2016})[1] == []
