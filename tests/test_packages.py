"""The top-level packages are this repository's, not PyPI namesakes (e.g. `validators`)."""

import importlib
from pathlib import Path

import pytest

from tests.conftest import ROOT

PACKAGES = ["curation", "generators", "validators", "annotation", "exports", "evaluation"]


@pytest.mark.parametrize("name", PACKAGES)
def test_each_top_level_package_imports_from_this_repository(name):
    module = importlib.import_module(name)
    assert Path(module.__file__).resolve().parent == ROOT / name


def test_curation_imports_no_sibling_package():
    """Arrows point down only: nothing in curation/ imports generators, validators, ..."""
    import re

    siblings = "|".join(PACKAGES[1:])
    pattern = re.compile(rf"^\s*(from|import)\s+({siblings})\b", re.M)
    offenders = [f"{path.relative_to(ROOT)} imports {m.group(2)}"
                 for path in (ROOT / "curation").rglob("*.py") for m in pattern.finditer(path.read_text())]
    assert offenders == []


def test_cli_help_imports_no_heavy_package():
    import subprocess
    import sys

    code = ("import sys; from click.testing import CliRunner; from curation.cli import main;"
            "r = CliRunner().invoke(main, ['--help']); assert r.exit_code == 0, r.output;"
            "heavy = [m for m in ('pandas', 'pyarrow', 'duckdb', 'openpyxl', 'numpy', 'great_expectations') if m in sys.modules];"
            "print(','.join(heavy))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
