"""The wording loop (generator rewrites, a discriminator answers without the gold): scripted, replayed
and batch replies, and a build that goes through batch files round by round."""

from __future__ import annotations

import json
import re

from click.testing import CliRunner

from curate.curation.cli import main
from curate.curation.llm import BACKENDS
from curate.curation.llm.backends.scripted import ScriptedBackend
from curate.curation.llm.batch import BatchBackend, ReplyStore, bring_back
from curate.curation.llm.client import ChatClient
from curate.curation.sample import Program, Sample
from curate.generators.adversarial import AdversarialLoop, Item, rejections
from tests.test_batch import run_batch

BACKENDS.register("canned", "tests.canned_backend:CannedBackend")

TEMPLATE = Sample(task="ADA/multi_step_operations", question="What is the mean of y where x > 1?", answer=5.5,
                  answer_type="number", table_ids=("tbl-1",), origin="rule", quality="rule-based",
                  program=Program("chain", json.dumps([{"op": "filter", "column": "x", "cmp": ">", "value": 1},
                                                       {"op": "aggregate", "agg": "mean", "column": "y"}])))
TABLE = "Table:\n| x | y |\n| 1 | 2 |\n| 2 | 5 |\n| 3 | 6 |"
REWRITE = "Leaving out the first row, what is the average y?"


def verdict(answer, natural=True, unambiguous=True, critique=""):
    return json.dumps({"answer": answer, "natural": natural, "unambiguous": unambiguous, "critique": critique})


def loop(generator_reply, discriminator_reply, max_turns=3):
    g, d = ScriptedBackend(generator_reply, "gen"), ScriptedBackend(discriminator_reply, "disc")
    return AdversarialLoop(ChatClient(g), ChatClient(d), max_turns=max_turns), g, d


def test_a_rewrite_answered_with_the_executed_gold_is_kept_and_the_discriminator_never_sees_the_gold():
    runner, g, d = loop(lambda r: json.dumps({"question": REWRITE}), lambda r: verdict("5.50"))
    [outcome] = runner.run([(TEMPLATE, TABLE)])
    assert outcome.status == "kept" and len(outcome.turns) == 1
    s = outcome.sample
    assert (s.question, s.answer, s.program, s.task, s.origin) == (REWRITE, 5.5, TEMPLATE.program, TEMPLATE.task, "rule")
    assert s.id != TEMPLATE.id and s.provenance["reworded_from"] == TEMPLATE.id
    assert s.provenance["template_question"] == TEMPLATE.question
    asked = g.calls[0].messages[-1]["content"]
    assert TEMPLATE.question in asked and '"agg": "mean"' in asked and "5.5" in asked
    seen = d.calls[0].messages[-1]["content"]
    assert REWRITE in seen and "| 3 | 6 |" in seen
    assert "5.5" not in seen and "aggregate" not in seen and TEMPLATE.question not in seen


def test_a_wrong_answer_goes_back_to_the_generator_with_what_the_reader_answered():
    def generator(request):
        revising = len(request.messages) > 1
        return json.dumps({"question": REWRITE if revising else "What is the typical y for the bigger x values?"})

    def discriminator(request):
        return verdict(5.5) if REWRITE in request.messages[-1]["content"] else verdict(6, critique="median or mean?")

    runner, g, _ = loop(generator, discriminator)
    [outcome] = runner.run([(TEMPLATE, TABLE)])
    assert outcome.status == "kept" and outcome.sample.question == REWRITE and len(outcome.turns) == 2
    revise = g.calls[1].messages
    assert [m["role"] for m in revise] == ["user", "assistant", "user"]
    assert "they answered 6, but the program's answer is 5.5" in revise[-1]["content"]
    assert "median or mean?" in revise[-1]["content"]
    assert outcome.turns[0]["failed"] == ["wrong_answer"] and outcome.turns[1]["failed"] == []


def test_a_reader_who_finds_no_answer_sends_the_rewrite_back_instead_of_being_asked_again():
    runner, g, d = loop(lambda r: json.dumps({"question": REWRITE}),
                        lambda r: verdict(None, critique="only some rows are shown"), max_turns=2)
    [outcome] = runner.run([(TEMPLATE, TABLE)])
    assert outcome.status == "rejected" and len(d.calls) == 2  # one verdict per turn, none asked again
    assert outcome.turns[0]["failed"] == ["wrong_answer"] and "found no answer" in outcome.turns[0]["metric"]
    assert "only some rows are shown" in g.calls[1].messages[-1]["content"]


def test_unnatural_or_ambiguous_rewrites_that_never_pass_keep_the_template_wording():
    other = Sample(task="TU/fact_checking", question="True or false: x of the row where y is 5 is 2.", answer=True,
                   answer_type="bool", table_ids=("tbl-1",), program=Program("chain", "[]"))

    def discriminator(request):
        if "Is x 2" in request.messages[-1]["content"]:
            return verdict("yes", unambiguous=False, critique="which row?")
        return verdict(5.5, natural=False)

    def generator(request):
        return json.dumps({"question": "Is x 2 where y is 5?" if "True or false" in request.messages[0]["content"]
                           else REWRITE})

    runner, g, d = loop(generator, discriminator, max_turns=2)
    mean, fact = runner.run([(TEMPLATE, TABLE), (other, TABLE)])
    assert (mean.status, fact.status) == ("rejected", "rejected") and mean.sample is fact.sample is None
    assert len(g.calls) == len(d.calls) == 4  # two turns, both samples in each
    assert "ambiguous" in g.calls[3].messages[-1]["content"] and "which row?" in g.calls[3].messages[-1]["content"]
    assert rejections([mean, fact]) == {"verdicts": 4, "rejected": 4, "unnatural": 2, "ambiguous": 2}


def test_the_tasks_metric_decides_whether_the_readers_answer_is_the_gold():
    import pyarrow as pa

    from curate.generators.adversarial import metric_matches

    rows = Sample(task="MMQA/multi_table_qa", question="Which towns have over 100 people?", answer=["Oslo", "Bergen"],
                  answer_type="list", table_ids=("t1",), program=Program("sql", "SELECT town FROM towns", "duckdb"))
    assert metric_matches(rows, ["bergen", "Oslo"], "", {})[0]  # exact_match: lists in any order, case ignored
    assert not metric_matches(rows, ["Oslo"], "", {})[0]
    assert metric_matches(TEMPLATE, "5.52", "", {})[0] and not metric_matches(TEMPLATE, 5.7, "", {})[0]  # within 1%
    sql = Sample(task="MMQA/text_to_sql", question="List the towns with over 100 people.", answer=[["Oslo"]],
                 answer_type="table", table_ids=("t1",),
                 program=Program("sql", "SELECT town FROM towns WHERE people > 100", "duckdb"))
    context = {"tables": {"towns": pa.table({"town": ["Oslo", "Bodo"], "people": [700, 52]})},
               "program": sql.program.text, "dialect": "duckdb"}
    assert metric_matches(sql, "SELECT town FROM towns WHERE people >= 101", "", context)[0]  # execution_match
    matched, why = metric_matches(sql, "SELECT town FROM towns", "", context)
    assert not matched and why.startswith("execution_match")


def test_several_tables_are_shown_under_the_names_their_sql_runs_on():
    """The reader writes SQL against the names it is shown: a title alone ("Gapminder data") named no table the
    metric could run, and a right query counted as a wrong answer."""
    import pyarrow as pa

    from curate.curation.table import Table
    from curate.generators.adversarial import metric_context, metric_matches, tables_shown

    towns = Table(name="demo/towns", caption="Towns of Norway", body=pa.table({"town": ["Oslo", "Bodo"], "cc": [1, 1]}))
    counties = Table(name="demo/counties", caption="Counties", body=pa.table({"cc": [1], "county": ["Viken"]}))
    shown = tables_shown([towns, counties], 1000, 30000)
    assert shown.startswith("Table towns:\nTowns of Norway\n") and "\n\nTable counties:\nCounties\n" in shown
    assert tables_shown([towns], 1000, 30000).startswith("Table:\nTowns of Norway\n")
    sql = Sample(task="MMQA/text_to_sql", question="Which towns are in Viken?", answer=[["Oslo"], ["Bodo"]],
                 answer_type="table", table_ids=("a", "b"),
                 program=Program("sql", "SELECT town FROM towns JOIN counties USING (cc) WHERE county = 'Viken'",
                                 "duckdb"))
    context = metric_context(sql, [towns, counties])
    reader = "SELECT t.town FROM towns t, counties c WHERE t.cc = c.cc AND c.county = 'Viken'"
    assert metric_matches(sql, reader, "", context)[0]


def test_the_samples_tried_are_drawn_in_selects_order_one_template_after_another(tmp_path):
    """A capped task keeps each template's first samples in turn: a rewrite of a sample select leaves out is
    lost, so the loop tries samples in the same order (here two templates, two tries: one of each)."""
    import pyarrow.parquet as pq

    from curate.curation.arrow_io import samples_to_arrow
    from curate.generators.adversarial import drawn_per_task

    samples = [Sample(task="TCO/general_operations", question=f"q{template}{n}", answer=n, answer_type="number",
                      table_ids=("t",), template=f"tco.{template}", program=Program("sql", "SELECT 1", "duckdb"))
               for template in ("sum", "mean") for n in range(6)]
    path = tmp_path / "samples.parquet"
    pq.write_table(samples_to_arrow(samples), path)
    for seed in range(5):
        rows = [row for _, row in drawn_per_task([str(path)], [], seed, 2, 0)]
        assert sorted(samples[r].template for r in rows) == ["tco.mean", "tco.sum"]


def test_unreadable_replies_end_as_flagged_records_after_one_retry():
    runner, g, _ = loop(lambda r: "I like tables!", lambda r: verdict(5.5))
    [outcome] = runner.run([(TEMPLATE, TABLE)])
    assert outcome.status == "flagged" and outcome.reason.startswith("generator") and len(g.calls) == 2
    runner, _, d = loop(lambda r: json.dumps({"question": REWRITE}), lambda r: '{"answer": 5.5}')
    [outcome] = runner.run([(TEMPLATE, TABLE)])
    assert outcome.status == "flagged" and "natural" in outcome.reason and len(d.calls) == 2


def test_batch_files_hold_one_round_each_and_the_same_replies_replay_without_asking(tmp_path):
    """Each run writes the round it reached (every sample's next request) and waits; the outputs,
    brought back, take the loop one round further; then the outputs alone replay it to the same end."""
    second = Sample(task="TU/fact_checking", question="True or false: y is 6 where x is 3.", answer=True,
                    answer_type="bool", table_ids=("tbl-1",), program=Program("chain", "[]"))
    golds = {TEMPLATE.question: 5.5, second.question: True}
    cache = tmp_path / "llm-cache.sqlite"

    def clients(requests_dir, replies):
        return [ChatClient(BatchBackend(m, {"backend": "openai", "model": m}, requests_dir and requests_dir / f"{m}.jsonl",
                                        replies), role=m) for m in ("gen", "disc")]

    def answer(body):  # the stand-in model: rewrites name their template; the reader finds the gold for them
        text = body["messages"][-1]["content"]
        if "A template wrote this question:" in text:
            template = re.search(r"A template wrote this question: (.*)", text).group(1)
            return json.dumps({"question": f"Tell me, {template}"})
        template = re.search(r"Question: Tell me, (.*)", text).group(1)
        return verdict(golds[template])

    outputs, rounds = [], []
    while True:
        generator, discriminator = clients(tmp_path / "batches", ReplyStore(cache).get)
        outcomes = AdversarialLoop(generator, discriminator, max_turns=2).run([(TEMPLATE, TABLE), (second, TABLE)])
        files = sorted((tmp_path / "batches").glob("*.jsonl"))
        if not files:
            break
        assert all(o.status == "waiting" for o in outcomes)
        rounds.append({f.stem: len(f.read_text().splitlines()) for f in files})
        for f in files:
            outputs.append(tmp_path / f"out-{len(outputs)}.jsonl")
            run_batch(f, outputs[-1], answer)
        bring_back(outputs[-len(files):], cache, tmp_path / "batches")
    assert rounds == [{"gen": 2}, {"disc": 2}]  # one file a round, both samples in it
    assert [o.status for o in outcomes] == ["kept", "kept"]
    assert outcomes[1].sample.question == f"Tell me, {second.question}" and outcomes[1].sample.answer is True
    from curate.curation.llm.batch import read_outputs

    held = {k: v for out in outputs for k, v in read_outputs(out).items()}
    generator, discriminator = clients(None, held)
    replayed = AdversarialLoop(generator, discriminator, max_turns=2).run([(TEMPLATE, TABLE), (second, TABLE)])
    assert [o.sample.id for o in replayed] == [o.sample.id for o in outcomes]
    assert generator.backend.matched == discriminator.backend.matched == 2


def test_a_build_rewords_through_batch_files_and_each_rewrite_takes_its_templates_place(tmp_path):
    """`curate build` with both roles in batch mode and one sample per part: each stop holds the whole
    round (every part's requests in one file per role); the resumed build keeps the rewrites the
    reader answered with the gold, and `select` puts each in its template's place (no sample added)."""
    import duckdb

    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "towns.csv").write_text("town,people,area\nOslo,700,454\nBergen,290,465\nBodo,52,1395\n"
                                               "Tromso,77,2521\n")
    model = 'backend = "canned"\nbatch = true\n'
    (tmp_path / "build.toml").write_text(
        f'[build]\nsources = ["{tmp_path / "in"}"]\nstages = ["rules", "adversarial"]\n'
        f'[models.generator]\nmodel = "writer"\n{model}[models.discriminator]\nmodel = "reader"\n{model}'
        '[generate.adversarial]\nper_task = 2\nmax_samples = 4\nper_part = 1\nmax_turns = 1\n')
    build = ["build", str(tmp_path / "build.toml"), "-w", str(tmp_path / "ws"), "--releases", str(tmp_path / "rel"),
             "--until", "select", "--workers", "1", "-q"]
    golds: dict[str, str] = {}

    def answer(body):
        text = body["messages"][-1]["content"]
        if "A template wrote this question:" in text:
            template = re.search(r"A template wrote this question: (.*)", text).group(1)
            golds[template] = re.search(r"Executed, it gives: (.*)", text).group(1)
            return json.dumps({"question": f"Tell me, {template}"})
        template = re.search(r"Question: Tell me, (.*)", text).group(1)
        unnatural = template == sorted(golds)[0]  # one rewrite the reader rejects: its template stays
        return verdict(json.loads(golds[template]), natural=not unnatural)

    batches = tmp_path / "ws" / "batches"
    for role in ("generator", "discriminator"):
        stopped = CliRunner().invoke(main, build)
        message = " ".join(stopped.output.split())
        assert stopped.exit_code == 1 and f"{batches / role}.jsonl (4 requests)" in message, message
        assert len(list(batches.glob("*.jsonl"))) == 1
        run_batch(batches / f"{role}.jsonl", tmp_path / f"{role}-out.jsonl", answer)
        build_with = [*build, "--replies", str(tmp_path / f"{role}-out.jsonl")]
        build = build_with
    done = CliRunner().invoke(main, [*build, "--json"])
    assert done.exit_code == 0, done.output
    stages = tmp_path / "ws" / "stages"
    report = json.loads(next(stages.glob("adversarial-*/report.json")).read_text())
    assert report["by_status"] == {"kept": 3, "rejected": 1} and report["verdicts"]["unnatural"] == 1
    con = duckdb.connect()
    rules = con.execute(f"SELECT id, question FROM read_parquet('{stages}/rules-*/*.samples.parquet')").fetchall()
    reworded = dict(con.execute(f"SELECT provenance['reworded_from'], id FROM read_parquet("
                                f"'{stages}/adversarial-*/*.samples.parquet')").fetchall())
    selected = dict(con.execute(f"SELECT id, question FROM read_parquet('{stages}/select-*/*.samples.parquet')").fetchall())
    assert len(reworded) == 3 and set(reworded.values()) <= set(selected) and not set(reworded) & set(selected)
    select = json.loads(next(stages.glob("select-*/report.json")).read_text())
    assert sum(select["candidates"].values()) == len(rules)  # the rewrites stood in for their templates
    assert sum(select["reworded"].values()) == 3
    kept_template = [q for i, q in rules if q == sorted(golds)[0]]
    assert kept_template and kept_template[0] in selected.values()


def test_both_roles_see_every_row_the_characters_allow_as_curate_evaluate_shows_a_table():
    import pyarrow as pa

    from curate.curation.table import Table
    from curate.generators.adversarial import STAGE_DEFAULTS, tables_shown

    speeds = Table(name="speeds", body=pa.table({"speed": list(range(1325))}))  # 1,325 short rows: under 30,000 characters
    shown = tables_shown([speeds], STAGE_DEFAULTS["max_table_rows"], STAGE_DEFAULTS["max_table_chars"])
    assert "\n1324" in shown and "more rows" not in shown  # a question over all 1,325 rows stays answerable
    assert "(1225 more rows)" in tables_shown([speeds], 100, 30000)  # a row limit a user sets still holds
