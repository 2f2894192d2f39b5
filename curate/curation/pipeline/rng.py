"""Per-record randomness: a generator seeded by the build seed and the record's content hash.

Results never depend on the order in which records arrive or on which worker handles them.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np


def record_seed(seed: int, record_id: str, purpose: str = "") -> int:
    h = hashlib.blake2b(f"{seed}\x00{record_id}\x00{purpose}".encode(), digest_size=8)
    return int.from_bytes(h.digest(), "little")


def record_rng(seed: int, record_id: str, purpose: str = "") -> "np.random.Generator":
    """The random generator for one record (and one purpose, so two uses never share a stream)."""
    import numpy as np

    return np.random.default_rng(record_seed(seed, record_id, purpose))
