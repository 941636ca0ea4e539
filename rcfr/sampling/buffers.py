"""The arrays a sampled traversal reads and writes, allocated once per game.

`SamplerBuffers` holds the `kernels.Tree`, `kernels.State` and `kernels.Scratch` bundles every kernel
in `rcfr.sampling.kernels` takes. Regrets, current strategies and sampled regrets are indexed by
*slots*: the global sequence ids of the game, or, under an information-set abstraction (imperfect
recall, `rcfr.abstraction.Abstraction`), the abstract sequences, numbered in abstract-set order, so
merged information sets share (and sum into) one regret vector. Average-strategy sums use full-game
sequence ids (``average_space="full"``) or the abstract slots (``"abstract"``).
"""

from __future__ import annotations

import numpy as np

from ..tree import Game
from . import kernels

SAMPLERS = {"outcome": kernels.OUTCOME, "external": kernels.EXTERNAL, "chance": kernels.CHANCE_SAMPLING,
            "baseline": kernels.BASELINE, "pure": kernels.PURE, "average": kernels.AVERAGE_SAMPLING,
            "probing": kernels.PROBING}
CACHING = ("external", "pure", "average", "probing")  # samplers that keep one sampled action per information set
AVERAGE_MODES = {"stochastic": kernels.AVG_STOCHASTIC, "optimistic": kernels.AVG_OPTIMISTIC,
                 "lazy": kernels.AVG_LAZY}


def seed_state(seed: int) -> np.ndarray:
    """A one-element uint64 splitmix64 state derived from `seed` (well mixed, so nearby seeds differ)."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    return np.random.SeedSequence(int(seed)).generate_state(1, np.uint64)


AVERAGE_SPACES = ("full", "abstract")


class Slots:
    """Where each full information set keeps its regrets: ``abstract[I]`` (abstract set J of I), J's first
    slot ``first_seq[J]`` and size ``num_actions[J]``, and ``seq_map[s]``, the slot of full sequence s.
    Without an abstraction every set is its own and slots are the global sequence ids."""

    def __init__(self, game: Game, abstraction=None):
        self.merged = abstraction is not None  # information sets share regrets
        if abstraction is None:
            self.abstract = np.arange(game.num_infosets)
            self.first_seq, self.num_actions = game.infoset_first_seq, game.infoset_num_actions
            self.seq_map = np.arange(game.num_sequences)
            return
        if abstraction.game is not game and abstraction.game.fingerprint != game.fingerprint:
            raise ValueError(f"abstraction {abstraction.name!r} was built for {abstraction.game.name}, "
                             f"not {game.name}")
        self.abstract = np.asarray(abstraction.infoset_map)
        self.num_actions = np.asarray(abstraction.abstract_num_actions)
        self.first_seq = np.cumsum(self.num_actions) - self.num_actions
        full_set = game.sequence_infoset
        self.seq_map = (self.first_seq[self.abstract[full_set]]
                        + np.arange(game.num_sequences) - game.infoset_first_seq[full_set])

    @property
    def num_slots(self) -> int:
        return int(self.num_actions.sum())


def compiled_tree(game: Game, slots: Slots, average_space: str = "full") -> kernels.Tree:
    """The game's arrays (and where each information set stores regrets and averages) in the dtypes the
    kernels are compiled for."""
    average_first = game.infoset_first_seq if average_space == "full" else slots.first_seq[slots.abstract]
    return kernels.Tree(player=np.ascontiguousarray(game.player, np.int8),
                        first_child=np.ascontiguousarray(game.first_child, np.int32),
                        num_children=np.ascontiguousarray(game.num_children, np.int32),
                        chance_prob=np.ascontiguousarray(game.chance_prob, np.float64),
                        infoset=np.ascontiguousarray(game.infoset, np.int32),
                        utility=np.ascontiguousarray(game.utility, np.float64),
                        abstract=np.ascontiguousarray(slots.abstract if slots.merged else [], np.int32),
                        first_seq=np.ascontiguousarray(slots.first_seq, np.int32),
                        num_actions=np.ascontiguousarray(slots.num_actions, np.int32),
                        average_first=np.ascontiguousarray(average_first, np.int32),
                        parent_seq=np.ascontiguousarray(game.infoset_parent_seq, np.int32))


class SamplerBuffers:
    """Regret table, average-strategy sums, scratch and RNG state for one game and one sampler, optionally
    on an information-set `abstraction` (see the module docstring for `average_space`)."""

    PERSISTENT = ("regrets", "avg", "last", "counters", "rng", "baseline")  # what a checkpoint holds

    def __init__(self, game: Game, sampler: str, seed: int = 0, abstraction=None, average_space: str = "full"):
        if sampler not in SAMPLERS:
            raise ValueError(f"unknown sampler {sampler!r}; allowed: {', '.join(SAMPLERS)}")
        if average_space not in AVERAGE_SPACES:
            raise ValueError(f"unknown average_space {average_space!r}; allowed: {', '.join(AVERAGE_SPACES)}")
        self.game, self.sampler, self.average_space = game, sampler, average_space
        self.slots = Slots(game, abstraction)
        S, N, H = self.slots.num_slots, len(self.slots.num_actions), game.num_histories
        self.tree = compiled_tree(game, self.slots, average_space)
        self.state = kernels.State(
            regrets=np.zeros(S),  # cumulative regrets
            avg=np.zeros(game.num_sequences if average_space == "full" else S),  # average-strategy sums
            sigma=np.zeros(S),  # current strategy of the information sets visited lately
            delta=np.zeros(S),  # sampled regrets of the traversal in progress
            touched=np.zeros(N, np.int64), num_touched=np.zeros(1, np.int64), touched_stamp=np.zeros(N, np.int64),
            last=np.zeros(game.num_infosets),  # optimistic / lazy averaging: iteration or parent mass at the last visit
            counters=np.zeros(2, np.int64),  # traversals, nodes touched
            rng=seed_state(seed),
            baseline=np.zeros(H if sampler == "baseline" else 0))  # b(h, a) at child history ha
        depth = int(game.depth.max()) + 1
        trajectory = sampler in ("outcome", "baseline")
        rows = depth + 1 if trajectory else 0
        # tree walks: work arrays per slot (depth, child index), see kernels.Scratch
        levels, widest = (0, 0) if trajectory else (depth + 1, max(int(game.num_children.max()), 1))
        self.scratch = kernels.Scratch(
            path=np.zeros(rows, kernels.PATH_DTYPE),
            stack=np.zeros((levels * (widest + 1) + 1, 3), np.int64),
            value=np.zeros((levels, widest)), reach=np.zeros((2, levels, widest)), chosen=np.zeros(levels, np.int64),
            # external sampling: one sampled action per full information set (a trajectory of the full
            # game meets each at most once, so the sample stays unbiased under imperfect recall)
            cached=np.zeros((game.num_infosets if sampler in CACHING else 0, 2), np.int64),
            scale=np.zeros((levels, widest) if sampler in ("average", "probing") else (0, 0)))

        # the arrays callers read, by name
        self.regrets, self.avg, self.sigma, self.last, self.baseline = (
            self.state.regrets, self.state.avg, self.state.sigma, self.state.last, self.state.baseline)

    @property
    def nodes_touched(self) -> int:
        return int(self.state.counters[kernels.C_NODES])

    # persistent part of the state (scratch and stamps are rebuilt freely)
    def state_dict(self) -> dict[str, np.ndarray]:
        return {name: getattr(self.state, name).copy() for name in self.PERSISTENT}

    def load_state_dict(self, state: dict[str, np.ndarray]) -> None:
        for name in self.PERSISTENT:
            target = getattr(self.state, name)
            value = np.asarray(state[name])
            if value.shape != target.shape:
                raise ValueError(f"checkpoint field {name!r} has shape {value.shape}, expected {target.shape}")
            target[:] = value
        self.state.touched_stamp[:] = 0
        self.scratch.cached[:] = 0
