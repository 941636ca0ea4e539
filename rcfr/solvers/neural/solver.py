"""The Deep CFR family as configurations of one sampled loop: data source, targets, regressor, averaging.

Each iteration t, for each player p in turn, at the current profile sigma_t:

1. (``sampler="baseline"`` or ``"fixed"``) `value_traversals` rollouts (both players exploring with
   probability `value_exploration`, returns importance-weighted back to sigma) give Monte Carlo value
   targets per history; a value regressor over history features (`history_features`), trained from scratch, predicts
   every history's value: DREAM's learned baselines or ESCHER's history value function. The fit reads this
   batch, or with `value_capacity` a value memory (a reservoir of (history, target, t) across iterations,
   pooled like the advantage memory); with `exact_terminals` (default) terminal histories take their
   utilities and stay out of the fit;
2. `traversals` traversals for p give sampled regrets of p's visited sequences: external sampling (Deep CFR,
   SD-CFR), outcome sampling (SD-CFR's outcome-sampling form), outcome sampling with the learned baselines
   (DREAM; `rcfr.sampling`'s VR-MCCFR kernel with the baselines held fixed during the batch), or ESCHER's
   fixed-policy walk with value-table regrets (`rcfr.solvers.neural.walks`);
3. each visit becomes one example (sequence, regret, t) of p's advantage memory, a reservoir of
   `capacity` examples (Deep CFR's M_V; a batch's visits of one sequence carry the batch's per-visit mean,
   which leaves the squared-error objective unchanged up to a constant);
4. p's advantage regressor is trained from scratch on the memory, examples weighted by t ** power
   (``buffer_weighting="linear"``: Deep CFR's linear CFR weighting; the examples of one sequence are
   pooled into their weighted mean, the same objective for any squared-error regressor), and sigma_{t+1}
   for p is regret matching on its predictions;
5. averaging: ``average="network"`` (Deep CFR) keeps a strategy memory of the opponent's visited
   information sets (sequence, sigma_t, t) and trains an average-policy regressor on it when the average
   is asked for; ``average="mixture"`` (SD-CFR, DREAM, ESCHER) keeps no policy network: the average is
   the mixture of every iteration's network strategy weighted by t ** power, computed exactly as the
   weighted sum of their realization plans (the quantity SD-CFR samples trajectories from).

Every regressor is fresh each time, seeded from (seed, role, player, t), so a checkpoint needs only the
memories, RNG states and the current strategies, and resumes bit for bit. Any rcfr regressor stands in
for any network (``regressor``, ``value_regressor``, ``policy_regressor``: names, dicts or estimators;
the torch MLP runs on CUDA with ``device="auto"`` when present). Value features are a dense matrix over
all histories and the regressors predict every sequence each iteration: small and mid-size games.
"""

from __future__ import annotations

import numpy as np

from ...options import NeuralOptions
from ...policy import Policy
from ...sampling import RegretSampler
from ...sampling.reservoir import Reservoir
from ...tree import Game
from ..base import IterativeSolver, check_game, require
from ..capabilities import ARRAYS_WHY, COMPILE_IT
from .walks import Walker

#: a small network for Kuhn and Leduc: two hidden layers of 64, Adam, trained from scratch each iteration until
#: a held-out tenth of the rows stops improving (the MLP's defaults; docs/neural.md, "Networks trained enough")
NETWORK = {"name": "mlp", "hidden": [64, 64]}
ADVANTAGE, VALUE, POLICY = 0, 1, 2  # seed roles


def _check_compiled(game, name: str) -> None:
    """The family reads the compiled arrays (history features, the samplers' and walks' buffers): a game
    walked by its rules is refused by name, before any work, as is anything that is not a game."""
    require(game, "arrays", name, f"{ARRAYS_WHY}, {COMPILE_IT}")
    check_game(game)


def history_features(game: Game, matrix: np.ndarray) -> np.ndarray:
    """One row per history: the features of each player's last sequence on the way to it and of the first
    sequence of the information set acting there (zeros where there is none), one-hots of the chance
    outcomes on its path (event j, outcome k: the private information no sequence of the acting player
    shows), and whether it is a chance node or terminal. A value regressor's input; any function of it is
    a valid baseline."""
    padded = np.vstack([matrix, np.zeros((1, matrix.shape[1]))])  # row -1: no sequence
    sequences = game.history_sequences
    acting = np.where(game.player >= 0, game.infoset_first_seq[np.maximum(game.infoset, 0)], -1)
    return np.hstack([padded[sequences[:, 0]], padded[sequences[:, 1]], padded[acting], _chance_path(game),
                      (game.player == -1)[:, None], (game.player == -2)[:, None]]).astype(np.float64)


def _chance_path(game: Game) -> np.ndarray:
    """(histories, events x outcomes) one-hots of the chance outcomes on each history's path."""
    H, parent, action = game.num_histories, game.parent, game.action
    is_chance = game.player == -1
    events = np.zeros(H, np.int64)  # chance events above each history
    for d in range(1, int(game.depth.max()) + 1):  # parents come one level up
        level = np.flatnonzero(game.depth == d)
        events[level] = events[parent[level]] + is_chance[parent[level]]
    width = int(game.num_children[is_chance].max(initial=1))
    out = np.zeros((H, max(int(events.max()), 1) * width))
    child = np.flatnonzero(parent >= 0)
    child = child[is_chance[parent[child]]]
    column = events[parent[child]] * width + action[child]
    out[child, column] = 1.0  # and every history below inherits it:
    for d in range(1, int(game.depth.max()) + 1):
        level = np.flatnonzero(game.depth == d)
        out[level] = np.maximum(out[level], out[parent[level]])
    return out


class NeuralCFR(IterativeSolver):
    """One sampled loop with a learned advantage per sequence (see the module docstring for the options)."""

    chunk = 1

    def __init__(self, game: Game, *, sampler: str = "external", average: str = "network", regressor=None,
                 features="auto", value_regressor=None, policy_regressor=None, traversals: int = 200,
                 value_traversals: int | None = None, capacity: int = 1_000_000,
                 buffer_weighting: str | float = "linear", averaging: str | float = "linear", epsilon: float = 0.6,
                 value_exploration: float = 0.2, value_capacity: int | None = None, exact_terminals: bool = True,
                 value_targets: str = "returns", keep_networks: bool = False, seed: int = 0):
        from rcfr.features import make_features

        from ...regressors import make_regressor
        _check_compiled(game, self.solver_name or type(self).__name__)
        o = self.options = NeuralOptions(
            sampler=sampler, average=average, regressor=regressor, features=features, value_regressor=value_regressor,
            policy_regressor=policy_regressor, traversals=traversals, value_traversals=value_traversals,
            capacity=capacity, buffer_weighting=buffer_weighting, averaging=averaging, epsilon=epsilon,
            value_exploration=value_exploration, value_capacity=value_capacity, exact_terminals=exact_terminals,
            value_targets=value_targets, keep_networks=keep_networks, seed=seed)
        self.sampler_name, self.average_kind, self.value_targets = o.sampler, o.average, o.value_targets
        learns_values = o.learns_values
        self.value_exploration = o.value_exploration
        self.traversals = o.traversals
        self.value_traversals = (o.value_traversals if o.value_traversals is not None
                                 else o.traversals if learns_values else 0)
        self.capacity = o.capacity
        self.buffer_power, self.power = o.buffer_power, o.power
        self.seed, self.keep_networks, self.exact_terminals = o.seed, o.keep_networks, o.exact_terminals
        regressor, value_regressor, policy_regressor = o.regressor, o.value_regressor, o.policy_regressor
        self.specs = {ADVANTAGE: NETWORK if regressor is None else regressor,
                      VALUE: (NETWORK if regressor is None else regressor) if value_regressor is None else value_regressor,
                      POLICY: (NETWORK if regressor is None else regressor) if policy_regressor is None else policy_regressor}
        for role in (ADVANTAGE, VALUE, POLICY):
            make_regressor(self.specs[role])  # a bad name or parameter fails here, before any work
        self.game, self.views = game, game.views
        self.features = make_features(game, o.features)
        self.rows = [self.features.player_rows(game, p) for p in (0, 1)]
        self.history_rows = history_features(game, self.features.matrix) if learns_values else None
        if o.sampler in ("external", "outcome", "baseline"):
            self.sampler = RegretSampler(game, o.sampler, seed=self.seed, epsilon=o.epsilon)
        else:
            self.sampler = None
        self.walker = Walker(game, [self.seed, 1])
        self.advantages = [Reservoir(self.capacity, self._seed(ADVANTAGE, p, 0)) for p in (0, 1)]
        self.strategy_memory = ([Reservoir(self.capacity, self._seed(POLICY, p, 0)) for p in (0, 1)]
                                if o.average == "network" else None)
        self.value_memory = (Reservoir(o.value_capacity, self._seed(VALUE, 2, 0))
                             if o.value_capacity is not None else None)
        terminal = game.player == -2
        self.fitted_histories = np.flatnonzero(~terminal if o.exact_terminals else np.ones_like(terminal))
        self.strategies = [v.regret_matching(np.zeros(v.num_sequences)) for v in self.views]  # uniform
        self.plan_sums = [np.zeros(v.num_sequences) for v in self.views]
        self.networks: list[list] = [[], []]  # (t, fitted advantage regressor) with keep_networks
        self.latest = [None, None]  # each player's latest advantage regressor
        # the latest history-value predictions (terminals exact from the start with exact_terminals)
        self.values = np.where(terminal, game.utility, 0.0) if o.exact_terminals else np.zeros(game.num_histories)
        self._average_cache = None
        self.iteration = 0
        self.sharding: dict | None = None  # `distribute`: a setting of the run, not an option

    def distribute(self, workers: int = 1, shards: int | None = None, ray_address: str | None = None) -> NeuralCFR:
        """Run each batch of traversals and value rollouts as `shards` tasks (default `workers`) on `workers`
        Ray workers (1: here, no Ray); the numbers depend on the shard count, never on `workers`, and one
        shard is the one-process run bit for bit (`rcfr.solvers.neural.shards`). A setting of the run:
        checkpoints resume on any count. Returns self."""
        from . import shards as sharded
        self.sharding = sharded.check(self, workers, shards, ray_address)
        return self

    # ---- helpers -----------------------------------------------------------------------------
    def _seed(self, role: int, player: int, t: int) -> int:
        """The seed of one regressor fit (or, at t = 0, of a memory): distinct per run, role, player, t."""
        return int(np.random.SeedSequence([self.seed, role, player, t]).generate_state(1)[0] % (2 ** 31))

    def _fresh(self, role: int, player: int, t: int):
        from ...regressors import make_regressor, seeded
        return seeded(make_regressor(self.specs[role]), self._seed(role, player, t))

    def _fit(self, role: int, player: int, t: int, X, y, w):
        from ...regressors import base
        model = self._fresh(role, player, t)
        base.fit(model, X, y, w)
        return model

    def profile(self) -> np.ndarray:
        """The current profile over global sequences."""
        return np.concatenate([s[1:] for s in self.strategies])

    def _slice(self, player: int) -> slice:
        view = self.views[player]
        return slice(view.offset, view.offset + view.num_sequences - 1)

    # ---- iterations --------------------------------------------------------------------------
    def _advance(self, iterations: int) -> None:
        for _ in range(iterations):
            t = self.iteration + 1
            for p in (0, 1):
                self._update(p, t)
            self.iteration = t
            self._average_cache = None

    def _update(self, p: int, t: int) -> None:
        sigma = self.profile()
        if self.history_rows is not None:
            self.values = self._learn_values(sigma, p, t)
        if self.sharding is None:
            visits, regret, opponent = self._traverse(sigma, p)
        else:
            from . import shards
            visits, regret, opponent = shards.traverse(self, sigma, p, t)
        own = np.arange(self.game.num_sequences)[self._slice(p)]
        seen = own[visits[own] > 0]
        self.advantages[p].add(np.repeat(seen, visits[seen]), np.repeat(regret[seen], visits[seen]), t)
        if self.strategy_memory is not None:
            q = 1 - p
            seqs = np.arange(self.game.num_sequences)[self._slice(q)]
            counts = opponent[self.game.sequence_infoset[seqs]]
            seqs, counts = seqs[counts > 0], counts[counts > 0]
            self.strategy_memory[q].add(np.repeat(seqs, counts), np.repeat(sigma[seqs], counts), t)
        sequences, targets, weights = pooled_targets(self.advantages[p], self.buffer_power, self.game.num_sequences)
        model = self.latest[p] = self._fit(ADVANTAGE, p, t, self.features.matrix[sequences], targets, weights)
        view = self.views[p]
        estimate = np.zeros(view.num_sequences)
        estimate[1:] = _predict(model, self.rows[p])
        view.regret_matching(estimate, self.strategies[p])
        if self.average_kind == "mixture":
            self.plan_sums[p] += float(t) ** self.power * view.plan(self.strategies[p])
            if self.keep_networks:
                self.networks[p].append((t, model))

    def _traverse(self, sigma: np.ndarray, p: int):
        """(visits per global sequence, per-visit mean regret, visits per opponent information set)."""
        if self.sampler is not None:
            if self.sampler_name == "baseline":
                self.sampler.buffers.baseline[:] = self.values
            batch = self.sampler.sample(sigma, p, self.traversals)
            visits = batch.visits
            regret = np.divide(batch.mean * batch.samples, visits, out=np.zeros_like(batch.mean), where=visits > 0)
            opponent = None
            if self.strategy_memory is not None:  # external sampling: each visit adds sigma, a unit of mass
                mass = np.bincount(self.game.sequence_infoset, batch.average_increment, self.game.num_infosets)
                opponent = np.rint(mass * batch.samples).astype(np.int64)
            return visits, regret, opponent
        sums, _, visits, opponent = self.walker.fixed(sigma, self.values, p, self.traversals)
        return visits, np.divide(sums, visits, out=np.zeros_like(sums), where=visits > 0), opponent

    def _learn_values(self, sigma: np.ndarray, p: int, t: int) -> np.ndarray:
        """Rollouts at sigma, a value regressor fit on their mean returns (this batch's, or the value
        memory's weighted means per history), its predictions for every history; with `exact_terminals`
        the terminal histories take their utilities and are left out of the fit."""
        baseline = self.values if self.value_targets == "corrected" else None  # fitted before this batch
        if self.sharding is None:
            sums, counts = self.walker.rollouts(sigma, self.value_traversals, self.value_exploration, baseline=baseline)
        else:
            from . import shards
            sums, counts = shards.rollouts(self, sigma, p, t, baseline)
        seen = np.flatnonzero(counts)
        if self.exact_terminals:
            seen = seen[self.game.player[seen] != -2]
        targets = sums[seen] / counts[seen]
        if self.value_memory is not None:
            self.value_memory.add(np.repeat(seen, counts[seen]), np.repeat(targets, counts[seen]), t)
            seen, targets, weights = pooled_targets(self.value_memory, self.buffer_power, self.game.num_histories)
        else:
            weights = counts[seen] * (len(seen) / max(counts[seen].sum(), 1))
        values = self.game.utility.astype(np.float64)  # exact at terminals; every fitted history predicted:
        if len(seen):
            model = self._fit(VALUE, p, t, self.history_rows[seen], targets, weights)
            values[self.fitted_histories] = _predict(model, self.history_rows[self.fitted_histories])
        else:
            values[self.fitted_histories] = 0.0
        return values

    @property
    def nodes_touched(self) -> int:
        """Histories visited by every traversal and rollout so far."""
        return (self.sampler.buffers.nodes_touched if self.sampler is not None else 0) + self.walker.nodes_touched

    # ---- policies ----------------------------------------------------------------------------
    def current_policy(self) -> Policy:
        return Policy.from_local(self.game, self.strategies)

    def average_policy(self) -> Policy:
        """Mixture: the normalized weighted realization-plan sums (uniform before the first iteration).
        Network: the average-policy regressor's predictions, clipped at zero and normalized per
        information set (uniform where none is positive), trained on the strategy memory now."""
        if self._average_cache is None:
            if self.average_kind == "mixture":
                local = [v.normalize(s) for v, s in zip(self.views, self.plan_sums)]
            else:
                local = [self._policy_network(p) for p in (0, 1)]
            self._average_cache = Policy.from_local(self.game, local)
        return self._average_cache

    def _policy_network(self, p: int) -> np.ndarray:
        view = self.views[p]
        memory = self.strategy_memory[p]
        if memory.size == 0:
            return view.regret_matching(np.zeros(view.num_sequences))
        sequences, targets, weights = pooled_targets(memory, self.power, self.game.num_sequences)
        model = self._fit(POLICY, p, self.iteration, self.features.matrix[sequences], targets, weights)
        scores = np.zeros(view.num_sequences)
        scores[1:] = np.maximum(_predict(model, self.rows[p]), 0.0)
        return view.regret_matching(scores)  # proportional to the positive scores

    def mixed_policy(self) -> Policy:
        """The mixture recomputed from the kept per-iteration networks (``keep_networks=True``): each
        network's strategy's realization plan weighted by t ** power. Equals `average_policy`."""
        if not self.keep_networks:
            raise ValueError("mixed_policy needs keep_networks=True")
        local = []
        for p, view in enumerate(self.views):
            total = np.zeros(view.num_sequences)
            for t, model in self.networks[p]:
                estimate = np.zeros(view.num_sequences)
                estimate[1:] = _predict(model, self.rows[p])
                total += float(t) ** self.power * view.plan(view.regret_matching(estimate))
            local.append(view.normalize(total))
        return Policy.from_local(self.game, local)

    # ---- size and checkpoints ----------------------------------------------------------------
    def size(self) -> int | None:
        """Representation size: the latest advantage regressors' summed sizes (leaves, parameters; None if
        one is of unknown size), as sampled RCFR's. The memories behind them: `memory_size`."""
        from ...regressors import size
        sizes = [0 if m is None else size(m) for m in self.latest]
        return None if any(s is None for s in sizes) else int(sum(sizes))

    def memory_size(self) -> int:
        """Examples held in the memories (the regressors are refit from them)."""
        memories = self.advantages + (self.strategy_memory or []) + ([self.value_memory] if self.value_memory else [])
        return int(sum(m.size for m in memories))

    def _state(self) -> dict[str, np.ndarray]:
        state = {"iteration": np.array(self.iteration), "values": self.values.copy()}
        if self.sampler is not None:
            state.update({f"sampler.{k}": v for k, v in self.sampler.buffers.state_dict().items()})
        state.update({f"walker.{k}": v for k, v in self.walker.state_dict().items()})
        for p in (0, 1):
            state.update(self.advantages[p].state_dict(f"advantage{p}."))
            if self.strategy_memory is not None:
                state.update(self.strategy_memory[p].state_dict(f"strategy_memory{p}."))
            state[f"strategy{p}"] = self.strategies[p].copy()
            state[f"plan_sum{p}"] = self.plan_sums[p].copy()
        if self.value_memory is not None:
            state.update(self.value_memory.state_dict("value_memory."))
        return state

    def _load_state(self, state: dict[str, np.ndarray]) -> None:
        if self.sampler is not None:
            self.sampler.buffers.load_state_dict({k[8:]: v for k, v in state.items() if k.startswith("sampler.")})
        self.walker.load_state_dict({k[7:]: v for k, v in state.items() if k.startswith("walker.")})
        for p in (0, 1):
            self.advantages[p].load_state_dict(state, f"advantage{p}.")
            if self.strategy_memory is not None:
                self.strategy_memory[p].load_state_dict(state, f"strategy_memory{p}.")
            self.strategies[p][:] = state[f"strategy{p}"]
            self.plan_sums[p][:] = state[f"plan_sum{p}"]
        if self.value_memory is not None:
            self.value_memory.load_state_dict(state, "value_memory.")
        self.values[:] = state["values"]
        self.iteration = int(state["iteration"])
        self.networks = [[], []]  # kept networks are for inspection, not part of a checkpoint
        self._average_cache = None


def pooled_targets(memory: Reservoir, power: float, num_sequences: int):
    """(sequences, targets, weights) of a memory's examples (s, r, t) weighted t ** power: what
    `rcfr.solvers.targets.reservoir_targets` computes, by counting over the game's sequence ids instead
    of sorting the buffer (a fit per player per iteration reads the whole memory). The value memory's
    items are histories: pass the number of histories as `num_sequences`."""
    sequence, value, iteration = memory.examples()
    w = iteration.astype(np.float64) ** power
    totals = np.bincount(sequence, w, minlength=num_sequences)
    sums = np.bincount(sequence, w * value, minlength=num_sequences)
    sequences = np.flatnonzero(totals > 0)
    totals, sums = totals[sequences], sums[sequences]
    weights = totals * (len(totals) / totals.sum()) if len(totals) else totals
    return sequences, sums / totals, weights


def _predict(model, X) -> np.ndarray:
    from ...regressors import base
    prediction = base.predict(model, X)
    if prediction.shape != (len(X),) or not np.isfinite(prediction).all():
        raise ValueError(f"{type(model).__name__} predicted {prediction.shape} values, some not finite; "
                         f"expected {len(X)} finite values")
    return prediction
