"""docs/cli.md and docs/settings.md are written from the code by docs/make_reference.py: a command, an
option or a setting changed without rerunning it fails here, so the reference pages cannot drift."""

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _script():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("make_reference", ROOT / "docs" / "make_reference.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def test_reference_pages_are_what_the_code_gives():
    script = _script()
    stale = [str(p.relative_to(ROOT)) for p in script.stale()]
    assert not stale, f"{', '.join(stale)} differ from the code: run python docs/make_reference.py"


def test_reference_pages_cover_every_command_and_section():
    """What the pages are generated from: every visible command, every config section the build reads."""
    import click

    from curate.curation.cli import main
    from curate.curation.config import KNOWN_SECTIONS

    cli = (ROOT / "docs" / "cli.md").read_text()
    ctx = click.Context(main, info_name="curate")
    for name in main.list_commands(ctx):
        if not main.get_command(ctx, name).hidden:
            assert f"## curate {name}\n" in cli, name
    settings = (ROOT / "docs" / "settings.md").read_text()
    headings = {line[3:].split(".")[0] for line in settings.splitlines() if line.startswith("## ")}
    assert KNOWN_SECTIONS <= headings | {"models"}, KNOWN_SECTIONS - headings
