"""Decoding text files: the checks every text reader shares (empty, binary, undecodable)."""

from __future__ import annotations

from pathlib import Path

from curation.sources.errors import SourceError

ENCODINGS = ("utf-8-sig", "cp1252")


def read_text(path: str) -> tuple[str, str]:
    """(text, encoding). UTF-8 (with or without BOM), UTF-16 with a BOM, or Windows-1252."""
    data = Path(path).read_bytes()
    if not data.strip():
        raise SourceError(path, "empty file")
    if data[:2] in (b"\xff\xfe", b"\xfe\xff"):
        try:
            return data.decode("utf-16"), "utf-16"
        except UnicodeDecodeError:
            raise SourceError(path, "undecodable text (UTF-16 BOM but invalid UTF-16)") from None
    if b"\x00" in data[:8192]:
        raise SourceError(path, "binary file, not text (NUL bytes)")
    for encoding in ENCODINGS:
        try:
            text = data.decode(encoding)
        except UnicodeDecodeError:
            continue
        controls = sum(1 for ch in text[:8192] if ord(ch) < 32 and ch not in "\t\r\n\f")
        if controls > 8:
            raise SourceError(path, "binary file, not text (control characters)")
        return text, encoding
    raise SourceError(path, f"undecodable text (not {' or '.join(ENCODINGS)})")
