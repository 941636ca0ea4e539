"""The arrays a sampled traversal reads and writes, allocated once per game.

`SamplerBuffers` holds the `bundles.Tree`, `bundles.State` and `bundles.Scratch` every walk of
`rcfr.sampling` takes (the driver: `rcfr.sampling.driver`). Regrets, current strategies and sampled
regrets are indexed by *slots*: the global sequence ids of the game, or, under an information-set
abstraction (imperfect recall, `rcfr.abstraction.Abstraction`), the abstract sequences, numbered in
abstract-set order, so merged information sets share (and sum into) one regret vector. Average-strategy
sums use full-game sequence ids (``average_space="full"``) or the abstract slots (``"abstract"``).
"""

from __future__ import annotations

import time

import numpy as np

from ..options import AVERAGE_SPACES
from ..policy import Policy
from ..tree import Game
from . import bundles, driver
from .bundles import AVERAGE_MODE_CODES, CHANCE_SAMPLING_CODES, SAMPLER_CODES
from .chance import common_keys
from .public import PublicTree, empty_public_tree, public_tree

#: public chance sampling walks the public tree (`chance_walks.public_chance_walk`), not the histories
PUBLIC = "public"
SAMPLERS = {name: code for name, code in SAMPLER_CODES.items() if name != PUBLIC}  # the history walks
BASELINE_SAMPLERS = ("baseline", "infoset_baseline")  # outcome sampling with baselines per history / per (I, a)
CACHING = ("external", "pure", "average", "probing")  # samplers that keep one sampled action per information set
CHANCE_SAMPLING = CHANCE_SAMPLING_CODES
AVERAGE_MODES = AVERAGE_MODE_CODES


def seed_state(seed: int) -> np.ndarray:
    """A one-element uint64 splitmix64 state derived from `seed` (well mixed, so nearby seeds differ)."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    return np.random.SeedSequence(int(seed)).generate_state(1, np.uint64)



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


def baseline_layout(game: Game, sampler: str) -> tuple[np.ndarray, int, int]:
    """Where the baseline of each edge (parent history, action) lives, indexed by the child history:
    (slot per history, -1 for none; stride between the two traversers' rows, 0 for one shared row;
    table length). VR-MCCFR ("baseline"): one shared slot per child history. MCCFRb
    ("infoset_baseline"): the global sequence (I, a) of the parent's information set, none at chance
    nodes, one row per traverser (Kuchar's b_i(I, a)). Other samplers: none."""
    H = game.num_histories
    if sampler == "baseline":
        return np.arange(H), 0, H
    if sampler != "infoset_baseline":
        return np.zeros(0, np.int64), 0, 0
    index = np.full(H, -1, np.int64)
    child = np.flatnonzero(game.parent >= 0)
    parent = game.parent[child]
    decision = game.player[parent] >= 0
    child, parent = child[decision], parent[decision]
    index[child] = game.infoset_first_seq[game.infoset[parent]] + game.action[child]
    S = game.num_sequences
    return index, S, 2 * S


def compiled_tree(game: Game, slots: Slots, average_space: str = "full", sampler: str = "",
                  chance_sampling: str = "single", public: PublicTree | None = None) -> bundles.Tree:
    """The game's arrays (and where each information set stores regrets, averages and baselines) in the
    dtypes the kernels are compiled for; the event keys of common chance-sampling when `chance_sampling` is
    "common"; the public tree of public chance sampling (`public`, empty arrays when None)."""
    average_first = game.infoset_first_seq if average_space == "full" else slots.first_seq[slots.abstract]
    baseline_index, baseline_stride, _ = baseline_layout(game, sampler)
    return bundles.Tree(player=np.ascontiguousarray(game.player, np.int8),
                        first_child=np.ascontiguousarray(game.first_child, np.int32),
                        num_children=np.ascontiguousarray(game.num_children, np.int32),
                        chance_prob=np.ascontiguousarray(game.chance_prob, np.float64),
                        infoset=np.ascontiguousarray(game.infoset, np.int32),
                        utility=np.ascontiguousarray(game.utility, np.float64),
                        abstract=np.ascontiguousarray(slots.abstract if slots.merged else [], np.int32),
                        first_seq=np.ascontiguousarray(slots.first_seq, np.int32),
                        num_actions=np.ascontiguousarray(slots.num_actions, np.int32),
                        average_first=np.ascontiguousarray(average_first, np.int32),
                        parent_seq=np.ascontiguousarray(game.infoset_parent_seq, np.int32),
                        baseline_index=np.ascontiguousarray(baseline_index, np.int32),
                        baseline_stride=int(baseline_stride),
                        chance_key=(common_keys(game) if chance_sampling == "common"
                                    else np.zeros((2, 0), np.int32)),
                        public=empty_public_tree() if public is None else public)


def public_work(public: PublicTree) -> bundles.PublicWork:
    """The scratch of a walk of `public` (empty arrays for an empty public tree)."""
    K = len(public.kind)
    slots = np.maximum(public.count0, public.count1).max(initial=1)
    actions = int(public.num_children.max(initial=1))
    return bundles.PublicWork(stack=np.zeros(K + 2 if K else 0, np.int64), chosen=np.zeros(K, np.int64),
                              scale=np.zeros(K), reach0=np.zeros(len(public.up0)), reach1=np.zeros(len(public.up1)),
                              value0=np.zeros(len(public.up0)), value1=np.zeros(len(public.up1)),
                              action_value=np.zeros(int(slots) * actions if K else 0))


class SamplerBuffers:
    """Regret table, average-strategy sums, scratch and RNG state for one game and one sampler, optionally
    on an information-set `abstraction` (see the module docstring for `average_space`). Public chance
    sampling (sampler "public") walks `public`, derived from the game when None."""

    PERSISTENT = ("regrets", "avg", "last", "counters", "rng", "baseline", "baseline_visits")  # a checkpoint
    #: checkpoint fields as long as what was met: none, every array has the game's size (`RulesBuffers.SIZED`)
    SIZED: tuple[str, ...] = ()
    #: whether information sets are numbered as met (`RulesBuffers`); here every set of the game is known at the start
    sets_as_met = False
    #: whether the last walk met more sets than the arrays hold (`RulesBuffers.grow`); never, here
    overflowed = False

    def __init__(self, game: Game, sampler: str, seed: int = 0, abstraction=None, average_space: str = "full",
                 chance_sampling: str = "single", public: PublicTree | None = None):
        if sampler not in SAMPLERS and sampler != PUBLIC:
            raise ValueError(f"unknown sampler {sampler!r}; allowed: {', '.join([*SAMPLERS, PUBLIC])}")
        if average_space not in AVERAGE_SPACES:
            raise ValueError(f"unknown average_space {average_space!r}; allowed: {', '.join(AVERAGE_SPACES)}")
        if chance_sampling not in CHANCE_SAMPLING or (chance_sampling != "single" and sampler != "chance"):
            raise ValueError(f"chance_sampling {chance_sampling!r} needs sampler 'chance' and one of: "
                             f"{', '.join(CHANCE_SAMPLING)}")
        self.game, self.sampler, self.average_space = game, sampler, average_space
        self.slots = Slots(game, abstraction)
        S, N = self.slots.num_slots, len(self.slots.num_actions)
        self.public_seconds = 0.0  # deriving the public tree (public chance sampling)
        if sampler == PUBLIC and public is None:
            start = time.perf_counter()
            public = public_tree(game)
            self.public_seconds = time.perf_counter() - start
        self.tree = compiled_tree(game, self.slots, average_space, sampler, chance_sampling,
                                  public if sampler == PUBLIC else None)
        B = baseline_layout(game, sampler)[2]
        events = int(self.tree.chance_key.max(initial=-1)) + 1  # common chance-sampling's keys
        self.state = bundles.State(
            regrets=np.zeros(S),  # cumulative regrets
            avg=np.zeros(game.num_sequences if average_space == "full" else S),  # average-strategy sums
            sigma=np.zeros(S),  # current strategy of the information sets visited lately
            delta=np.zeros(S),  # sampled regrets of the traversal in progress
            touched=np.zeros(N, np.int64), num_touched=np.zeros(1, np.int64), touched_stamp=np.zeros(N, np.int64),
            last=np.zeros(game.num_infosets),  # optimistic / lazy averaging: iteration or parent mass at the last visit
            counters=np.zeros(2, np.int64),  # traversals, nodes touched
            rng=seed_state(seed),
            baseline=np.zeros(B),  # b(h, a), at the slot of child history ha (see `baseline_layout`)
            baseline_visits=np.zeros(B, np.int64))  # updates of each baseline (direct averages)
        depth = int(game.depth.max()) + 1
        trajectory = sampler == "outcome" or sampler in BASELINE_SAMPLERS
        rows = depth + 1 if trajectory else 0
        # tree walks: work arrays per slot (depth, child index), see bundles.Scratch
        tree_walk = not trajectory and sampler != PUBLIC
        levels, widest = (depth + 1, max(int(game.num_children.max()), 1)) if tree_walk else (0, 0)
        weights = sampler in ("average", "probing") or chance_sampling != "single"  # scale per slot
        self.scratch = bundles.Scratch(
            path=np.zeros(rows, bundles.PATH_DTYPE),
            stack=np.zeros((levels * (widest + 1) + 1, 3), np.int64),
            value=np.zeros((levels, widest)), reach=np.zeros((2, levels, widest)), chosen=np.zeros(levels, np.int64),
            # external sampling: one sampled action per full information set (a trajectory of the full
            # game meets each at most once, so the sample stays unbiased under imperfect recall)
            cached=np.zeros((game.num_infosets if sampler in CACHING else 0, 2), np.int64),
            scale=np.zeros((levels, widest) if weights else (0, 0)),
            common_u=np.zeros(events), common_stamp=np.zeros(events, np.int64),
            public=public_work(self.tree.public))

        # the arrays callers read, by name
        self.regrets, self.avg, self.sigma, self.last, self.baseline = (
            self.state.regrets, self.state.avg, self.state.sigma, self.state.last, self.state.baseline)

    def advance(self, settings: bundles.Settings, t0: int, iterations: int) -> None:
        """Iterations t0+1 .. t0+iterations of the driver."""
        driver.run(self.tree, self.state, self.scratch, settings, t0, iterations)

    @property
    def nodes_touched(self) -> int:
        return int(self.state.counters[bundles.C_NODES])

    @property
    def num_slots(self) -> int:
        """Regret slots: the game's sequences, or the abstraction's abstract ones."""
        return self.slots.num_slots

    @property
    def num_set_ids(self) -> int:
        """Length of a per-set array (the game's information sets)."""
        return self.game.num_infosets

    # ---- policies ------------------------------------------------------------------------------
    def current_policy(self) -> Policy:
        """Regret matching on the cumulative regrets (of each set's abstract set under an abstraction)."""
        regrets = self.regrets[self.slots.seq_map]
        return Policy.from_local(self.game, [v.regret_matching(v.localize(regrets)) for v in self.game.views])

    def average_policy(self) -> Policy:
        """The normalized average-strategy sums (uniform where a set has none yet); under
        ``average_space="abstract"`` every merged set plays its abstract set's average."""
        avg = self.avg if self.average_space == "full" else self.avg[self.slots.seq_map]
        return Policy.from_local(self.game, [v.normalize(v.localize(avg)) for v in self.game.views])

    # ---- the visited-set discovery's walk (`rcfr.solvers.visited`) -----------------------------
    def discovery_rows(self) -> tuple[dict[str, np.ndarray], int]:
        """Rows of states for a walk beside the sampler's, and the first row that is its own: none, a history
        is its id on the compiled tree."""
        return {}, 0

    def discovery_tree(self, rows: dict[str, np.ndarray]):
        """The tree bundle such a walk reads: the sampler's own."""
        return self.tree

    # persistent part of the state (scratch and stamps are rebuilt freely)
    def state_dict(self) -> dict[str, np.ndarray]:
        return {name: getattr(self.state, name).copy() for name in self.PERSISTENT}

    def load_state_dict(self, state: dict[str, np.ndarray]) -> None:
        for name in self.PERSISTENT:
            target = getattr(self.state, name)
            if name not in state and target.size == 0:  # a checkpoint from before the field existed
                continue
            value = np.asarray(state[name])
            if value.shape != target.shape:
                raise ValueError(f"checkpoint field {name!r} has shape {value.shape}, expected {target.shape}")
            target[:] = value
        self.state.touched_stamp[:] = 0
        self.scratch.cached[:] = 0
        self.scratch.common_stamp[:] = 0
