"""The arrays a sampled traversal reads and writes, allocated once per game.

`SamplerBuffers.state` is the tuple every kernel in `rcfr.sampling.kernels` takes; all per-sequence
arrays use global sequence ids, all per-information-set arrays global information-set ids.
"""

from __future__ import annotations

import numpy as np

from ..tree import Game

SAMPLERS = ("outcome", "external", "chance", "baseline")


def seed_state(seed: int) -> np.ndarray:
    """A one-element uint64 splitmix64 state derived from `seed` (well mixed, so nearby seeds differ)."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    return np.random.SeedSequence(int(seed)).generate_state(1, np.uint64)


class SamplerBuffers:
    """Regret table, average-strategy sums, scratch and RNG state for one game and one sampler."""

    def __init__(self, game: Game, sampler: str, seed: int = 0):
        if sampler not in SAMPLERS:
            raise ValueError(f"unknown sampler {sampler!r}; allowed: {', '.join(SAMPLERS)}")
        self.game, self.sampler = game, sampler
        S, N, H = game.num_sequences, game.num_infosets, game.num_histories
        self.tree = (np.ascontiguousarray(game.player, np.int8),
                     np.ascontiguousarray(game.first_child, np.int32),
                     np.ascontiguousarray(game.num_children, np.int32),
                     np.ascontiguousarray(game.chance_prob, np.float64),
                     np.ascontiguousarray(game.infoset, np.int32),
                     np.ascontiguousarray(game.utility, np.float64),
                     np.ascontiguousarray(game.infoset_first_seq, np.int32),
                     np.ascontiguousarray(game.infoset_num_actions, np.int32),
                     np.ascontiguousarray(game.infoset_parent_seq, np.int32))
        self.regrets = np.zeros(S)  # cumulative regrets
        self.avg = np.zeros(S)  # average-strategy sums
        self.sigma = np.zeros(S)  # current strategy of the information sets visited lately
        self.delta = np.zeros(S)  # sampled regrets of the traversal in progress
        self.touched = np.zeros(N, np.int64)
        self.counts = np.zeros(1, np.int64)
        self.touched_stamp = np.zeros(N, np.int64)
        self.last = np.zeros(N)  # optimistic / lazy averaging: iteration or parent mass at the last visit
        self.counters = np.zeros(2, np.int64)  # traversals, nodes touched
        self.rng = seed_state(seed)
        depth = int(game.depth.max()) + 1
        self.baseline = np.zeros(H if sampler == "baseline" else 0)  # b(h, a) at child history ha
        if sampler in ("outcome", "baseline"):
            self.scratch = np.zeros((depth + 1, 7))
        elif sampler == "external":
            self.scratch = (np.zeros(H + depth + 2, np.int64), np.zeros(H), np.zeros(H),
                            np.zeros(N, np.int64), np.zeros(N, np.int64))
        else:
            self.scratch = (np.zeros(H + depth + 2, np.int64), np.zeros(H), np.zeros(H), np.zeros(H),
                            np.zeros(H, np.int64))

    @property
    def state(self) -> tuple:
        return (self.regrets, self.avg, self.sigma, self.delta, self.touched, self.counts,
                self.touched_stamp, self.last, self.counters, self.rng)

    @property
    def nodes_touched(self) -> int:
        return int(self.counters[1])

    # persistent part of the state (scratch and stamps are rebuilt freely)
    def state_dict(self) -> dict[str, np.ndarray]:
        return {"regrets": self.regrets.copy(), "avg": self.avg.copy(), "last": self.last.copy(),
                "counters": self.counters.copy(), "rng": self.rng.copy(), "baseline": self.baseline.copy()}

    def load_state_dict(self, state: dict[str, np.ndarray]) -> None:
        for name in ("regrets", "avg", "last", "counters", "rng", "baseline"):
            target = getattr(self, name)
            value = np.asarray(state[name])
            if value.shape != target.shape:
                raise ValueError(f"checkpoint field {name!r} has shape {value.shape}, expected {target.shape}")
            target[:] = value
        self.touched_stamp[:] = 0
        if self.sampler == "external":
            self.scratch[4][:] = 0
