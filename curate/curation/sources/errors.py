"""What readers raise for input they cannot read."""

from __future__ import annotations


class SourceError(Exception):
    """A file that cannot be read as a table: reported with its path and reason, then skipped."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason
