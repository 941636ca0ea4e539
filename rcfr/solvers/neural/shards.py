"""One iteration's traversals and value rollouts split into shards, each with its own random stream.

`NeuralCFR.distribute(workers, shards, ray_address)` makes every batch of `traversals` (and of
`value_traversals`) run as `shards` tasks through `rcfr.distributed.run_shards`, here or on Ray workers.
Shard k of a batch draws from a stream seeded by (run seed, phase, iteration, player, shard count, k), so
the batch depends on the run's seed and shard count only, never on which process ran it or when it
finished; the learner adds the shards' sums in shard order and offers the merged batch to the memories
as one batch, exactly as a one-process batch is offered (per visited sequence its visits, each with the
batch's per-visit mean). A shard needs the current profile over sequences (and the value table for
DREAM's baselines and ESCHER's regrets), not the regressors: the family predicts every sequence each
iteration, so the tabulated profile is the models' whole output, and a worker needs neither torch nor the
feature matrix. Nothing a shard draws is kept between iterations, so a checkpoint (memories, profile,
values, node counters) resumes on any shard count.
"""

from __future__ import annotations

import numpy as np

from ... import distributed
from ...sampling import RegretSampler
from .walks import Walker

#: phases of an update whose batches are sharded (part of each shard's stream key)
TRAVERSALS, ROLLOUTS = 0, 1


def split(total: int, shards: int) -> list[int]:
    """`total` traversals in `shards` near-equal contiguous parts (the first ones never larger)."""
    return [total * (k + 1) // shards - total * k // shards for k in range(shards)]


def shard_seed(seed: int, phase: int, iteration: int, player: int, shards: int, k: int) -> int:
    """A non-negative seed for one shard's stream, distinct per run seed, phase, iteration, player, count, k."""
    key = [int(seed), 7919, int(phase), int(iteration), int(player), int(shards), int(k)]
    return int(np.random.SeedSequence(key).generate_state(1, np.uint64)[0] >> np.uint64(1))


def traversal_shard(common: tuple, task: tuple) -> tuple:
    """A shard of `traversals` for one traverser: (regret sums, visits per global sequence; the
    average-strategy mass per sequence (sampler walks) or visits per opponent information set (ESCHER's
    fixed walk); histories touched)."""
    game, kind, epsilon, sigma, values = common
    traverser, samples, seed = task
    if kind == "fixed":
        walker = Walker(game, seed)
        sums, _, visits, opponent = walker.fixed(sigma, values, traverser, samples)
        return sums, visits, opponent, walker.nodes_touched
    sampler = RegretSampler(game, kind, seed=seed, epsilon=epsilon)
    if kind == "baseline":
        sampler.buffers.baseline[:] = values
    batch = sampler.sample(sigma, traverser, samples)
    return batch.mean * batch.samples, batch.visits, batch.average_increment * batch.samples, batch.nodes_touched


def rollout_shard(common: tuple, task: tuple) -> tuple:
    """A shard of value rollouts: (summed targets, visit counts per history; histories touched)."""
    game, sigma, epsilon, baseline = common
    samples, seed = task
    walker = Walker(game, seed)
    sums, counts = walker.rollouts(sigma, samples, epsilon, baseline=baseline)
    return sums, counts, walker.nodes_touched


def merge(results: list[tuple]) -> tuple:
    """Each field of the shards' results summed in shard order (arrays and node counts alike)."""
    merged = list(results[0])
    for result in results[1:]:
        for i, field in enumerate(result):
            merged[i] = merged[i] + field
    return tuple(merged)


# ---- the learner's side: what `NeuralCFR` calls when it is distributed ------------------------------
def check(solver, workers, shards, ray_address) -> dict:
    """The sharding options, checked before any work: every batch needs at least one walk per shard."""
    sharding = distributed.check_sharding(workers, shards, ray_address)
    for field, batch in (("traversals", solver.traversals), ("value_traversals", solver.value_traversals)):
        if 0 < batch < sharding["shards"]:
            raise ValueError(f"shards={sharding['shards']} is more than {field}={batch}: every shard needs "
                             f"at least one; use at most {batch} shards")
    return None if sharding["shards"] == 1 else sharding  # one shard: the one-process walks


def _run(solver, function, common, phase: int, p: int, t: int, batch: int, traverser: bool) -> tuple:
    """`batch` walks in the solver's shards, their results summed in shard order; their nodes counted."""
    n = solver.sharding["shards"]
    tasks = [((p,) if traverser else ()) + (size, shard_seed(solver.seed, phase, t, p, n, k))
             for k, size in enumerate(split(batch, n))]
    merged = merge(distributed.run_shards(function, common, tasks, workers=solver.sharding["workers"],
                                          ray_address=solver.sharding["ray_address"]))
    solver.walker.counters[1] += merged[-1]  # part of the checkpoint, as the one-process walks' counts
    return merged[:-1]


def traverse(solver, sigma: np.ndarray, p: int, t: int):
    """`NeuralCFR._traverse`'s result from the merged shards: regret sums over visits of the whole batch."""
    kind, game = solver.sampler_name, solver.game
    values = np.ascontiguousarray(solver.values, np.float64) if kind in ("baseline", "fixed") else None
    common = (game, kind, solver.sampler.epsilon if solver.sampler is not None else 0.0,
              np.ascontiguousarray(sigma, np.float64), values)  # values: the walks that read them
    sums, visits, extra = _run(solver, traversal_shard, common, TRAVERSALS, p, t, solver.traversals, traverser=True)
    regret = np.divide(sums, visits, out=np.zeros_like(sums), where=visits > 0)
    opponent = None
    if kind == "fixed":
        opponent = extra
    elif solver.strategy_memory is not None:  # as `_traverse`: the batch's average-strategy mass per set
        opponent = np.rint(np.bincount(game.sequence_infoset, extra, game.num_infosets)).astype(np.int64)
    return visits, regret, opponent


def rollouts(solver, sigma: np.ndarray, p: int, t: int, baseline) -> tuple:
    """`Walker.rollouts`' sums and counts from the merged shards."""
    baseline = np.zeros(solver.game.num_histories) if baseline is None else np.array(baseline, np.float64)
    common = (solver.game, np.ascontiguousarray(sigma, np.float64), float(solver.value_exploration), baseline)
    return _run(solver, rollout_shard, common, ROLLOUTS, p, t, solver.value_traversals, traverser=False)
