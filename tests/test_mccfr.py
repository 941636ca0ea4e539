"""Monte Carlo CFR: unbiased sampled regrets, convergence, reproducibility, checkpoints, validation."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rcfr
from rcfr import Policy, evaluate, make_solver
from rcfr.sampling import estimate_regrets, exact_regrets, expected_average_increment

# (sampler, traverser, epsilon); traverser 2 = simultaneous outcome / chance sampling
CASES = [("chance", 0, 0.6), ("chance", 1, 0.6), ("chance", 2, 0.6), ("external", 0, 0.6),
         ("external", 1, 0.6), ("outcome", 0, 0.6), ("outcome", 1, 0.3), ("outcome", 2, 0.6)]
SAMPLES = {"kuhn": {"chance": 20_000, "external": 50_000, "outcome": 200_000},
           "leduc": {"chance": 20_000, "external": 100_000, "outcome": 1_000_000}}


@pytest.fixture(scope="module", params=["kuhn", "leduc"])
def game(request):
    return rcfr.load_game(request.param)


@pytest.mark.parametrize("sampler,traverser,epsilon", CASES)
def test_sampled_regrets_are_unbiased(game, sampler, traverser, epsilon):
    """At a fixed random profile the mean sampled regret of every sequence matches the exact
    counterfactual regret, and the average-strategy increments match their expectation."""
    policy = Policy.random(game, seed=7)
    samples = SAMPLES[game.name][sampler]
    est = estimate_regrets(game, sampler, policy, traverser, samples, seed=11, epsilon=epsilon)
    players = (0, 1) if traverser == 2 else (traverser,)
    exact = sum(exact_regrets(game, policy, p) for p in players)
    error = est.mean - exact
    z = np.abs(error) / np.maximum(est.stderr, 1e-12)
    assert z.max() < 6.0, f"worst sequence {game.action_names[z.argmax()]} z={z.max():.1f}"
    assert np.linalg.norm(error) < 0.15 * np.linalg.norm(exact)
    others = (0, 1) if traverser == 2 else (1 - traverser,)
    expected = sum(expected_average_increment(game, policy, p) for p in others)
    assert np.abs(est.average_increment - expected).max() < 0.05 * np.abs(expected).max()
    # sequences of a player who is not updated get no regret
    if traverser != 2:
        view = game.views[1 - traverser]
        assert not np.any(est.mean[view.offset:view.offset + view.num_sequences - 1])


def _history_values(game, policy):
    """Exact expected utility (player 0) of every history under `policy`, by brute force."""
    edge = game.chance_prob.copy()
    rows = np.flatnonzero(game.parent >= 0)
    rows = rows[game.player[game.parent[rows]] >= 0]
    edge[rows] = policy.probs[game.infoset_first_seq[game.infoset[game.parent[rows]]] + game.action[rows]]
    values = game.utility.copy()
    for h in range(game.num_histories - 1, 0, -1):
        values[game.parent[h]] += edge[h] * values[h]
    return values


@pytest.mark.parametrize("traverser", [0, 1, 2])
def test_baseline_corrected_regrets_are_unbiased_for_any_baseline(game, traverser):
    policy = Policy.random(game, seed=7)
    samples = 200_000 if game.name == "kuhn" else 1_000_000
    players = (0, 1) if traverser == 2 else (traverser,)
    exact = sum(exact_regrets(game, policy, p) for p in players)
    noise = np.random.default_rng(0).normal(size=game.num_histories)
    oracle = _history_values(game, policy)
    assert oracle[0] == pytest.approx(rcfr.expected_value(game, policy))
    errors = {}
    for name, baseline in (("noise", noise), ("oracle", oracle)):
        est = estimate_regrets(game, "baseline", policy, traverser, samples, seed=11, baseline=baseline)
        z = np.abs(est.mean - exact) / np.maximum(est.stderr, 1e-12)
        assert z.max() < 6.0 and np.linalg.norm(est.mean - exact) < 0.15 * np.linalg.norm(exact)
        errors[name] = est.stderr.mean()
    plain = estimate_regrets(game, "outcome", policy, traverser, samples, seed=11)
    assert errors["oracle"] < 0.6 * plain.stderr.mean()  # a good baseline removes variance


def test_zero_baseline_is_plain_outcome_sampling():
    game = rcfr.load_game("leduc")
    policy = Policy.random(game, seed=1)
    a = estimate_regrets(game, "baseline", policy, 0, 20_000, seed=4)
    b = estimate_regrets(game, "outcome", policy, 0, 20_000, seed=4)
    np.testing.assert_allclose(a.mean, b.mean, rtol=1e-9, atol=1e-12)


def test_a_wrong_estimator_is_caught():
    """The unbiasedness check has teeth: the library's own estimator, run at a profile only 10% away
    from the one the exact regrets are for (a stale strategy, the classic off-by-one-iteration bug),
    fails the z-test that the right profile passes."""
    game = rcfr.load_game("kuhn")
    policy = Policy.random(game, seed=7)
    exact = exact_regrets(game, policy, 0)
    stale = Policy(game, 0.9 * policy.probs + 0.1 * Policy.uniform(game).probs)
    for epsilon in (0.6, 1.0):  # any sampling policy: unbiased at the right profile ...
        est = estimate_regrets(game, "outcome", policy, 0, 100_000, seed=1, epsilon=epsilon)
        assert (np.abs(est.mean - exact) / np.maximum(est.stderr, 1e-12)).max() < 6.0
        assert np.linalg.norm(est.mean - exact) < 0.15 * np.linalg.norm(exact)
        # ... and far outside the tolerance at the stale one
        wrong = estimate_regrets(game, "outcome", stale, 0, 100_000, seed=1, epsilon=epsilon)
        assert (np.abs(wrong.mean - exact) / np.maximum(wrong.stderr, 1e-12)).max() > 10.0


SOLVER_OPTIONS = [("cscfr", {}), ("cscfr", {"updates": "alternating", "regret_matching": "rm+"}),
                  ("es-mccfr", {}), ("es-mccfr", {"average_mode": "optimistic", "regret_matching": "rm+"}),
                  ("os-mccfr", {}), ("os-mccfr", {"updates": "simultaneous", "average_mode": "optimistic"}),
                  ("os-mccfr", {"regret_matching": "rm+", "averaging": "linear"}),
                  ("os-mccfr", {"average_mode": "lazy"}),
                  ("es-mccfr", {"average_mode": "lazy"}), ("cscfr", {"average_mode": "lazy", "updates": "alternating"}),
                  ("vr-mccfr", {}), ("vr-mccfr", {"updates": "simultaneous", "average_mode": "lazy", "baseline_decay": 0.9}),
                  ("pure-cfr", {}), ("pure-cfr", {"regret_matching": "rm+", "average_mode": "optimistic"}),
                  ("as-mccfr", {}), ("as-mccfr", {"epsilon": 0.3, "tau": 2.0, "beta": 1.0, "average_mode": "lazy"}),
                  ("probing-mccfr", {"epsilon": 0.3, "tau": 2.0, "beta": 1.0, "regret_matching": "rm+"}),
                  ("cscfr", {"chance_sampling": "paired"}),
                  ("cscfr", {"chance_sampling": "common", "updates": "alternating", "average_mode": "optimistic"})]


@pytest.mark.parametrize("name,options", SOLVER_OPTIONS)
def test_identical_seeds_give_identical_runs(name, options):
    game = rcfr.load_game("kuhn")
    runs = [make_solver(name, game, seed=s, **options).run(300) for s in (5, 5, 6)]
    a, b, c = (r.state_dict() for r in runs)
    for key in a:
        np.testing.assert_array_equal(a[key], b[key])
    assert not np.array_equal(a["sampler.regrets"], c["sampler.regrets"])


@pytest.mark.parametrize("name,options", SOLVER_OPTIONS)
def test_checkpoint_resume_is_exact(name, options):
    game = rcfr.load_game("kuhn")
    straight = make_solver(name, game, seed=3, **options).run(200)
    first = make_solver(name, game, seed=3, **options).run(120)
    resumed = make_solver(name, game, seed=3, **options)  # the seed is part of its identity; the RNG state
    # comes from the checkpoint (a fresh seed-3 generator would draw what iteration 1 drew)
    resumed.load_state_dict(first.state_dict())
    resumed.run(80)
    for key, value in straight.state_dict().items():
        np.testing.assert_array_equal(value, resumed.state_dict()[key])
    assert resumed.nodes_touched == straight.nodes_touched


@pytest.mark.parametrize("name", ["cscfr", "os-mccfr", "es-mccfr", "vr-mccfr"])
def test_averaging_mode_never_changes_regrets(name):
    game = rcfr.load_game("kuhn")
    modes = ("stochastic", "optimistic", "lazy")
    a, b, c = (make_solver(name, game, seed=2, average_mode=mode).run(500) for mode in modes)
    np.testing.assert_array_equal(a.buffers.regrets, b.buffers.regrets)
    np.testing.assert_array_equal(a.buffers.regrets, c.buffers.regrets)
    assert not np.array_equal(a.buffers.avg, b.buffers.avg) and not np.array_equal(a.buffers.avg, c.buffers.avg)


@pytest.mark.parametrize("sampler,traverser", [("outcome", 0), ("outcome", 2), ("external", 1), ("chance", 2)])
def test_lazy_averaging_is_exact_for_a_fixed_strategy(sampler, traverser):
    """With the strategy held fixed, lazy weighting credits every sequence with (iteration of its
    information set's last visit) x (its realization weight): no importance weights, no noise."""
    game = rcfr.load_game("leduc")
    policy = Policy.random(game, seed=3)
    samples = 3000
    est = estimate_regrets(game, sampler, policy, traverser, samples, seed=1, average_mode="lazy")
    for p in ((0, 1) if traverser == 2 else (1 - traverser,)):
        view = game.views[p]
        plan = view.plan(policy.local(p))[1:]
        mine = slice(view.offset, view.offset + view.num_sequences - 1)
        visits = est.average_increment[mine] * samples / plan
        assert np.allclose(visits, np.round(visits), atol=1e-6)
        assert visits.max() == pytest.approx(samples) and visits.min() >= 0


def test_iterate_run_and_callback_agree():
    game = rcfr.load_game("kuhn")
    one = make_solver("es-mccfr", game, seed=1)
    for _ in range(50):
        one.iterate()
    seen = []
    many = make_solver("es-mccfr", game, seed=1).run(50, callback=lambda s: seen.append(s.iteration), every=7)
    assert seen == [7, 14, 21, 28, 35, 42, 49] and many.iteration == one.iteration == 50
    np.testing.assert_array_equal(one.buffers.regrets, many.buffers.regrets)


def test_nodes_touched():
    game = rcfr.load_game("kuhn")
    solver = make_solver("cscfr", game)
    solver.iterate()
    assert solver.nodes_touched == 11  # two chance nodes and the 9-history betting tree of one deal
    os_solver = make_solver("os-mccfr", game, updates="simultaneous").run(10)
    assert 10 * 4 <= os_solver.nodes_touched <= 10 * 6  # one trajectory of 4 to 6 histories each


CONVERGENCE = [("kuhn", "cscfr", {}, 5_000, 0.02), ("kuhn", "es-mccfr", {}, 20_000, 0.015),
               ("kuhn", "os-mccfr", {}, 100_000, 0.015),
               ("kuhn", "os-mccfr", {"updates": "simultaneous"}, 100_000, 0.02),
               ("kuhn", "es-mccfr", {"regret_matching": "rm+", "average_mode": "optimistic"}, 20_000, 0.02),
               ("kuhn", "os-mccfr", {"average_mode": "lazy"}, 100_000, 0.015),
               ("kuhn", "es-mccfr", {"average_mode": "lazy"}, 20_000, 0.015),
               ("kuhn", "vr-mccfr", {}, 100_000, 0.015)]


@pytest.mark.parametrize("game_name,name,options,iterations,target", CONVERGENCE)
def test_convergence_kuhn(game_name, name, options, iterations, target):
    game = rcfr.load_game(game_name)
    solver = make_solver(name, game, seed=0, **options).run(iterations)
    assert evaluate(game, solver.average_policy()).exploitability < target
    assert evaluate(game, Policy.uniform(game)).exploitability > 0.4  # the bar is far below the start


@pytest.mark.slow
@pytest.mark.parametrize("name,options,iterations,target", [
    ("cscfr", {}, 50_000, 0.1), ("es-mccfr", {}, 300_000, 0.06), ("os-mccfr", {}, 1_000_000, 0.2),
    ("os-mccfr", {"updates": "simultaneous", "regret_matching": "rm+"}, 500_000, 0.5),
    ("vr-mccfr", {}, 300_000, 0.25)])
def test_convergence_leduc(name, options, iterations, target):
    game = rcfr.load_game("leduc")
    solver = make_solver(name, game, seed=0, **options).run(iterations)
    assert evaluate(game, solver.average_policy()).exploitability < target


def test_current_and_average_policies_are_valid():
    game = rcfr.load_game("leduc")
    solver = make_solver("os-mccfr", game, seed=0).run(1000)
    for policy in (solver.current_policy(), solver.average_policy()):
        sums = np.bincount(game.sequence_infoset, policy.probs, minlength=game.num_infosets)
        np.testing.assert_allclose(sums, 1.0)
        assert policy.probs.min() >= 0.0
    assert make_solver("es-mccfr", game).average_policy().probs == pytest.approx(Policy.uniform(game).probs)


@pytest.mark.parametrize("name,options,field", [
    ("os-mccfr", {"epsilon": 0.0}, "epsilon"), ("os-mccfr", {"epsilon": 1.5}, "epsilon"),
    ("os-mccfr", {"updates": "parallel"}, "updates"), ("cscfr", {"updates": "parallel"}, "updates"),
    ("es-mccfr", {"regret_matching": "cfr+"}, "regret_matching"),
    ("es-mccfr", {"average_mode": "weighted"}, "average_mode"),
    ("es-mccfr", {"seed": -1}, "seed"), ("es-mccfr", {"updates": "alternating"}, "updates"),
    ("es-mccfr", {"average_mode": "optimistic", "averaging": "linear"}, "averaging weights"),
    ("os-mccfr", {"average_mode": "lazy", "averaging": "quadratic"}, "averaging weights"),
    ("vr-mccfr", {"baseline_decay": 1.5}, "baseline_decay")])
def test_bad_options_name_the_field(name, options, field):
    with pytest.raises(ValueError, match=field):
        make_solver(name, rcfr.load_game("kuhn"), **options)


def test_run_rejects_bad_arguments():
    solver = make_solver("es-mccfr", rcfr.load_game("kuhn"))
    with pytest.raises(ValueError, match="iterations"):
        solver.run(-1)
    with pytest.raises(ValueError, match="every"):
        solver.run(3, every=0)


def test_regret_sampler_batches_continue_the_random_stream():
    game = rcfr.load_game("kuhn")
    policy = Policy.random(game, seed=1)
    sampler = rcfr.sampling.RegretSampler(game, "external", seed=3)
    first, second = sampler.sample(policy, 0, 50), sampler.sample(policy.probs, 0, 50)
    assert not np.array_equal(first.mean, second.mean)
    np.testing.assert_array_equal(first.mean, estimate_regrets(game, "external", policy, 0, 50, seed=3).mean)
    with pytest.raises(ValueError, match="traverser"):
        sampler.sample(policy, 2, 10)
    with pytest.raises(ValueError, match="samples"):
        sampler.sample(policy, 0, 0)
    with pytest.raises(ValueError, match="baseline"):
        rcfr.sampling.RegretSampler(game, "outcome", baseline=np.zeros(game.num_histories))


@settings(max_examples=25, deadline=None)
@given(policy_seed=st.integers(0, 10_000), seed=st.integers(0, 10_000),
       case=st.sampled_from([("outcome", 0), ("outcome", 2), ("external", 1), ("chance", 2), ("baseline", 0),
                             ("baseline", 2)]))
def test_each_traversal_regrets_are_zero_under_sigma(policy_seed, seed, case):
    """Every single traversal's sampled regrets satisfy sum_a sigma(I, a) delta(I, a) = 0 at each
    information set, like exact regrets do; and only the traverser's sequences get any."""
    sampler, traverser = case
    game = rcfr.load_game("leduc")
    policy = Policy.random(game, seed=policy_seed)
    delta = estimate_regrets(game, sampler, policy, traverser, 1, seed=seed).mean
    rows = np.bincount(game.sequence_infoset, policy.probs * delta, minlength=game.num_infosets)
    assert np.abs(rows).max() <= 1e-9 * max(1.0, np.abs(delta).max())
    if traverser != 2:
        assert not np.any(delta[game.infoset_player[game.sequence_infoset] != traverser])
