"""Progress bars for long stages (rich, on stderr, only when someone is watching)."""

from __future__ import annotations

import sys
from contextlib import contextmanager
from typing import Callable, Iterator


@contextmanager
def progress_bars(enabled: bool | None = None) -> Iterator[Callable[[str, float], Callable[[float], None]] | None]:
    """Yield a factory `(description, total) -> advance(n)`, or None when bars are off."""
    if enabled is None:
        enabled = sys.stderr.isatty()
    if not enabled:
        yield None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=Console(stderr=True), transient=False) as bars:
        def factory(description: str, total: float) -> Callable[[float], None]:
            task = bars.add_task(description, total=total)
            return lambda n: bars.advance(task, n)

        yield factory
