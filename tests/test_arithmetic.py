"""Structure read from the numbers (curation.arithmetic): aggregate rows with no label to say so, derived
columns, and the coincidences that must not count as either."""

from __future__ import annotations

import numpy as np

from curate.curation import arithmetic
from curate.curation.body import from_rows
from curate.curation.cleaning.rules import CleaningConfig, apply_rules
from curate.curation.table import Table, flat_header

# A BLS-like table: parents with no bold, indent or "Total" in the label, figures rounded to thousands
INDUSTRIES = [
    ("All industries", 40771, 41808),
    ("Mining", 736, 758),
    ("Construction", 7801, 8094),
    ("Manufacturing", 15570, 15791),
    ("Durable goods", 10065, 10222),
    ("Nondurable goods", 5506, 5568),
    ("Trade", 16664, 17165),
]


def table(columns: list[str], rows: list[tuple], name: str = "t") -> Table:
    return Table(name=name, body=from_rows(columns, [list(r) for r in rows]), header=flat_header(columns))


def test_parents_without_labels_are_read_from_their_sums() -> None:
    t = table(["industry", "2019", "2020"], INDUSTRIES)
    found = {(a.at, a.of) for a in arithmetic.row_relations(t)}
    # Manufacturing = Durable + Nondurable (15,571 against 15,570: within the rounding); the total then
    # sums the top level, Manufacturing standing for its two parts
    assert (3, (4, 5)) in found
    assert (0, (1, 2, 3, 6)) in found
    assert arithmetic.aggregate_rows(t) == {0, 3}


def test_cleaning_leaves_aggregates_out_of_the_data_view() -> None:
    from curate.curation.programs import data_view

    cleaned, _ = apply_rules(table(["industry", "2019", "2020"], INDUSTRIES), CleaningConfig())
    assert cleaned is not None and {0, 3} <= set(cleaned.summary_rows)
    kept = data_view(cleaned).column("industry").to_pylist()
    assert "Manufacturing" not in kept and "Durable goods" in kept  # the leaves: no part counted twice


def test_small_counts_and_smooth_series_make_no_aggregate() -> None:
    rng = np.random.default_rng(0)
    counts = table(["a", "b", "c"], [tuple(int(x) for x in rng.integers(0, 6, 3)) for _ in range(40)])
    series = table(["year", "gdp", "cpi"], [(1990 + i, round(100 * 1.03 ** i, 1), round(50 + 2.0 * i, 1))
                                           for i in range(30)])
    assert arithmetic.row_relations(counts) == [] and arithmetic.row_relations(series) == []


def test_columns_that_move_together_are_one_coincidence() -> None:
    # openintro's sowc_child_mortality (rows 81-92): Jordan's rates are Jamaica's plus Japan's within the
    # rounding in seven columns, but mortality by year, sex and age moves together over these three rows
    # (Japan is small, Jordan near a multiple of Jamaica): one coincidence, not seven
    columns = ["country", "u5_1990", "u5_2000", "u5_2018", "u5_male", "u5_female", "infant_1990", "infant_2018",
               "neonatal_1990", "neonatal_2000", "neonatal_2018"]
    rows = [("Iran", 56, 34, 14, 15, 14, 44, 12, 26, 19, 9), ("Iraq", 54, 44, 27, 29, 24, 42, 22, 26, 24, 15),
            ("Ireland", 9, 7, 4, 4, 3, 8, 3, 5, 4, 2), ("Israel", 12, 7, 4, 4, 3, 10, 3, 6, 4, 2),
            ("Italy", 10, 6, 3, 3, 3, 8, 3, 6, 3, 2), ("Jamaica", 30, 22, 14, 16, 13, 25, 12, 20, 17, 10),
            ("Japan", 6, 5, 2, 3, 2, 5, 2, 3, 2, 1), ("Jordan", 36, 27, 16, 18, 15, 30, 14, 20, 16, 9),
            ("Kazakhstan", 52, 43, 10, 11, 9, 44, 9, 22, 21, 6), ("Kenya", 107, 106, 41, 45, 37, 68, 31, 28, 28, 20),
            ("Kiribati", 95, 71, 53, 57, 48, 69, 41, 36, 29, 23), ("Kuwait", 18, 12, 8, 9, 7, 15, 7, 10, 7, 4)]
    assert arithmetic.row_relations(table(columns, rows)) == []
    # a subtotal whose columns do not move together is still read
    assert arithmetic.aggregate_rows(table(["industry", "2019", "2020"], INDUSTRIES)) == {0, 3}


def test_a_column_of_small_figures_does_not_tie_the_telling_ones_together() -> None:
    """A BLS sheet (RealHiTBench employment-table15): women 20 years and over = 20 to 24 + 25 and over in
    every industry. Mining's 12 = 1 + 11 is a multiple of any column within its rounding, and must not
    make construction (286 = 24 + 262), manufacturing and trade one coincidence."""
    from curate.curation.sources.readers import xlsx
    from tests.conftest import shared

    [sheet] = xlsx.read(str(shared("realhitbench", "tables", "employment-table15.xlsx")), [])
    labels = sheet.body.column(0).to_pylist()
    assert labels[70:75] == ["Women, 16 years and over", "16 to 19 years", "20 years and over", "20 to 24 years",
                             "25 years and over"]
    found = {(a.at, a.of) for a in arithmetic.row_relations(sheet)}
    assert (72, (73, 74)) in found and (70, (71, 72)) in found


def test_derived_columns_are_found_and_recorded_as_inputs() -> None:
    rng = np.random.default_rng(1)
    rows = []
    for _ in range(30):
        altitude, lateral = float(rng.integers(100, 900)), round(float(rng.uniform(1, 9)), 2)
        d85, d90 = round(float(rng.uniform(5, 15)), 1), round(float(rng.uniform(5, 15)), 1)
        rows.append((altitude, lateral, round(altitude * lateral, 2), d85, d90, round(d90 - d85, 1)))
    t = table(["Altitude", "Lateral", "AltLat", "dthrte85", "dthrte90", "cdthrte"], rows)
    found = {t.columns[j]: (how, tuple(t.columns[k] for k in of)) for j, (how, of) in arithmetic.column_inputs(t).items()}
    assert found["AltLat"] == ("product", ("Altitude", "Lateral"))
    assert found["cdthrte"][0] == "difference" and set(found["cdthrte"][1]) == {"dthrte85", "dthrte90"}
    cleaned, _ = apply_rules(t, CleaningConfig())
    info = {i.name: i for i in cleaned.semantics}
    assert set(info["AltLat"].inputs) == {"Altitude", "Lateral"} and info["Altitude"].inputs == ()

    from curate.generators.rules.profile import TableProfile

    profile = TableProfile(cleaned)
    at = profile.numeric.index
    assert profile.related[at("AltLat"), at("Lateral")] and not profile.related[at("Altitude"), at("Lateral")]


def test_report_numbers_rows_as_a_text_file_does() -> None:
    out = arithmetic.report(table(["industry", "2019", "2020"], INDUSTRIES))
    assert {"row": 5, "of": [6, 7], "kind": "sum", "columns_agreeing": 2} in out["aggregates"]  # header is line 1


def test_a_computed_cell_is_asked_and_answered_as_shown() -> None:
    from curate.generators.rules.catalog import load_templates
    from curate.generators.rules.emit import SampleColumns
    from curate.generators.rules.engine import Stats, generate_for_table

    rows = [(f"Set {i}", 1.0 + i / 7.0, float(10 * i)) for i in (1, 2, 3, 4, 5, 6, 8, 9)]  # 3.142857142857143
    cleaned, _ = apply_rules(table(["set", "fold change", "count"], rows), CleaningConfig())
    out = SampleColumns()
    generate_for_table(cleaned, load_templates(only=["tu.cell_lookup"]), 0, out, [], Stats())
    samples = out.to_arrow().to_pylist()
    noisy = [s for s in samples if "fold change" in s["question"]]
    assert noisy and all(s["question"].endswith("Round to 2 decimals.") and len(s["answer"].partition(".")[2]) <= 2
                         for s in noisy)
    assert all("Round" not in s["question"] for s in samples if "count" in s["question"])


def test_every_table_without_a_question_is_counted_with_its_reason(tmp_path) -> None:
    import pyarrow.parquet as pq

    from curate.curation.arrow_io import tables_to_arrow
    from curate.curation.pipeline.reports import CleanReport
    from curate.generators.rules.stage import RulesReport, RulesStage

    asked, _ = apply_rules(table(["industry", "2019", "2020"], INDUSTRIES), CleaningConfig())
    silent, _ = apply_rules(table(["code", "label"], [(f"x{i}", f"item {i}") for i in range(6)], name="codes"),
                            CleaningConfig())
    path = tmp_path / "tables.parquet"
    pq.write_table(tables_to_arrow([asked, silent]), path)
    _, summary = RulesStage().run_part({"file": str(path), "start": 0, "stop": 2}, {}, {})
    assert summary["samples"] > 0 and sum(summary["without_questions"].values()) == 1
    line = RulesReport.from_json(summary).summary()
    assert "1 tables gave no question (" in line
    assert CleanReport.from_json({"tables_in": 3, "kept": 2, "dropped_by": {"header": 1}}).summary() \
        == "kept 2 of 3 tables; dropped: header 1"


def test_a_nested_parent_is_summed_before_its_own_parent() -> None:
    # BLS hours of work: "41 hours and over" sums three rows and is itself a part of "35 hours and over"
    rows = [("Total, persons at work", 155167, 2179), ("1 to 34 hours", 34869, 587), ("1 to 4 hours", 1613, 42),
            ("5 to 14 hours", 5475, 134), ("15 to 29 hours", 17082, 269), ("30 to 34 hours", 10699, 142),
            ("35 hours and over", 120298, 1592), ("35 to 39 hours", 9390, 97), ("40 hours", 76549, 737),
            ("41 hours and over", 34359, 758), ("41 to 48 hours", 12184, 141), ("49 to 59 hours", 13453, 247),
            ("60 hours and over", 8722, 370)]
    found = {a.at: a.of for a in arithmetic.row_relations(table(["hours", "all", "agriculture"], rows))}
    assert found == {9: (10, 11, 12), 6: (7, 8, 9), 1: (2, 3, 4, 5), 0: (1, 6)}


def test_numbers_remembered_for_one_table_are_never_another_tables() -> None:
    """The clean stage reads a table's numbers once (arithmetic._of_body); a table read next, or read again
    after another, gets its own."""
    parents = table(["industry", "2019", "2020"], INDUSTRIES)
    no_sums = table(["industry", "2019", "2020"],
                    [(name, a + 7 * i, b - 3 * i) for i, (name, a, b) in enumerate(INDUSTRIES)])
    assert arithmetic.aggregate_rows(parents) == {0, 3}
    assert arithmetic.aggregate_rows(no_sums) == set()
    same_body = parents.replace(flags=("hierarchical",))  # the clean stage's marked copy: one body, read once
    assert arithmetic.numbers(same_body, [1, 2]) is arithmetic.numbers(parents, [1, 2])
    assert arithmetic.aggregate_rows(parents) == {0, 3}
    assert not np.array_equal(arithmetic.numbers(no_sums, [1, 2]).values, arithmetic.numbers(parents, [1, 2]).values)


def test_a_total_holds_in_the_counts_though_medians_and_errors_beside_them_do_not_add() -> None:
    """A CPS table: workers (thousands) by age group, each beside its median weekly earnings and that median's
    standard error. "Total" is the sum of the two age groups and "16 to 24" of its two parts in the counts;
    the medians never add up, and only outnumber the counts, so they must not outvote them."""
    columns = ["group", "workers", "median", "error", "men", "men_median", "women", "women_median"]
    rows = [("Total, 16 years and older", 117584, 1139, 4.1, 62695, 1255, 54889, 1021),
            ("16 to 24 years", 13160, 692, 5.2, 6980, 721, 6180, 655),
            ("16 to 19 years", 1914, 529, 9.7, 1000, 540, 914, 505),
            ("20 to 24 years", 11246, 710, 5.5, 5980, 738, 5266, 676),
            ("25 years and older", 104424, 1204, 4.3, 55715, 1318, 48709, 1075),
            ("25 to 34 years", 28120, 1051, 5.0, 15310, 1097, 12810, 994),
            ("35 to 54 years", 51402, 1292, 4.8, 27520, 1431, 23882, 1113),
            ("55 years and older", 24902, 1250, 6.1, 12885, 1380, 12017, 1090)]
    found = {(a.at, a.of) for a in arithmetic.row_relations(table(columns, rows))}
    assert found == {(0, (1, 4)), (1, (2, 3)), (4, (5, 6, 7))}


def test_a_section_that_sums_its_sibling_sections_is_an_aggregate_row_by_row() -> None:
    """BLS's employment by age and sex: the Total section's "16 to 17 years" is Men's plus Women's, though
    no block of rows beside it adds up to it; left in, every age group would be counted twice."""
    rng = np.random.default_rng(7)
    ages = ["16 to 19 years", "16 to 17 years", "18 to 19 years", "20 to 24 years", "25 to 54 years", "55 years and over"]

    def people() -> list[list[int]]:
        young = rng.integers(200, 900, size=(2, 4))  # 16 to 17, 18 to 19
        rest = rng.integers(1000, 60000, size=(3, 4))
        return [list(young.sum(axis=0)), *map(list, young), *map(list, rest)]

    men, women = people(), people()
    total = [[a + b for a, b in zip(m, w)] for m, w in zip(men, women)]

    def section(name: str, parts: list[list[int]]) -> list[tuple]:
        head = [sum(p[j] for k, p in enumerate(parts) if k not in (1, 2)) for j in range(4)]
        return [(f"{name}, 16 years and over", *map(int, head))] + [(age, *map(int, p)) for age, p in zip(ages, parts)]

    rows = section("Total", total) + section("Men", men) + section("Women", women)
    found = {(a.at, a.of) for a in arithmetic.row_relations(table(["group", "all", "wage", "self", "family"], rows))}
    assert (0, (7, 14)) in found and (1, (2, 3)) in found  # the sections and the age bands, as before
    assert {(r, (r + 7, r + 14)) for r in range(1, 7)} <= found  # and each row of the Total section
    assert all(a[0] < 7 or a[1] == (a[0] + 1, a[0] + 2) or min(a[1]) == a[0] + 1 for a in found)  # Men's rows sum no Women's


def test_a_grand_total_of_more_rows_than_any_block_is_still_read() -> None:
    """A price list's "Grand Total" under 81 product sizes: longer than any block a subtotal heads, but one
    hypothesis (the total of everything above it), so it needs no more evidence than a short one."""
    rng = np.random.default_rng(3)
    rows = [(f"size {20 + 5 * i}", int(rng.integers(1, 40)), round(float(rng.uniform(1, 30)), 1)) for i in range(81)]
    rows.append(("Grand Total", sum(r[1] for r in rows), round(sum(r[2] for r in rows), 1)))
    found = arithmetic.row_relations(table(["size", "count", "weight"], rows))
    assert [(a.at, a.of) for a in found] == [(81, tuple(range(81)))]


def test_a_member_listed_twice_enters_its_total_once() -> None:
    """Held-out review 7: "ec6 (1958)" is the sum of its six members, but Luxembourg and the Netherlands are
    each listed twice (one figure changed); summed twice, no block added up, the total stayed a country and
    a correlation over the members counted it."""
    rows = [("belgium", 9052707, 30528, 58.316, 46878), ("france", 44788852, 674843, 312.966, 40690),
            ("west germany", 54292038, 248717, 400.554, 41168), ("italy", 49476000, 301336, 265.192, 30116),
            ("luxembourg", 310291, 2586, 2.938, 113533), ("luxembourg", 100000000, 2586, 2.938, 113533),
            ("netherlands", 11186847, 41526, 83.351, 50355), ("netherlands", 11186847, 41526, 83.351, 1000),
            ("ec6 (1958)", 169106736, 1299536, 1123.317, 6643)]
    columns = ["member countries", "population", "area", "gdp", "gdp per capita"]
    found = arithmetic.row_relations(table(columns, rows))
    assert [(a.at, a.of) for a in found] == [(8, (0, 1, 2, 3, 4, 6))]
    distinct = [r for r in rows if r[0] != "luxembourg" or r[1] == 310291]  # another country of the same name
    distinct[5] = ("new netherlands", *distinct[5][1:3], 90.0, distinct[5][4])
    assert arithmetic.row_relations(table(columns, distinct[:-1] + [rows[-1]])) == []
