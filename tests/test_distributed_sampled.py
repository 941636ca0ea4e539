"""Sharded sampled solvers: the Deep CFR family (`NeuralCFR.distribute`) and sampled RCFR(+)'s dense form
(`rcfr.solvers.distributed_sampled.distribute`). A fixed seed and shard count repeat bit for bit, here or on
Ray; one shard is the one-process run; checkpoints resume on any shard count; bad settings are refused,
naming the field, before any work. docs/distributed.md, "Sampled solvers"."""

from __future__ import annotations

import sys

import numpy as np
import pytest

import rcfr
from rcfr.solvers.distributed_sampled import ShardedSampler, distribute
from rcfr.solvers.neural import shards as neural_shards

TREES = {"name": "best_first", "max_leaves": 16}
NEURAL = [("sd-cfr", {}), ("sd-cfr", {"sampler": "outcome"}), ("deep-cfr", {}), ("dream", {"value_traversals": 12}),
          ("escher", {"value_traversals": 12}), ("escher", {"value_traversals": 12, "average": "network"})]


@pytest.fixture(scope="module")
def kuhn():
    return rcfr.load_game("kuhn")


@pytest.fixture(scope="module")
def goofspiel():
    return rcfr.load_game("goofspiel", cards=4)


def _neural(game, name, options, iterations, seed=3, **sharding):
    solver = rcfr.make_solver(name, game, regressor=TREES, traversals=12, seed=seed, **options)
    if sharding:
        solver.distribute(**sharding)
    return solver.run(iterations)


def _rcfr(game, iterations, seed=1, options=None, **sharding):
    solver = rcfr.make_solver("sampled-rcfr+", game, traversals=12, seed=seed, **(options or {}))
    if sharding:
        distribute(solver, **sharding)
    return solver.run(iterations)


def _same(a, b) -> bool:
    return (np.array_equal(a.average_policy().probs, b.average_policy().probs)
            and np.array_equal(a.current_policy().probs, b.current_policy().probs)
            and a.nodes_touched == b.nodes_touched)


# ---- the Deep CFR family --------------------------------------------------------------------------------
@pytest.mark.parametrize("name,options", NEURAL)
def test_neural_shards_repeat_bit_for_bit_and_one_shard_is_the_one_process_run(kuhn, name, options, monkeypatch):
    calls = []
    run = rcfr.distributed.run_shards
    monkeypatch.setattr(rcfr.distributed, "run_shards", lambda *a, **k: calls.append(len(a[2])) or run(*a, **k))
    sharded = _neural(kuhn, name, options, 3, shards=3)
    batches = 2 * (2 if "value_traversals" in options else 1)  # per iteration: players x (rollouts, traversals)
    assert calls == [3] * 3 * batches  # every batch went through the shards
    assert _same(sharded, _neural(kuhn, name, options, 3, shards=3))
    assert not _same(sharded, _neural(kuhn, name, options, 3, shards=2))  # the shard count is part of the run
    assert _same(_neural(kuhn, name, options, 3, workers=1, shards=1), _neural(kuhn, name, options, 3))
    assert len(calls) == 3 * 3 * batches  # three sharded runs; one shard never calls run_shards
    assert sharded.nodes_touched > 0 and rcfr.exploitability(kuhn, sharded.average_policy()) < 0.5


def test_neural_shards_merge_to_the_sum_of_the_shards_run_alone(kuhn):
    """The merge is each field summed over the shards as each gives it alone; the split covers the batch."""
    sigma = rcfr.Policy.uniform(kuhn).probs
    common = (kuhn, "external", 0.6, sigma, np.zeros(kuhn.num_histories))
    a, b = (neural_shards.traversal_shard(common, (0, 6, seed)) for seed in (11, 12))
    merged = neural_shards.merge([a, b])
    assert np.array_equal(merged[1], a[1] + b[1]) and merged[3] == a[3] + b[3]
    assert neural_shards.split(12, 5) == [2, 2, 3, 2, 3] and sum(neural_shards.split(7, 3)) == 7
    assert neural_shards.shard_seed(0, 0, 1, 0, 2, 0) != neural_shards.shard_seed(0, 0, 1, 0, 2, 1)


@pytest.mark.parametrize("name,options", [("sd-cfr", {}), ("dream", {"value_traversals": 12}),
                                          ("deep-cfr", {})])
def test_neural_checkpoint_resumes_on_any_shard_count(kuhn, name, options):
    straight = _neural(kuhn, name, options, 4, shards=2)
    half = _neural(kuhn, name, options, 2, shards=2)
    same = rcfr.make_solver(name, kuhn, regressor=TREES, traversals=12, seed=3, **options).distribute(shards=2)
    same.load_state_dict(half.state_dict())
    assert _same(same.run(2), straight)  # the same shard count: bit for bit
    for shards in (1, 3):  # another count: a valid continuation of the same state
        other = rcfr.make_solver(name, kuhn, regressor=TREES, traversals=12, seed=3, **options)
        other.distribute(shards=shards).load_state_dict(half.state_dict())
        other.run(2)
        assert other.iteration == 4 and other.nodes_touched > half.nodes_touched
        assert other.memory_size() > half.memory_size()
        probs = other.average_policy().probs
        assert np.isfinite(probs).all() and not np.array_equal(probs, straight.average_policy().probs)


@pytest.mark.parametrize("sharding,match", [
    ({"workers": 0}, "workers must be an integer >= 1"),
    ({"workers": 1.5}, "workers must be an integer"),
    ({"shards": 0}, "shards must be an integer >= 1"),
    ({"shards": 13}, r"shards=13 is more than traversals=12"),
    ({"workers": 2, "ray_address": "nowhere"}, "ray_address must be"),
])
def test_bad_neural_sharding_is_refused_naming_the_field(kuhn, sharding, match):
    solver = rcfr.make_solver("sd-cfr", kuhn, regressor=TREES, traversals=12)
    with pytest.raises(ValueError, match=match):
        solver.distribute(**sharding)
    assert solver.sharding is None  # nothing was set
    dream = rcfr.make_solver("dream", kuhn, regressor=TREES, traversals=12, value_traversals=4)
    with pytest.raises(ValueError, match=r"shards=5 is more than value_traversals=4"):
        dream.distribute(shards=5)


# ---- sampled RCFR+, dense form ------------------------------------------------------------------------
@pytest.mark.parametrize("options", [{}, {"sampler": "outcome"}, {"sampler": "probing"}])
def test_sampled_rcfr_shards_repeat_bit_for_bit(goofspiel, options):
    sharded = _rcfr(goofspiel, 3, options=options, shards=3)
    assert isinstance(sharded.sampler, ShardedSampler)
    assert _same(sharded, _rcfr(goofspiel, 3, options=options, shards=3))
    assert not _same(sharded, _rcfr(goofspiel, 3, options=options, shards=2))
    assert _same(_rcfr(goofspiel, 3, options=options, shards=1), _rcfr(goofspiel, 3, options=options))
    back = distribute(distribute(rcfr.make_solver("sampled-rcfr+", goofspiel, traversals=12, seed=1, **options),
                                 shards=3), shards=1)  # one shard puts the solver's own sampler back
    assert _same(back.run(3), _rcfr(goofspiel, 3, options=options))


def test_sampled_rcfr_checkpoint_resumes_on_any_shard_count(goofspiel):
    straight = _rcfr(goofspiel, 4, shards=2)
    half = _rcfr(goofspiel, 2, shards=2)
    for shards, equal in ((2, True), (3, False), (1, False)):
        other = distribute(rcfr.make_solver("sampled-rcfr+", goofspiel, traversals=12, seed=1), shards=shards)
        other.load_state_dict(half.state_dict())
        other.run(2)
        assert _same(other, straight) == equal
        assert other.iteration == 4 and other.nodes_touched > half.nodes_touched


def test_sampled_rcfr_refusals_name_the_field(goofspiel, kuhn):
    with pytest.raises(ValueError, match="features_on_demand=True"):
        distribute(rcfr.make_solver("sampled-rcfr+", goofspiel, features_on_demand=True, traversals=4), shards=2)
    with pytest.raises(ValueError, match="only sampled RCFR"):
        distribute(rcfr.make_solver("cfr", goofspiel), shards=2)
    solver = rcfr.make_solver("sampled-rcfr+", goofspiel, traversals=4)
    with pytest.raises(ValueError, match=r"shards=5 is more than traversals=4"):
        distribute(solver, shards=5)
    with pytest.raises(ValueError, match="workers must be an integer >= 1"):
        distribute(solver, workers=0)
    assert not isinstance(solver.sampler, ShardedSampler)


def test_shards_in_one_process_never_import_ray(kuhn, goofspiel, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` raises ImportError
    _neural(kuhn, "dream", {"value_traversals": 12}, 1, workers=1, shards=2)
    _rcfr(goofspiel, 1, workers=1, shards=2)
    with pytest.raises(ImportError, match=r"pip install 'rcfr\[ray\]'"):
        _neural(kuhn, "sd-cfr", {}, 1, workers=2)


# ---- on a local Ray (slow) -------------------------------------------------------------------------------
@pytest.mark.slow
def test_ray_workers_equal_in_process_shards(local_ray, kuhn, goofspiel):
    """Two Ray workers and two shards run here give the same run bit for bit (the numbers depend on the shard
    count only): SD-CFR and sampled RCFR+. (DREAM's and ESCHER's shards cross the same `run_shards`; their
    in-process shards are checked above.)"""
    name, options = NEURAL[0]
    here = _neural(kuhn, name, options, 2, shards=2)
    assert _same(_neural(kuhn, name, options, 2, workers=2), here)
    here = _rcfr(goofspiel, 3, shards=2)
    assert _same(_rcfr(goofspiel, 3, workers=2), here)


# ---- the kit: run.shards -------------------------------------------------------------------------------
def _kit(tmp_path, name, solver, options, **run):
    from rcfr.experiments.runner import run_experiment
    learned = solver != "cfr"
    cfg = {"game": {"name": "kuhn", "params": {}}, "solver": {"name": solver, "options": options},
           "regressor": {"name": "best_first", "params": {"max_leaves": 16}} if learned else {"name": "none"},
           "features": {"name": "poker" if learned else "none"},
           "run": {"iterations": 3, "eval_points": 2, "checkpoint_seconds": 1e9, "seed": 1, **run}}
    run_experiment(cfg, tmp_path / name)
    import csv
    with (tmp_path / name / "metrics.csv").open() as f:
        return [{k: v for k, v in row.items() if "seconds" not in k and "rss" not in k} for row in csv.DictReader(f)]


@pytest.mark.parametrize("solver, options", [("sampled-rcfr+", {"traversals": 12}), ("sd-cfr", {"traversals": 12})])
def test_the_kit_shards_a_sampled_solver_with_run_shards(tmp_path, kuhn, solver, options):
    """``run.shards=3`` is the library's ``distribute(shards=3)`` (here, workers=1): the same exploitability row by
    row; a run of one shard differs from it (the shards' streams), and a solver with no batches is refused."""
    from rcfr.experiments.schema import ConfigError
    sharded = _kit(tmp_path, "three", solver, options, shards=3)
    plain = _kit(tmp_path, "one", solver, options)
    from rcfr.features import make_features
    library = rcfr.make_solver(solver, kuhn, regressor=TREES, seed=1, features=make_features(kuhn, "poker"), **options)
    library = (library.distribute(shards=3) if solver == "sd-cfr" else distribute(library, shards=3)).run(3)
    assert float(sharded[-1]["exploitability"]) == pytest.approx(rcfr.exploitability(kuhn, library.average_policy()),
                                                                 abs=1e-15)
    assert sharded != plain and len(sharded) == len(plain) == 2
    with pytest.raises(ConfigError, match=r"run.shards=2: cfr has no traversal batches to shard"):
        _kit(tmp_path, "cfr", "cfr", {}, shards=2)
    with pytest.raises(ConfigError, match=r"run.shards=13: shards=13 is more than traversals=12"):
        _kit(tmp_path, "many", solver, options, shards=13)
    with pytest.raises(ConfigError, match=r"run.shards must be an integer in \[1, "):
        _kit(tmp_path, "none", solver, options, shards=0)
