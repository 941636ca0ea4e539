"""Sampled RCFR / RCFR+: tabular equivalence with MCCFR, determinism, exact resume, convergence, reservoir."""

import numpy as np
import pytest

import rcfr
from rcfr.regressors import make_regressor
from rcfr.sampling import RegretSampler
from rcfr.sampling.reservoir import Reservoir
from rcfr.solvers import make_solver
from rcfr.solvers.targets import ReservoirTargets

UNIFORM_KUHN = 0.4583


@pytest.mark.parametrize("sampler,mccfr", [("external", "es-mccfr"), ("outcome", "os-mccfr")])
@pytest.mark.parametrize("plus", [False, True])
def test_table_with_indicator_features_is_exactly_mccfr(leduc_ranks, sampler, mccfr, plus):
    """Same sampler and seed: the sampled regrets, strategies and averages are MCCFR's (rm+ for plus)."""
    ours = make_solver("sampled-rcfr+" if plus else "sampled-rcfr", leduc_ranks, sampler=sampler, regressor="table",
                       features="indicator", targets="stored", averaging="uniform", seed=5)
    ref = make_solver(mccfr, leduc_ranks, regret_matching="rm+" if plus else "rm", seed=5)
    for _ in range(60):
        ours.iterate()
        ref.iterate()
        for p, view in enumerate(leduc_ranks.views):
            table = ref.buffers.regrets[view.offset:view.offset + view.num_sequences - 1]
            assert np.allclose(ours.store.estimates(p)[1:], table, rtol=0, atol=1e-9)
        assert np.allclose(ours.current_policy().probs, ref.current_policy().probs, rtol=0, atol=1e-9)
    assert np.allclose(ours.average_policy().probs, ref.average_policy().probs, rtol=0, atol=1e-9)
    assert ours.nodes_touched == ref.nodes_touched
    # a test that can fail: another seed samples differently
    other = make_solver(mccfr, leduc_ranks, regret_matching="rm+" if plus else "rm", seed=6).run(60)
    assert not np.allclose(ours.average_policy().probs, other.average_policy().probs, atol=1e-3)


@pytest.mark.parametrize("targets", ["stored", "reservoir"])
def test_identical_seeds_identical_results(leduc_ranks, targets):
    runs = [make_solver("sampled-rcfr", leduc_ranks, regressor={"name": "best_first", "max_leaves": 16},
                        targets=targets, traversals=3, seed=s).run(15) for s in (1, 1, 2)]
    assert np.array_equal(runs[0].average_policy().probs, runs[1].average_policy().probs)
    assert np.array_equal(runs[0].current_policy().probs, runs[1].current_policy().probs)
    assert not np.allclose(runs[0].average_policy().probs, runs[2].average_policy().probs, atol=1e-6)


@pytest.mark.parametrize("name,sampler,targets", [("sampled-rcfr", "external", "reservoir"),
                                                  ("sampled-rcfr", "outcome", "bootstrap"),
                                                  ("sampled-rcfr+", "external", "stored"),
                                                  ("sampled-rcfr+", "outcome", "stored")])
def test_resume_is_exact(leduc_ranks, name, sampler, targets):
    options = dict(sampler=sampler, targets=targets, regressor={"name": "best_first", "max_leaves": 24},
                   traversals=2, refit_every=3, capacity=500, seed=9)
    straight = make_solver(name, leduc_ranks, **options).run(20)
    first = make_solver(name, leduc_ranks, **options).run(7)  # 7 is not a refit iteration
    state = {k: v.copy() for k, v in first.state_dict().items()}
    resumed = make_solver(name, leduc_ranks, **options)
    resumed.load_state_dict(state)
    resumed.run(13)
    assert resumed.iteration == 20
    assert np.array_equal(resumed.average_policy().probs, straight.average_policy().probs)
    assert np.array_equal(resumed.current_policy().probs, straight.current_policy().probs)
    assert resumed.nodes_touched == straight.nodes_touched


@pytest.mark.parametrize("name,sampler,targets,bound", [("sampled-rcfr", "external", "stored", 0.05),
                                                        ("sampled-rcfr", "external", "reservoir", 0.05),
                                                        ("sampled-rcfr+", "external", "stored", 0.05),
                                                        ("sampled-rcfr", "outcome", "stored", 0.1),
                                                        ("sampled-rcfr+", "outcome", "stored", 0.15)])
def test_converges_on_kuhn(kuhn, name, sampler, targets, bound):
    """Exploitability a small fraction of the uniform policy's (outcome sampling is noisier)."""
    solver = make_solver(name, kuhn, sampler=sampler, targets=targets, traversals=8,
                         regressor={"name": "best_first", "max_leaves": 32}, seed=0).run(1000)
    value = rcfr.exploitability(kuhn, solver.average_policy())
    assert value < bound * UNIFORM_KUHN, value
    assert solver.size() <= 64


@pytest.mark.parametrize("options,message", [
    ({"sampler": "chance"}, "allowed: external, outcome"),
    ({"targets": "running"}, "allowed: stored, bootstrap, reservoir"),
    ({"traversals": 0}, "traversals must be an integer >= 1"),
    ({"capacity": 0, "targets": "reservoir"}, "capacity must be an integer >= 1"),
    ({"refit_every": 0}, "refit_every must be an integer >= 1"),
    ({"averaging": "cubic"}, "allowed: uniform, linear, quadratic"),
    ({"epsilon": 0.0, "sampler": "outcome"}, "epsilon must be a finite number in (0, 1]"),
    ({"regret_matching": "rm+"}, "allowed: sampler, regressor"),
])
def test_bad_options_name_the_allowed_values(kuhn, options, message):
    with pytest.raises(ValueError) as err:
        make_solver("sampled-rcfr", kuhn, **options)
    assert message in str(err.value)


def test_reservoir_has_no_plus_variant(kuhn):
    with pytest.raises(ValueError, match=r"targets='reservoir' has no regret_matching='rm\+' variant"):
        make_solver("sampled-rcfr+", kuhn, targets="reservoir")


def test_reservoir_keeps_capacity_and_is_seeded():
    def fill(seed):
        buffer = Reservoir(100, seed)
        for t in range(1, 101):
            buffer.add(np.arange(100) + 100 * (t - 1), np.full(100, float(t)), t)
        return buffer
    a, b, c = fill(3), fill(3), fill(4)
    assert a.size == 100 and a.seen == 10_000
    assert np.array_equal(a.sequence, b.sequence) and np.array_equal(a.iteration, b.iteration)
    assert not np.array_equal(a.sequence, c.sequence)
    assert np.array_equal(a.regret, a.iteration.astype(float))  # examples stay whole
    assert len(np.unique(a.sequence)) == 100  # each offered example is kept at most once
    # a uniform sample of 0..9999: mean 5000, std of the mean of 100 draws about 290
    assert abs(a.sequence.mean() - 4999.5) < 1200
    small = Reservoir(5, 0)
    small.add(np.arange(3), np.ones(3), 1)
    assert small.size == 3 and np.array_equal(small.examples()[0], [0, 1, 2])


def test_reservoir_targets_are_weighted_means_of_the_examples():
    rng = np.random.default_rng(0)
    targets = ReservoirTargets(6, capacity=1000, seed=0, power=1.0)
    examples = []
    for t in range(1, 6):
        regrets = rng.normal(size=6)
        visited = rng.random(6) < 0.5
        targets.add(regrets, t, visited)
        examples += [(s, regrets[s], t) for s in np.flatnonzero(visited)]
    value = targets.targets(5)
    for s in range(6):
        mine = [(r, t) for q, r, t in examples if q == s]
        if mine:
            expected = sum(r * t for r, t in mine) / sum(t for _, t in mine)
            assert value[s] == pytest.approx(expected, abs=1e-12)
            assert targets.weights[s] > 0
        else:
            assert value[s] == 0 and targets.weights[s] == 0
    # fitting the per-sequence means with summed weights = fitting the raw examples (squared error)
    X = np.eye(6)[:, :3] + np.arange(6)[:, None] * 0.1
    X.setflags(write=False)
    raw = np.array(examples)
    seqs, ys, ws = raw[:, 0].astype(int), raw[:, 1], raw[:, 2]
    a = make_regressor("best_first", max_leaves=3).fit(X, value, targets.weights).predict(X)
    b = make_regressor("best_first", max_leaves=3).fit(X[seqs], ys, ws).predict(X)
    present = targets.weights > 0
    assert np.allclose(a[present], b[present], atol=1e-12)


def test_visits_count_the_traversals_that_wrote_a_sequence(leduc_ranks):
    sampler = RegretSampler(leduc_ranks, "external", seed=0)
    batch = sampler.sample(rcfr.Policy.uniform(leduc_ranks), 0, 5)
    assert batch.visits.max() <= 5 and batch.visits.min() == 0
    assert np.all(batch.visits[batch.mean != 0] > 0)
    view = leduc_ranks.views[1]
    assert not batch.visits[view.offset:view.offset + view.num_sequences - 1].any()  # traverser 0 only


def test_experiment_kit_runs_it_and_rejects_card_abstractions(tmp_path):
    from rcfr.experiments.runner import run_experiment
    from rcfr.experiments.schema import ConfigError
    cfg = {"game": {"name": "kuhn", "params": {}},
           "solver": {"name": "sampled-rcfr+", "options": {"sampler": "external", "traversals": 4}},
           "regressor": {"name": "best_first", "params": {"max_leaves": 16}},
           "features": {"name": "generic", "params": {}},
           "run": {"iterations": 200, "eval_points": 4, "checkpoint_seconds": 1e9, "seed": 3}, "label": "S+"}
    summary = run_experiment(cfg, tmp_path / "run")
    assert 0 < summary["representation_size"] <= 32
    card = {**cfg, "game": {"name": "leduc", "params": {}},
            "abstraction": {"name": "card", "params": {"partition": "JQ.K"}}}
    with pytest.raises(ConfigError, match="no tabular regret store.*cfr, cfr\\+, lcfr, dcfr"):
        run_experiment(card, tmp_path / "card")
