"""A reservoir buffer of (sequence, sampled regret, iteration) examples, as in Deep CFR (Brown et al. 2019).

Reservoir sampling (Vitter's algorithm R) keeps a uniform sample of every example ever offered in at
most `capacity` slots; the replacement draws come from the same seeded splitmix64 stream as the
samplers, so the buffer's contents are reproducible and resumable. Insertion is one compiled call
per batch.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..budget import available_memory
from ..options import check_int
from .buffers import seed_state
from .decisions import uniform01

#: bytes per reservoir slot: a sequence (int64), a regret (float64) and an iteration (int64)
EXAMPLE_BYTES = 24


@njit(cache=True)
def reservoir_add(items, values, iteration, sequence, regret, stamp, fill, rng):
    """Offer examples (items[k], values[k], iteration) to the buffer; fill = [size, examples seen]."""
    capacity = sequence.shape[0]
    for k in range(items.shape[0]):
        seen = fill[1]
        fill[1] = seen + 1
        if fill[0] < capacity:
            slot = fill[0]
            fill[0] += 1
        else:
            slot = np.int64(uniform01(rng) * (seen + 1))
            if slot >= capacity:
                continue
        sequence[slot] = items[k]
        regret[slot] = values[k]
        stamp[slot] = iteration


class Reservoir:
    """At most `capacity` examples, a uniform sample of all those offered (seeded)."""

    def __init__(self, capacity: int, seed: int = 0):
        capacity = check_int("capacity", capacity, 1)
        need = capacity * EXAMPLE_BYTES  # the slots are allocated now, so a capacity beyond memory is an error now
        if need > available_memory():
            raise ValueError(f"capacity {capacity:,} needs {need / 2**30:.3g} GiB for its reservoir, more than the "
                             f"{available_memory() / 2**30:.1f} GiB available; choose a capacity of at most "
                             f"{available_memory() // EXAMPLE_BYTES:,}")
        self.sequence = np.zeros(int(capacity), np.int64)
        self.regret = np.zeros(int(capacity))
        self.iteration = np.zeros(int(capacity), np.int64)
        self.fill = np.zeros(2, np.int64)  # size, examples seen
        self.rng = seed_state(seed)

    @property
    def size(self) -> int:
        return int(self.fill[0])

    @property
    def seen(self) -> int:
        return int(self.fill[1])

    def add(self, items: np.ndarray, values: np.ndarray, iteration: int) -> None:
        reservoir_add(np.ascontiguousarray(items, np.int64), np.ascontiguousarray(values, np.float64),
                      int(iteration), self.sequence, self.regret, self.iteration, self.fill, self.rng)

    def examples(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(sequence, regret, iteration) of the examples held (views, do not modify)."""
        n = self.size
        return self.sequence[:n], self.regret[:n], self.iteration[:n]

    def state_dict(self, prefix: str = "") -> dict[str, np.ndarray]:
        return {f"{prefix}{k}": getattr(self, k).copy() for k in ("sequence", "regret", "iteration", "fill", "rng")}

    def load_state_dict(self, state: dict[str, np.ndarray], prefix: str = "") -> None:
        for k in ("sequence", "regret", "iteration", "fill", "rng"):
            target, value = getattr(self, k), np.asarray(state[f"{prefix}{k}"])
            if value.shape != target.shape:
                raise ValueError(f"checkpoint field {prefix}{k!r} has shape {value.shape}, expected {target.shape}")
            target[:] = value
