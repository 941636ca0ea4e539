"""Size before work: how many histories a compile may enumerate, from the available memory or
``$RCFR_MAX_HISTORIES``, and the message of a game too large to compile (see docs/large_games.md).
It sits below the rules and the compiled tree, which both ask it."""

from __future__ import annotations

import os
import warnings

import numpy as np

from .errors import LongWalkWarning, TooLarge

#: Measured peak bytes per history while compiling, by path; the default history limit is the
#: available memory divided by these (see docs/large_games.md).
COMPILE_BYTES = {"fast": 120, "python": 600}
#: Bytes per history of a compiled game and its sequence-form views, as measured.
RESIDENT_BYTES = 60
#: The largest history limit: the compiled kernels count histories in int64.
LARGEST = 2**63 - 1
#: Histories per second of an exact walk over the rules (`rcfr.evaluation.rules`), an order of magnitude for
#: estimates: 5e5 to 7e5 measured on Goofspiel(6) and (7) on a loaded machine (docs/large_games.md).
WALK_RATE = 1e6
#: An exact walk estimated to take longer (seconds) says so first (`LongWalkWarning`) ...
WARN_WALK_SECONDS = 120.0
#: ... and one estimated to take longer than 30 days is refused: it would not finish.
MAX_WALK_SECONDS = 30 * 86400.0


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


def walk_estimate(rules) -> tuple[int, float] | None:
    """(histories, seconds) of an exact walk of `rules` at `WALK_RATE`; None if the game cannot say."""
    histories = rules.estimate_histories()
    return None if histories is None else (int(histories), histories / WALK_RATE)


def duration(seconds: float) -> str:
    """`seconds` in the largest unit that keeps the number at least 1 (years at most)."""
    for unit, size in (("years", 365.25 * 86400), ("days", 86400), ("hours", 3600), ("minutes", 60)):
        if seconds >= size:
            return f"{seconds / size:,.3g} {unit}"
    return f"{seconds:.3g} seconds"


def check_walk(rules, what: str) -> None:
    """Before an exact walk of every history of `rules`: refuse one estimated to take more than
    `MAX_WALK_SECONDS` (`TooLarge`), warn of one over `WARN_WALK_SECONDS` (`LongWalkWarning`)."""
    estimate = walk_estimate(rules)
    if estimate is None or estimate[1] <= WARN_WALK_SECONDS:
        return
    histories, seconds = estimate
    size = (f"{what} of {rules.description()} walks every history: {histories:,} (estimated), about "
            f"{duration(seconds)} at {WALK_RATE:.0e} histories per second")
    if seconds > MAX_WALK_SECONDS:
        raise TooLarge(f"{size}; it would not finish. Estimate instead (rcfr.approx_exploitability with "
                       f"evaluation='sampled'), or choose smaller game parameters")
    warnings.warn(f"{size}", LongWalkWarning, stacklevel=3)
