"""The README's commands run as written: every shell block, in order, in an empty folder holding the small
`mydata/` the README talks about, against this checkout. A command that needs a server, a GPU, an install or
a long time says so in a trailing comment (`# needs a server`, `# needs a GPU`, `# installs`, `# long`) and
is left out; nothing else is. What the README shows of the results (the sample, the report) is checked
against what the commands wrote."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
SKIP_MARKS = ("needs a server", "needs a GPU", "installs", "long")

# the README's mydata/: two tables of its example (the sample it shows comes from orders.csv)
ORDERS = """order_id,customer,region,product,quantity,unit_price,order_date
1001,Acme Corp,North,Widget,12,2.50,2024-01-05
1002,Birch Ltd,South,Gadget,5,12.00,2024-01-09
1003,Cobalt Inc,East,Widget,30,2.40,2024-01-14
1004,Acme Corp,North,Gizmo,7,8.75,2024-02-02
1005,Delta Co,West,Gadget,9,11.50,2024-02-11
1006,Birch Ltd,South,Widget,18,2.45,2024-02-20
1007,Elm Partners,East,Gizmo,4,9.10,2024-03-03
1008,Cobalt Inc,East,Gadget,11,11.80,2024-03-15
1009,Delta Co,West,Widget,25,2.35,2024-03-21
1010,Elm Partners,East,Gadget,6,12.20,2024-03-30
"""
CITIES = """city,country,population,area_km2
Lisbon,Portugal,545000,100.0
Porto,Portugal,232000,41.4
Madrid,Spain,3280000,604.3
Seville,Spain,684000,140.8
Lyon,France,513000,47.9
Nice,France,342000,71.9
Milan,Italy,1371000,181.8
Turin,Italy,848000,130.0
"""


def blocks(language: str, text: str | None = None) -> list[str]:
    """The README's fenced blocks of one language, in order."""
    text = README.read_text() if text is None else text
    return re.findall(rf"^```{language}\n(.*?)^```", text, flags=re.S | re.M)


def commands(block: str) -> list[str]:
    """A shell block as its commands: continued lines joined, a here-document kept with its command."""
    out: list[str] = []
    lines = block.splitlines()
    i = 0
    while i < len(lines):
        command = [lines[i]]
        while command[-1].endswith("\\") and i + 1 < len(lines):
            i += 1
            command.append(lines[i])
        heredoc = re.search(r"<<-?\s*'?(\w+)'?", command[0])
        if heredoc:
            while i + 1 < len(lines) and lines[i].strip() != heredoc.group(1):
                i += 1
                command.append(lines[i])
        if "".join(command).strip():
            out.append("\n".join(command))
        i += 1
    return out


def skipped(command: str) -> str | None:
    """The mark that leaves a command out: a trailing `# needs a server` (or another of SKIP_MARKS)."""
    for line in command.splitlines():
        found = re.search(r"#\s*(" + "|".join(SKIP_MARKS) + r")\b", line)
        if found:
            return found.group(1)
    return None


def test_commands_are_split_as_a_shell_reads_them():
    block = "a 1   # long: x\nb \\\n  c\ncat > f <<'EOF'\nx # y\nEOF\nd\n"
    assert commands(block) == ["a 1   # long: x", "b \\\n  c", "cat > f <<'EOF'\nx # y\nEOF", "d"]
    assert [skipped(c) for c in commands(block)] == ["long", None, None, None]


def test_readme_keeps_ci_commands_and_marks_only_what_it_must():
    """CI's hooks grep for `make demo` and `make test`; every command left out says why."""
    shell = [c for b in blocks("bash") for c in commands(b)]
    assert any(c.startswith("make demo") for c in shell) and any(c.startswith("make test ") for c in shell)
    assert len(README.read_text().splitlines()) < 300
    left_out = [c for c in shell if skipped(c)]
    assert all(re.match(r"(pip |python -m venv|vllm |make |curate evaluate .*--base-url)", c) for c in left_out), left_out


def test_readme_links_exist():
    links = re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", README.read_text())
    missing = [link for link in links if not (ROOT / link).exists()]
    assert not missing, missing


def _shims(folder: Path) -> dict[str, str]:
    """`curate` and `python` as the README's reader has them, running this checkout's code."""
    folder.mkdir()
    (folder / "curate").write_text(f'#!/bin/sh\nexec "{sys.executable}" -m curate.curation.cli "$@"\n')
    (folder / "python").write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    for shim in folder.iterdir():
        shim.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith("CURATE_")}  # the README's own -w and --releases
    return {**env, "PATH": f"{folder}{os.pathsep}{os.environ['PATH']}", "PYTHONPATH": str(ROOT)}


@pytest.mark.integration
def test_readme_commands_run_as_written(tmp_path):
    (tmp_path / "mydata").mkdir()
    (tmp_path / "mydata" / "orders.csv").write_text(ORDERS)
    (tmp_path / "mydata" / "cities.csv").write_text(CITIES)
    env = _shims(tmp_path / ".bin")
    kept = [c for b in blocks("bash") for c in commands(b) if not skipped(c)]
    script = "set -euo pipefail\n" + "\n".join(f"echo '$ {c.splitlines()[0][:60]}'\n{c}" for c in kept)
    run = subprocess.run(["bash", "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, f"{run.stdout[-3000:]}\n{run.stderr[-3000:]}"

    # the sample the README shows is one the build wrote, as it shows it, among as many as it says
    shown = json.loads(blocks("json")[0])
    release = tmp_path / "releases" / "mydata" / "1.0.0"
    written = [json.loads(line) for f in sorted(release.glob("samples/*/*.jsonl")) for line in f.open()]
    assert shown in written
    said = int(re.search(r"one of the ([\d,]+) samples", README.read_text()).group(1).replace(",", ""))
    assert len(written) == said

    # the report it shows is the start of the one the gold self-test wrote (fingerprints hash where the files were)
    def masked(text: str) -> str:
        return re.sub(r"fingerprint [0-9a-f]{16}", "fingerprint F", text).strip()

    shown_report = next(b for b in blocks("text") if "# Evaluation report" in b)
    written_report = (tmp_path / "results" / "gold" / "report.md").read_text()
    assert masked(written_report).startswith(masked(shown_report)), \
        "the README's report excerpt is not how results/gold/report.md starts now: paste the start of the new one"

    # and its Python (loading the release with `datasets`, from the dev extra) reads that release
    if any("import datasets" in b for b in blocks("python")):
        pytest.importorskip("datasets")
    for block in blocks("python"):
        ran = subprocess.run([sys.executable, "-c", block], cwd=tmp_path, env=env, capture_output=True, text=True,
                             timeout=300)
        assert ran.returncode == 0, f"{block}\n{ran.stderr[-3000:]}"
