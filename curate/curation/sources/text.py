"""Decoding text files: the checks every text reader shares (empty, binary, undecodable)."""

from __future__ import annotations

from pathlib import Path

from curate.curation.sources.errors import SourceError

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
        utf16 = _utf16_without_bom(data)
        if utf16 is not None:
            return utf16
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


def _utf16_without_bom(data: bytes) -> tuple[str, str] | None:
    """UTF-16 text saved without a byte-order mark: ASCII-range characters put a NUL in every other
    byte, on the odd side (little-endian) or the even side (big-endian)."""
    head = data[:8192]
    pairs = len(head) // 2
    if pairs < 2 or len(data) % 2:
        return None
    odd, even = head[1::2].count(0), head[0::2].count(0)
    for encoding, nuls, other in (("utf-16-le", odd, even), ("utf-16-be", even, odd)):
        if nuls >= 0.6 * pairs and other <= 0.05 * pairs:
            try:
                text = data.decode(encoding)
            except UnicodeDecodeError:
                return None
            if sum(1 for ch in text[:4096] if ord(ch) < 32 and ch not in "\t\r\n\f") <= 8:
                return text, encoding
    return None
