"""Lean sampled RCFR(+) on a game walked by its rules, its batches sharded (`rcfr.solvers.distributed_sampled`, the
seam `walk_spec` / `traverse_batch` / `absorb` of `rcfr.solvers.lean_rules`): one shard is the one-process run bit
for bit, a fixed shard count repeats bit for bit here or on Ray, checkpoints resume on any shard count, what
cannot be sharded is refused naming the option, and every shard's batch counts; the same for the bounded form
(compiled models in the walks, their rows as targets, nothing numbered). docs/distributed.md."""

from __future__ import annotations

import numpy as np
import pytest

import rcfr
from rcfr.solvers import SampledRCFR, SampledRCFRPlus, distributed_sampled
from rcfr.solvers.distributed_sampled import ShardedWalks, distribute

TREES = {"name": "best_first", "max_leaves": 16}
LEAN = {"features_on_demand": True, "features": "goofspiel", "traversals": 8, "seed": 3, "regressor": TREES}


@pytest.fixture(scope="module")
def walked():
    return rcfr.load_game("goofspiel", cards=4, compiled=False)


#: the bounded form: the models in the walks, the walks' rows as targets (RCFR+: a window of bootstrapped rows; RCFR:
#: a uniform reservoir of sampled regrets), the mixture of snapshots as the average: no set numbered
BOUNDED = {"profile": "model", "average": "mixture", "capacity": 2000, "refit_every": 2}
BOUNDED_CASES = [(SampledRCFRPlus, {**BOUNDED, "targets": "bootstrap"}),
                 (SampledRCFR, {**BOUNDED, "targets": "rows", "capacity": 700})]


def _lean(game, iterations, options=None, solver=SampledRCFRPlus, **sharding):
    solver = solver(game, **{**LEAN, **(options or {})})
    if sharding:
        distribute(solver, **sharding)
    return solver.run(iterations)


def _same(a, b) -> bool:
    if getattr(a, "kept", None) and not all(np.array_equal(getattr(x.kept, f), getattr(y.kept, f))
                                            for x, y in zip(a.kept, b.kept) for f in ("rows", "value", "t", "seen")):
        return False
    pa, pb = a.average_policy(), b.average_policy()
    ca, cb = a.current_policy(), b.current_policy()
    return (np.array_equal(pa.codes, pb.codes) and np.array_equal(pa.probs, pb.probs)
            and np.array_equal(ca.codes, cb.codes) and np.array_equal(ca.probs, cb.probs)
            and a.nodes_touched == b.nodes_touched)


@pytest.mark.slow  # the rules path's sampling driver (a minute to compile cold)
def test_one_shard_is_the_one_process_run(walked, monkeypatch):
    calls = []
    run = distributed_sampled.run_shards
    monkeypatch.setattr(distributed_sampled, "run_shards", lambda *a, **k: calls.append(len(a[2])) or run(*a, **k))
    plain = _lean(walked, 3)
    assert _same(_lean(walked, 3, shards=1), plain) and calls == []  # the solver's own walks, no shard
    back = distribute(distribute(SampledRCFRPlus(walked, **LEAN), shards=3), shards=1)
    assert back.shards is None and _same(back.run(3), plain)
    sharded = _lean(walked, 3, shards=3)
    assert isinstance(sharded.shards, ShardedWalks) and calls == [3] * 6  # every batch: 3 iterations x 2 players
    assert sharded.buffers.counters[0] == plain.buffers.counters[0] == 3 * 2 * LEAN["traversals"]


@pytest.mark.slow
@pytest.mark.parametrize("solver, options", [(SampledRCFRPlus, {}), (SampledRCFRPlus, {"sampler": "outcome"}),
                                             (SampledRCFR, {"targets": "reservoir", "capacity": 200})])
def test_a_shard_count_repeats_bit_for_bit(walked, solver, options):
    sharded = _lean(walked, 3, options, solver, shards=2)
    assert _same(sharded, _lean(walked, 3, options, solver, shards=2))
    assert not _same(sharded, _lean(walked, 3, options, solver, shards=3))
    assert not _same(sharded, _lean(walked, 3, options, solver))
    assert sharded.buffers.num_sets > 0 and sharded.fits[0]["count"][1] == 3  # it numbered sets and fit


@pytest.mark.slow
@pytest.mark.parametrize("solver, options", BOUNDED_CASES)
def test_the_bounded_form_shards_its_rows(walked, solver, options):
    plain = _lean(walked, 4, options, solver)
    assert _same(_lean(walked, 4, options, solver, shards=1), plain)
    sharded = _lean(walked, 4, options, solver, shards=2)
    assert _same(sharded, _lean(walked, 4, options, solver, shards=2))
    assert not _same(sharded, _lean(walked, 4, options, solver, shards=3)) and not _same(sharded, plain)
    assert not sharded.numbered and sharded.buffers.num_sets <= 1  # nothing numbered (the sink set at most)
    assert sharded.buffers.counters[0] == plain.buffers.counters[0] == 4 * 2 * LEAN["traversals"]
    assert [int(k.kept.seen[0]) for k in sharded.kept] == [int(k.kept.seen[0]) for k in plain.kept]
    assert sharded.fits[0]["count"][1] == 4 and len(sharded.snapshots[0].kept) > 0  # it fit and kept snapshots


@pytest.mark.slow
@pytest.mark.parametrize("options", [{}, BOUNDED_CASES[0][1]], ids=["visited", "bounded"])
def test_checkpoint_resumes_on_any_shard_count(walked, options):
    straight = _lean(walked, 4, options, shards=2)
    half = _lean(walked, 2, options, shards=2)
    for shards, equal in ((2, True), (3, False), (1, False)):
        other = distribute(SampledRCFRPlus(walked, **LEAN, **options), shards=shards)
        other.load_state_dict(half.state_dict())
        other.run(2)
        assert _same(other, straight) == equal
        assert other.iteration == 4 and other.nodes_touched > half.nodes_touched
        assert other.buffers.num_sets >= half.buffers.num_sets


@pytest.mark.slow
def test_refusals_name_the_option(walked):
    with pytest.raises(ValueError, match="profile='model' is sharded in its bounded form only.*targets='stored'"):
        distribute(SampledRCFRPlus(walked, **LEAN, profile="model"), shards=2)
    compiled = rcfr.load_game("goofspiel", cards=4)
    with pytest.raises(ValueError, match="features_on_demand=True on a compiled game"):
        distribute(SampledRCFRPlus(compiled, **LEAN), shards=2)
    solver = SampledRCFRPlus(walked, **LEAN)
    with pytest.raises(ValueError, match=r"shards=9 is more than traversals=8"):
        distribute(solver, shards=9)
    with pytest.raises(ValueError, match="workers must be an integer >= 1"):
        distribute(solver, workers=0)
    assert solver.shards is None  # nothing was set


@pytest.mark.slow
def test_every_shard_counts(walked, monkeypatch):
    """Negative control: dropping one shard's batch (or reordering them) changes the run."""
    sharded = _lean(walked, 3, shards=3)
    run = distributed_sampled.run_shards
    for cut in (lambda batches: batches[:-1], lambda batches: batches[::-1]):
        monkeypatch.setattr(distributed_sampled, "run_shards", lambda *a, cut=cut, **k: cut(run(*a, **k)))
        assert not _same(_lean(walked, 3, shards=3), sharded)
    monkeypatch.setattr(distributed_sampled, "run_shards", run)
    assert _same(_lean(walked, 3, shards=3), sharded)


@pytest.mark.slow
@pytest.mark.parametrize("options", [{}, BOUNDED_CASES[0][1]], ids=["visited", "bounded"])
def test_ray_workers_equal_in_process_shards(local_ray, walked, options):
    here = _lean(walked, 3, options, shards=2)
    assert _same(_lean(walked, 3, options, workers=2), here)
