"""One bounded wait for the tests: every loop that waits for a condition has a deadline."""

from __future__ import annotations

import threading
import time
from typing import Callable


def wait_for(condition: Callable[[], bool], timeout: float, interval: float = 0.02,
             stop: threading.Event | None = None) -> bool:
    """True as soon as `condition()` holds; False at the deadline, or once `stop` is set."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and not (stop is not None and stop.is_set()):
        if condition():
            return True
        time.sleep(interval)
    return False
