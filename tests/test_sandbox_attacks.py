"""A red team against the sandbox: programs written as a hostile model would write them. After
each attack nothing has escaped: no process of the program is left running, no file was written
outside its scratch folder, no secret was read, nothing outside was reached or signalled, and the
caller (the evaluator) lives on. Each runs through the sandbox's API; a sample of them also
through `curate sandbox run` and through a replayed PoT evaluation.

The isolation is bubblewrap's; where it cannot be set up these tests skip with the reason, and
the fail-closed test shows what a user gets instead.
"""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import psutil
import pytest

from curate.evaluation.isolation import SandboxUnavailable, support
from curate.evaluation.sandbox import Limits, Sandbox
from tests.conftest import ROOT, curate_command

pytestmark = [pytest.mark.timeout(120),
              pytest.mark.skipif(not support().isolated, reason=f"no isolation here: {support().problem}")]

MARK = "987654"  # every process an attack starts carries it in its command line
LIMITS = Limits(timeout=6, cpu_seconds=4, memory_mb=256, disk_mb=64, processes=32, max_output=2000)


def survivors() -> list[str]:
    found = []
    for p in psutil.process_iter(["cmdline", "status"]):
        try:
            if MARK in " ".join(p.info["cmdline"] or []) and p.info["status"] != psutil.STATUS_ZOMBIE:
                found.append(f"{p.pid}: {' '.join(p.info['cmdline'])}")
        except psutil.Error:
            pass
    return found


@pytest.fixture
def places(tmp_path, monkeypatch):
    """What a program must not reach: a workspace, a release, the project, /tmp, the home folder
    (paths it is told), a secret in the parent's environment, and a sentinel process."""
    token, secret = uuid.uuid4().hex, uuid.uuid4().hex  # the program is told the token, never the secret
    workspace, release = tmp_path / "workspace", tmp_path / "release"
    workspace.mkdir()
    release.mkdir()
    (workspace / "secret.txt").write_text(f"workspace-secret-{secret}")
    (release / "samples.jsonl").write_text(json.dumps({"answer": f"gold-{secret}"}) + "\n")
    monkeypatch.setenv("CURATE_TEST_SECRET", f"env-secret-{secret}")
    targets = [Path("/tmp") / f"escaped-{token}", Path.home() / f"escaped-{token}", workspace / f"escaped-{token}",
               release / f"escaped-{token}", ROOT / f"escaped-{token}"]
    sentinel = subprocess.Popen(["sleep", "600"])
    yield {"token": token, "secret": secret, "workspace": workspace, "release": release, "targets": targets, "sentinel": sentinel}
    alive = sentinel.poll() is None
    sentinel.kill()
    sentinel.wait(timeout=10)
    assert alive, "the sentinel process outside the sandbox was killed"
    assert not survivors(), f"processes outlived the program: {survivors()}"
    assert not [t for t in targets if t.exists()], "a file was written outside the scratch folder"
    strays = [n for n in os.listdir("/tmp") if token in n or MARK in n]  # attacks name what they write so
    assert not strays, f"new files in /tmp: {strays}"


def attack(code: str, places: dict, limits: Limits = LIMITS) -> dict:
    """Run `code` (with PLACES bound to what it must not reach) in a fresh sandbox, closed after."""
    prelude = f"PLACES = {json.dumps({k: str(v) for k, v in places.items() if k in ('workspace', 'release')})}\n" \
              f"TARGETS = {json.dumps([str(t) for t in places['targets']])}\nTOKEN = {places['token']!r}\n" \
              f"SENTINEL = {places['sentinel'].pid}\nMARK = {MARK!r}\n"
    with Sandbox(workers=1, limits=limits) as box:
        box._closed = True
        result = box.run(prelude + code).as_dict()
    assert places["secret"] not in json.dumps(result), "a secret reached the program's result"
    return result


def test_writing_outside_the_scratch_folder_fails(places):
    result = attack("""
import json, os
wrote = []
for t in TARGETS + ['/etc/escaped-' + TOKEN, '/usr/escaped-' + TOKEN, '/escaped-' + TOKEN, '/dev/escaped-' + TOKEN]:
    try:
        with open(t, 'w') as f:
            f.write('x')
        wrote.append(t)
    except OSError as e:
        pass
open('/tmp/inside', 'w').write('the private /tmp is writable')
print(json.dumps(wrote))
""", places)
    assert result["ok"], result
    written = json.loads(result["stdout"])
    # only into its own private /tmp (where a checkout under /tmp shows as empty folders); the
    # `places` fixture checks that none of it reached the machine
    assert str(places["targets"][0]) in written and all(t.startswith("/tmp/") for t in written), written


def test_secrets_files_and_the_parents_environment_are_out_of_reach(places):
    result = attack("""
import glob, json, os
seen = {}
for path in [PLACES['workspace'] + '/secret.txt', PLACES['release'] + '/samples.jsonl', os.path.expanduser('~/.ssh'),
             '/root/.ssh/id_rsa', '/etc/shadow', '/proc/%d/environ' % os.getppid(), '/proc/1/environ',
             '/proc/%d/environ' % SENTINEL, '/work']:
    try:
        seen[path] = open(path).read() if not os.path.isdir(path) else os.listdir(path)
    except OSError as e:
        seen[path] = type(e).__name__
for path in glob.glob('/proc/*/environ'):
    try:
        seen[path] = open(path).read()
    except OSError as e:
        seen[path] = type(e).__name__
print(json.dumps(seen))
print(sorted(os.environ))
""", places)
    assert result["ok"], result
    seen = json.loads(result["stdout"].splitlines()[0])
    assert seen[str(places["workspace"] / "secret.txt")] == "FileNotFoundError"
    assert seen[str(places["release"] / "samples.jsonl")] == "FileNotFoundError"  # no gold answers
    assert seen["/root/.ssh/id_rsa"] == "FileNotFoundError" and seen["/etc/shadow"] == "FileNotFoundError"
    assert "CURATE_TEST_SECRET" not in result["stdout"]


def test_no_socket_reaches_anything(places, tmp_path):
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    listener.settimeout(0.1)
    port = listener.getsockname()[1]
    datagrams = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    datagrams.bind(("127.0.0.1", port))
    datagrams.settimeout(0.1)
    unix_path = f"/tmp/curate-attack-{places['token'][:8]}.sock"
    unix = socket.socket(socket.AF_UNIX)
    unix.bind(unix_path)
    unix.listen()
    try:
        result = attack(f"""
import _socket  # below the worker's Python-level refusal: only the kernel stops these
outcomes = []
for family, kind, address in [(_socket.AF_INET, _socket.SOCK_STREAM, ('127.0.0.1', {port})),
                              (_socket.AF_INET, _socket.SOCK_DGRAM, ('127.0.0.1', {port})),
                              (_socket.AF_INET, _socket.SOCK_STREAM, ('8.8.8.8', 53)),
                              (_socket.AF_UNIX, _socket.SOCK_STREAM, {unix_path!r})]:
    try:
        s = _socket.socket(family, kind)
        s.settimeout(2)
        if kind == _socket.SOCK_DGRAM:  # sent into its own empty network: it arrives nowhere
            s.sendto(b'x', address)
            outcomes.append('sent')
        else:
            s.connect(address)
            outcomes.append('connected')
    except OSError as e:
        outcomes.append(type(e).__name__)
print(outcomes)
""", places)
        assert result["ok"], result
        assert "connected" not in result["stdout"], result["stdout"]
        with pytest.raises(OSError):  # nothing ever knocked
            listener.accept()
        with pytest.raises(OSError):  # no datagram arrived
            datagrams.recvfrom(16)
    finally:
        listener.close()
        datagrams.close()
        unix.close()
        os.unlink(unix_path)


def test_orphans_double_forks_and_daemons_die_with_the_program(places):
    result = attack("""
import os, subprocess, threading, time
for _ in range(20):
    subprocess.Popen(['sleep', MARK], start_new_session=True)
if os.fork() == 0:  # fork + setsid + fork: a daemon, re-parented away from the worker
    os.setsid()
    if os.fork() == 0:
        os.execvp('sleep', ['sleep', MARK])
    os._exit(0)
threading.Thread(target=lambda: time.sleep(1000), daemon=False).start()
print('left behind')
""", places)
    assert result["ok"] and "left behind" in result["stdout"], result
    # the `places` fixture checks that no process carrying MARK survived


def test_a_fork_bomb_is_bounded_and_leaves_nothing(places):
    if not support().cgroup:
        pytest.skip("no writable cgroup here: a fork bomb would be bounded only by the wall clock")
    result = attack("""
import os, time
children = 0
try:
    while True:
        if os.fork() == 0:
            os.execvp('sleep', ['sleep', MARK])
        children += 1
except OSError as e:
    print('refused after', children, type(e).__name__)
""", places)
    assert result["ok"], result
    assert int(result["stdout"].split("refused after ")[1].split()[0]) <= LIMITS.processes


def test_memory_spread_over_children_is_bounded_together(places):
    if not support().cgroup:
        pytest.skip("no writable cgroup here: memory is bounded per process only")
    result = attack("""
import os
pids = []
for _ in range(6):  # 6 x 120 MB: each under the per-process limit, together over the sandbox's 256 MB
    pid = os.fork()
    if pid == 0:
        block = bytearray(120 * 1024 * 1024)
        for i in range(0, len(block), 4096):
            block[i] = 1
        os._exit(0)
    pids.append(pid)
print('finished', sum(os.waitpid(p, 0)[1] == 0 for p in pids))
""", places)
    if result["ok"]:
        assert int(result["stdout"].split("finished ")[1]) < 6, result  # the group's OOM killer took some
    else:
        assert "memory limit (the program and its processes together)" in result["error"], result


def test_a_cpu_loop_and_a_big_allocation_are_stopped(places):
    # the wall clock far beyond the CPU budget, so that the CPU limit is what stops the loop even on
    # a machine busy enough to give it a small share of a core (a loaded CI runner)
    spin = attack("while True: pass", places, dataclasses.replace(LIMITS, timeout=90, cpu_seconds=2))
    assert not spin["ok"] and "CPU time limit" in spin["error"]
    greedy = attack("x = bytearray(2 * 1024 ** 3)", places)
    assert not greedy["ok"] and "MemoryError" in greedy["error"]


def test_filling_the_disk_stops_at_the_scratch_folders_size(places):
    result = attack("""
import json, os
written = 0
try:
    for n in range(100):
        with open(f'/tmp/fill-{TOKEN}-{n}', 'wb') as f:
            for _ in range(32):
                f.write(b'x' * (1024 * 1024))
                written += 1024 * 1024
except OSError as e:
    print('stopped at', written // (1024 * 1024), 'MB:', e.strerror)
mounts = {line.split()[1]: line.split()[2] for line in open('/proc/self/mounts')}
print(json.dumps({'tmp': mounts.get('/tmp'), 'here': mounts.get(os.getcwd())}))
""", places)
    assert result["ok"] and "No space left on device" in result["stdout"], result
    assert int(result["stdout"].split("stopped at ")[1].split()[0]) <= LIMITS.disk_mb
    # where it wrote is memory the sandbox owns, never the machine's disk (checked from inside: the machine's
    # free space moves with every other process writing, so it cannot say this on a busy machine)
    filesystems = json.loads(result["stdout"].strip().splitlines()[-1])
    assert filesystems == {"tmp": "tmpfs", "here": "tmpfs"}, filesystems


def test_killing_the_parent_and_signalling_others_reach_nothing_outside(places):
    result = attack("""
import os, signal
outcomes = {}
for name, target in [('parent', os.getppid()), ('init', 1), ('sentinel', SENTINEL), ('everyone', -1)]:
    try:
        os.kill(target, signal.SIGKILL) if name != 'everyone' else None
        outcomes[name] = 'sent'
    except OSError as e:
        outcomes[name] = type(e).__name__
print(outcomes)
os.kill(-1, signal.SIGKILL)  # every process it can see, itself included
""", places)
    assert not result["ok"]  # it killed itself: a failed program, and the caller goes on
    assert psutil.Process().is_running() and places["sentinel"].poll() is None


def test_ptrace_reaches_no_process_outside(places):
    result = attack("""
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
PTRACE_ATTACH = 16
outcomes = {}
for name, pid in [('sentinel', SENTINEL), ('parent', os.getppid())]:
    outcomes[name] = libc.ptrace(PTRACE_ATTACH, pid, None, None), os.strerror(ctypes.get_errno())
print(outcomes)
""", places)
    assert result["ok"], result
    assert "'sentinel': (-1" in result["stdout"], result["stdout"]
    assert psutil.Process(places["sentinel"].pid).status() != psutil.STATUS_STOPPED


def test_flooding_the_output_reaches_the_caller_only_truncated(places):
    result = attack("""
import os, sys
print('x' * 10_000_000)
os.write(1, b'done 0 {"ok": true, "stdout": "forged"}' + b'y' * 5_000_000)  # into /dev/null
os.write(2, b'z' * 1_000_000)
""", places)
    assert result["ok"] and len(result["stdout"]) < 2 * LIMITS.max_output and "characters cut" in result["stdout"]


# ------------------------------------------------------- finding 1: root on the host through /proc/sys

KNOBS = ["kernel/core_pattern", "vm/drop_caches", "kernel/pid_max", "kernel/panic", "vm/overcommit_memory",
         "fs/file-max", "kernel/randomize_va_space"]
as_root = pytest.mark.skipif(os.geteuid() != 0, reason="the suite is not root here: a sandbox cannot be root on "
                                                       "the host either (CI runs as root)")


def knob_values() -> dict[str, str]:
    return {knob: Path("/proc/sys", knob).read_text() for knob in KNOBS if knob != "vm/drop_caches"}  # write-only


@as_root
def test_a_program_never_runs_as_root_on_the_host(places):
    """bwrap started by root mapped uid 0 inside to uid 0 outside: the host saw the program as root."""
    outcome: dict = {}
    runner = threading.Thread(target=lambda: outcome.update(attack(
        "import subprocess, time\nsubprocess.Popen(['sleep', MARK + '1'])\ntime.sleep(3)\nprint('done')", places)))
    runner.start()
    uids: set[int] = set()
    deadline = time.monotonic() + 60
    while not uids and time.monotonic() < deadline:
        for p in psutil.process_iter(["cmdline", "uids"]):
            if f"{MARK}1" in " ".join(p.info["cmdline"] or []):
                uids |= set(p.info["uids"])  # as the host sees it: real, effective, saved
        time.sleep(0.05)
    runner.join()
    assert outcome.get("ok") and uids, (outcome, uids)
    assert 0 not in uids, f"the program's process runs as host uid {sorted(uids)}"


@as_root
def test_no_sysctl_or_other_proc_knob_opens_for_writing(places):
    """Finding 1: /proc/sys/kernel/core_pattern (and the other knobs) opened for writing from inside.
    Each is opened and closed, never written; then every file of /proc/sys and of /proc's top."""
    before = knob_values()
    result = attack(f"""
import json, os
def writable(path):
    try:
        os.close(os.open(path, os.O_WRONLY))  # never written
        return True
    except OSError:
        return False
named = {{knob: writable('/proc/sys/' + knob) for knob in {KNOBS!r}}}
found = [os.path.join(top, f) for top, _, files in os.walk('/proc/sys') for f in files if writable(os.path.join(top, f))]
found += [e.path for e in os.scandir('/proc') if not e.name.isdigit() and e.is_file() and writable(e.path)]
found += [os.path.join(top, f) for top, _, files in os.walk('/sys') for f in files if writable(os.path.join(top, f))]
print(json.dumps({{'named': named, 'found': found[:10], 'count': len(found)}}))
""", places)
    assert result["ok"], result
    seen = json.loads(result["stdout"])
    assert seen["named"] == {knob: False for knob in KNOBS}, seen["named"]
    assert seen["count"] == 0, seen["found"]
    assert knob_values() == before


def test_the_seccomp_filter_refuses_what_a_data_program_never_needs(places):
    result = attack("""
import ctypes, errno, json, os
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
def call(number, *args):
    got = libc.syscall(ctypes.c_long(number), *[ctypes.c_long(a) for a in args])
    if got == 0 and number == CLONE:
        os._exit(0)  # a child that should not exist: gone at once
    return errno.errorcode.get(ctypes.get_errno(), '?') if got == -1 else 'allowed'
import platform
x86 = platform.machine() == 'x86_64'
CLONE = 56 if x86 else 220
numbers = dict(mount=165, unshare=272, ptrace=101, bpf=321, keyctl=250, perf_event_open=298, userfaultfd=323,
               io_uring_setup=425, shmget=29) if x86 else \
          dict(mount=40, unshare=97, ptrace=117, bpf=280, keyctl=219, perf_event_open=241, userfaultfd=282,
               io_uring_setup=425, shmget=194)
outcomes = {
    'mount': call(numbers['mount'], 0, 0, 0, 0, 0),
    'unshare': call(numbers['unshare'], 0x10000000),  # CLONE_NEWUSER
    'ptrace': call(numbers['ptrace'], 0, 0, 0, 0),  # PTRACE_TRACEME
    'bpf': call(numbers['bpf'], 0, 0, 0),
    'keyctl': call(numbers['keyctl'], 0, -1, 0),  # KEYCTL_GET_KEYRING_ID of the thread's keyring
    'perf_event_open': call(numbers['perf_event_open'], 0, 0, -1, -1, 0),
    'userfaultfd': call(numbers['userfaultfd'], 0),
    'io_uring_setup': call(numbers['io_uring_setup'], 1, 0),
    'shmget': call(numbers['shmget'], 0, 4096, 0o600),
    'clone_newuser': call(CLONE, 0x10000000 | 17, 0, 0, 0, 0),
    'clone3': call(435, 0, 0),
}
seccomp = next(l.split()[1] for l in open('/proc/self/status') if l.startswith('Seccomp:'))
print(json.dumps({'outcomes': outcomes, 'seccomp': seccomp}))
import numpy, pandas
print(int(pandas.DataFrame({'a': numpy.arange(10)})['a'].sum()))
""", places)
    assert result["ok"], result
    seen = json.loads(result["stdout"].splitlines()[0])
    assert seen["seccomp"] == "2"
    assert seen["outcomes"] == {**{name: "EPERM" for name in seen["outcomes"]}, "clone3": "ENOSYS"}, seen
    assert result["stdout"].splitlines()[1] == "45"  # numpy and pandas work under the filter


def test_the_filter_matches_the_kernel_headers_where_they_are():
    """The syscall numbers are written out per architecture; where the kernel's headers are
    installed, they agree with them."""
    import re

    from curate.evaluation import seccomp

    headers = {"x86_64": Path("/usr/include/x86_64-linux-gnu/asm/unistd_64.h"),
               "aarch64": Path("/usr/include/asm-generic/unistd.h")}
    if not all(h.exists() for h in headers.values()):
        pytest.skip("the kernel's syscall headers are not installed here")
    for arch, header in headers.items():
        table = dict(re.findall(r"#define __NR3?2?6?4?_(\w+)\s+(\d+)", header.read_text()))
        named = {**seccomp.REFUSED[arch], "clone": seccomp.CLONE[arch], "clone3": seccomp.CLONE3[arch],
                 "personality": seccomp.PERSONALITY[arch]}
        assert {n: v for n, v in named.items() if n in table and int(table[n]) != v} == {}, arch
        assert len(seccomp.program(arch)) % 8 == 0 and len(seccomp.program(arch)) // 8 < 4096
    with pytest.raises(seccomp.UnsupportedArchitecture):
        seccomp.program("riscv64")


@as_root
def test_a_sandbox_that_would_be_root_on_the_host_is_refused(monkeypatch):
    """Fail closed: where the launcher cannot leave root, the probe sees it and nothing runs."""
    import curate.evaluation.isolation as isolation

    monkeypatch.setattr(isolation, "SANDBOX_UID", 0)
    isolation.support.cache_clear()
    try:
        found = isolation.support()
        assert not found.isolated and "could not leave root" in found.problem, found
        with pytest.raises(SandboxUnavailable, match="cannot be isolated"):
            isolation.require("bwrap")
    finally:
        monkeypatch.undo()
        isolation.support.cache_clear()


# ----------------------------------------------------------------------------- the same, end to end


def test_curate_sandbox_run_contains_an_attack(places, tmp_path):
    program = tmp_path / "hostile.py"
    program.write_text(f"""
import os, subprocess
subprocess.Popen(['sleep', '{MARK}'], start_new_session=True)
for t in {json.dumps([str(t) for t in places['targets']])}:
    try:
        open(t, 'w').write('x')
    except OSError:
        pass
print(os.environ.get('CURATE_TEST_SECRET'))
os.kill(os.getppid(), 9)
print('still here')
""")
    done = subprocess.run([*curate_command(), "sandbox", "run", str(program), "--timeout", "5", "--memory", "512"],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)
    out = json.loads(done.stdout)
    assert done.returncode == 0 and out["stdout"] == "None\nstill here\n", (done.stdout, done.stderr)


def test_a_replayed_pot_evaluation_scores_hostile_programs_as_failures_and_goes_on(places, tmp_path):
    """Hostile PoT programs in a replayed evaluation: the gold is out of reach, the run finishes,
    every program's failure is its sample's alone, and nothing escaped."""
    import pandas as pd
    import pyarrow as pa
    from click.testing import CliRunner

    from curate.curation.cli import main
    from curate.curation.sample import Sample
    from curate.curation.table import Table
    from tests.files import release_of

    table = Table(name="towns", body=pa.table({"town": ["Oslo", "Bergen"], "people": [700, 290]}))
    # golds no program can compute from the table: one in the output would have been read from the release
    samples = [Sample(task="TCO/general_operations", question=f"What is the total of people? ({n})",
                      answer=770_000 + n, answer_type="number", table_ids=(table.id,)) for n in range(4)]
    release = release_of(tmp_path, samples, [table])
    hostile = {
        "gold": "import os\nfor top, dirs, files in os.walk('/'):\n"
                "    dirs[:] = [d for d in dirs if d not in ('proc', 'sys', 'dev', 'usr', 'site-packages')]\n"
                "    for f in files:\n        if f.endswith(('.jsonl', '.json', '.parquet')):\n"
                "            text = open(os.path.join(top, f), errors='replace').read()\n"
                "            print(text[:300] if '77000' in text else '')\nprint(0)",
        "parent": "import os\nos.kill(os.getppid(), 9)\nos.kill(-1, 9)",
        "orphans": f"import subprocess\nfor _ in range(5):\n    subprocess.Popen(['sleep', '{MARK}'], "
                   "start_new_session=True)\nprint(int(df['people'].sum()))",
        "write": f"open({str(release / 'samples.jsonl')!r}, 'w').write('gone')",
    }
    replies = [{"sample_id": s.id, "mode": "pot", "reply": f"```python\n{code}\n```"}
               for s, code in zip(samples, hostile.values())]
    file = tmp_path / "replies.jsonl"
    file.write_text("\n".join(json.dumps(r) for r in replies) + "\n")
    release_files = {p: p.read_bytes() for p in release.rglob("*") if p.is_file()}
    out = tmp_path / "out"
    done = CliRunner().invoke(main, ["evaluate", str(release), "--backend", "replay", "--predictions", str(file),
                                     "--out", str(out), "--timeout", "5", "--json", "-q"])
    assert done.exit_code == 0, done.output
    results = pd.read_parquet(out / "results.parquet").set_index("sample_id")
    assert len(results) == 4 and (results["score"] == 0.0).all()
    by_attack = {name: results.loc[s.id] for name, s in zip(hostile, samples)}
    assert by_attack["gold"]["executed"] and json.loads(by_attack["gold"]["answer"]) in (0, "0")  # it ran, and found no gold
    assert by_attack["orphans"]["executed"], by_attack["orphans"]["error"]
    assert json.loads(by_attack["orphans"]["answer"]) in (990, "990")
    assert not by_attack["parent"]["executed"] and by_attack["parent"]["error"]  # it failed, alone
    assert not by_attack["write"]["executed"] and "No such file or directory" in by_attack["write"]["error"]
    assert {p: p.read_bytes() for p in release.rglob("*") if p.is_file()} == release_files
    import sqlite3

    outputs = [o for (o,) in sqlite3.connect(out / "predictions.sqlite").execute("SELECT program_output FROM predictions")]
    assert len(outputs) == 4 and not any("77000" in (o or "") for o in outputs)  # no program saw a gold
    stored = (out / "predictions.sqlite").read_bytes() + (out / "results.parquet").read_bytes()
    assert places["secret"].encode() not in stored
    run = json.loads((out / "run.json").read_text())
    assert run["sandbox"]["isolation"] == "bwrap" and run["warnings"] == []


def test_without_isolation_curate_refuses_to_run_model_written_code(monkeypatch, tmp_path):
    """Fail closed: no bubblewrap means no program runs, and the message says how to fix it."""
    import curate.evaluation.isolation as isolation

    monkeypatch.setattr(isolation, "support", lambda: isolation.Support(None, False, "", "bubblewrap (bwrap) is not "
                                                                                        "installed"))
    with pytest.raises(SandboxUnavailable, match="apt-get install bubblewrap.*--sandbox none"):
        Sandbox(workers=1)
    program = tmp_path / "p.py"
    program.write_text("print(1)")
    absent = {**os.environ, "CURATE_BWRAP": str(tmp_path / "no-bwrap-here")}
    refused = subprocess.run([*curate_command(), "sandbox", "run", str(program)], capture_output=True, text=True,
                             cwd=ROOT, timeout=120, env=absent)
    assert refused.returncode == 1 and "cannot be isolated" in refused.stderr and "apt-get install bubblewrap" in refused.stderr
    check = subprocess.run([*curate_command(), "sandbox", "check"], capture_output=True, text=True, cwd=ROOT,
                           timeout=120, env=absent)
    assert check.returncode == 1 and "isolation: none" in check.stdout
    unsafe = subprocess.run([*curate_command(), "sandbox", "run", str(program), "--sandbox", "none"],
                            capture_output=True, text=True, cwd=ROOT, timeout=120, env=absent)
    assert unsafe.returncode == 0 and "WITHOUT isolation" in unsafe.stderr and json.loads(unsafe.stdout)["ok"]


def test_a_program_writing_its_result_pipe_without_end_is_stopped_and_the_worker_goes_on(places):
    """The forked program holds the pipe its result goes back through: flooding it (no newline, GBs)
    once made the worker (the namespace's init) buffer without bound until the deadline; now the
    program is killed at the worker's cap, and the same worker runs the next program."""
    flood = f"""
import fcntl, os, stat
MARK = {MARK!r}
pipes = [int(f) for f in os.listdir('/proc/self/fd') if int(f) > 2 and stat.S_ISFIFO(os.fstat(int(f)).st_mode)
         and fcntl.fcntl(int(f), fcntl.F_GETFL) & os.O_ACCMODE == os.O_WRONLY]
assert pipes
if os.fork() == 0:  # a second writer the worker never waits for
    for _ in range(4000):
        os.write(pipes[0], b'y' * (1 << 20))
for _ in range(4000):
    os.write(pipes[0], b'x' * (1 << 20))
"""
    with Sandbox(workers=1, limits=LIMITS) as box:
        flooded = box.run(flood).as_dict()
        after = box.run("print('next')").as_dict()
    assert not flooded["ok"] and "result pipe" in flooded["error"], flooded
    assert after["ok"] and after["stdout"] == "next\n", after
