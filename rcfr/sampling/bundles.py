"""What every sampling walk takes: four named bundles of arrays and the codes the kernels switch on.

numba compiles a namedtuple of arrays into a plain struct, so a walk receives the whole game, the
solver's state, its scratch and its options as four arguments:

* `Tree`: the compiled game (the *state source* the walks read through `rcfr.sampling.states`) and
  where each information set keeps its regrets, averages and baselines; public chance sampling's
  public tree rides along as ``tree.public`` (empty for the other samplers);
* `State`: what a solver owns and checkpoints, plus the batch a walk writes (``delta``, ``touched``);
* `Scratch`: work arrays of one walk (``scratch.public``: those of the public-tree walk);
* `Settings`: the sampler code and its options, each named as in the vocabulary table
  (docs/architecture.md), built from the options' words by `make_settings`.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

CHANCE, TERMINAL = -1, -2  # `Tree.player` of a chance node and of a terminal history
BOTH = 2  # traverser value meaning "both players" (simultaneous updates)

# Settings.sampler: which walk. Outcome walks (`outcome_walks`): OUTCOME, BASELINE_OUTCOME; tree walks
# (`tree_walks`): EXTERNAL, PURE, AVERAGE_STRATEGY, PROBING; chance walks (`chance_walks`): CHANCE_SAMPLED,
# PUBLIC_CHANCE.
OUTCOME, EXTERNAL, CHANCE_SAMPLED, BASELINE_OUTCOME, PURE, AVERAGE_STRATEGY, PROBING, PUBLIC_CHANCE = range(8)
SAMPLER_CODES = {"outcome": OUTCOME, "external": EXTERNAL, "chance": CHANCE_SAMPLED, "baseline": BASELINE_OUTCOME,
                 "infoset_baseline": BASELINE_OUTCOME, "pure": PURE, "average": AVERAGE_STRATEGY,
                 "probing": PROBING, "public": PUBLIC_CHANCE}

# Settings.chance_sampling: how a chance walk treats chance nodes. SINGLE: one sampled outcome; PAIRED and
# COMMON: Lanctot 2013 §7.5; ALL: every outcome, each weighted by its probability (vanilla CFR; public chance
# sampling's public_chance="enumerate").
SINGLE, PAIRED, COMMON, ALL = range(4)
CHANCE_SAMPLING_CODES = {"single": SINGLE, "paired": PAIRED, "common": COMMON, "all": ALL}
PUBLIC_CHANCE_CODES = {"sample": SINGLE, "enumerate": ALL}

AVG_NONE, AVG_STOCHASTIC, AVG_OPTIMISTIC, AVG_LAZY = range(4)  # Settings.average_mode
AVERAGE_MODE_CODES = {"stochastic": AVG_STOCHASTIC, "optimistic": AVG_OPTIMISTIC, "lazy": AVG_LAZY}
ALTERNATING, SIMULTANEOUS = range(2)  # Settings.updates
UPDATES_CODES = {"alternating": ALTERNATING, "simultaneous": SIMULTANEOUS}
RM, RM_PLUS = range(2)  # Settings.regret_matching
REGRET_MATCHING_CODES = {"rm": RM, "rm+": RM_PLUS}
EDA, DA = range(2)  # Settings.baseline_update: exponentially decaying or direct average of the estimates
BASELINE_UPDATE_CODES = {"eda": EDA, "da": DA}

C_TRAVERSAL, C_NODES = 0, 1  # indices into State.counters

Tree = namedtuple("Tree", ["player", "first_child", "num_children", "chance_prob", "infoset", "utility",
                           "abstract", "first_seq", "num_actions", "average_first", "parent_seq", "baseline_index",
                           "baseline_stride", "chance_key", "public"])
Tree.__doc__ = """The compiled game's history arrays (see `rcfr.tree.Game`) and its information sets as the
solver stores them: ``abstract[I]`` is the abstract information set J of full set I (empty without an
abstraction: J = I, one array fewer to miss in the cache); regrets, current strategy and sampled
regrets of J live at ``first_seq[J]`` .. ``+ num_actions[J]``; I's average-strategy sums at ``average_first[I]``
(a full or an abstract slot); ``parent_seq[I]`` is the full-game sequence before I (lazy averaging, full
average space only). Outcome sampling with baselines: the baseline of the edge into history ``h`` (its
parent's action) lives at ``state.baseline[row + baseline_index[h]]`` (no baseline, i.e. zero, where the
index is -1), with ``row = traverser * baseline_stride`` (stride 0: one table shared by both traversers).
``chance_key[i, h]`` (common chance-sampling only, else empty) is -1 where chance node h belongs to updating
player i, else the id of h's event for i (`rcfr.sampling.chance.common_keys`). ``public``: the public tree
(`rcfr.sampling.public.PublicTree`) of public chance sampling, empty arrays for the other samplers."""

NO_MODEL = np.zeros(0)  # `State.model` of every table solver: strategies by regret matching on `State.regrets`

State = namedtuple("State", ["regrets", "avg", "sigma", "delta", "touched", "num_touched", "touched_stamp",
                             "last", "counters", "rng", "baseline", "baseline_visits", "model"],
                   defaults=(NO_MODEL,))
State.__doc__ = """Cumulative regrets, average-strategy sums, the current strategy of visited sets, the
walk's sampled regrets (``delta``) and the information sets it wrote (``touched[:num_touched[0]]``),
averaging bookkeeping (``last``), counters, RNG state, and the baselines of outcome sampling with baselines
(per history for VR-MCCFR, per information set and action for MCCFRb) with their update counts (direct
average). ``model`` says where a set's current strategy comes from (`strategies.current_strategy`, chosen when
the driver compiles): `NO_MODEL` (the default), regret matching on ``regrets`` into ``sigma`` or ``sigma`` as a
lean path left it; or a `rcfr.solvers.model_strategies.WalkModel`, each player's compiled model evaluated where
the walk meets the set (issue 34, item 1)."""

# one record per move of a sampled trajectory: the history, the index taken, both players' reaches,
# chance reach and sample probability q before the move, and the move's sampling probability
PATH_DTYPE = np.dtype([("node", np.int64), ("action", np.int64), ("reach0", np.float64), ("reach1", np.float64),
                       ("chance", np.float64), ("q", np.float64), ("xi", np.float64)])

Scratch = namedtuple("Scratch", ["path", "stack", "value", "reach", "chosen", "cached", "scale", "common_u",
                                 "common_stamp", "public"])
Scratch.__doc__ = """Work arrays of one walk: a trajectory (records of `PATH_DTYPE`); for tree walks, an
explicit depth-first stack of (history, depth, child index) rows, and per-*slot* values, reaches
(``reach[p, depth, index]``), sampled child index per depth, and average strategy sampling's importance
weight 1 / q_i(h) of the traverser's own sampling above h (paired and common chance-sampling: the chance
weight pi_c(h) / q(h)). A depth-first walk has at most one unfinished history per depth, so a history's
slot is (its depth, its index among its siblings): the work arrays are depth x widest branching, small
enough to stay in the CPU cache at any game size (indexing them by history id made every visit a cache
miss on large games). Also the sampled action per information set, ``cached[I] = (traversal number,
action)`` (valid where the number is the current traversal's; one row, so one cache line, per set),
common chance-sampling's random number per event (valid where ``common_stamp`` equals the traversal
number), and ``public``, the public-tree walk's `PublicWork`."""

PublicWork = namedtuple("PublicWork", ["stack", "chosen", "scale", "reach0", "reach1", "value0", "value1",
                                       "action_value"])
PublicWork.__doc__ = """Scratch of one public-tree walk: the depth-first stack, the sampled outcome and the
weight w(S) per public state, reaches and values per slot of each player, and one state's values per
(action, slot)."""

Settings = namedtuple("Settings", ["sampler", "updates", "epsilon", "baseline_decay", "baseline_update", "tau",
                                   "beta", "averaging_power", "average_mode", "regret_matching", "chance_sampling",
                                   "regret_discount", "regret_weight"])
Settings.__doc__ = """The sampler code, `ALTERNATING` or `SIMULTANEOUS` updates, exploration epsilon (outcome
sampling; the floor of average strategy sampling), how baselines learn (`EDA` with weight ``baseline_decay`` on
the newest estimate, decay 0 keeping them fixed, or `DA`), average strategy sampling's tau and beta, the
averaging weight power and the average mode, `RM` or `RM_PLUS`, how chance nodes are walked (`SINGLE`,
`PAIRED`, `COMMON`, `ALL`), and the regrets' discount power alpha (0: none) with the weight W(t0 + 1) of the
first iteration of a driver call (`strategies.next_regret_weight`: linear and discounted MCCFR)."""


Tally = namedtuple("Tally", ["sums", "squares", "visits", "listed", "count"])
Tally.__doc__ = """Where walks at a fixed profile add up their sampled regrets (`driver.estimate`): per sequence
the sum, the sum of squares (empty: not kept) and the number of walks that wrote it (a write may be a zero
regret); ``listed[:count[0]]`` are the information sets written, each once, in the order first written.
The solver's iterations take `NO_TALLY`."""


def make_tally(num_sequences: int, num_sets: int, squares: bool = True) -> Tally:
    """A zeroed `Tally` for a game's sequences and (regret) information sets."""
    return Tally(sums=np.zeros(num_sequences), squares=np.zeros(num_sequences if squares else 0),
                 visits=np.zeros(num_sequences, np.int64), listed=np.zeros(num_sets, np.int64),
                 count=np.zeros(1, np.int64))


NO_TALLY = make_tally(0, 0, squares=False)


def make_settings(sampler: str, *, updates: str = "alternating", epsilon: float = 0.0, baseline_decay: float = 0.0,
                  baseline_update: str = "eda", tau: float = 1.0, beta: float = 0.0, averaging_power: float = 0.0,
                  average_mode: str = "stochastic", regret_matching: str = "rm", chance_sampling: str = "single",
                  public_chance: str = "sample", regret_discount: float | None = None,
                  regret_weight: float = 1.0) -> Settings:
    """`Settings` from the options' words (validated by the solvers; a word unknown here is a bug, so it
    raises KeyError naming it). ``public_chance`` applies to sampler "public", ``chance_sampling`` to the others."""
    chance = PUBLIC_CHANCE_CODES[public_chance] if sampler == "public" else CHANCE_SAMPLING_CODES[chance_sampling]
    return Settings(sampler=SAMPLER_CODES[sampler], updates=UPDATES_CODES[updates], epsilon=float(epsilon),
                    baseline_decay=float(baseline_decay), baseline_update=BASELINE_UPDATE_CODES[baseline_update],
                    tau=float(tau), beta=float(beta), averaging_power=float(averaging_power),
                    average_mode=AVERAGE_MODE_CODES[average_mode], regret_matching=REGRET_MATCHING_CODES[regret_matching],
                    chance_sampling=chance, regret_discount=float(regret_discount or 0.0),
                    regret_weight=float(regret_weight))
