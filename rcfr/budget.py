"""Size before work: how many histories a compile may enumerate, from the available memory or
``$RCFR_MAX_HISTORIES``, and the message of a game too large to compile (see docs/large_games.md).
It sits below the rules and the compiled tree, which both ask it."""

from __future__ import annotations

import os

import numpy as np

from .errors import TooLarge

#: Measured peak bytes per history while compiling, by path; the default history limit is the
#: available memory divided by these (see docs/large_games.md).
COMPILE_BYTES = {"fast": 120, "python": 600}
#: Bytes per history of a compiled game and its sequence-form views, as measured.
RESIDENT_BYTES = 60
#: The largest history limit: the compiled kernels count histories in int64.
LARGEST = 2**63 - 1


def available_memory() -> int:
    """Bytes of memory available to a new allocation (MemAvailable of /proc/meminfo; 8 GiB if unknown)."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 8 << 30


def max_histories(limit: int | None = None, bytes_per_history: int = COMPILE_BYTES["fast"]) -> int:
    """The enumeration limit: `limit` if given, else ``$RCFR_MAX_HISTORIES``, else as many histories
    as the available memory holds while compiling at `bytes_per_history`."""
    name = "max_histories"
    if limit is None:
        text = os.environ.get("RCFR_MAX_HISTORIES", "").strip()
        if not text:
            return max(1, available_memory() // bytes_per_history)
        name = "RCFR_MAX_HISTORIES"
        try:
            limit = int(text)
        except ValueError:
            raise ValueError(f"RCFR_MAX_HISTORIES must be a positive integer, got {text!r}") from None
    if isinstance(limit, bool) or not isinstance(limit, (int, np.integer)) or not 1 <= limit <= LARGEST:
        raise ValueError(f"{name} must be a positive integer at most 2**63 - 1 (history counts are int64), "
                         f"got {limit!r}")
    return int(limit)


history_limit = max_histories  # for functions whose `max_histories` argument hides the name


def _too_large(rules, histories: int, limit: int, bytes_per_history: int, exact: bool) -> TooLarge:
    size = f"{histories:,} histories (estimated)" if exact else f"more than {histories:,} histories"
    return TooLarge(
        f"{rules.description()} has more than {limit:,} histories, too many to compile: {size}, about "
        f"{histories * bytes_per_history / 2**30:.2f} GiB to compile and "
        f"{histories * RESIDENT_BYTES / 2**30:.2f} GiB to hold, with "
        f"{available_memory() / 2**30:.1f} GiB available; choose smaller game parameters (or raise "
        "the limit with RCFR_MAX_HISTORIES or max_histories=)")
