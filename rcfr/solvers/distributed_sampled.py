"""Sampled RCFR(+)'s traversals split into shards on Ray workers, a layer over the dense form's sampler seam.

`DenseSampledRCFR` (``features_on_demand=False``) reads its training data through one call,
``self.sampler.sample(sigma, player, traversals)``, with nothing else of the sampler's state read between
calls but its node counter and the probing sums it is handed. `distribute(solver, workers, shards,
ray_address)` puts a `ShardedSampler` in that place: each batch runs as `shards` tasks
(`rcfr.distributed.run_shards`), shard k with a fresh sampler seeded by (run seed, traverser, traversals so
far, shard count, k), and the shards' sums are added in shard order into one `RegretEstimate` of the whole
batch (the mean over all its traversals, as one process computes it). The traversal and node counters of
the solver's own sampler advance by the batch, so checkpoints keep their fields and meaning and resume on
any shard count; the solver's own stream is not drawn from while sharded.

The lean form on the rules (`RulesLeanSampledRCFR`, ``features_on_demand=True`` on a game walked by its rules)
has its own seam, `walk_spec` / `traverse_batch` / `absorb` (`rcfr.solvers.lean_rules`): `ShardedWalks` sends
the spec (game, options, both regressors, or with ``profile="model"`` both compiled models, with their fits' t,
iteration, weight) once per call, shard k walks its traversals from a stream seeded as above on a solver of its
own, and the learner adds the shards' results in shard order, then collects and fits as in one process: with
the visited profile the sets met (numbered by code in order of first meeting), regret sums, visits and average
increments; in the bounded form (``profile="model"``, nothing numbered) the feature rows each shard's walks
kept, merged into the learner's window or reservoir (`RowTargets.absorb`). Refused, naming the option: the
lean form on a compiled game, and ``profile="model"`` with sets numbered. docs/distributed.md.
"""

from __future__ import annotations

import numpy as np

from ..distributed import check_sharding, run_shards
from ..policy import Policy
from ..sampling import RegretEstimate, RegretSampler
from ..sampling.bundles import C_NODES, C_TRAVERSAL
from .neural.shards import split
from .on_demand import LeanSampledRCFR
from .sampled_regression import DenseSampledRCFR


def sample_shard(common: tuple, task: tuple) -> tuple:
    """One shard of a batch: (sums, squares, visits, average-strategy increments summed over its traversals,
    histories touched)."""
    game, kind, epsilon, tau, beta, sigma, sampling_average = common
    traverser, samples, seed = task
    sampler = RegretSampler(game, kind, seed=seed, epsilon=epsilon, tau=tau, beta=beta,
                            sampling_average=sampling_average if kind in ("average", "probing") else None)
    batch = sampler.sample(sigma, traverser, samples)
    squares = (batch.stderr ** 2 * samples + batch.mean ** 2) * samples
    return batch.mean * samples, squares, batch.visits, batch.average_increment * samples, batch.nodes_touched


def shard_seed(seed: int, traverser: int, done: int, shards: int, k: int) -> int:
    key = [int(seed), 104729, int(traverser), int(done), int(shards), int(k)]
    return int(np.random.SeedSequence(key).generate_state(1, np.uint64)[0] >> np.uint64(1))


class ShardedSampler:
    """Stands where a dense sampled RCFR's `RegretSampler` stands: `sample` runs the batch as shards.
    `buffers` and `sampling_average` are the wrapped sampler's (the solver reads and checkpoints them)."""

    def __init__(self, inner: RegretSampler, seed: int, tau: float, beta: float, sharding: dict):
        self.inner, self.seed, self.tau, self.beta, self.sharding = inner, seed, tau, beta, sharding
        self.buffers, self.sampling_average = inner.buffers, inner.sampling_average
        self.sampler, self.epsilon = inner.sampler, inner.epsilon

    def sample(self, policy: Policy | np.ndarray, traverser: int, samples: int) -> RegretEstimate:
        game = self.inner.game
        sigma = np.array(policy.probs if isinstance(policy, Policy) else policy, np.float64)
        counters = self.buffers.state.counters
        n = self.sharding["shards"]
        done = int(counters[C_TRAVERSAL])
        tasks = [(int(traverser), size, shard_seed(self.seed, traverser, done, n, k))
                 for k, size in enumerate(split(int(samples), n))]
        common = (game, self.sampler, self.epsilon, self.tau, self.beta, sigma, self.sampling_average.copy())
        results = run_shards(sample_shard, common, tasks, workers=self.sharding["workers"],
                             ray_address=self.sharding["ray_address"])
        sums, squares, visits, increments, nodes = results[0]
        for result in results[1:]:  # in shard order
            sums, squares, visits = sums + result[0], squares + result[1], visits + result[2]
            increments, nodes = increments + result[3], nodes + result[4]
        counters[C_TRAVERSAL] += samples
        counters[C_NODES] += nodes
        mean = sums / samples
        variance = np.maximum(squares / samples - mean ** 2, 0.0)
        return RegretEstimate(mean=mean, stderr=np.sqrt(variance / samples), average_increment=increments / samples,
                              visits=visits, samples=samples, nodes_touched=nodes)


def walk_shard(spec: dict, task: tuple) -> dict:
    """One shard of a lean batch on the rules: ``task = (traversals, seed)`` (`lean_rules.traverse_batch`)."""
    from .lean_rules import traverse_batch
    traversals, seed = task
    return traverse_batch(spec, traversals, seed)


class ShardedWalks:
    """Stands where a lean sampled RCFR(+) on the rules walks a batch (`LeanSampledRCFR.shards`): `run` splits the
    batch into shards seeded as `ShardedSampler`'s and absorbs their results in shard order. The solver's own
    stream is not drawn from; its traversal and node counters advance by the batch."""

    def __init__(self, seed: int, sharding: dict):
        self.seed, self.sharding = seed, sharding

    def run(self, solver, player: int, weight: float) -> None:
        n = self.sharding["shards"]
        done = int(solver.buffers.counters[C_TRAVERSAL])
        tasks = [(size, shard_seed(self.seed, player, done, n, k)) for k, size in enumerate(split(solver.traversals, n))]
        batches = run_shards(walk_shard, solver.walk_spec(player, weight), tasks, workers=self.sharding["workers"],
                             ray_address=self.sharding["ray_address"])
        solver.absorb(player, batches, seed=shard_seed(self.seed, player, done, n, n))  # a stream no shard draws


def _lean_refusal(solver: LeanSampledRCFR) -> str | None:
    """Why this lean form cannot be sharded (naming the option), or None."""
    from .lean_rules import RulesLeanSampledRCFR
    if not isinstance(solver, RulesLeanSampledRCFR):
        return ("features_on_demand=True on a compiled game: its traversals write into the compiled buffers, with no "
                "seam to shard them through; walk the game by its rules (load_game(..., compiled=False)) or use "
                "features_on_demand=False")
    if solver.profile == "model" and solver.numbered:
        return ("profile='model' is sharded in its bounded form only, where nothing is numbered per set (the walks' "
                "rows as targets, targets='rows' or 'bootstrap', with average='mixture' and set_index not True); "
                f"this one numbers its sets (targets={solver.targets!r}, average={solver.options.average!r}); "
                "use profile='visited' for those")
    return None


def distribute(solver: DenseSampledRCFR, workers: int = 1, shards: int | None = None,
               ray_address: str | None = None) -> DenseSampledRCFR:
    """Shard each of `solver`'s traversal batches into `shards` tasks (default `workers`) run on `workers` Ray
    workers (1: here, without Ray). One shard puts the solver's own sampler (or walks) back: the one-process run.
    The numbers depend on the seed and shard count only. Refused, naming the field, before any work: a solver
    that is not sampled RCFR(+)'s dense form or its lean form on the rules with the visited profile (see
    `_lean_refusal`), and more shards than traversals. Returns `solver`."""
    lean = isinstance(solver, LeanSampledRCFR)
    why = _lean_refusal(solver) if lean else None
    if not (lean or isinstance(solver, DenseSampledRCFR)) or why:
        why = why or "only sampled RCFR(+) is sharded here: its dense form, or its lean form on the rules"
        raise ValueError(f"distribute: {type(solver).__name__} cannot be distributed ({why}); the Deep CFR "
                         "family has its own solver.distribute")
    sharding = check_sharding(workers, shards, ray_address)
    if sharding["shards"] > solver.traversals:
        raise ValueError(f"shards={sharding['shards']} is more than traversals={solver.traversals}: every shard "
                         f"needs at least one; use at most {solver.traversals} shards")
    if lean:  # one shard: the solver's own walks
        solver.shards = None if sharding["shards"] == 1 else ShardedWalks(solver.options.seed, sharding)
        return solver
    inner = solver.sampler.inner if isinstance(solver.sampler, ShardedSampler) else solver.sampler
    if sharding["shards"] == 1:
        solver.sampler = inner
    else:
        tau, beta = solver.options.probing
        solver.sampler = ShardedSampler(inner, solver.options.seed, tau, beta, sharding)
    return solver
