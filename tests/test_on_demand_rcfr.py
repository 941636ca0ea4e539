"""Sampled RCFR(+) with features on demand: equal to the dense path, exact resume, bounded reservoir and
stored-target fits, probing as a data source, clear errors."""

import numpy as np
import pytest
from scipy import stats
from sklearn.base import BaseEstimator, RegressorMixin

import rcfr
from rcfr.features.encoders import encoded_features, make_encoder
from rcfr.regressors import make_regressor
from rcfr.sampling.reservoir import Reservoir
from rcfr.solvers import make_solver
from rcfr.solvers.targets import StoredSums

OPTIONS = {"features": "goofspiel", "targets": "reservoir", "capacity": 300, "traversals": 2, "refit_every": 2,
           "seed": 5}


@pytest.fixture(scope="module")
def goofspiel4():
    return rcfr.load_game("goofspiel", cards=4, points_order="random", seed=3)


def _lean(game, **options):
    return make_solver("sampled-rcfr", game, features_on_demand=True, **{**OPTIONS, **options})


@pytest.mark.parametrize("sampler", ["external", "outcome"])
def test_equals_the_dense_path_with_the_same_encoder(goofspiel4, sampler):
    """With the exact table (zero-weight rows change nothing) both paths are one algorithm: same samples,
    same reservoirs, same current policy; the average differs by rounding (weight folded in earlier)."""
    dense = make_solver("sampled-rcfr", goofspiel4, sampler=sampler, regressor="table", **OPTIONS).run(15)
    lean = _lean(goofspiel4, sampler=sampler, regressor="table").run(15)
    for p in (0, 1):
        a, b = dense.store.blocks[p].buffer, lean.reservoirs[p]
        assert a.seen == b.seen > 0
        for field in ("sequence", "regret", "iteration", "fill"):
            assert np.array_equal(getattr(a, field), getattr(b, field))
    assert np.array_equal(dense.current_policy().probs, lean.current_policy().probs)
    assert not np.allclose(lean.current_policy().probs, rcfr.Policy.uniform(goofspiel4).probs)  # it learned
    assert np.allclose(dense.average_policy().probs, lean.average_policy().probs, rtol=0, atol=1e-12)
    assert dense.nodes_touched == lean.nodes_touched


@pytest.mark.parametrize("name,sampler", [("sampled-rcfr+", "external"), ("sampled-rcfr+", "outcome"),
                                          ("sampled-rcfr", "external")])
def test_stored_targets_equal_the_dense_path(goofspiel4, name, sampler):
    """Stored (Q-)regret sums, capacity above the visited sequences, exact table: the lean path trains on the
    sequences with a target, the dense one on all (the others have target 0, which the table predicts for
    unseen rows too), so the current policies are identical."""
    options = {**OPTIONS, "targets": "stored", "sampler": sampler, "regressor": "table"}
    dense = make_solver(name, goofspiel4, **options).run(15)
    lean = make_solver(name, goofspiel4, features_on_demand=True, **options).run(15)
    for p in (0, 1):
        sums, block = lean.stored[p], dense.store.blocks[p]
        assert 0 < np.count_nonzero(sums.written) < len(sums.written) <= OPTIONS["capacity"]
        assert np.array_equal(sums.total, block.total)
        if name == "sampled-rcfr+":
            assert sums.total.min() >= 0.0
    assert np.array_equal(dense.current_policy().probs, lean.current_policy().probs)
    assert not np.allclose(lean.current_policy().probs, rcfr.Policy.uniform(goofspiel4).probs)
    assert np.allclose(dense.average_policy().probs, lean.average_policy().probs, rtol=0, atol=1e-12)


def _sums(written, capacity=4, selection="uniform", seed=0):
    sums = StoredSums(len(written), "rm+", capacity, selection, seed)
    sums.written[:], sums.total[:] = written, np.arange(len(written), dtype=float)
    return sums


def test_a_bounded_fit_chooses_among_the_sequences_with_a_target():
    written = np.array([0, 3, 1, 0, 5, 5, 2, 5, 0, 4])  # 7 have a target
    everything = _sums(written, capacity=7).targets(10)
    assert np.array_equal(everything[0], np.flatnonzero(written)) and np.allclose(everything[1], everything[0] / 10)
    recent = _sums(written, selection="recent").targets(10)[0]  # the three written at 5, and the one at 4
    assert np.array_equal(recent, [4, 5, 7, 9])
    tie = {tuple(_sums(written, capacity=2, selection="recent").targets(t)[0]) for t in range(1, 40)}
    assert tie == {(4, 5), (4, 7), (5, 7)}  # ties at the cut are drawn
    a, b = _sums(written).targets(10)[0], _sums(written).targets(10)[0]
    assert np.array_equal(a, b) and len(a) == 4 and np.all(written[a] > 0)  # seeded by (seed, t)
    add = _sums(np.zeros(3, np.int64))
    add.add(np.array([0, 2]), np.array([-5.0, 1.0]), 7)
    assert np.array_equal(add.total, [0.0, 1.0, 3.0]) and np.array_equal(add.written, [7, 0, 7])  # Q-sums clip


def test_the_uniform_choice_is_uniform_and_the_test_rejects_recency():
    """Chi-square on how often each sequence with a target is chosen, over many fits: uniform inclusion
    probability capacity / (sequences with a target); 'recent' (a deliberately non-uniform choice here, as
    the write iterations differ) must be rejected by the same test."""
    written = np.array([0, 1, 2, 0, 3, 4, 5, 6, 0, 7, 8, 9])
    have = np.flatnonzero(written)

    def pvalue(selection):
        counts = np.zeros(len(written))
        for t in range(1, 2001):
            counts[_sums(written, 3, selection, seed=1).targets(t)[0]] += 1
        return stats.chisquare(counts[have], np.full(len(have), 2000 * 3 / len(have))).pvalue

    assert pvalue("uniform") > 1e-3
    assert pvalue("recent") < 1e-6


@pytest.mark.parametrize("regressor,selection", [("table", "uniform"), ({"name": "best_first", "max_leaves": 8},
                                                                        "recent")])
def test_stored_resume_is_exact_with_a_bounded_fit(goofspiel4, regressor, selection):
    options = {"targets": "stored", "regressor": regressor, "refit_every": 3, "capacity": 40, "selection": selection}
    first = make_solver("sampled-rcfr+", goofspiel4, features_on_demand=True, **{**OPTIONS, **options}).run(7)
    assert all(int(f["count"][0]) == 40 for f in first.fits)  # more than 40 have a target
    state = first.state_dict()
    first.run(6)
    second = make_solver("sampled-rcfr+", goofspiel4, features_on_demand=True, **{**OPTIONS, **options})
    second.load_state_dict(state)
    second.run(6)
    assert np.array_equal(first.current_policy().probs, second.current_policy().probs)
    assert np.array_equal(first.average_policy().probs, second.average_policy().probs)
    for a, b in zip(first.stored, second.stored):
        assert np.array_equal(a.total, b.total) and np.array_equal(a.written, b.written)


@pytest.mark.parametrize("lean", [True, False])
def test_probing_feeds_sampled_rcfr_and_resumes(goofspiel4, lean):
    """Probing as the data source (its sampled regrets are unbiased at a fixed profile:
    tests/test_mccfr_samplers.py), on both paths: it fits, probes (fewer nodes than external sampling
    with the same seed) and resumes bit for bit."""
    options = {**OPTIONS, "targets": "stored", "regressor": "table", "features_on_demand": lean}
    external = make_solver("sampled-rcfr+", goofspiel4, **options).run(8)
    probing = make_solver("sampled-rcfr+", goofspiel4, sampler="probing", epsilon=0.3, **options).run(4)
    state = probing.state_dict()
    probing.run(4)
    again = make_solver("sampled-rcfr+", goofspiel4, sampler="probing", epsilon=0.3, **options)
    again.load_state_dict(state)
    again.run(4)
    assert np.array_equal(probing.current_policy().probs, again.current_policy().probs)
    assert np.array_equal(probing.average_policy().probs, again.average_policy().probs)
    assert 0 < probing.nodes_touched < external.nodes_touched
    assert not np.allclose(probing.current_policy().probs, rcfr.Policy.uniform(goofspiel4).probs)


def test_best_first_strategy_matches_a_brute_force_reference(goofspiel4):
    """The lean path fits the buffer's distinct sequences only; recompute its strategy from the reservoir
    by plain loops on the dense matrix of the same encoder."""
    leaves = {"name": "best_first", "max_leaves": 12}
    solver = _lean(goofspiel4, sampler="outcome", regressor=leaves, refit_every=3).run(9)
    matrix = encoded_features(goofspiel4, make_encoder(goofspiel4, "goofspiel")).matrix
    lean, expected = solver, np.zeros(goofspiel4.num_sequences)
    for p in (0, 1):
        sequence, regret, iteration = lean.reservoirs[p].examples()
        sums, totals = {}, {}
        for s, r, t in zip(sequence, regret, iteration):
            sums[s] = sums.get(s, 0.0) + t * r
            totals[s] = totals.get(s, 0.0) + t
        keys = sorted(sums)
        target = np.array([sums[s] / totals[s] for s in keys])
        weight = np.array([totals[s] for s in keys]) * len(keys) / sum(totals.values())
        X = matrix[np.array(keys) + lean.offsets[p]]
        model = make_regressor(leaves).fit(X, target, weight)
        for i in np.flatnonzero(goofspiel4.infoset_player == p):
            f, n = goofspiel4.infoset_first_seq[i], goofspiel4.infoset_num_actions[i]
            estimate = model.predict(matrix[f:f + n]) * 9
            positive = np.maximum(estimate, 0.0)
            expected[f:f + n] = positive / positive.sum() if positive.sum() > 0 else 1.0 / n
    assert np.allclose(solver.current_policy().probs, expected, rtol=0, atol=1e-12)
    assert 0 < solver.size() <= 24


@pytest.mark.parametrize("regressor", ["table", {"name": "best_first", "max_leaves": 8}])
def test_resume_is_exact(goofspiel4, regressor, tmp_path):
    first = _lean(goofspiel4, regressor=regressor, refit_every=3).run(7)  # checkpoint between refits
    state = first.state_dict()
    first.run(6)
    second = _lean(goofspiel4, regressor=regressor, refit_every=3)
    second.load_state_dict(state)
    second.run(6)
    assert second.iteration == first.iteration == 13
    assert np.array_equal(first.current_policy().probs, second.current_policy().probs)
    assert np.array_equal(first.average_policy().probs, second.average_policy().probs)
    for a, b in zip(first.reservoirs, second.reservoirs):
        assert np.array_equal(a.sequence, b.sequence) and np.array_equal(a.regret, b.regret)
    other = _lean(goofspiel4, regressor=regressor, capacity=301)
    with pytest.raises(ValueError, match="written with other options .*capacity: 300 -> 301"):
        other.load_state_dict(state)


def test_seed_reaches_the_sampler_and_the_buffer(goofspiel4):
    a = _lean(goofspiel4, regressor="table").run(6)
    b = _lean(goofspiel4, regressor="table").run(6)
    c = _lean(goofspiel4, regressor="table", seed=6).run(6)
    assert np.array_equal(a.current_policy().probs, b.current_policy().probs)
    assert not np.array_equal(a.reservoirs[0].sequence, c.reservoirs[0].sequence)


def test_the_buffer_never_exceeds_its_capacity(goofspiel4):
    solver = _lean(goofspiel4, regressor="table", capacity=40)
    for _ in range(12):
        solver.run(1)
        for reservoir in solver.reservoirs:
            assert reservoir.size <= 40 and len(reservoir.sequence) == 40
    assert all(r.size == 40 and r.seen > 40 for r in solver.reservoirs)
    assert all(int(f["count"][0]) <= 40 for f in solver.fits)  # rows fit: the buffer's sequences


class _OffByOne:
    """A deliberately biased reservoir: the replacement slot is drawn from [0, seen) instead of [0, seen]."""

    def __init__(self, capacity, seed):
        self.items, self.seen, self.rng = [], 0, np.random.default_rng(seed)

    def add(self, items):
        for x in items:
            if len(self.items) < self.capacity:
                self.items.append(x)
            else:
                slot = int(self.rng.random() * self.seen)
                if slot < self.capacity:
                    self.items[slot] = x
            self.seen += 1


def _inclusion_pvalue(make, capacity=3, stream=12, trials=3000):
    """Chi-square test that every offered item is kept with probability capacity / stream."""
    counts = np.zeros(stream)
    for seed in range(trials):
        counts[make(capacity, seed, stream)] += 1
    return stats.chisquare(counts, np.full(stream, trials * capacity / stream)).pvalue


def test_reservoir_keeps_a_uniform_sample_and_the_test_rejects_a_biased_one():
    def reservoir(capacity, seed, stream):
        buffer = Reservoir(capacity, seed)
        for t, x in enumerate(range(stream)):  # one example per call, and all in one call, must agree
            buffer.add(np.array([x]), np.array([0.0]), t + 1)
        return buffer.examples()[0]

    def biased(capacity, seed, stream):
        buffer = _OffByOne(capacity, seed)
        buffer.capacity = capacity
        buffer.add(range(stream))
        return np.array(buffer.items)

    assert _inclusion_pvalue(reservoir) > 1e-3
    assert _inclusion_pvalue(biased) < 1e-6


class _NaNRegressor(RegressorMixin, BaseEstimator):
    def fit(self, X, y, sample_weight=None):
        self.fitted_ = True
        return self

    def predict(self, X):
        return np.full(len(X), np.nan)


def test_non_finite_predictions_raise(goofspiel4):
    solver = _lean(goofspiel4, regressor=_NaNRegressor(), refit_every=1)
    with pytest.raises(ValueError, match="predicted nan for player 0 at iteration 1"):
        solver.run(1)


@pytest.mark.parametrize("name,options,message", [
    ("sampled-rcfr", {"targets": "bootstrap"}, "targets='bootstrap' needs profile='model'"),
    ("sampled-rcfr+", {}, "no regret_matching='rm\\+' variant"),
    ("sampled-rcfr+", {"targets": "stored", "selection": "newest"},
     "unknown selection 'newest'; allowed: recent, uniform"),
    ("sampled-rcfr", {"tau": 2.0}, "tau and beta apply to sampler='probing' only"),
    ("sampled-rcfr", {"sampler": "probing", "beta": -1.0}, "beta must be a finite number in \\[0, 1e\\+100\\]"),
    ("sampled-rcfr", {"sampler": "probing", "tau": 0.5}, "tau must be a finite number in \\[1, 1e\\+100\\]"),
    ("sampled-rcfr", {"shared": True}, "shared must be False"),
    ("sampled-rcfr", {"weights": np.ones(348)}, "weights must be None"),
    ("sampled-rcfr", {"features": "indicator"}, "features named by an encoder; allowed: .*goofspiel"),
    ("sampled-rcfr", {"sampler": "chance"}, "sampler"),
    ("sampled-rcfr", {"capacity": 0}, "capacity must be an integer >= 1"),
    ("sampled-rcfr", {"features_on_demand": "yes"}, "features_on_demand must be True or False"),
])
def test_bad_options_fail_before_any_work(goofspiel4, name, options, message):
    options = {**OPTIONS, "features_on_demand": True, **options}
    with pytest.raises(ValueError, match=message):
        make_solver(name, goofspiel4, **options)


def test_experiment_kit_runs_it(tmp_path):
    from rcfr.experiments.runner import run_experiment
    cfg = {"game": {"name": "goofspiel", "params": {"cards": 4}},
           "solver": {"name": "sampled-rcfr", "options": {"targets": "reservoir", "capacity": 500,
                                                          "refit_every": 5, "features_on_demand": True}},
           "regressor": {"name": "best_first", "params": {"max_leaves": 16}},
           "features": {"name": "goofspiel", "params": {}},
           "run": {"iterations": 40, "eval_points": 2, "checkpoint_seconds": 1e9, "seed": 3}, "label": "lean"}
    summary = run_experiment(cfg, tmp_path / "run")
    assert 0 < summary["representation_size"] <= 32
