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
