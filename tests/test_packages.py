"""One import namespace: every package lives under `curate`, so installing curate claims no top-level name
another distribution uses (PyPI's `validators`, for one), and the layers hold."""

import importlib
from pathlib import Path

import pytest

from tests.conftest import ROOT

PACKAGES = [f"curate.{name}" for name in ("curation", "generators", "validators", "annotation", "exports", "evaluation",
                                          "importers")]


@pytest.mark.parametrize("name", PACKAGES)
def test_each_top_level_package_imports_from_this_repository(name):
    module = importlib.import_module(name)
    assert Path(module.__file__).resolve().parent == ROOT.joinpath(*name.split("."))


def test_the_distribution_installs_one_top_level_name():
    """What `pip install` writes: the packages setuptools finds under pyproject's include, all under `curate`
    (before, `validators/` was written into PyPI's `validators` and replaced its `__init__.py`)."""
    import tomllib

    from setuptools import find_packages

    found = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]["find"]
    packages = find_packages(str(ROOT), include=found["include"])
    assert set(PACKAGES) <= set(packages)
    assert {p.split(".")[0] for p in packages} == {"curate"}


def test_the_layers_hold_by_import_linter_contracts():
    """pyproject.toml's [tool.importlinter] contracts: curation imports no sibling, the siblings import
    curation and not each other, evaluation and importers also exports. grimp reads every import
    statement (inside functions too) and follows them through other modules, so an import that
    reaches a sibling through curation breaks the contract as well."""
    import subprocess
    import sys

    pytest.importorskip("importlinter", reason="import-linter is a dev dependency: pip install -e '.[dev]'")
    code = ("import sys; from importlinter.cli import lint_imports; "
            "sys.exit(lint_imports(config_filename='pyproject.toml', no_cache=True, no_logo=True))")
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_cli_help_imports_no_heavy_package():
    import subprocess
    import sys

    code = ("import sys; from click.testing import CliRunner; from curate.curation.cli import main;"
            "r = CliRunner().invoke(main, ['--help']); assert r.exit_code == 0, r.output;"
            "heavy = [m for m in ('pandas', 'pyarrow', 'duckdb', 'openpyxl', 'numpy', 'great_expectations') if m in sys.modules];"
            "print(','.join(heavy))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_no_module_imports_a_module_that_imports_it_back():
    """No import cycles among this repository's modules: imports at the top or inside functions,
    read from the source (imports only for type checking do not run, so they do not count)."""
    import ast

    def module_file(name: str) -> Path | None:
        """A module of this repository's packages (all of PACKAGES, importers included), or None."""
        if not name.startswith(tuple(f"{p}." for p in PACKAGES)) and name not in PACKAGES:
            return None
        base = ROOT.joinpath(*name.split("."))
        return next((p for p in (base.with_suffix(".py"), base / "__init__.py") if p.is_file()), None)

    def imports(name: str) -> set[str]:
        path = module_file(name)
        tree = ast.parse(path.read_text())
        guarded = {id(n) for node in ast.walk(tree) if isinstance(node, ast.If)
                   and getattr(node.test, "id", getattr(node.test, "attr", "")) == "TYPE_CHECKING"
                   for n in ast.walk(node)}
        out = set()
        for node in ast.walk(tree):
            if id(node) in guarded:
                continue
            if isinstance(node, ast.Import):
                out |= {a.name for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                out |= {f"{node.module}.{a.name}" if module_file(f"{node.module}.{a.name}") else node.module
                        for a in node.names}
        return {m for m in out if module_file(m) is not None and m != name}

    modules = sorted(".".join(p.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
                     for package in PACKAGES for p in ROOT.joinpath(*package.split(".")).rglob("*.py"))
    graph = {m: imports(m) for m in modules}

    def reachable(start: str) -> set[str]:
        seen, frontier = set(), [start]
        while frontier:
            for m in graph.get(frontier.pop(), ()):
                if m not in seen:
                    seen.add(m)
                    frontier.append(m)
        return seen

    cycles = sorted(f"{a} -> {b} -> ... -> {a}" for a in graph for b in graph[a] if a in reachable(b))
    assert cycles == []
