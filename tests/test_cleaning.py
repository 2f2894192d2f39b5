"""Each cleaning rule at its boundary."""

from __future__ import annotations

import pyarrow as pa
import pytest

from curate.curation.cleaning.rules import CleaningConfig, apply_rules, rule_columns, rule_empty, rule_header, rule_size, rule_summary
from curate.curation.table import HeaderNode, Table

DEFAULT = CleaningConfig()


def text_table(total_chars: int) -> Table:
    """Two columns whose cells hold exactly `total_chars` characters in all."""
    per_cell = 100
    cells = total_chars // per_cell
    values = ["x" * per_cell] * cells
    rest = total_chars - cells * per_cell
    if rest:
        values.append("y" * rest)
    if len(values) % 2:
        values.append("")
    half = len(values) // 2
    return Table(name="t", body=pa.table({"a": values[:half], "b": values[half:]}))


def test_exactly_30000_characters_is_kept_and_one_more_is_dropped():
    assert rule_size(text_table(30_000), DEFAULT).action == "keep"
    verdict = rule_size(text_table(30_001), DEFAULT)
    assert verdict.action == "drop" and verdict.score > 30_000


def test_numbers_count_as_their_text():
    t = Table(name="t", body=pa.table({"a": [12345] * 3000, "b": [1.5] * 3000}))  # 5*3000 + 3*3000 = 24,000
    assert rule_size(t, DEFAULT).score == 24_000


def test_exactly_70_percent_empty_is_kept_and_more_is_dropped():
    # 7 + 7 = 14 of 20 cells empty (null, NaN, blank text): exactly 70%
    seventy = Table(name="t", body=pa.table({"a": ["1", "2", "3", "", " ", None, None, None, None, None],
                                             "b": [1.0, 2.0, 3.0, None, None, None, None, None, None, float("nan")]}))
    assert rule_empty(seventy, DEFAULT).score == pytest.approx(0.7)
    assert rule_empty(seventy, DEFAULT).action == "keep"
    more = Table(name="t", body=pa.table({"a": ["1", "2", None, "", " ", None, None, None, None, None],
                                          "b": [1.0, 2.0, 3.0, None, None, None, None, None, None, float("nan")]}))
    assert rule_empty(more, DEFAULT).action == "drop"


def test_thresholds_come_from_the_config():
    assert rule_size(text_table(500), CleaningConfig(max_total_chars=400)).action == "drop"
    with pytest.raises(ValueError, match="unknown \\[clean\\] setting"):
        CleaningConfig.from_dict({"max_chars": 1})


def test_degenerate_tables_are_dropped():
    one_row = Table(name="t", body=pa.table({"a": [1], "b": [2]}))
    one_col = Table(name="t", body=pa.table({"a": [1, 2, 3]}))
    two_by_two = Table(name="t", body=pa.table({"a": [1, 2], "b": [3, 5]}))
    assert apply_rules(one_row, DEFAULT)[0] is None
    assert apply_rules(one_col, DEFAULT)[0] is None
    assert apply_rules(two_by_two, DEFAULT)[0] is not None


def test_nested_header_is_flagged_for_the_hierarchical_track_or_dropped():
    body = pa.table({"A / x": [1, 2], "A / y": [3, 4]})
    header = (HeaderNode("C", 0, 0, 1, "A"), HeaderNode("C", 1, 0, 0, "x"), HeaderNode("C", 1, 1, 1, "y"))
    nested = Table(name="t", body=body, header=header)
    kept, _ = apply_rules(nested, DEFAULT)
    assert kept is not None and "hierarchical" in kept.flags
    assert apply_rules(nested, CleaningConfig(keep_hierarchical=False))[0] is None


def test_non_standard_header_is_dropped():
    unnamed = Table(name="t", body=pa.table({"Unnamed: 0": [1, 2], "column 2": [3, 4], "ok": [5, 6]}))
    assert rule_header(unnamed, DEFAULT).action == "drop"
    years = Table(name="t", body=pa.table({"region": ["a", "b"], "1940": [3, 4], "1945": [5, 6]}))
    assert rule_header(years, DEFAULT).action == "keep"


def test_summary_rows_and_columns_by_keyword_and_by_sum():
    t = Table(name="t", body=pa.table({
        "region": ["North", "South", "East", "Total"],
        "sales": [10.0, 20.0, 30.0, 60.0], "costs": [1.0, 2.0, 3.0, 6.0], "Average": [5.5, 11.0, 16.5, 33.0]}))
    v = rule_summary(t, DEFAULT)
    assert v.action == "flag" and v.marks["summary_rows"] == (3,) and v.marks["summary_columns"] == (3,)
    by_sum = Table(name="t", body=pa.table({"a": [1.0, 2.0, 3.0], "b": [4.0, 5.0, 9.0], "c": [5.0, 7.0, 12.0]}))
    assert rule_summary(by_sum, DEFAULT).marks["summary_columns"] == (2,)  # c = a + b
    assert rule_summary(by_sum, DEFAULT).marks["summary_rows"] == (2,)  # row 3 = row 1 + row 2
    plain = Table(name="t", body=pa.table({"a": [1.0, 5.0, 3.0], "b": [2.0, 9.0, 4.0]}))
    assert rule_summary(plain, DEFAULT).action == "keep"


def test_names_that_merely_start_with_a_keyword_are_data_not_summaries():
    """MASS/UScereal: "All-Bran" and the cereal "Total Raisin Bran" are rows like any other."""
    names = ["100% Bran", "All-Bran", "Cheerios", "Total Raisin Bran", "Wheaties", "Life", "All", "Total 1990"]
    table = Table(name="cereal", body=pa.table({"name": names, "fat": [1.0, 1, 2, 1, 1, 2, 8, 8],
                                                "sugar": [6.0, 5, 1, 14, 3, 6, 35, 35]}))
    verdict = rule_summary(table, CleaningConfig())
    assert verdict.marks["summary_rows"] == (6, 7)  # a bare "All", and "Total ..." in the last rows


def test_a_label_ending_in_total_in_the_last_rows_is_a_summary():
    """TableBench's ISAF troops: the last row, "isaf exact total", is not the sum of the rows above (they add
    to 113,112, it says 112,579), so only its label says it is no country; in the middle rows the same
    words would be data."""
    names = ["united states", "united kingdom", "germany", "total security", "italy", "isaf exact total"]
    table = Table(name="isaf", body=pa.table({"country": names, "troops": [74400, 9500, 4318, 120, 3770, 112579]}))
    assert rule_summary(table, CleaningConfig()).marks["summary_rows"] == (5,)
    countries = Table(name="cities", body=pa.table({"country": ["china", "india", "world", "japan", "usa", "world"],
                                                    "2010": [1341.3, 1230.9, 6916.2, 128.1, 309.3, 6916.2]}))
    assert rule_summary(countries, CleaningConfig()).marks["summary_rows"] == (5,)  # the world of its last row
    # a held-out review: the ranked countries' "world" row, its rank blank, was correlated with them
    ranked = Table(name="wine", body=pa.table({"rank": [1, 2, 3, 4, None], "country": ["china", "italy", "chile", "iran", "world"],
                                               "2009": [8038703, 8242500, 2600000, 2305000, 58521410],
                                               "2010": [8651831, 7787800, 2903000, 2225000, 58292101]}))
    assert rule_summary(ranked, CleaningConfig()).marks["summary_rows"] == (4,)


def test_a_foot_row_where_a_repeated_label_column_stops_repeating_is_no_data():
    """A prediction pool names each player again beside their points; its last row is the week's results
    and the prize pot (114 in a score column), which a skewness over the players read as one more player."""
    players = ["MARC HILTON", "JOHN CROSS", "MARK DAVIES", "BARRY TRAVIS", "JEFF LYNCH", "MICK TOOTLE"]
    table = Table(name="pool", body=pa.table({
        "column 1": [*players, "OFFICIAL FINAL SCORES"], "BRENTFORD": [2, 2, 2, 2, 2, 1, 1],
        "column 8": [*players, "WEEK 3 PRIZE POT IS"], "TEAM SCORE": [1, 1, 2, 0, 1, 2, 114]}))
    assert rule_summary(table, CleaningConfig()).marks["summary_rows"] == (6,)
    again = Table(name="pool", body=pa.table({"column 1": players, "column 8": players, "TEAM SCORE": [1, 1, 2, 0, 1, 2]}))
    assert rule_summary(again, CleaningConfig()).action == "keep"


def test_empty_and_constant_columns_are_flagged_and_all_of_them_drops():
    t = Table(name="t", body=pa.table({"a": [1, 2, 3], "empty": [None, None, None], "same": ["k", "k", "k"]}))
    v = rule_columns(t, DEFAULT)
    assert v.action == "flag" and v.marks == {"empty_columns": (1,), "constant_columns": (2,)}
    kept, _ = apply_rules(t, DEFAULT)
    assert kept.empty_columns == (1,) and kept.constant_columns == (2,) and kept.id == t.id
    nothing = Table(name="t", body=pa.table({"a": [1, 1, 1], "b": [None, None, None]}))
    assert rule_columns(nothing, DEFAULT).action == "drop"


def test_clean_stage_drops_duplicates_and_reports_by_rule(tmp_path, workspace, inline):
    from curate.curation.commands import run_clean, run_ingest

    src = tmp_path / "in"
    src.mkdir()
    (src / "a.csv").write_text("x,y\n1,2\n3,4\n")
    (src / "b.csv").write_text("x,y\n1,2\n3,4\n")  # same content, other name
    (src / "c.csv").write_text("x,y\n1,2\n")  # one row: degenerate
    (src / "d.csv").write_text("x,y\n5,6\n7,9\n")
    run_ingest(workspace, [str(src)], executor=inline)
    report = run_clean(workspace, executor=inline)
    assert (report["tables_in"], report["kept"], report["dropped"]) == (4, 2, 2)
    assert report["rules"]["duplicate"]["drop"] == 1 and report["rules"]["degenerate"]["drop"] == 1
    assert report["examples"]["duplicate:drop"] == ["b: same content as a"]
    names = sorted(t.name for t in workspace.current("clean")[0].records("tables"))
    assert names == ["a", "d"]


def test_a_keyword_that_is_a_level_of_a_factor_marks_no_summary_row():
    # heplots' MockJury: photos rated Beautiful, Average or Unattractive; "Average" is data, 1 row in 3
    attractiveness = ["Beautiful", "Average", "Unattractive"] * 12
    table = Table(name="jury", body=pa.table({"Attr": attractiveness, "years": [float(i % 7 + 1) for i in range(36)],
                                              "warm": [i % 9 + 1 for i in range(36)]}))
    assert rule_summary(table, CleaningConfig()).action == "keep"
    with_total = Table(name="jury", body=pa.table({"Attr": [*attractiveness[:12], "Total"],
                                                   "years": [*[float(i + 1) for i in range(12)], 78.0]}))
    assert rule_summary(with_total, CleaningConfig()).marks["summary_rows"] == (12,)


def test_statistic_rows_in_any_label_column_are_summaries_not_cases():
    """A class's marks with "Maximum marks" on top and Mean and SD rows under the pupils, the
    statistics written in column B beside a blank column A: none of them is a pupil."""
    table = Table(name="marks", body=pa.table({
        "class": ["JSS 1A", None, None, None, None, None, None],
        "name": ["Maximum marks", "Ade", "Bola", "Chidi", "Dayo", "Mean", "SD"],
        "test 1": [20.0, 14, 17, 9, 12, 13.0, 3.4], "test 2": [30.0, 21, 25, 18, 27, 22.75, 4.0]}))
    assert rule_summary(table, CleaningConfig()).marks["summary_rows"] == (0, 5, 6)
    described = Table(name="describe", body=pa.table({"statistic": ["Mean", "SD", "Min", "Max"],
                                                      "height": [170.2, 8.1, 151.0, 192.0]}))
    assert rule_summary(described, CleaningConfig()).action == "keep"  # statistics on every row are the data


def test_a_state_code_that_spells_a_statistic_is_a_state():
    codes = ["MT", "NE", "NV", "NH", "NJ", "NM", "NY", "NC", "ND", "OH", "OK", "OR", "PA", "RI", "SC", "SD", "TN",
             "TX", "UT", "VT", "VA", "WA", "WV", "WI", "WY"]
    table = Table(name="states", body=pa.table({"state": codes, "murders": [float(i * 3 % 17) for i in range(25)]}))
    assert rule_summary(table, CleaningConfig()).action == "keep"
