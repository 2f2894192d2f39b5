"""A release is exactly its checksummed files: the one place that opens a release's files (here in
`curation`, so that every package that reads a release, validators and evaluation among them, reaches it).

`SHA256SUMS` lists every file of a release (all but itself). `ReleaseFiles` reads it and hands a
reader only listed, regular files inside the release, reached without following any symbolic link,
each hashed against its listing the first time it is handed out; `problems()` names everything else
(`curate release verify`): a file, folder or link the listing does not name, any symbolic link at
all (listed or not), a listed path that is missing, not a regular file or outside the release, and
a listing line that is malformed or names a path with `..`, `.`, an absolute or an empty part.

Hard links are not a finding: a hard link is a name for the file's own bytes, which the listing's
hash checks like any other file's; it cannot point at a folder or lead a reader anywhere else.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import hashlib

CHECKSUMS = "SHA256SUMS"  # every file of a release but itself, with its SHA-256
TABLE_RECORDS = "tables.parquet"  # a release's Table records (beside their serialized texts)


def sha256_file(path: Path, chunk: int = 1 << 20) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(chunk):
            h.update(block)
    return h.hexdigest()


class ReleaseIntegrityError(ValueError):
    """A release file that may not be read: unlisted, a link, outside the release, changed."""


@dataclass(frozen=True)
class Problem:
    path: str
    kind: str  # changed, missing, unlisted, link, outside, not_regular, unsafe_path, malformed
    why: str

    def __str__(self) -> str:
        return f"{self.path}: {self.why}"


class ReleaseFiles:
    """The listed files of one release. `path(rel)` is how a reader gets a file: listed, regular,
    inside, no link on the way, and (with `check_hashes`) its SHA-256 the listed one."""

    def __init__(self, root: str | Path, check_hashes: bool = True) -> None:
        self.root = Path(root).resolve()  # the release folder itself may be reached through a link
        self.check_hashes = check_hashes
        self._hashed: set[str] = set()
        sums = self.root / CHECKSUMS
        try:
            mode = os.lstat(sums).st_mode
        except FileNotFoundError:
            raise ReleaseIntegrityError(f"{root}: not a release folder (no {CHECKSUMS})") from None
        if not stat.S_ISREG(mode):
            raise ReleaseIntegrityError(f"{root}: {CHECKSUMS} is not a regular file (a link or a folder)")
        self.listed: dict[str, str] = {}
        self.bad_lines: list[Problem] = []
        for line in sums.read_text(errors="replace").splitlines():
            digest, sep, rel = line.partition("  ")
            if not sep or len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest):
                self.bad_lines.append(Problem(line[:200], "malformed", f"not a `<sha256>  <path>` line of {CHECKSUMS}"))
            elif (why := unsafe_path(rel)) is not None:
                self.bad_lines.append(Problem(rel, "unsafe_path", why))
            elif rel in self.listed or rel == CHECKSUMS:
                self.bad_lines.append(Problem(rel, "malformed", f"listed twice in {CHECKSUMS}"))
            else:
                self.listed[rel] = digest

    # ------------------------------------------------------------------ reading

    def has(self, rel: str) -> bool:
        return rel in self.listed

    def path(self, rel: str) -> Path:
        """The file to read for `rel`, or ReleaseIntegrityError naming the path and why not."""
        if rel not in self.listed:
            raise ReleaseIntegrityError(f"{self.root}: {rel} is not listed in {CHECKSUMS}")
        problem = self._where(rel)
        if problem is not None:
            raise ReleaseIntegrityError(f"{self.root}: {problem}")
        path = self.root / rel
        if self.check_hashes and rel not in self._hashed:
            if sha256_file(path) != self.listed[rel]:
                raise ReleaseIntegrityError(f"{self.root}: {rel} does not match its SHA-256 in {CHECKSUMS} "
                                            "(`curate release verify` says more)")
            self._hashed.add(rel)
        return path

    def sample_files(self, split: str | None = None) -> list[Path]:
        """The listed `samples/<task>/<split>.parquet` files, in path order."""
        out = []
        for rel in sorted(self.listed):
            parts = rel.split("/")
            if len(parts) == 3 and parts[0] == "samples" and parts[2].endswith(".parquet"):
                if split is None or parts[2] == f"{split}.parquet":
                    out.append(self.path(rel))
        return out

    # ------------------------------------------------------------------ checking

    def problems(self, hashes: bool = True) -> list[Problem]:
        """Everything that makes this folder more or less than its listed files (`curate release verify`)."""
        found = list(self.bad_lines)
        for rel in sorted(self.listed):
            problem = self._where(rel)
            if problem is None and hashes and sha256_file(self.root / rel) != self.listed[rel]:
                problem = Problem(rel, "changed", f"its SHA-256 is not the one {CHECKSUMS} lists")
            if problem is not None:
                found.append(problem)
        found.extend(self._unlisted())
        return found

    def _where(self, rel: str) -> Problem | None:
        """Why the listed `rel` may not be read (None: it may): each part of the path checked
        without following links, then the resolved path held inside the release."""
        current = self.root
        parts = rel.split("/")
        for i, part in enumerate(parts):
            current = current / part
            try:
                mode = os.lstat(current).st_mode
            except FileNotFoundError:
                return Problem(rel, "missing", "listed but not there")
            if stat.S_ISLNK(mode):
                at = "/".join(parts[: i + 1])
                return Problem(rel, "link", f"reached through a symbolic link ({at} -> {os.readlink(current)})"
                               if at != rel else f"a symbolic link (-> {os.readlink(current)})")
            if i < len(parts) - 1 and not stat.S_ISDIR(mode):
                return Problem(rel, "missing", f"{'/'.join(parts[: i + 1])} is not a folder")
        if not stat.S_ISREG(mode):
            return Problem(rel, "not_regular", "not a regular file")
        if not Path(os.path.realpath(current)).is_relative_to(self.root):
            return Problem(rel, "outside", f"resolves outside the release ({os.path.realpath(current)})")
        return None

    def _unlisted(self) -> Iterator[Problem]:
        """Every entry the listing does not account for, walked without following links: a link of
        any kind (a listed one is named by `_where`), a folder holding no listed file and each
        thing in it, a file."""
        folders = {"/".join(rel.split("/")[:i]) for rel in self.listed for i in range(1, rel.count("/") + 1)}
        stack = [""]
        while stack:
            prefix = stack.pop()
            with os.scandir(self.root / prefix) as entries:
                for entry in sorted(entries, key=lambda e: e.name):
                    rel = f"{prefix}/{entry.name}" if prefix else entry.name
                    if entry.is_symlink():
                        if rel not in self.listed:  # a listed one is named by `_where`
                            yield Problem(rel, "link", f"a symbolic link (-> {os.readlink(entry.path)})"
                                          + ("" if rel in folders else f", not listed in {CHECKSUMS}"))
                    elif entry.is_dir(follow_symlinks=False):  # an unlisted one is named, then what it holds
                        if rel not in folders:
                            yield Problem(rel + "/", "unlisted", f"a folder {CHECKSUMS} lists no file in")
                        stack.append(rel)
                    elif rel not in self.listed and rel != CHECKSUMS:
                        regular = entry.is_file(follow_symlinks=False)
                        yield Problem(rel, "unlisted" if regular else "not_regular",
                                      f"not listed in {CHECKSUMS}" if regular else
                                      f"not a regular file, not listed in {CHECKSUMS}")


def unsafe_path(rel: str) -> str | None:
    """Why a listed path could name something outside the release (None: it cannot)."""
    if not rel or rel.startswith("/") or "\\" in rel or "\x00" in rel:
        return "an absolute, empty or backslashed path"
    if any(part in ("", ".", "..") for part in rel.split("/")):
        return "a path with an empty, '.' or '..' part"
    return None


def open_release(root: str | Path, check_hashes: bool = True) -> ReleaseFiles:
    """A release's listed files (see `ReleaseFiles`); ReleaseIntegrityError if it has no listing."""
    return ReleaseFiles(root, check_hashes)
