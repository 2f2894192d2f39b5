"""The sandbox runs model-written programs in their own process, with limits, no network, a
scratch folder and no secrets; `curate sandbox run` prints its JSON. (What a hostile program
tries, and that none of it gets out: test_sandbox_attacks.py.)"""

from __future__ import annotations

import json
import subprocess

import pytest

from curate.evaluation.sandbox import Limits, Sandbox, Session
from tests.conftest import ROOT, curate_command


@pytest.fixture(scope="module")
def box():
    with Sandbox(workers=2, limits=Limits(timeout=5, cpu_seconds=2, memory_mb=256, max_output=200)) as sandbox:
        yield sandbox


@pytest.fixture
def table(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("town,people\nOslo,700\nBergen,290\n")
    return str(path)


def test_a_program_reads_its_table_and_its_output_is_captured(box, table):
    result = box.run("print(df['people'].sum())\nprint(type(pd).__name__, type(np).__name__)", {"df": table})
    assert result.ok and result.stdout == "990\nmodule module\n" and result.error == ""


def test_a_failing_program_reports_its_own_traceback_only(box):
    result = box.run("def f():\n    return 1 / 0\nf()")
    assert not result.ok and result.error.endswith("ZeroDivisionError: division by zero")
    assert '<program>", line 3' in result.error and "sandbox_worker" not in result.error


def test_limits_stop_endless_sleeping_and_greedy_programs(box):
    spin = box.run("while True: pass", limits=Limits(timeout=60, cpu_seconds=2))  # the CPU bound stops it, even on a busy machine
    assert not spin.ok and "CPU time limit" in spin.error
    sleep = box.run("import time\ntime.sleep(60)")
    assert not sleep.ok and "ran past 5 s" in sleep.error  # reported only once the worker was killed
    greedy = box.run("x = bytearray(2 * 1024 ** 3)")
    assert not greedy.ok and "MemoryError" in greedy.error
    big_file = box.run("open('f', 'wb').write(b'x' * (100 * 1024 * 1024))")
    assert not big_file.ok and "File too large" in big_file.error


def test_there_is_no_network(box):
    for code in ("import socket\nsocket.create_connection(('127.0.0.1', 9))",
                 "import urllib.request\nurllib.request.urlopen('http://127.0.0.1:9')"):
        result = box.run(code)
        assert not result.ok and "the sandbox has no network" in result.error


def test_no_secret_reaches_a_program_and_it_works_in_a_scratch_folder_of_its_own(box, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-value")
    first = box.run("import os\nprint(sorted(os.environ))\nprint(os.getcwd())\nopen('left.txt', 'w').write('x')",
                    limits=Limits(timeout=5, max_output=4000))
    assert first.ok and "OPENAI_API_KEY" not in first.stdout and "sk-secret" not in first.stdout
    assert first.stdout.splitlines()[1] == "/scratch"  # a folder of its own, inside its namespace
    second = box.run("import os\nprint(os.path.exists('left.txt'))")
    assert second.stdout.strip() == "False"  # a program never sees another's leftovers


def test_long_output_is_cut_in_the_middle(box):
    result = box.run("print('a' * 500 + 'END')")
    assert result.ok and len(result.stdout) < 300 and result.stdout.rstrip().endswith("END")
    assert "characters cut" in result.stdout


def test_charts_are_read_back_as_plotted_values(box):
    result = box.run("plt.bar(['Oslo', 'Bergen'], [700, 290])\nplt.title('people')")
    assert result.ok
    [figure] = result.figures
    assert figure["type"] == "bar" and figure["axes"][0]["bars"] == [700.0, 290.0]
    assert figure["axes"][0]["x_labels"] == ["Oslo", "Bergen"]


def test_a_session_keeps_variables_between_cells(table):
    with Session(Limits(timeout=5)) as session:
        assert session.run("total = int(df['people'].sum())", {"df": table}).ok
        assert session.run("print(total + 10)").stdout == "1000\n"


# what `curate sandbox run` prints, as the issue names it
PRINTED_FIELDS = {"ok", "stdout", "error", "elapsed"}


def test_curate_sandbox_run_prints_json(tmp_path, table):
    program = tmp_path / "p.py"
    program.write_text("print(len(df))")
    done = subprocess.run([*curate_command(), "sandbox", "run", str(program), "--table", table, "--timeout", "5"],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)
    out = json.loads(done.stdout)
    assert done.returncode == 0 and out["ok"] and out["stdout"] == "2\n" and set(out) >= PRINTED_FIELDS
    program.write_text("raise SystemExit(3)")
    failed = subprocess.run([*curate_command(), "sandbox", "run", str(program)], capture_output=True, text=True,
                            cwd=ROOT, timeout=120)
    assert failed.returncode == 1 and not json.loads(failed.stdout)["ok"]


def test_a_worker_outlives_the_thread_that_started_it():
    """`curate evaluate` runs each chunk's programs from a thread pool of its own, and replacement
    workers are asked for from those threads. bwrap's --die-with-parent follows the thread that
    started a process: a worker started from a pool thread was killed when the pool ended, and
    the next chunk's program found it dead."""
    import threading
    import time

    from curate.evaluation.sandbox import Worker

    made: list[Worker] = []

    def start_one() -> None:
        made.append(Worker(Limits(timeout=20)))
        time.sleep(1.5)  # bwrap is up (and has asked to die with its parent) before this thread ends

    thread = threading.Thread(target=start_one)
    thread.start()
    thread.join()
    [worker] = made
    try:
        result = worker.run("print(6 * 7)", None, Limits(timeout=20))
    finally:
        worker.kill()
    assert result.ok and result.stdout == "42\n", result.error


def test_nothing_one_program_leaves_reaches_the_next_on_the_same_worker(table):
    """A worker forks each program from a warm interpreter and stays: files in scratch, /tmp and
    /dev/shm, environment variables, a monkey-patched pandas, a daemon and the last program's
    table are all gone when the next program starts on it."""
    with Sandbox(workers=1, limits=Limits(timeout=10, max_output=4000)) as box:
        [worker] = list(box._idle.queue)
        left = box.run("""
import os, subprocess
for place in ('/scratch/left', '/tmp/left', '/dev/shm/left'):
    open(place, 'w').write('x')
os.makedirs('/scratch/locked/inner')
os.chmod('/scratch/locked', 0)
os.environ['LEFT'] = '1'
pd.DataFrame.sum = lambda *a, **k: 'patched'
np.left = True
if os.fork() == 0:  # a daemon: fork, setsid, fork
    os.setsid()
    if os.fork() == 0:
        os.execvp('sleep', ['sleep', '1000'])
    os._exit(0)
subprocess.Popen(['sleep', '1001'], start_new_session=True)
print(df['people'].sum())
""", {"df": table})
        assert left.ok and left.stdout == "990\n", left.error
        seen = box.run("""
import os, json
print(json.dumps({'files': sorted(os.listdir('/scratch') + os.listdir('/tmp') + os.listdir('/dev/shm')),
                  'env': os.environ.get('LEFT'), 'sum': str(pd.DataFrame({'a': [1, 2]}).sum().tolist()),
                  'np': hasattr(np, 'left'), 'df': 'df' in globals(), 'input': os.listdir('/input'),
                  'processes': sorted(open(f'/proc/{p}/cmdline').read().split('\\0')[0].rsplit('/', 1)[-1]
                                      for p in os.listdir('/proc') if p.isdigit())}))
""")
        assert list(box._idle.queue) == [worker] and worker.process.poll() is None  # the same worker ran both
    assert seen.ok, seen.error
    assert json.loads(seen.stdout) == {"files": [], "env": None, "sum": "[3]", "np": False, "df": False, "input": [],
                                       "processes": ["python", "python"]}  # the worker (pid 1) and this program


def test_curate_sandbox_check_says_who_a_program_runs_as_on_the_host():
    done = subprocess.run([*curate_command(), "sandbox", "check", "--json"], capture_output=True, text=True,
                          cwd=ROOT, timeout=120)
    found = json.loads(done.stdout)
    if not found["isolation"]:
        pytest.skip(f"no isolation here: {found['problem']}")
    assert done.returncode == 0 and 0 not in found["inside"]["host_uids"] and found["inside"]["host_uids"]
    assert found["inside"]["seccomp"] is True and found["inside"]["proc_sys"] == "read-only"
