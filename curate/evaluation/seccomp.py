"""A seccomp filter for sandbox workers: the system calls a data-analysis program never needs are refused.

bubblewrap loads it (`--seccomp FD`) as a compiled classic-BPF program, which is assembled here
with `struct` (no libseccomp needed). It refuses, with EPERM (not a kill: NumPy, pandas and
matplotlib probe some of these and carry on), mounting, tracing, BPF, the kernel keyring,
perf events, userfaultfd, kexec, kernel modules, reboot, new namespaces (unshare, setns, and
clone with a CLONE_NEW* flag), pivot_root/chroot, swap, process accounting, setting the clock,
file handles, personality changes, port I/O, the kernel log, io_uring and cross-process memory
access; and System V IPC objects and POSIX message queues, which would outlive a program in its
worker's IPC namespace (the next program could read them). clone3 answers ENOSYS, so that libc falls back to clone, whose flags the filter can read.
A call from another architecture (i386 through int 0x80 on x86-64) kills the process; x32
calls are refused.
"""

from __future__ import annotations

import errno
import platform
import struct

AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}
X32_SYSCALL_BIT = 0x40000000

# name -> number, per architecture (x86-64: asm/unistd_64.h; aarch64: asm-generic/unistd.h)
REFUSED = {
    "x86_64": {
        "mount": 165, "umount2": 166, "ptrace": 101, "bpf": 321, "keyctl": 250, "add_key": 248, "request_key": 249,
        "perf_event_open": 298, "userfaultfd": 323, "kexec_load": 246, "kexec_file_load": 320, "init_module": 175,
        "finit_module": 313, "delete_module": 176, "reboot": 169, "unshare": 272, "setns": 308, "pivot_root": 155,
        "chroot": 161, "swapon": 167, "swapoff": 168, "acct": 163, "settimeofday": 164, "clock_settime": 227,
        "clock_adjtime": 305, "adjtimex": 159, "open_by_handle_at": 304, "name_to_handle_at": 303, "ioperm": 173,
        "iopl": 172, "syslog": 103, "quotactl": 179, "lookup_dcookie": 212, "vhangup": 153, "modify_ldt": 154,
        "process_vm_readv": 310, "process_vm_writev": 311, "kcmp": 312, "sethostname": 170, "setdomainname": 171,
        "open_tree": 428, "move_mount": 429, "fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433,
        "mount_setattr": 442, "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
        "uselib": 134, "_sysctl": 156, "shmget": 29, "semget": 64, "msgget": 68, "mq_open": 240,
    },
    "aarch64": {
        "mount": 40, "umount2": 39, "ptrace": 117, "bpf": 280, "keyctl": 219, "add_key": 217, "request_key": 218,
        "perf_event_open": 241, "userfaultfd": 282, "kexec_load": 104, "kexec_file_load": 294, "init_module": 105,
        "finit_module": 273, "delete_module": 106, "reboot": 142, "unshare": 97, "setns": 268, "pivot_root": 41,
        "chroot": 51, "swapon": 224, "swapoff": 225, "acct": 89, "settimeofday": 170, "clock_settime": 112,
        "clock_adjtime": 266, "adjtimex": 171, "open_by_handle_at": 265, "name_to_handle_at": 264, "syslog": 116,
        "quotactl": 60, "lookup_dcookie": 18, "vhangup": 58, "process_vm_readv": 270, "process_vm_writev": 271,
        "kcmp": 272, "sethostname": 161, "setdomainname": 162, "open_tree": 428, "move_mount": 429, "fsopen": 430,
        "fsconfig": 431, "fsmount": 432, "fspick": 433, "mount_setattr": 442, "io_uring_setup": 425,
        "io_uring_enter": 426, "io_uring_register": 427, "shmget": 194, "semget": 190, "msgget": 186, "mq_open": 180,
    },
}
CLONE = {"x86_64": 56, "aarch64": 220}
CLONE3 = {"x86_64": 435, "aarch64": 435}
PERSONALITY = {"x86_64": 135, "aarch64": 92}
# CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET (clone's low byte is the exit signal)
CLONE_NEW_NAMESPACE = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000
PERSONALITY_QUERY, PER_LINUX = 0xFFFFFFFF, 0

RET_ALLOW, RET_ERRNO, RET_KILL_PROCESS = 0x7FFF0000, 0x00050000, 0x80000000
LD_ABS_W, JEQ, JGE, JSET, RET = 0x20, 0x15, 0x35, 0x45, 0x06  # BPF_LD|W|ABS, BPF_JMP|{JEQ,JGE,JSET}|K, BPF_RET|K
NR, ARCH, ARG0 = 0, 4, 16  # offsets in struct seccomp_data (arg0's low 32 bits: little-endian)


class UnsupportedArchitecture(RuntimeError):
    """No syscall table for this machine: the sandbox refuses rather than run without a filter."""


def machine() -> str:
    name = platform.machine().lower()
    return {"amd64": "x86_64", "arm64": "aarch64"}.get(name, name)


def _op(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)


def program(arch: str | None = None) -> bytes:
    """The filter for `arch` (this machine's by default) as bytes bwrap reads from a descriptor."""
    arch = arch or machine()
    if arch not in REFUSED:
        raise UnsupportedArchitecture(f"no seccomp filter for the {arch} architecture (only {', '.join(REFUSED)})")
    eperm, enosys = RET_ERRNO | errno.EPERM, RET_ERRNO | errno.ENOSYS
    code = [_op(LD_ABS_W, ARCH), _op(JEQ, AUDIT_ARCH[arch], jt=1), _op(RET, RET_KILL_PROCESS), _op(LD_ABS_W, NR)]
    if arch == "x86_64":  # x32 calls: the same kernel entry with a high bit set
        code += [_op(JGE, X32_SYSCALL_BIT, jf=1), _op(RET, eperm)]
    for number in sorted(REFUSED[arch].values()):
        code += [_op(JEQ, number, jf=1), _op(RET, eperm)]
    code += [_op(JEQ, CLONE3[arch], jf=1), _op(RET, enosys)]
    # clone: refused with a namespace flag (the accumulator is reloaded with the number after)
    code += [_op(JEQ, CLONE[arch], jf=4), _op(LD_ABS_W, ARG0), _op(JSET, CLONE_NEW_NAMESPACE, jf=1),
             _op(RET, eperm), _op(LD_ABS_W, NR)]
    # personality: only asking, or setting the default
    code += [_op(JEQ, PERSONALITY[arch], jf=5), _op(LD_ABS_W, ARG0), _op(JEQ, PERSONALITY_QUERY, jt=1),
             _op(JEQ, PER_LINUX, jf=1), _op(RET, RET_ALLOW), _op(RET, eperm)]
    code.append(_op(RET, RET_ALLOW))
    return b"".join(code)
