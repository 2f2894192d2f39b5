"""Rule questions over hierarchical tables (RealHiTBench's track): they navigate the header tree.

A part is found by its path, a sum leaves out the summary nodes, a group's total is checked
against its parts, a chart's gold is the values it must plot, and a Structure Comprehending
question asked of a copy with two sibling blocks exchanged has a gold that follows the swap.
Every gold is re-computed by DuckDB from the stored program.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pyarrow as pa
import pytest

from curate.curation.answers import answers_match
from curate.curation.header_tree import Exchange, branches, children_labels, find_exchange
from curate.curation.programs import run_program
from curate.curation.sample import Program
from curate.curation.table import HeaderNode, Table
from curate.generators.rules.catalog import load_templates
from curate.generators.rules.emit import SampleColumns
from curate.generators.rules.engine import Stats, generate_for_table
from curate.generators.rules.ops.tree import TreeView, sum_of_parts
from tests.conftest import shared

C = lambda level, start, end, text: HeaderNode("C", level, start, end, text)  # noqa: E731
R = lambda level, start, end, text: HeaderNode("R", level, start, end, text)  # noqa: E731

# Cereals' own row is the sum of Wheat and Barley; Pulses' own row is off by 7 in every column;
# "All crops" closes the top level. North and South each have two years; Total is the last column.
CROPS = ["Cereals", "Wheat", "Barley", "Pulses", "Peas", "Beans", "All crops"]
NUMBERS = {"North / 2019": [30, 10, 20, 12, 2, 3, 42], "North / 2020": [33, 11, 22, 16, 4, 5, 49],
           "South / 2019": [70, 30, 40, 15, 3, 5, 85], "South / 2020": [75, 35, 40, 17, 4, 6, 92]}
NUMBERS["Total"] = [sum(v[i] for v in NUMBERS.values()) for i in range(len(CROPS))]


def crops_table() -> Table:
    header = (C(0, 0, 0, "Crop"), C(0, 1, 2, "North"), C(1, 1, 1, "2019"), C(1, 2, 2, "2020"),
              C(0, 3, 4, "South"), C(1, 3, 3, "2019"), C(1, 4, 4, "2020"), C(0, 5, 5, "Total"),
              R(0, 0, 2, "Cereals"), R(1, 1, 1, "Wheat"), R(1, 2, 2, "Barley"),
              R(0, 3, 5, "Pulses"), R(1, 4, 4, "Peas"), R(1, 5, 5, "Beans"), R(0, 6, 6, "All crops"))
    body = pa.table({"Crop": CROPS, **NUMBERS})
    return Table(name="crops", body=body, header=header, caption="Harvest by region (thousand tonnes)")


def generate(table: Table, only: list[str]) -> tuple[list[dict], dict[str, Table]]:
    out, derived, stats = SampleColumns(), [], Stats()
    generate_for_table(table, load_templates(only=only), 0, out, derived, stats)
    tables = {table.id: table, **{t.id: t for t in derived}}
    return (out.to_arrow().to_pylist() if len(out) else []), tables


def first_quoted(question: str, among) -> str:
    """The first quoted label of a question that is one of `among` (a leaf comes before its parents)."""
    return next(label for label in re.findall(r'"([^"]+)"', question) if label in among)


def rerun(sample: dict, tables: dict[str, Table]) -> bool:
    program = Program(sample["program"]["kind"], sample["program"]["text"])
    computed = run_program(program, [tables[i] for i in sample["table_ids"]])
    return answers_match(json.loads(sample["answer"]), computed, dict(sample["provenance"])["format"])


def test_groups_are_read_from_the_tree_with_their_totals_and_summaries():
    groups = {g.path: g for g in TreeView(crops_table()).groups("R")}
    assert [p.label for p in groups[("Cereals",)].parts] == ["Wheat", "Barley"]
    assert groups[("Cereals",)].total.pos == 0  # its own row
    top = groups[()]
    assert [p.label for p in top.parts] == ["Cereals", "Pulses"]  # each group's value is its own row
    assert top.left_out == ("All crops",) and top.total.label == "All crops"
    columns = {g.path: g for g in TreeView(crops_table()).groups("C")}
    assert [p.label for p in columns[("North",)].parts] == ["2019", "2020"]
    view = TreeView(crops_table())
    assert sum_of_parts(view, top, crops_table().columns.index("North / 2019")) == 30 + 12
    assert sum_of_parts(view, columns[("South",)], CROPS.index("Peas")) == 3 + 4


def test_sums_leave_out_summary_nodes_and_follow_the_paths():
    samples, tables = generate(crops_table(), ["rh.nr"])
    assert samples and all(rerun(s, tables) for s in samples)
    answers = {(s["template"], s["question"]): json.loads(s["answer"]) for s in samples}
    for (template, question), answer in answers.items():
        if template == "rh.nr.parts_sum_rows":
            column = first_quoted(question, NUMBERS)
            if "not nested under another row" in question:  # the top level: Cereals + Pulses, not All crops
                assert answer == NUMBERS[column][0] + NUMBERS[column][3]
            else:
                group = first_quoted(question.split(" under ")[-1], CROPS)
                i = CROPS.index(group)
                assert answer == NUMBERS[column][i + 1] + NUMBERS[column][i + 2]
    by_row = [(q, a) for (t, q), a in answers.items() if t == "rh.nr.parts_sum_columns"]
    assert by_row == []  # 2019 + 2020: no sum over periods (test_a_level_is_not_summed_over_periods...)
    header = (C(0, 0, 0, "Crop"), C(0, 1, 2, "North"), C(1, 1, 1, "Irrigated"), C(1, 2, 2, "Rain-fed"),
              R(0, 0, 0, "Wheat"), R(0, 1, 1, "Barley"))
    farms = Table(name="farms", body=pa.table({"Crop": ["Wheat", "Barley"], "North / Irrigated": [10, 20],
                                               "North / Rain-fed": [5, 7]}), header=header,
                  caption="Harvest by region (thousand tonnes)")
    by_row, tables = generate(farms, ["rh.nr.parts_sum_columns"])
    assert by_row and all(rerun(s, tables) for s in by_row)
    assert {json.loads(s["answer"]) for s in by_row} <= {15, 27}


def test_a_groups_total_is_checked_against_its_parts():
    samples, tables = generate(crops_table(), ["rh.fc.total_matches_parts_rows"])
    assert samples and all(rerun(s, tables) for s in samples)
    verdicts = {}
    for s in samples:
        question = s["question"]
        group = "Cereals" if 'under "Cereals"' in question else "Pulses" if 'under "Pulses"' in question else "top"
        verdicts.setdefault(group, set()).add(json.loads(s["answer"]))
    assert verdicts.get("Cereals", {True}) == {True}
    assert verdicts.get("Pulses", {False}) == {False}
    assert verdicts.get("top", {True}) == {True}  # All crops = Cereals + Pulses
    assert len(verdicts) >= 2


def test_leaf_claims_are_half_true_and_name_their_path():
    samples, tables = generate(crops_table(), ["rh.fc.leaf_value"])
    assert samples and all(rerun(s, tables) for s in samples)
    assert {json.loads(s["answer"]) for s in samples} == {True, False}
    assert all(" under " in s["question"] or " / " in s["question"] for s in samples)


def test_a_chart_gold_is_the_labels_and_values_to_plot():
    from curate.evaluation.metrics.chart import chart_pass

    samples, tables = generate(crops_table(), ["rh.cg"])
    assert {s["task"] for s in samples} == {"RH/CG/bar_chart", "RH/CG/pie_chart"}  # no group of 3+ columns
    for s in samples:
        assert rerun(s, tables)
        gold = json.loads(s["answer"])
        assert gold["chart_type"] in ("bar", "pie") and len(gold["x"]) == len(gold["y"])
        if gold["x"] == ["Wheat", "Barley"]:
            column = first_quoted(s["question"], NUMBERS)
            assert gold["y"] == [float(NUMBERS[column][1]), float(NUMBERS[column][2])]
        assert chart_pass(gold, gold, {}).value == 1.0
        assert chart_pass({**gold, "y": gold["y"][::-1] + [1.0]}, gold, {}).value == 0.0


def test_structure_questions_are_asked_of_a_copy_with_two_sibling_blocks_exchanged():
    table = crops_table()
    samples, tables = generate(table, ["rh.sc"])
    assert samples and all(rerun(s, tables) for s in samples)
    copies = {i for s in samples for i in s["table_ids"]}
    assert len(copies) == 1 and table.id not in copies  # one exchange per table, shared by the templates
    copy = tables[copies.pop()]
    assert "swapped" in copy.flags
    exchange = next(dict(s["provenance"])["exchange"] for s in samples)
    axis = exchange[0]
    found = find_exchange(branches(table.header, axis), branches(copy.header, axis), axis)
    assert isinstance(found, Exchange) and f"{found.first[0]} <-> {found.second[0]}" in exchange
    for s in samples:
        answer = json.loads(s["answer"])
        provenance = dict(s["provenance"])
        before = json.loads(provenance["gold_before_swap"])  # the same question asked of the original
        moved = s["template"] == "rh.sc.swap_order"  # the order follows the swap; values found by path do not
        assert answers_match(answer, before, provenance["format"]) != moved
        if s["template"] == "rh.sc.swap_order":  # the gold follows the swap
            shown = children_labels(copy.header, axis, found.parent)
            assert answer == shown and answer != children_labels(table.header, axis, found.parent)
        if s["template"] == "rh.sc.swap_value":  # a value found by its paths is the same wherever it moved
            row, column = first_quoted(s["question"], CROPS), first_quoted(s["question"], NUMBERS)
            assert answer == NUMBERS[column][CROPS.index(row)]


def test_flat_tables_get_no_tree_questions():
    flat = Table(name="flat", body=pa.table({"Crop": ["a", "b", "c"], "kt": [1, 2, 3]}))
    samples, _ = generate(flat, ["rh"])
    assert samples == []


def test_cleaning_marks_do_not_break_the_programs():
    """Cleaning drops a group's own row and the row tree's Total from the data view (ordinary
    questions never count them as cases); tree questions still read them as totals, through
    `sheet`, and every program addresses the right rows."""
    from curate.curation.cleaning.rules import CleaningConfig, apply_rules
    from curate.curation.programs import data_view

    cleaned, _ = apply_rules(crops_table(), CleaningConfig())
    assert cleaned is not None and cleaned.summary_rows == (0, 3, 6)  # Cereals, Pulses, All crops
    assert data_view(cleaned).column("Crop").to_pylist() == ["Wheat", "Barley", "Peas", "Beans"]
    samples, tables = generate(cleaned, ["rh"])
    assert samples and all(rerun(s, tables) for s in samples)
    totals = [s for s in samples if s["template"].startswith("rh.fc.total")]
    assert totals and all("FROM sheet" in s["program"]["text"] for s in totals)
    flat, _ = generate(cleaned, ["tco.max", "tco.count", "tu.cell_lookup"])
    asked = [s["question"].split(" Leave out")[0] for s in flat]  # what each asks, before what it leaves out
    assert flat and not any(label in q for q in asked for label in ("Cereals", "Pulses", "All crops"))
    assert all(s["question"].endswith('others: "Cereals", "Pulses" and "All crops".') for s in flat
               if s["template"] != "tu.cell_lookup")  # a reader counting every row shown would count them


def test_every_tree_question_over_realhitbench_reruns_to_its_gold():
    from curate.curation.cleaning.rules import CleaningConfig, apply_rules
    from curate.curation.sources.readers import xlsx

    folder = shared("realhitbench", "tables")
    tables: dict[str, Table] = {}
    out, derived, stats = SampleColumns(), [], Stats()
    templates = load_templates(only=["rh"])
    for path in sorted(folder.glob("*.xlsx")):
        if path.stem.endswith("_swap"):
            continue
        for table in xlsx.read(str(path)):
            table, _ = apply_rules(table, CleaningConfig())
            if table is not None:
                tables[table.id] = table
                generate_for_table(table, templates, 0, out, derived, stats)
    tables.update({t.id: t for t in derived})
    samples = out.to_arrow().to_pylist()
    wrong = [(s["template"], s["question"]) for s in samples if not rerun(s, tables)]
    assert not wrong, wrong[:5]
    for s in samples:  # asked of the original, an SC question has the same answer unless it asks for the order
        if s["task"] == "RH/SC/structure_comprehending":
            provenance = dict(s["provenance"])
            before = json.loads(provenance["gold_before_swap"])
            same = answers_match(json.loads(s["answer"]), before, provenance["format"])
            assert same != (s["template"] == "rh.sc.swap_order"), s["question"]
    tasks = {s["task"] for s in samples}
    assert {"RH/FC/value_matching", "RH/FC/inference_based_fact_checking", "RH/NR/calculation",
            "RH/CG/bar_chart", "RH/CG/pie_chart", "RH/CG/line_chart", "RH/SC/structure_comprehending"} <= tasks
    assert len(samples) > 1000, len(samples)


@pytest.mark.parametrize("answer", [{"chart_type": "bar", "x": ["a"], "y": [1.0]}])
def test_a_chart_answer_matches_only_the_same_chart(answer):
    assert answers_match(answer, dict(answer), "exact")
    assert not answers_match(answer, {**answer, "y": [2.0]}, "exact")
    assert not answers_match(answer, [1.0], "exact")


def test_a_build_over_realhitbench_spreadsheets_releases_verified_tree_questions(tmp_path):
    """The whole pipeline: the exchanged copies travel as derived tables, the contracts accept
    the tasks' answer types, and the release re-verifies."""
    from tests.test_cli import invoke

    folder = shared("realhitbench", "tables")
    sheets = [str(p) for p in sorted(folder.glob("*.xlsx")) if not p.stem.endswith("_swap")][:24]
    config = tmp_path / "build.toml"
    config.write_text(f'[build]\nsources = {json.dumps(sheets)}\nstages = ["rules"]\n'
                      '[generate.rules]\ntemplates = ["rh"]\n[release]\nname = "rh"\n')
    out = invoke("build", config, "-w", tmp_path / "ws", "--releases", tmp_path / "releases", "--json")
    assert out.exit_code == 0, out.output
    release = json.loads(out.output)["release"]
    manifest = json.loads((Path(release["path"]) / "manifest.json").read_text())
    assert set(manifest["counts"]["by_task"]) >= {"RH/FC/value_matching", "RH/NR/calculation",
                                                  "RH/SC/structure_comprehending"}
    verified = invoke("release", "verify", release["path"])
    assert verified.exit_code == 0, verified.output

    # the chart golds score through the evaluator: code drawing the gold passes (ECR and PASS@1
    # both 1), code drawing other values fails
    import duckdb

    charts = duckdb.sql(f"SELECT id, answer FROM read_parquet('{release['path']}/samples/**/*.parquet') "
                        "WHERE task LIKE 'RH/CG/%'").fetchall()
    assert charts
    draw = {"bar": "plt.bar({x}, {y})", "pie": "plt.pie({y}, labels={x})", "line": "plt.plot({x}, {y})",
            "scatter": "plt.scatter({x}, {y})"}
    predictions = tmp_path / "replies.jsonl"
    with predictions.open("w") as f:
        for k, (sample_id, answer) in enumerate(charts):
            gold = json.loads(answer)
            # every other reply plots a wrong first value (a pie compares shares: it must change the shares too)
            y = gold["y"] if k % 2 == 0 else [abs(gold["y"][0]) * 3 + 1000] + gold["y"][1:]
            code = draw[gold["chart_type"]].format(x=json.dumps(gold["x"]), y=json.dumps(y))
            reply = f"```python\nimport matplotlib.pyplot as plt\n{code}\nplt.show()\n```"
            f.write(json.dumps({"sample_id": sample_id, "reply": reply}) + "\n")
    results = tmp_path / "results"
    scored = invoke("evaluate", release["path"], "--backend", "replay", "--predictions", predictions,
                    "--model", "charts", "--tasks", "RH/CG/", "--out", results)
    assert scored.exit_code == 0, scored.output
    rows = duckdb.sql(f"SELECT sample_id, score, executed FROM read_parquet('{results}/results.parquet')").fetchall()
    right = {sample_id for k, (sample_id, _) in enumerate(charts) if k % 2 == 0}
    assert len(rows) == len(charts) and all(executed for _, _, executed in rows)
    wrong = [(s, score) for s, score, _ in rows if score != (1.0 if s in right else 0.0)]
    assert not wrong, (wrong, scored.output)


def test_a_title_read_into_the_header_and_unnamed_columns_stay_out_of_the_questions():
    title = "Table 4. Harvest by region and year, in thousands of tonnes, England and Wales"
    table = crops_table()
    header = (C(0, 0, 6, title),) + tuple(HeaderNode(n.axis, n.level + (n.axis == "C"), n.start, n.end, n.text)
                                           for n in table.header)
    body = table.body.append_column("column 7", pa.array([1, 2, 3, 4, 5, 6, 7]))
    titled = Table(name="titled", body=body, header=header)
    view = TreeView(titled)
    assert view.column_label(1) == "North / 2019" and view.column_label(6) == ""
    samples, tables = generate(titled, ["rh"])
    assert samples and all(rerun(s, tables) for s in samples)
    assert not any(title in s["question"] or "column 7" in s["question"] for s in samples)


def _stats(table: Table, only: list[str]) -> tuple[list[dict], Stats]:
    out, derived, stats = SampleColumns(), [], Stats()
    generate_for_table(table, load_templates(only=only), 0, out, derived, stats)
    return (out.to_arrow().to_pylist() if len(out) else []), stats


def test_a_sum_is_asked_only_where_the_sheets_own_total_confirms_the_parts():
    """Pulses' own row is off by 7 from Peas + Beans: the sheet says they are not its parts."""
    samples, stats = _stats(crops_table(), ["rh.nr.parts_sum_rows"])
    assert samples and not any('under "Pulses"' in s["question"] for s in samples)
    assert stats.rejected["RH/NR/calculation"]["parts_do_not_add_up"] >= 1


def test_rates_shares_and_indexes_are_never_summed_but_compared():
    rates = Table(name="unemployment", body=crops_table().body, header=crops_table().header,
                  caption="Unemployment rate by region (%)")
    sums, stats = _stats(rates, ["rh.nr.parts_sum_rows", "rh.nr.parts_sum_columns"])
    assert sums == [] and stats.rejected["RH/NR/calculation"]["not_additive"] >= 1
    compared, _ = _stats(rates, ["rh.nr.highest_part_rows", "rh.nr.lowest_part_rows"])
    assert compared
    for s in compared:
        assert s["task"] == "RH/NR/comparison" and json.loads(s["answer"]) in CROPS


def test_a_count_beside_its_percentage_change_is_neither_summed_nor_compared():
    header = (C(0, 0, 0, "Region"), C(0, 1, 2, "Funded learners"), C(1, 1, 1, "Number"), C(1, 2, 2, "% change"),
              R(0, 0, 2, "North"), R(1, 1, 1, "Leeds"), R(1, 2, 2, "York"), R(0, 3, 3, "South"))
    body = pa.table({"Region": ["North", "Leeds", "York", "South"], "Funded learners / Number": [300, 100, 200, 250],
                     "Funded learners / % change": [2.5, -1.0, 4.0, 3.0]})
    table = Table(name="learners", body=body, header=header, caption="Number of funded learners")
    sums, _ = _stats(table, ["rh.nr.parts_sum_columns"])
    assert sums == []
    compared, stats = _stats(table, ["rh.nr.highest_part_columns"])
    assert compared == [] and stats.rejected["RH/NR/comparison"]["mixed_measures"] >= 1


def test_indented_rows_without_a_total_to_confirm_them_are_not_summed():
    header = (C(0, 0, 0, "Stock"), C(0, 1, 1, "Landings (tonnes)"),
              R(0, 0, 1, "Mackerel"), R(1, 1, 1, "of which IVa"), R(0, 2, 2, "Herring"), R(0, 3, 3, "Sprat"))
    body = pa.table({"Stock": ["Mackerel", "of which IVa", "Herring", "Sprat"],
                     "Landings (tonnes)": [81546.8, 72391.7, 38597.9, 1200.0]})
    table = Table(name="landings", body=body, header=header, caption="Landings (tonnes)",
                  structure=("indented_row_header",))
    sums, stats = _stats(table, ["rh.nr.parts_sum_rows"])
    assert sums == [] and stats.rejected["RH/NR/calculation"]["nesting_uncertain"] >= 1


def test_a_group_and_its_subtotal_are_never_swapped():
    from curate.generators.rules.ops.tree import swap_candidates

    header = (C(0, 0, 0, "Item"), C(0, 1, 1, "Cost"), R(0, 0, 2, "Africa"), R(1, 1, 1, "Kenya"), R(1, 2, 2, "Ghana"),
              R(0, 3, 3, "Africa Total"), R(0, 4, 6, "Asia"), R(1, 5, 5, "Japan"), R(1, 6, 6, "India"))
    body = pa.table({"Item": ["Africa", "Kenya", "Ghana", "Africa Total", "Asia", "Japan", "India"],
                     "Cost": [None, 5.0, 7.0, 12.0, None, 9.0, 4.0]})
    pairs = {(a.node.text, b.node.text) for _, _, _, a, b in swap_candidates(TreeView(Table(name="t", body=body,
                                                                                          header=header)))}
    assert ("Kenya", "Ghana") in pairs and ("Japan", "India") in pairs
    assert not any("Africa Total" in pair for pair in pairs)


def test_a_level_is_not_summed_over_periods_nor_an_estimate_with_its_bounds():
    header = (C(0, 0, 0, "Occupation"), C(0, 1, 2, "Employed (thousands)"), C(1, 1, 1, "2022"), C(1, 2, 2, "2023"),
              R(0, 0, 2, "All"), R(1, 1, 1, "Sales"), R(1, 2, 2, "Transport"))
    body = pa.table({"Occupation": ["All", "Sales", "Transport"], "Employed (thousands) / 2022": [30, 10, 20],
                     "Employed (thousands) / 2023": [33, 12, 21]})
    years = Table(name="employed", body=body, header=header, caption="Number of employed persons")
    sums, stats = _stats(years, ["rh.nr.parts_sum_columns"])
    assert sums == [] and stats.rejected["RH/NR/calculation"]["over_time"] >= 1
    header = (C(0, 0, 0, "Religion"), C(0, 1, 1, "2017"), R(0, 0, 2, "Any other religion"), R(1, 0, 0, "Estimate"),
              R(1, 1, 1, "Lower 95% confidence limit"), R(1, 2, 2, "Upper 95% confidence limit"))
    bounds = Table(name="religion", body=pa.table({"Religion": ["Estimate", "Lower 95% confidence limit",
                                                                "Upper 95% confidence limit"], "2017": [73.4, 71.7, 75.1]}),
                   header=header, caption="Number of people")
    charts, _ = _stats(bounds, ["rh.cg.bar_parts"])
    assert charts == []


def test_claims_are_about_values_as_the_sheet_writes_them_not_a_floats_noise():
    table = crops_table()
    noisy = table.body.set_column(1, "North / 2019", pa.array([30.0, 10.0, 20.4295339312698, 12.0, 2.0, 3.0, 42.0]))
    from curate.generators.rules.ops.tree import _named_cells

    view = TreeView(Table(name="crops", body=noisy, header=table.header, caption=table.caption))
    named = _named_cells(view)
    assert (1, 1) in named and (2, 1) not in named  # Wheat's 10 can be claimed, Barley's 20.4295339312698 not


# a series over years: two regions of four countries each, each region's own row its subtotal
YEARS = ["2019", "2020", "2021", "2022", "2023"]
COUNTRIES = {"Europe": ["France", "Spain", "Italy", "Poland"], "Asia": ["Japan", "Korea", "India", "Nepal"]}
SERIES = {"France": [10, 12, 15, 19, 24], "Spain": [8, 7, 9, 14, 13], "Italy": [5, 9, 4, 6, 11],
          "Poland": [3, 4, 8, 7, 12], "Japan": [30, 28, 27, 25, 26], "Korea": [12, 16, 21, 20, 31],
          "India": [40, 44, 49, 52, 60], "Nepal": [2, 3, 3, 5, 6]}


def series_table() -> Table:
    labels, rows, header = [], [], [C(0, 0, 0, "Country"), C(0, 1, 5, "Employed (thousands)")]
    header += [C(1, 1 + k, 1 + k, y) for k, y in enumerate(YEARS)]
    for region, members in COUNTRIES.items():
        start = len(rows)
        labels.append(region)
        rows.append([sum(SERIES[m][k] for m in members) for k in range(len(YEARS))])
        for m in members:
            header.append(R(1, len(rows), len(rows), m))
            labels.append(m)
            rows.append(SERIES[m])
        header.append(R(0, start, len(rows) - 1, region))
    body = pa.table({"Country": labels, **{f"Employed (thousands) / {y}": [r[k] for r in rows]
                                           for k, y in enumerate(YEARS)}})
    return Table(name="employment", body=body, header=tuple(header), caption="Employed persons by country")


def test_reader_questions_count_compare_and_chart_members_never_group_rows():
    """The authors' kinds (conditional counts, changes, percentage changes, the first period past a
    threshold, differences, scatter and two-series charts): each gold re-computed here from the
    numbers the question names, and the region rows are never a member."""
    from curate.curation.cleaning.rules import CleaningConfig, apply_rules

    table, _ = apply_rules(series_table(), CleaningConfig())
    assert table is not None and set(table.summary_rows) == {0, 5}  # Europe's and Asia's own rows
    kinds = ["rh.nr.count_above", "rh.nr.change_columns", "rh.nr.percent_change_columns",
             "rh.nr.first_past_columns", "rh.nr.difference_rows", "rh.cg.scatter_parts", "rh.cg.two_lines"]
    samples, tables = generate(table, kinds)
    assert {s["template"] for s in samples} == set(kinds)
    assert all(rerun(s, tables) for s in samples)
    rows = {**SERIES, **{r: [sum(SERIES[m][k] for m in ms) for k in range(len(YEARS))] for r, ms in COUNTRIES.items()}}
    for s in samples:  # a region's own row may be named by a series question (it is a row of the sheet)
        q, gold = s["question"], json.loads(s["answer"])
        country = next((c for c in re.findall(r'"([^"]+)"', q) if c in rows), None)
        years = re.findall(r"\b(20\d\d)\b", q)
        number = re.search(r"(more than|less than) (\d+)", q)  # a threshold's side said: never "above"
        if s["template"] == "rh.nr.count_above":
            region = next(r for r in COUNTRIES if f'"{r}"' in q)
            year = re.search(r'/ (20\d\d)"', q).group(1)
            t = float(number.group(2))
            assert gold == sum(SERIES[m][YEARS.index(year)] > t for m in COUNTRIES[region])
        elif s["template"] == "rh.nr.change_columns":
            a, b = years[:2]
            assert gold == rows[country][YEARS.index(b)] - rows[country][YEARS.index(a)]
        elif s["template"] == "rh.nr.percent_change_columns":
            a, b = years[:2]
            x, y = rows[country][YEARS.index(a)], rows[country][YEARS.index(b)]
            assert gold == round((y - x) * 100 / x, 2)
        elif s["template"] == "rh.nr.first_past_columns":
            t, rise = float(number.group(2)), number.group(1) == "more than"
            values = rows[country]
            assert (values[0] < t) == rise
            assert gold == next(y for y, v in zip(YEARS, values) if (v > t if rise else v < t))
        elif s["template"] == "rh.nr.difference_rows":
            a, b = [c for c in re.findall(r'"([^"]+)"', q) if c in SERIES][:2]
            year = re.search(r'/ (20\d\d)"', q).group(1)
            k = YEARS.index(year)
            assert gold == SERIES[a][k] - SERIES[b][k] > 0
        elif s["template"] == "rh.cg.scatter_parts":
            region = next(r for r in COUNTRIES if f'"{r}"' in q)
            x, y = [YEARS.index(v) for v in re.findall(r'/ (20\d\d)"', q)][::-1 if " against " in q else 1]
            assert gold["x"] == [SERIES[m][x] for m in COUNTRIES[region]]
            assert gold["y"] == [SERIES[m][y] for m in COUNTRIES[region]]
        elif s["template"] == "rh.cg.two_lines":
            a, b = [c for c in re.findall(r'"([^"]+)"', q) if c in SERIES][:2]
            assert gold["y"] == SERIES[a] + SERIES[b] and gold["x"] == YEARS + YEARS
    assert not any(f'"{region}"' in s["question"] and s["template"] == "rh.nr.difference_rows"
                   and re.search(rf'"{region}" than|value of "{region}"', s["question"]) for s in samples
                   for region in COUNTRIES)


def test_rows_that_name_measures_are_not_compared():
    """A transposed table (its rows are variables: "Number of cells", "% engulfed") gets no
    comparison, count or scatter of its rows."""
    body = pa.table({"Measure": ["Number of cells per field", "Number of engulfed cells", "% Phagocytosis",
                                 "Mean size"],
                     "ROI 1 / M0": [40, 12, 30.0, 5.5], "ROI 1 / M1": [35, 20, 57.1, 6.1],
                     "ROI 2 / M0": [42, 10, 23.8, 5.0], "ROI 2 / M1": [30, 18, 60.0, 6.4]})
    header = (C(0, 0, 0, "Measure"), C(0, 1, 2, "ROI 1"), C(1, 1, 1, "M0"), C(1, 2, 2, "M1"),
              C(0, 3, 4, "ROI 2"), C(1, 3, 3, "M0"), C(1, 4, 4, "M1"))
    table = Table(name="phagocytosis", body=body, header=header)
    samples, _ = generate(table, ["rh.nr.count_above", "rh.nr.highest_part_rows", "rh.nr.difference_rows",
                                  "rh.cg.scatter_parts"])
    assert samples == []
    samples, _ = generate(table, ["rh.nr.difference_columns"])  # M0 against M1 within one row is a fair question
    assert samples
    # one relative measure among counts, or rows labelled by codes: no comparison of the rows either
    for labels in (["Managers", "Sales", "Percent of total employed", "Service"], ["EM2058", "EM2071", "EM3002", "Other"]):
        coded = Table(name="rows", body=body.set_column(0, "Measure", pa.array(labels)), header=header)
        assert generate(coded, ["rh.nr.count_above", "rh.nr.highest_part_rows", "rh.cg.bar_parts"])[0] == []
    cases = Table(name="rows", body=body.set_column(0, "Measure", pa.array(["Managers", "Sales", "Clerks", "Service"])),
                  header=header)
    assert generate(cases, ["rh.nr.count_above", "rh.nr.highest_part_rows"])[0]


def test_overlapping_ranges_are_no_parts_and_monthly_dates_are_periods():
    """An age group read flat ("16 to 24 years" beside its own "16 to 19 years") is no set of
    parts: nothing is counted, compared or summed over it. Columns of dates are a series of
    periods: a change between them is asked as a change."""
    from curate.generators.rules.ops.tree import columns_are_measures, ranges_overlap

    assert ranges_overlap(["16 to 24 years", "16 to 19 years", "20 to 24 years", "25 years and older"])
    assert not ranges_overlap(["16 to 19 years", "20 to 24 years", "25 to 54 years", "55 years and older"])
    assert columns_are_measures(["No. of total DCs", "No. of infected DCs"]) and not columns_are_measures(["M0", "M1"])
    ages = ["16 to 24 years", "16 to 19 years", "20 to 24 years", "25 years and older", "25 to 54 years"]
    dates = ["2013-01-01", "2013-02-01", "2013-03-01"]
    body = pa.table({"Age": ages, **{f"Month / {d}": [10 * (k + 1) + j for k in range(len(ages))]
                                     for j, d in enumerate(dates)}})
    header = (C(0, 0, 0, "Age"), C(0, 1, 3, "Month"), *(C(1, 1 + j, 1 + j, d) for j, d in enumerate(dates)),
              R(0, 0, 4, "Age groups"), *(R(1, k, k, a) for k, a in enumerate(ages)))
    table = Table(name="ages", body=body, header=header)
    rows = ["rh.nr.count_above", "rh.nr.highest_part_rows", "rh.nr.difference_rows", "rh.nr.parts_sum_rows"]
    assert generate(table, rows)[0] == []
    changes, _ = generate(table, ["rh.nr.change_columns", "rh.nr.difference_columns"])
    assert changes and {s["template"] for s in changes} == {"rh.nr.change_columns"}


def test_a_change_runs_forward_in_time_and_is_never_asked_between_dates_in_no_order():
    """'From the "2022-04-23" row to the "2021-12-16" row, the later minus the earlier' read both ways
    (held-out review): a series listed latest first is asked from its earliest, and dated rows in no
    order (a fixture list's match days) are no series of one thing."""
    def table(dates):
        header = (C(0, 0, 0, "Fixture"), C(0, 1, 1, "Position"), R(0, 0, len(dates) - 1, "Matches"),
                  *(R(1, k, k, d) for k, d in enumerate(dates)))
        body = pa.table({"Fixture": dates, "Position": [5, 8, 3, 12][:len(dates)]})
        return Table(name="fixtures", body=body, header=header)

    latest_first, _ = generate(table(["2023", "2022", "2021"]), ["rh.nr.change_rows"])
    assert latest_first and all(s["question"].index('"2021') < s["question"].index('"2022')
                                if '"2021' in s["question"] and '"2022' in s["question"] else True
                                for s in latest_first)
    assert all('from the "2023"' not in s["question"] for s in latest_first)
    shuffled, _ = generate(table(["2022-04-23", "2021-12-16", "2022-01-02", "2021-08-14"]), ["rh.nr.change_rows"])
    assert shuffled == []
    quarters, _ = generate(table(["2019 Q4", "2019 Q3", "2019 Q2", "2019 Q1"]), ["rh.nr.change_rows"])
    said = [re.findall(r'"(2019 Q\d)"', s["question"]) for s in quarters]
    assert quarters and all(len(q) == 2 and q[0] < q[1] for q in said)  # from the earlier quarter to the later


def test_a_subtotal_read_flat_beside_its_parts_or_a_repeated_label_makes_no_comparison():
    """Indentation lost: 'Management' holds the sum of the two rows below it in every column, so
    the rows are no set of cases to compare; nor are rows where 'Women' stands twice."""
    header = (C(0, 0, 0, "Occupation"), C(0, 1, 2, "Men"), C(1, 1, 1, "2022"), C(1, 2, 2, "2023"))
    jobs = ["Management", "Managers", "Professionals", "Service", "Sales"]
    subtotal = pa.table({"Occupation": jobs, "Men / 2022": [30, 12, 18, 25, 9], "Men / 2023": [33, 14, 19, 21, 8]})
    kinds = ["rh.nr.highest_part_rows", "rh.nr.count_above", "rh.cg.bar_parts"]
    assert generate(Table(name="jobs", body=subtotal, header=header), kinds)[0] == []
    fair = subtotal.set_column(1, "Men / 2022", pa.array([31, 12, 18, 25, 9]))
    assert generate(Table(name="jobs", body=fair, header=header), kinds)[0]
    people = ["White", "Women", "Men", "Asian", "Women", "Men"]
    header2 = (C(0, 0, 0, "Group"), C(0, 1, 2, "Men"), C(1, 1, 1, "2022"), C(1, 2, 2, "2023"),
               R(0, 0, 5, "Race"), *(R(1, k, k, x) for k, x in enumerate(people)))
    repeated = pa.table({"Group": people, "Men / 2022": [50, 20, 30, 14, 6, 8], "Men / 2023": [52, 21, 31, 15, 7, 9]})
    assert generate(Table(name="race", body=repeated, header=header2), kinds)[0] == []


def test_unlike_units_a_total_among_members_and_a_bounds_series_are_not_asked():
    """Nutrients in g, mg and kcal (a "Unit" column) are not compared; a last row holding the sum
    of the rows above ("England" under its regions) is their total, not a member; a confidence
    limit's change from year to year is no question."""
    header = (C(0, 0, 0, "Nutrient"), C(0, 1, 1, "Unit"), C(0, 2, 3, "Raw"), C(1, 2, 2, "100g"), C(1, 3, 3, "114g"))
    body = pa.table({"Nutrient": ["Water", "Energy", "Protein", "Potassium"], "Unit": ["g", "kcal", "g", "mg"],
                     "Raw / 100g": [75.2, 107.0, 22.07, 273.0], "Raw / 114g": [85.7, 122.0, 25.2, 311.2]})
    kinds = ["rh.nr.highest_part_rows", "rh.nr.count_above", "rh.nr.difference_rows"]
    assert generate(Table(name="nutrients", body=body, header=header), kinds)[0] == []
    same = body.set_column(1, "Unit", pa.array(["g", "g", "g", "g"]))
    assert generate(Table(name="nutrients", body=same, header=header), kinds)[0]

    regions = ["North East", "London", "South West", "Midlands", "England"]
    header = (C(0, 0, 0, "Region"), C(0, 1, 2, "Yes"), C(1, 1, 1, "2006"), C(1, 2, 2, "2008"))
    body = pa.table({"Region": regions, "Yes / 2006": [2.4, 3.6, 1.8, 3.3, 11.1], "Yes / 2008": [2.0, 4.0, 1.0, 3.0, 10.0]})
    assert generate(Table(name="regions", body=body, header=header), kinds)[0] == []

    years = ["2016", "2017", "2018"]
    header = (C(0, 0, 0, "Group"), *(C(0, 1 + k, 1 + k, y) for k, y in enumerate(years)),
              R(0, 0, 2, "Hindu"), R(1, 0, 0, "Estimate"), R(1, 1, 1, "Lower 95% confidence limit"),
              R(1, 2, 2, "Upper 95% confidence limit"))
    body = pa.table({"Group": ["Estimate", "Lower 95% confidence limit", "Upper 95% confidence limit"],
                     "2016": [73.3, 71.5, 75.0], "2017": [74.4, 72.6, 76.2], "2018": [76.2, 74.4, 78.0]})
    changes, _ = generate(Table(name="ci", body=body, header=header), ["rh.nr.change_columns"])
    assert changes and all("Estimate" in s["question"] and "limit" not in s["question"] for s in changes)


# ------------------------------------------------------------------------------ rows named only by what is theirs

def test_a_group_label_written_on_its_first_row_names_the_group_never_that_row():
    """"Low" written once, on the first of its reasons, with a Total closing the group: "Low" is the
    group's label. The row it sits on is one reason among several, so no question names that row
    "Low" (the difference "Intermediate" minus "Low" would compare two unrelated reasons); "Low"
    is read from the group's Total row, which a question names as such ('"Total" under "Low"', never
    plain "Low", the group's name for one of its rows), and a group without one is not named at all."""
    level = ["Low", None, None, "Intermediate", None, None, "Not recorded", "TOTAL"]
    reason = ["Leaves a scheme", "Misconduct", "Total", "Not seeking work", "Not available", "Total", None, "TOTAL"]
    month = [5, 7, 12, 27556, 903, 28459, 71, 40542]
    header = (C(0, 0, 0, "Level"), C(0, 1, 1, "Reason"), C(0, 2, 3, "Month"), C(1, 2, 2, "2013-01"), C(1, 3, 3, "2013-02"))
    table = Table(name="sanctions", body=pa.table({"Level": level, "Reason": reason, "Month / 2013-01": month,
                                                   "Month / 2013-02": [m + 1 for m in month]}), header=header)
    view = TreeView(table)
    assert view.row_names[0] is None and view.row_names[3] is None  # the groups' first rows
    assert view.row_names[2] == ("Low", "Total") and view.row_names[5] == ("Intermediate", "Total")  # their Total rows
    assert view.row_names[6] == ("Not recorded",)  # a label alone on its row names that row
    samples, tables = generate(table, ["rh"])
    assert all(rerun(s, tables) for s in samples)
    named = [s for s in samples if '"Low"' in s["question"] or '"Intermediate"' in s["question"]]
    assert named and all(re.search(r"rowid (= |IN \()?[25]\b", s["program"]["text"]) for s in named)
    assert not [s for s in named if re.search(r"rowid (= |IN \()?[03]\b|WHEN [03] ", s["program"]["text"])]
    assert all(re.search(r'"Total" under "(Low|Intermediate)"', s["question"]) for s in named), \
        [s["question"] for s in named]
    no_totals = table.replace(body=table.body.set_column(1, "Reason", pa.array(
        ["Leaves a scheme", "Misconduct", "Other", "Not seeking work", "Not available", "Other", None, "TOTAL"])))
    assert TreeView(no_totals).row_names[:6] == [None] * 6  # no total row: the group is not named


def test_bold_rows_are_parents_only_of_rows_that_add_up_to_them():
    """An income statement's bold subtotals (Gross Profit, Operating Income) head the plain lines
    below them, but those lines are deducted after the subtotal, not its parts: a bold row with
    figures of its own is their parent only where its figures are their sum."""
    from curate.curation.sources.grid import Grid, grid_to_table
    from curate.curation.table import Provenance

    statement = [["USD m", "FY17", "FY18"], ["Revenues", 100, 120], ["Cost of goods", 40, 50],
                 ["Gross Profit", 60, 70], ["SG&A", 30, 31], ["Other charges", 5, 6],
                 ["Operating Income", 25, 33], ["Interest income", 2, 3], ["Interest expense", 4, 4]]
    bold = {(3, 0), (6, 0), (0, 0), (0, 1), (0, 2)}
    table = grid_to_table(Grid(statement, bold=bold), "pnl", Provenance(source="test"))
    assert not [n for n in table.header if n.axis == "R" and n.end > n.start]  # no row heads another
    regions = [["Region", "2019", "2020"], ["North", 30, 33], ["Leeds", 10, 11], ["York", 20, 22],
               ["South", 70, 75], ["Bristol", 30, 35], ["Exeter", 40, 40], ["Wales", 9, 9], ["Cardiff", 4, 4],
               ["Swansea", 6, 6], ["Newport", 2, 2]]
    table = grid_to_table(Grid(regions, bold={(1, 0), (4, 0), (7, 0), (0, 0), (0, 1), (0, 2)}), "regions", Provenance(source="test"))
    groups = {n.text: (n.start, n.end) for n in table.header if n.axis == "R" and n.end > n.start}
    assert groups == {"North": (0, 2), "South": (3, 5)}  # Wales (9) is not Cardiff + Swansea + Newport (12)


def test_a_bullet_marks_nesting_and_is_no_part_of_the_label():
    from curate.curation.sources.grid import Grid, grid_to_table
    from curate.curation.table import Provenance

    rows = [["Area", "2010", "2011"], ["OECD", 50, 60], ["\u00b7 Japan", 20, 25], ["\u00b7 Korea", 30, 35],
            ["Non-OECD", 9, 9], ["\u2022 India", 4, 4], ["- Thailand", 5, 5]]
    table = grid_to_table(Grid(rows), "areas", Provenance(source="test"))
    assert table.body.column(0).to_pylist() == ["OECD", "Japan", "Korea", "Non-OECD", "India", "Thailand"]
    nodes = {n.text: (n.level, n.start, n.end) for n in table.header if n.axis == "R"}
    assert nodes["OECD"] == (0, 0, 2) and nodes["Japan"][0] == 1 and nodes["Thailand"][0] == 1


def test_numbered_samples_and_row_ordinals_are_no_answers():
    """Rows labelled Field_1 .. Field_n (one prefix, a running number) are samples told apart by
    their number: which one is highest answers with an index. A column running 1..n down the rows
    (blank rows skipped) numbers them: it is no measure to look up, compare or sum."""
    from curate.curation import semantics as sem

    assert sem.numbered_labels([f"Field_{i}" for i in range(1, 31)]) and sem.numbered_labels(["Sample 1", "Sample 2", "Sample 3"])
    assert not sem.numbered_labels(["Field_1", "Field_2", "Plot_3"]) and not sem.numbered_labels(["Q1", "Q3", "Q4"])
    assert sem.numbers_the_rows([1, 2, 3, None, 4, 5, 6, 7, 8, 9, 10]) and not sem.numbers_the_rows([1, 2, 4, 5, 6])
    fields = [f"Field_{i}" for i in range(1, 7)]
    header = (C(0, 0, 0, "Field"), C(0, 1, 2, "Replicate 1"), C(1, 1, 1, "Infected cells"), C(1, 2, 2, "expect"),
              R(0, 0, 5, "Microscopic field"), *[R(1, i, i, f) for i, f in enumerate(fields)])
    table = Table(name="fields", body=pa.table({"Field": fields, "Replicate 1 / Infected cells": [4, 9, 2, 7, 5, 1],
                                                "Replicate 1 / expect": [1, 2, 3, 4, 5, 6]}), header=header)
    samples, tables = generate(table, ["rh"])
    assert all(rerun(s, tables) for s in samples)
    assert not [s for s in samples if s["task"] == "RH/NR/comparison" and json.loads(s["answer"]) in fields]
    assert not [s["question"] for s in samples if "expect" in s["question"]]


# ------------------------------------------------------------------------------ what a measure is

def test_a_column_that_labels_the_rows_is_never_the_measure_compared_counted_or_calculated():
    """The stub "Year" holds the row tree's own labels (2012 under "Old", 2014 under "New"): which
    row has the lowest Year is no question about the table. A column that labels or codes the rows
    (the stub, a key, a source code) is never the measure of a comparison, a calculation or a count."""
    header = (C(0, 0, 0, "Year"), C(0, 1, 1, "Bankruptcies"), C(0, 2, 2, "Relief orders"),
              R(0, 0, 2, "Before the reform"), R(1, 0, 0, "2012"), R(1, 1, 1, "2013"), R(1, 2, 2, "2014"),
              R(0, 3, 5, "After the reform"), R(1, 3, 3, "2015"), R(1, 4, 4, "2016"), R(1, 5, 5, "2017"))
    body = pa.table({"Year": [2012, 2013, 2014, 2015, 2016, 2017], "Bankruptcies": [8.7, 8.0, 7.5, 7.1, 6.6, 6.2],
                     "Relief orders": [6.8, 6.9, 7.0, 7.0, 6.8, 6.6]})
    samples, tables = generate(Table(name="insolvency", body=body, header=header), ["rh"])
    assert samples and all(rerun(s, tables) for s in samples)
    assert not [s["question"] for s in samples if '"Year"' in s["question"]]


def test_a_difference_is_taken_only_between_columns_of_one_measure_and_never_of_a_code():
    """"N" (how many analyses) and "Source Code" (where the figure comes from) stand beside the
    amounts in wild and farmed fish: "how much greater is N than Source Code" means nothing. Two
    columns are differenced only where they measure one thing (siblings under one parent: Raw's
    Wild and Farmed), and a code column (`curate.curation.semantics` role code) is no measure at all.
    (Portions, "100g" beside "114g", are one measure scaled: never differenced, the larger always wins.)"""
    header = (C(0, 0, 0, "Nutrient"), C(0, 1, 1, "N"), C(0, 2, 3, "Raw"), C(1, 2, 2, "Wild"), C(1, 3, 3, "Farmed"),
              C(0, 4, 4, "Source Code"))
    body = pa.table({"Nutrient": ["Water", "Protein", "Fat", "Ash", "Calcium", "Iron"], "N": [6, 6, 0, 6, 3, 2],
                     "Raw / Wild": [75.2, 22.07, 2.07, 1.09, 5.0, 0.8], "Raw / Farmed": [85.73, 25.16, 2.36, 1.24, 5.7, 0.91],
                     "Source Code": [1, 4, 4, 1, 1, 7]})
    table = Table(name="nutrients", body=body, header=header)
    from curate.curation import semantics as sem
    assert {i.name: i.role for i in sem.infer(table)}["Source Code"] == "code"
    samples, tables = generate(table, ["rh"])
    assert samples and all(rerun(s, tables) for s in samples)
    assert not [s["question"] for s in samples if "Source Code" in s["question"]]
    differences = [s["question"] for s in samples if s["template"] == "rh.nr.difference_columns"]
    assert differences and all('"Wild"' in q and '"Farmed"' in q for q in differences), differences


def test_a_question_says_it_leaves_totals_out_only_where_the_group_has_one():
    """"leaving out any total or summary row", "(totals and averages aside)": said of a group with a
    Total (or its own subtotal row), never of one that has none, for every kind of question."""
    no_totals, _ = generate(Table(name="nutrients", body=pa.table(
        {"Nutrient": ["Water", "Protein", "Fat", "Ash", "Calcium", "Iron"], "Raw / 100g": [75.2, 22.07, 2.07, 1.09, 5.0, 0.8],
         "Raw / 114g": [85.73, 25.16, 2.36, 1.24, 5.7, 0.91]}),
        header=(C(0, 0, 0, "Nutrient"), C(0, 1, 2, "Raw"), C(1, 1, 1, "100g"), C(1, 2, 2, "114g"))), ["rh"])
    with_totals, _ = generate(crops_table(), ["rh"])
    said = re.compile(r"total or summary|totals and averages|not counting totals|leaving out totals|no totals", re.I)
    assert no_totals and not [s["question"] for s in no_totals if said.search(s["question"])]
    assert [s for s in with_totals if said.search(s["question"])]


def test_a_title_or_a_form_above_the_header_is_no_level_of_the_column_paths():
    """A row of "Label: value" pairs (a form's "Project Name: | FACT's Plant") and one text merged
    along its row from the stub over most of the table (its title) stand above the header: the
    columns are named by the header alone, the title becomes the caption, the form's lines notes."""
    from curate.curation.sources.grid import Grid, grid_to_table
    from curate.curation.table import Provenance

    form = [["ISSUE REPORT", None, None, None], [None, "Project Name:", "Kerala Plant", None],
            [None, "Manager:", "JAGAN", None], ["Code", "Centre", "Quantity", "Average"],
            ["0I79", "MUM", 55, 0.83], ["0I80", "DEL", 25, 0.14], ["0I81", "HYD", 15, 0.71]]
    table = grid_to_table(Grid(form, merges=[(0, 0, 0, 2)]), "form", Provenance(source="test"))
    assert list(table.columns) == ["Code", "Centre", "Quantity", "Average"]
    assert table.caption == "ISSUE REPORT" and any("Kerala Plant" in n for n in table.notes)
    titled = [["Table 4. Deaths, 1986 to 2011", None, None, None], ["Region", "1986", "2011", "Change"],
              ["Asia", 4279, 8314, 0.94], ["Japan", 3191, 5775, 0.81], ["Israel", 53, 290, 4.47]]
    table = grid_to_table(Grid(titled, merges=[(0, 0, 0, 2)]), "titled", Provenance(source="test"))
    assert list(table.columns) == ["Region", "1986", "2011", "Change"] and table.caption.startswith("Table 4.")


def test_rows_named_by_a_stub_of_dates_are_asked_by_their_dates_and_the_dates_are_no_measure():
    import datetime as dt
    header = (C(0, 0, 0, "Date"), C(0, 1, 3, "Planned"), C(1, 1, 1, "U1"), C(1, 2, 2, "U2"), C(1, 3, 3, "Total"))
    days = [dt.datetime(2017, 1, d) for d in (1, 2, 3, 4)]
    table = Table(name="production", body=pa.table({"Date": days, "Planned / U1": [5, 6, 7, 8],
                                                    "Planned / U2": [1, 3, 2, 4], "Planned / Total": [6, 9, 9, 12]}),
                  header=header, caption="Production (barrels)")
    view = TreeView(table)
    assert view.row_names == [("2017-01-01",), ("2017-01-02",), ("2017-01-03",), ("2017-01-04",)]
    assert 0 not in view.numeric
    samples, tables = generate(table, ["rh.nr.parts_sum_columns", "rh.nr.highest_part_columns"])
    assert samples and all(rerun(s, tables) for s in samples)
    assert all('"2017-01-0' in s["question"] for s in samples)


def test_portions_margins_unrelated_columns_and_numbered_samples_are_not_set_against_each_other():
    from curate.generators.rules.ops.tree import _related, columns_are_measures
    assert columns_are_measures(["100g", "114g"]) and not columns_are_measures(["2019", "2020"])
    assert _related("2015", "2021") and _related("2006/07 / %", "2006/07 / Respondents")
    assert not _related("2006/07 / %", "Oct 2010 - Sep 2011 / Respondents")
    header = (C(0, 0, 0, "Field"), C(0, 1, 2, "2019"), C(1, 1, 1, "%"), C(1, 2, 2, "Range (+/-)"),
              R(0, 0, 3, "Fields"), R(1, 0, 0, "Field_1"), R(1, 1, 1, "Field_2"), R(1, 2, 2, "Field_3"), R(1, 3, 3, "Field_4"))
    table = Table(name="fields", body=pa.table({"Field": ["Field_1", "Field_2", "Field_3", "Field_4"],
                                                "2019 / %": [10.5, 20.25, 30.5, 15.75], "2019 / Range (+/-)": [1.5, 2.5, 1.25, 3.5]}),
                  header=header)
    samples, _ = generate(table, ["rh.nr.difference_rows", "rh.cg.two_bars"])
    assert samples == []


def test_an_order_question_is_asked_only_of_entries_that_all_have_labels_and_nest_something():
    """Held-out review 6: "In what order does this table show the columns that are not nested under
    another column?" had the gold ["Runx1/b-actin (fold change)", "SD", "Mean"], leaving out the two
    columns a reader sees as "column 1" and "column 2"; on a flat header the same question reads the
    header out; rows labelled 56, 57, 59 are row numbers, not names."""
    header = (C(0, 2, 3, "Runx1 (fold change)"), C(1, 2, 2, "Expt1"), C(1, 3, 3, "Expt2"), C(0, 4, 4, "SD"),
              C(0, 5, 5, "Mean"))
    body = pa.table({"column 1": ["Set1", "Set2", "Set3"], "column 2": ["uninf", "SAG", "AG83"],
                     "Runx1 (fold change) / Expt1": [1.0, 1.17, 1.37], "Runx1 (fold change) / Expt2": [1.0, 1.08, 1.12],
                     "SD": [0.0, 0.1, 0.2], "Mean": [1.0, 1.1, 1.2]})
    table = Table(name="runx1", body=body, header=header)
    asked, reasons = [], {}
    for seed in range(12):
        out, derived, stats = SampleColumns(), [], Stats()
        generate_for_table(table, load_templates(only=["rh.sc.swap_order"]), seed, out, derived, stats)
        asked += out.to_arrow().to_pylist() if len(out) else []
        for reason, n in stats.rejected.get("RH/SC/structure_comprehending", {}).items():
            reasons[reason] = reasons.get(reason, 0) + n
    assert reasons.get("unnamed_siblings")  # the top level: two columns without a label
    assert asked and all('directly under "Runx1 (fold change)"' in s["question"] for s in asked)
    assert {tuple(json.loads(s["answer"])) for s in asked} == {("Expt2", "Expt1")}


def test_a_column_whose_path_another_column_shows_too_is_never_named():
    """Held-out review 9: four columns read "Mouse 1 / Basal" (14 and 120 days apart in a level read as
    the title); a claim about "Mouse 1 / Basal" checked the third, right only because all four held 0."""
    header = (C(0, 0, 0, "Cell"), C(0, 1, 2, "Mouse 1"), C(1, 1, 1, "Basal"), C(1, 2, 2, "Stimulated"),
              C(0, 3, 4, "Mouse 1"), C(1, 3, 3, "Basal"), C(1, 4, 4, "Stimulated"),
              R(0, 0, 0, "Naive"), R(0, 1, 1, "Transformed"), R(0, 2, 2, "Memory"))
    body = pa.table({"Cell": ["Naive", "Transformed", "Memory"], "Mouse 1 / Basal": [3, 0, 5],
                     "Mouse 1 / Stimulated": [7, 2, 9], "Mouse 1 / Basal (2)": [4, 1, 6],
                     "Mouse 1 / Stimulated (2)": [8, 3, 10]})
    view = TreeView(Table(name="mice", body=body, header=header))
    assert [view.column_label(j) for j in range(1, 5)] == ["", "", "", ""]
    samples, _ = generate(Table(name="mice", body=body, header=header), ["rh.fc", "rh.nr"])
    assert not any("Mouse 1 / Basal" in s["question"] for s in samples)
