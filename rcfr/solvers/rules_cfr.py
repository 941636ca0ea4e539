"""Full-width CFR over a game's rules, without the compiled tree, sharded like the exact evaluation.

Why: games past the compile limit (Goofspiel(7), Phantom Tic-Tac-Toe from an opening) can still be walked, and a
walk splits at a cut into shards that run on Ray workers (docs/distributed.md). An iteration is the compiled
solver's (`rcfr.solvers.cfr.CFRSolver`) on the same sequence form, with the sparse product replaced by a walk:

* once, a walk with an empty policy played uniformly finds every information set with its owner, its action
  count and the owner's sequence above it (`rcfr.evaluation.rules._walk`, sharded and merged as the
  evaluation's). The sets sorted by code are the `CodePolicy` layout the walks read; each player's sets sorted
  by (own sets above, code), so a set after the set above it, are its local sequence form (`RulesView`): the
  layout of the regret table, the plans and the checkpoint, the same for any shard count;
* each update walks the game with the current profile (the evaluation's walk with a full policy): every
  terminal adds its chance- and opponent-weighted payoff to each player's last own sequence, which is exactly
  what the compiled payoff matrix times the opponent's plan gives. Each shard returns that vector (8 bytes per
  sequence of both players) and its share of the empty sequences' values; the driver adds them in shard order,
  so for a fixed shard count the iterates are the same bit for bit wherever the shards ran;
* how each sequence's terminal values are summed is the option ``sums``. With "float" (the default) each shard
  adds in float64 in walk order and the driver adds the shards' vectors: the same bits for a fixed shard count,
  other rounding for another. That matters more than it seems: regret matching jumps where regrets tie at
  zero (Goofspiel's symmetric deals tie from the first iteration), so runs with 1 and 3 shards of Goofspiel(5)
  part by 0.29 in the regrets after two iterations. With "fixed" the terms are added as 128-bit fixed-point
  integers (`FRACTION_BITS`), whose sums do not depend on their order: every shard count gives the same
  bits, at 16 bytes per sequence per shard instead of 8. Neither is the compiled solver's rounding, which
  sums by sequence pair (its payoff matrix) times the plan; on small games float sums happen to track it
  closer (test_distributed.py);
* the driver then runs the compiled path's kernels on the local arrays: the bottom-up counterfactual regrets,
  the regret table's update (regret matching, or regret-matching+ and discounts for CFR+, LCFR, DCFR) and the
  reach-weighted average plan, and broadcasts the next profile with the next walk.

Alternating updates walk twice per iteration (player 1 answers player 0's new strategy), simultaneous once.
``nodes_touched`` counts the histories the walks entered (no pruning: every history, each walk), unlike the
compiled solvers' count of a pruned walk.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import kernels
from ..budget import check_walk
from ..distributed import check_sharding, run_shards
from ..evaluation.rules import (
    _ERRORS,
    _shard,
    raise_walk_error,
    subtree_tasks,
)
from ..evaluation.shards import merge
from ..games.base import GameRules
from ..options import CFROptions, check_choice, dumps
from ..policy.rules import CodePolicy
from ..regrets.rules import check_cut
from ..sources.rules import RulesGame
from .base import IterativeSolver, by_rules
from .cfr import CFRSolver
from .rules_cfr_walk import SUMS, _fixed_sum, _fixed_to_float, _iteration_shard
from .stores import RegretTable


@dataclass(frozen=True)
class RulesView:
    """One player's sequence form in local ids (0: the empty sequence), as `rcfr.tree.model.PlayerView` but
    without the payoff matrix: sets in meeting order, each after the set above it. ``gather[s - 1]`` is local
    sequence s's index in the `CodePolicy` layout (sets sorted by code)."""

    infoset_first: np.ndarray
    infoset_size: np.ndarray
    infoset_parent: np.ndarray
    gather: np.ndarray

    @property
    def num_sequences(self) -> int:
        return len(self.gather) + 1

    def plan(self, strategy: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        out = np.empty(self.num_sequences) if out is None else out
        return kernels.realization_plan(strategy, self.infoset_first, self.infoset_size, self.infoset_parent, out)

    def normalize(self, plan: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        out = np.empty(self.num_sequences) if out is None else out
        return kernels.normalize_plan(plan, self.infoset_first, self.infoset_size, out)


@dataclass(frozen=True)
class Layout:
    """Every information set of the game once: the `CodePolicy` layout (``codes``, ``first``) and both players'
    local views (``views``, what `RegretTable.bind` reads)."""

    codes: np.ndarray
    first: np.ndarray
    views: tuple[RulesView, RulesView]


def _frozen(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a)
    a.setflags(write=False)
    return a


def layout_of(rules: GameRules, shards: int = 1, cut: int | None = None, workers: int = 1,
              ray_address: str | None = None) -> Layout:
    """Number the game's sets with one walk (sharded and merged as the evaluation's: the same numbering for any
    shard count), an empty policy played uniformly so that every set is one the walk numbers as met."""
    empty = CodePolicy(rules, np.zeros(0, np.int64), np.zeros(1, np.int64), np.zeros(0))
    common = (rules, empty, True)
    if shards == 1 and cut is None:
        arrays = _shard(common, (-1, 0, 1))
        error = arrays["error"]
    else:
        parts = run_shards(_shard, common, subtree_tasks(rules, shards, cut, common), workers=workers,
                           ray_address=ray_address)
        for part in parts:
            raise_walk_error(rules, part["error"], _ERRORS)
        arrays, _, error = merge(parts, empty.first, empty.codes)
    raise_walk_error(rules, error, _ERRORS)
    code, met_first = arrays["extra_code"], arrays["extra_first"]
    size, above, owner = np.diff(met_first), arrays["above"], arrays["owner"]
    by_code = np.argsort(code, kind="stable")
    first = np.zeros(len(code) + 1, np.int64)
    np.cumsum(size[by_code], out=first[1:])
    start = np.empty(len(code), np.int64)  # each set's first sequence in the policy layout
    start[by_code] = first[:-1]
    # each player's sets by (own sets above it, code): top-down, and the same for any shard count (the merged
    # order of first meeting is top-down too, but where the shards split a set's subtrees it depends on them)
    set_of = np.repeat(np.arange(len(code)), size)
    parent_set = np.where(above < 0, -1, set_of[np.maximum(above, 0)])
    level = np.zeros(len(code), np.int64)
    while True:
        deeper = np.where(parent_set < 0, 0, level[np.maximum(parent_set, 0)] + 1)
        if np.array_equal(deeper, level):
            break
        level = deeper
    local = np.zeros(int(met_first[-1]), np.int64)  # each sequence's local id, in its owner's view
    views = []
    for p in (0, 1):
        mine = np.flatnonzero(owner == p)
        mine = mine[np.lexsort((code[mine], level[mine]))]
        sizes = size[mine]
        ends = np.cumsum(sizes)
        within = np.arange(int(ends[-1]) if len(ends) else 0) - np.repeat(ends - sizes, sizes)
        local[np.repeat(met_first[mine], sizes) + within] = 1 + np.arange(len(within))
        parent = np.where(above[mine] < 0, 0, local[np.maximum(above[mine], 0)])
        views.append(RulesView(1 + ends - sizes, sizes.astype(np.int64), parent.astype(np.int64),
                               np.repeat(start[mine], sizes) + within))
    return Layout(_frozen(code[by_code]), _frozen(first), (views[0], views[1]))


class RulesCFRSolver(IterativeSolver):
    """CFR and its regret-table variants on a `RulesGame` (module docstring); `rcfr.make_solver("cfr", game)`
    builds it for a game walked by its rules. ``distribute(workers, shards, cut, ray_address)`` splits each walk."""

    chunk = 1

    def __init__(self, game, options: CFROptions, sums: str = "float"):
        if isinstance(game, GameRules):
            game = RulesGame(game)
        if not by_rules(game):
            raise TypeError(f"{type(self).__name__} walks a game by its rules (a RulesGame), got {type(game).__name__}")
        check_walk(game.rules, "full-width CFR")
        self.game, self.options = game, options
        self.sums = check_choice("sums", sums, SUMS)
        self.updates, self.power = options.updates, options.power
        self.store = RegretTable(options.regret_matching, alpha=options.alpha, beta=options.beta)
        self.iteration, self.nodes_touched = 0, 0
        self.last_values = [0.0, 0.0]
        self.sharding = check_sharding(1, 1, None) | {"cut": None}
        self._layout: Layout | None = None
        self._tasks: list | None = None

    def distribute(self, workers: int = 1, shards: int | None = None, ray_address: str | None = None,
                   cut: int | None = None) -> RulesCFRSolver:
        """Split each walk into `shards` runs of subtrees at depth `cut` (`rcfr.evaluation.rules.walk`'s default
        cut when None), run on `workers` Ray workers. For a fixed shard count the iterates are the same bit for
        bit wherever they run; across shard counts they agree to rounding. A setting of the run, not an option:
        a checkpoint resumes on any shard count. Returns self."""
        self.sharding = check_sharding(workers, shards, ray_address) | {"cut": check_cut(cut)}
        self._tasks = None
        if self._layout is not None:
            self._shard_tasks()  # refuse too many shards now, not at the next iteration
        return self

    def identity(self) -> dict[str, str]:
        """The compiled solver's identity, with ``sums`` among the options (it changes the numbers)."""
        identity = super().identity()
        identity["options"] = dumps({**self.options.description(), "sums": self.sums})
        return identity

    # ---- the layout, found at first use ----------------------------------------------------------
    @property
    def layout(self) -> Layout:
        if self._layout is None:
            s = self.sharding
            self._layout = layout_of(self.game.rules, s["shards"], s["cut"], s["workers"], s["ray_address"])
            self.store.bind(self._layout)
            sizes = [v.num_sequences for v in self._layout.views]
            self.average_plans = [np.zeros(n) for n in sizes]
            self._plans = [np.empty(n) for n in sizes]
            self._values = [np.empty(n) for n in sizes]
            self._regrets = [np.zeros(n) for n in sizes]
            if s["shards"] > 1 or s["cut"] is not None:
                self._shard_tasks()
        return self._layout

    @property
    def views(self) -> tuple[RulesView, RulesView]:
        return self.layout.views

    def _shard_tasks(self) -> list | None:
        s = self.sharding
        if s["shards"] == 1 and s["cut"] is None:
            return None
        if self._tasks is None:
            self._tasks = subtree_tasks(self.game.rules, s["shards"], s["cut"])
        return self._tasks

    # ---- iterations ----------------------------------------------------------------------------
    def _profile(self, strategies) -> np.ndarray:
        """Both players' local strategies in the policy layout."""
        layout = self.layout
        probs = np.empty(int(layout.first[-1]))
        for view, strategy in zip(layout.views, strategies):
            probs[view.gather] = strategy[1:]
        return probs

    def _walk_values(self) -> list[np.ndarray]:
        """Both players' local terminal values against the current profile: one walk, its shards reduced in shard
        order."""
        layout = self.layout
        common = (self.game.rules, layout.codes, layout.first,
                  _frozen(self._profile([self.store.strategy(p) for p in (0, 1)])), self.sums)
        tasks = self._shard_tasks()
        if tasks is None:
            parts = [_iteration_shard(common, (-1, 0, 1))]
        else:
            parts = run_shards(_iteration_shard, common, tasks, workers=self.sharding["workers"],
                               ray_address=self.sharding["ray_address"])
        for part in parts:
            raise_walk_error(self.game.rules, part["error"], _ERRORS)
            self.nodes_touched += int(part["histories"])
        if self.sums == "fixed":
            total = _fixed_to_float(*_fixed_sum([(part["high"], part["low"]) for part in parts]))
            tv, roots = total[:-2], total[-2:]
        else:  # in shard order
            tv, roots = np.zeros(len(common[3])), np.zeros(2)
            for part in parts:
                tv += part["tv"]
                roots += part["roots"]
        values = []
        for p, view in enumerate(layout.views):
            local = self._values[p]
            local[0] = roots[p]
            local[1:] = tv[view.gather]
            values.append(local)
        return values

    def _counterfactual(self, player: int, values: np.ndarray) -> np.ndarray:
        view = self.views[player]
        self.last_values[player] = kernels.counterfactual_regrets(
            values, self.store.strategy(player), view.infoset_first, view.infoset_size, view.infoset_parent,
            self._regrets[player])
        return self._regrets[player]

    def _plan(self, player: int) -> np.ndarray:
        return self.views[player].plan(self.store.strategy(player), self._plans[player])

    _average = CFRSolver._average

    def _advance(self, iterations: int) -> None:
        for _ in range(iterations):
            t = self.iteration + 1
            if self.updates == "alternating":
                for p in (0, 1):
                    self._average(p, self._plan(p), t)
                    self.store.update(p, self._counterfactual(p, self._walk_values()[p]), t)
            else:
                plans = [self._plan(p) for p in (0, 1)]
                values = self._walk_values()
                regrets = [self._counterfactual(p, values[p]) for p in (0, 1)]
                for p in (0, 1):
                    self._average(p, plans[p], t)
                    self.store.update(p, regrets[p], t)
            self.iteration = t

    # ---- checkpoints ---------------------------------------------------------------------------
    def _state(self) -> dict[str, np.ndarray]:
        self.layout  # noqa: B018  (the arrays exist once the sets are numbered)
        return CFRSolver._state(self)

    def _load_state(self, state: dict[str, np.ndarray]) -> None:
        CFRSolver._load_state(self, state)

    def size(self) -> int:
        """The regret table's entries (every sequence but the empty ones)."""
        self.layout  # noqa: B018  (binds the store)
        return self.store.size()

    # ---- policies ------------------------------------------------------------------------------
    def _policy(self, strategies) -> CodePolicy:
        layout = self.layout
        return CodePolicy(self.game.rules, layout.codes, layout.first, self._profile(strategies))

    def current_policy(self) -> CodePolicy:
        return self._policy([self.store.strategy(p) for p in (0, 1)])

    def average_policy(self) -> CodePolicy:
        """The weighted average of the current policies so far (uniform before any iteration)."""
        return self._policy([v.normalize(plan) for v, plan in zip(self.views, self.average_plans)])


class RulesCFR(RulesCFRSolver):
    """Vanilla CFR over the rules: regret matching, uniform averaging (the compiled `CFR`'s options)."""

    solver_name = "cfr"

    def __init__(self, game, *, updates: str = "alternating", averaging: str | float = "uniform", sums: str = "float"):
        super().__init__(game, CFROptions(updates=updates, averaging=averaging), sums)


class RulesCFRPlus(RulesCFRSolver):
    """CFR+ over the rules: regret-matching+, alternating updates, linear averaging (the compiled `CFRPlus`'s)."""

    solver_name = "cfr+"

    def __init__(self, game, *, averaging: str | float = "linear", sums: str = "float"):
        super().__init__(game, CFROptions(regret_matching="rm+", averaging=averaging), sums)


class RulesLinearCFR(RulesCFRSolver):
    """Linear CFR over the rules (the compiled `LinearCFR`'s options)."""

    solver_name = "lcfr"

    def __init__(self, game, *, updates: str = "alternating", averaging: str | float = "linear", sums: str = "float"):
        super().__init__(game, CFROptions(updates=updates, averaging=averaging, alpha=1.0, beta=1.0), sums)


class RulesDiscountedCFR(RulesCFRSolver):
    """Discounted CFR over the rules (the compiled `DiscountedCFR`'s options)."""

    solver_name = "dcfr"

    def __init__(self, game, *, alpha: float = 1.5, beta: float = 0.0, averaging: str | float = 2.0,
                 updates: str = "alternating", sums: str = "float"):
        super().__init__(game, CFROptions(updates=updates, averaging=averaging, alpha=alpha, beta=beta), sums)


#: The full-width solvers on a game walked by its rules, by their `make_solver` names.
RULES_SOLVERS = {"cfr": RulesCFR, "cfr+": RulesCFRPlus, "lcfr": RulesLinearCFR, "dcfr": RulesDiscountedCFR}
