"""Pure CFR, average strategy sampling and probing: unbiased sampled regrets (with a control the check
rejects), relation to external sampling, convergence, validation (seeds and resume: tests/test_mccfr.py)."""

from __future__ import annotations

import numpy as np
import pytest

import rcfr
from rcfr import Policy, evaluate, make_solver
from rcfr.sampling import estimate_regrets, exact_regrets

# importance weights make AS and probing noisy: more samples so that rare sequences get visited
SAMPLES = {("kuhn", "pure"): 50_000, ("kuhn", "average"): 50_000, ("kuhn", "probing"): 50_000,
           ("leduc", "pure"): 400_000, ("leduc", "average"): 800_000, ("leduc", "probing"): 800_000}


def _steering(game):
    """Average-strategy sums that make average strategy sampling skip actions often (rho well below 1)."""
    return 5.0 * Policy.random(game, seed=3).probs


OPTIONS = {"pure": {}, "average": {"epsilon": 0.5, "tau": 1.0, "beta": 0.0},
           "probing": {"epsilon": 0.5, "tau": 1.0, "beta": 0.0}}


def _unbiased(est, exact) -> bool:
    """The check: every sequence within 6 standard errors, and the whole vector within 15%."""
    z = np.abs(est.mean - exact) / np.maximum(est.stderr, 1e-12)
    return z.max() < 6.0 and np.linalg.norm(est.mean - exact) < 0.15 * np.linalg.norm(exact)


@pytest.mark.parametrize("sampler", ["pure", "average", "probing"])
@pytest.mark.parametrize("traverser", [0, 1])
def test_sampled_regrets_are_unbiased(game_name, sampler, traverser):
    game = rcfr.load_game(game_name)
    policy = Policy.random(game, seed=7)
    options = dict(OPTIONS[sampler])
    if sampler in ("average", "probing"):
        options["sampling_average"] = _steering(game)
    est = estimate_regrets(game, sampler, policy, traverser, SAMPLES[game_name, sampler], seed=11, **options)
    exact = exact_regrets(game, policy, traverser)
    assert _unbiased(est, exact)
    if sampler == "average":  # the sampler really skipped subtrees
        full = estimate_regrets(game, "external", policy, traverser, 1000, seed=11)
        assert est.nodes_touched / SAMPLES[game_name, sampler] < 0.9 * full.nodes_touched / 1000
    # negative control: the same estimator run at a profile 20% away (a stale strategy) is rejected
    stale = Policy(game, 0.8 * policy.probs + 0.2 * Policy.uniform(game).probs)
    wrong = estimate_regrets(game, sampler, stale, traverser, SAMPLES[game_name, sampler], seed=11, **options)
    assert not _unbiased(wrong, exact)


@pytest.fixture(params=["kuhn", "leduc"])
def game_name(request):
    return request.param


@pytest.mark.parametrize("name", ["as-mccfr", "probing-mccfr"])
def test_sampling_that_never_skips_is_external_sampling(name):
    """With epsilon = 1 every action is sampled (rho >= 1, no random draw): bit for bit external sampling."""
    game = rcfr.load_game("leduc")
    a = make_solver(name, game, epsilon=1.0, seed=3).run(300)
    b = make_solver("es-mccfr", game, seed=3).run(300)
    for key, value in b.state_dict().items():
        if key not in ("solver", "options"):  # whose state it is differs; the state does not
            np.testing.assert_array_equal(value, a.state_dict()[key])


def test_probes_lower_the_variance_of_average_strategy_sampling():
    game = rcfr.load_game("leduc")
    policy = Policy.random(game, seed=7)
    options = dict(epsilon=0.2, tau=1.0, beta=0.0, sampling_average=_steering(game))
    plain = estimate_regrets(game, "average", policy, 0, 100_000, seed=1, **options)
    probed = estimate_regrets(game, "probing", policy, 0, 100_000, seed=1, **options)
    assert probed.stderr.mean() < 0.8 * plain.stderr.mean()


def test_pure_cfr_regrets_are_differences_of_pure_values():
    """One traversal's regrets at an information set are v(h a) - v(h a*) for a sampled a*: the sampled
    action's regret is exactly zero at every information set the traversal wrote."""
    game = rcfr.load_game("leduc")
    policy = Policy.random(game, seed=2)
    for seed in range(5):
        est = estimate_regrets(game, "pure", policy, 0, 1, seed=seed)
        written = np.flatnonzero(est.visits)
        zeros = np.bincount(game.sequence_infoset[written], est.mean[written] == 0.0, minlength=game.num_infosets)
        visited = np.unique(game.sequence_infoset[written])
        assert np.all(zeros[visited] >= 1)


@pytest.mark.parametrize("name,options,target", [("pure-cfr", {}, 0.02), ("as-mccfr", {}, 0.02),
                                                 ("as-mccfr", {"epsilon": 0.1, "tau": 10.0, "beta": 10.0}, 0.03),
                                                 ("probing-mccfr", {"epsilon": 0.1, "tau": 10.0, "beta": 10.0}, 0.03)])
def test_convergence_kuhn(name, options, target):
    game = rcfr.load_game("kuhn")
    solver = make_solver(name, game, seed=0, **options).run(20_000)
    assert evaluate(game, solver.average_policy()).exploitability < target


@pytest.mark.parametrize("options,field", [({"epsilon": 0.0}, "epsilon"), ({"tau": 0.5}, "tau"),
                                           ({"beta": -1.0}, "beta"), ({"beta": float("inf")}, "beta"),
                                           ({"updates": "simultaneous"}, "updates")])
def test_bad_options_name_the_field(options, field):
    with pytest.raises(ValueError, match=field):
        make_solver("as-mccfr", rcfr.load_game("kuhn"), **options)


@pytest.mark.parametrize("sampler", ["external", "chance", "probing"])
def test_tree_walk_work_arrays_do_not_grow_with_the_game(sampler):
    """Tree walks keep their work arrays per (depth, child index) slot: their size follows depth x widest
    branching, not the number of histories (per-history arrays cost 40 bytes per history)."""
    from rcfr.sampling.buffers import SamplerBuffers
    for game in (rcfr.load_game("leduc"), rcfr.load_game("leduc", ranks=6, suits=4)):
        slots = (int(game.depth.max()) + 2) * (int(game.num_children.max()) + 1)
        scratch = SamplerBuffers(game, sampler).scratch
        arrays = [a for name, a in scratch._asdict().items() if name not in ("cached", "public")] + list(
            scratch.public)  # not cached: external sampling's sampled action per information set
        work = sum(a.nbytes for a in arrays)
        assert work <= 64 * slots < game.num_histories
