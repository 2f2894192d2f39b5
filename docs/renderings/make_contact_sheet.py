"""Writes docs/renderings/contact-sheet.png: `curate render --format png` of three handmade
hierarchical sheets (the ones the tests build), so the README can show what a rendering looks like
without copying anyone's data. Run from the repository root: python docs/renderings/make_contact_sheet.py"""

import sys
import tempfile
from pathlib import Path

from click.testing import CliRunner

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from curate.curation.cli import main  # noqa: E402
from tests.files import hierarchical_xlsx  # noqa: E402
from tests.test_renderings import merged_sheet  # noqa: E402
from tests.test_structure import section_rows_xlsx  # noqa: E402

with tempfile.TemporaryDirectory() as tmp:
    files = [merged_sheet(Path(tmp) / "crops.xlsx"), hierarchical_xlsx(Path(tmp) / "yields.xlsx"),
             section_rows_xlsx(Path(tmp) / "job-demand.xlsx")]
    target = Path(__file__).with_name("contact-sheet.png")
    result = CliRunner().invoke(main, ["render", *map(str, files), "--format", "png", "--contact-sheet", str(target)])
    print(result.output, end="")
    sys.exit(result.exit_code)
