"""MCCFRb (outcome sampling with information-set baselines, Kuchar 2020): the estimator is unbiased for
every baseline mode, the thesis's printed estimator is not (and the same test says so), baseline="none"
is outcome sampling bit for bit, resuming is exact, bad options fail naming the field."""

from __future__ import annotations

import numpy as np
import pytest

import rcfr
from rcfr import Policy, make_solver
from rcfr.sampling import RegretSampler, exact_regrets
from rcfr.sampling.buffers import baseline_layout
from rcfr.sampling.bundles import DA, EDA

EPSILON = 0.6


def enumerate_estimator(game, policy, traverser, baseline, variant="derived"):
    """Every terminal history z that outcome sampling can draw for `traverser` (0 or 1), its probability
    q(z), and the sampled regrets the estimator writes for it (rows: z, columns: global sequences),
    with the information-set baseline table `baseline` (traverser 0's row, then traverser 1's) held
    fixed. ``variant="derived"`` is docs/mccfr.md's estimator; ``"thesis"`` is Kuchar's Fig 3.1 as
    printed: the sampled action's regret uses (u - b) / xi without adding the baseline back."""
    index, stride, _ = baseline_layout(game, "infoset_baseline")
    row = traverser * stride
    b = np.where(index >= 0, baseline[row + np.maximum(index, 0)], 0.0)  # per child history
    terminals = np.flatnonzero(game.player == -2)
    q = np.ones(len(terminals))
    deltas = np.zeros((len(terminals), game.num_sequences))
    sign = 1.0 if traverser == 0 else -1.0
    for row_z, z in enumerate(terminals):
        path = [z]
        while game.parent[path[-1]] >= 0:
            path.append(game.parent[path[-1]])
        path = path[::-1]  # root .. z
        # forward: sampling probability and the traverser's opponent's (and chance's) reach before each move
        xi, opp, qs = [], [], []
        reach, qh = 1.0, 1.0
        for h, child in zip(path[:-1], path[1:]):
            p, a = game.player[h], game.action[child]
            if p < 0:
                x, s = game.chance_prob[child], game.chance_prob[child]
            else:
                seqs = game.infoset_first_seq[game.infoset[h]] + np.arange(game.num_children[h])
                s = policy.probs[seqs[a]]
                x = EPSILON / len(seqs) + (1 - EPSILON) * s if p == traverser else s
            xi.append(x), opp.append(reach), qs.append(qh)
            if p != traverser:
                reach *= s
            qh *= x
        q[row_z] = qh
        below = game.utility[z]
        for d in range(len(path) - 2, -1, -1):
            h, child = path[d], path[d + 1]
            c, n = game.first_child[h], game.num_children[h]
            k = child - c
            corrected = b[child] + (below - b[child]) / xi[d]
            u = b[c:c + n].copy()
            u[k] = corrected
            if game.player[h] < 0:
                value = game.chance_prob[c:c + n] @ u
            else:
                seqs = game.infoset_first_seq[game.infoset[h]] + np.arange(n)
                value = policy.probs[seqs] @ u
                if game.player[h] == traverser:
                    regret = u - value
                    if variant == "thesis":
                        regret[k] = (below - b[child]) / xi[d] - value
                    deltas[row_z, seqs] += sign * opp[d] / qs[d] * regret
            below = value
    return q, deltas


def rejects(mean, stderr, exact):
    """The unbiasedness test of tests/test_mccfr.py: True when some sequence's mean sampled regret is
    more than 6 standard errors from the exact regret, or the error is over 15% of the regrets' size."""
    z = np.abs(mean - exact) / np.maximum(stderr, 1e-12)
    return bool(z.max() >= 6.0 or np.linalg.norm(mean - exact) >= 0.15 * np.linalg.norm(exact))


def draw(q, deltas, samples, seed):
    """Mean and standard error of `samples` draws of the estimator (terminals drawn with probability q)."""
    rows = np.random.default_rng(seed).choice(len(q), size=samples, p=q / q.sum())
    values = deltas[rows]
    return values.mean(0), values.std(0) / np.sqrt(samples)


def noisy_baseline(game, seed=0):
    return np.random.default_rng(seed).normal(scale=2.0, size=baseline_layout(game, "infoset_baseline")[2])


@pytest.mark.parametrize("game_name,traverser", [("kuhn", 0), ("kuhn", 1), ("leduc", 0)])
def test_the_derived_estimator_is_exactly_unbiased_and_the_printed_one_is_not(game_name, traverser):
    """Summing q(z) x sampled regrets over every terminal gives the exact counterfactual regrets for the
    derived estimator (to rounding), for an arbitrary fixed baseline; the thesis's printed formula misses
    them by about the baseline's size."""
    game = rcfr.load_game(game_name)
    policy = Policy.random(game, seed=7)
    exact = exact_regrets(game, policy, traverser)
    baseline = noisy_baseline(game)
    q, deltas = enumerate_estimator(game, policy, traverser, baseline)
    assert q.sum() == pytest.approx(1.0)
    np.testing.assert_allclose(q @ deltas, exact, atol=1e-10)
    q, thesis = enumerate_estimator(game, policy, traverser, baseline, variant="thesis")
    assert np.abs(q @ thesis - exact).max() > 0.1


def test_the_same_test_rejects_the_printed_estimator():
    """Negative control: sampled like the kernel samples, the thesis's printed estimator fails the
    unbiasedness test that the derived one, drawn from the same terminals, passes."""
    game = rcfr.load_game("kuhn")
    policy = Policy.random(game, seed=7)
    exact = exact_regrets(game, policy, 0)
    baseline = noisy_baseline(game)
    for variant, biased in (("derived", False), ("thesis", True)):
        q, deltas = enumerate_estimator(game, policy, 0, baseline, variant=variant)
        assert rejects(*draw(q, deltas, 200_000, seed=3), exact) == biased


@pytest.mark.parametrize("mode", ["da", "eda", "none"])
@pytest.mark.parametrize("traverser", [0, 1, 2])
def test_sampled_regrets_are_unbiased_while_baselines_learn(leduc, mode, traverser):
    """The compiled kernel at a fixed profile, its baselines updated after every traversal as the
    solver updates them (starting from noise; "none": the outcome-sampling kernel): the mean sampled
    regret passes the unbiasedness test, because each traversal only uses baselines fixed before it."""
    policy = Policy.random(leduc, seed=7)
    sampler = RegretSampler(leduc, "outcome" if mode == "none" else "infoset_baseline", seed=11, epsilon=EPSILON,
                            baseline=None if mode == "none" else noisy_baseline(leduc))
    sampler.settings = sampler.settings._replace(baseline_update=DA if mode == "da" else EDA,
                                                 baseline_decay=0.5 if mode == "eda" else 0.0)
    before = sampler.buffers.baseline.copy()
    est = sampler.sample(policy, traverser, 400_000)
    players = (0, 1) if traverser == 2 else (traverser,)
    exact = sum(exact_regrets(leduc, policy, p) for p in players)
    assert not rejects(est.mean, est.stderr, exact)
    assert (mode == "none") == np.array_equal(before, sampler.buffers.baseline)  # baselines did learn
    if mode == "da":  # every update is counted in the traverser's own row (row 0 in the simultaneous form)
        visits = sampler.buffers.state.baseline_visits.reshape(2, -1).sum(1)
        used = traverser if traverser < 2 else 0
        assert visits[1 - used] == 0 and visits[used] > 400_000


def test_a_good_baseline_reduces_variance(leduc):
    """Baselines learned by a direct average at the profile cut the standard error of the sampled regrets
    well below plain outcome sampling's (the point of the method)."""
    policy = Policy.random(leduc, seed=7)
    learner = RegretSampler(leduc, "infoset_baseline", seed=1, epsilon=EPSILON)
    learner.settings = learner.settings._replace(baseline_update=DA)
    learner.sample(policy, 0, 200_000)
    learned = RegretSampler(leduc, "infoset_baseline", seed=2, epsilon=EPSILON,
                            baseline=learner.buffers.baseline).sample(policy, 0, 200_000)
    plain = RegretSampler(leduc, "outcome", seed=2, epsilon=EPSILON).sample(policy, 0, 200_000)
    assert learned.stderr.mean() < 0.8 * plain.stderr.mean()


def test_zero_baselines_are_outcome_sampling(leduc):
    policy = Policy.random(leduc, seed=1)
    a = RegretSampler(leduc, "infoset_baseline", seed=4).sample(policy, 0, 20_000)
    b = RegretSampler(leduc, "outcome", seed=4).sample(policy, 0, 20_000)
    np.testing.assert_allclose(a.mean, b.mean, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("options", [{}, {"updates": "simultaneous", "average_mode": "optimistic"},
                                     {"regret_matching": "rm+", "averaging": "linear", "epsilon": 0.3}])
def test_no_baseline_is_outcome_sampling_bit_for_bit(kuhn, options):
    ours = make_solver("mccfrb", kuhn, baseline="none", seed=5, **options).run(500)
    plain = make_solver("os-mccfr", kuhn, seed=5, **options).run(500)
    a, b = ours.state_dict(), plain.state_dict()
    assert a.keys() == b.keys()
    assert (str(a.pop("solver")), str(b.pop("solver"))) == ("mccfrb", "os-mccfr")
    a.pop("options"), b.pop("options")  # mccfrb records its baseline option
    for key in a:
        np.testing.assert_array_equal(a[key], b[key])


@pytest.mark.parametrize("options", [{"baseline": "da"}, {"baseline": "eda", "baseline_decay": 0.3},
                                     {"baseline": "da", "updates": "simultaneous", "average_mode": "lazy",
                                      "regret_matching": "rm+"}])
def test_checkpoint_resume_is_exact(kuhn, options):
    straight = make_solver("mccfrb", kuhn, seed=3, **options).run(200)
    first = make_solver("mccfrb", kuhn, seed=3, **options).run(120)
    resumed = make_solver("mccfrb", kuhn, seed=3, **options)  # the RNG state comes from the checkpoint
    resumed.load_state_dict(first.state_dict())
    resumed.run(80)
    state = straight.state_dict()
    assert np.any(state["sampler.baseline"]) and np.any(state["sampler.baseline_visits"]) == (
        options["baseline"] == "da")
    for key, value in state.items():
        np.testing.assert_array_equal(value, resumed.state_dict()[key])
    assert resumed.nodes_touched == straight.nodes_touched


def test_direct_average_is_the_mean_of_the_updates(kuhn):
    """The first update of a direct average has weight 1/1: after one iteration (each (I, a) of a
    traverser updated at most once) DA agrees bit for bit with EDA of decay 1, which keeps the newest."""
    da = make_solver("mccfrb", kuhn, baseline="da", seed=8).run(1)
    eda = make_solver("mccfrb", kuhn, baseline="eda", baseline_decay=1.0, seed=8).run(1)
    visits = da.buffers.state.baseline_visits
    assert visits.max() == 1  # one iteration: each (I, a) of a traverser at most once
    np.testing.assert_array_equal(da.buffers.baseline, eda.buffers.baseline)
    np.testing.assert_array_equal(da.buffers.regrets, eda.buffers.regrets)


def test_learns_kuhn(kuhn):
    for mode in ("da", "eda"):
        solver = make_solver("mccfrb", kuhn, baseline=mode, seed=0).run(20_000)
        assert rcfr.evaluate(kuhn, solver.average_policy()).exploitability < 0.03


@pytest.mark.parametrize("options,field", [({"baseline": "mean"}, "baseline"),
                                           ({"baseline": "da", "baseline_decay": 0.5}, "baseline_decay"),
                                           ({"baseline": "eda", "baseline_decay": 0.0}, "baseline_decay"),
                                           ({"baseline": "eda", "baseline_decay": 1.5}, "baseline_decay"),
                                           ({"baseline": "eda", "baseline_decay": True}, "baseline_decay"),
                                           ({"epsilon": 0.0}, "epsilon"), ({"updates": "parallel"}, "updates"),
                                           ({"baseline_update": "da"}, "baseline_update")])
def test_bad_options_name_the_field(kuhn, options, field):
    with pytest.raises(ValueError, match=field):
        make_solver("mccfrb", kuhn, **options)


def test_a_lossless_abstraction_reproduces_the_unabstracted_run(leduc):
    """Under an abstraction the regrets move to abstract slots and the baselines stay per full-game set:
    a relabelling that merges nothing gives the same run bit for bit."""
    from test_mccfr_abstraction import relabelled

    from rcfr.abstraction import abstract_solver
    plain = make_solver("mccfrb", leduc, seed=4).run(150)
    ours = abstract_solver("mccfrb", leduc, relabelled(leduc), seed=4).run(150)
    assert not np.array_equal(ours.buffers.regrets, plain.buffers.regrets)  # the slots really moved
    np.testing.assert_array_equal(ours.buffers.baseline, plain.buffers.baseline)
    np.testing.assert_array_equal(ours.average_policy().probs, plain.average_policy().probs)


@pytest.mark.parametrize("decay", [0.3, 0.75])
def test_exponentially_decaying_baselines_follow_the_decay_strictly_between_0_and_1(decay):
    """At decay d in (0, 1) (where d and d^2 differ, unlike d = 1) each update is b <- (1 - d) b + d u: after n
    updates from b_0, b_n = (1 - d)^n b_0 + (1 - (1 - d)^n) u. A matrix game whose row player plays row 0
    makes u exact at the column player's (I, a): the payoff of (row 0, a). The counts n come from a direct
    average run with the same seed (the same sampled paths: baselines never steer sampling). Negative
    controls: the same formula with d^2, or with d and 1 - d swapped, misses."""
    from tests.test_frontier import MatrixGame

    game = rcfr.compile_game(MatrixGame(seed=3, rows=2, cols=4))
    view = game.views[0]
    rows = np.zeros(view.num_sequences)
    rows[1] = 1.0  # row 0 only
    policy = Policy.from_local(game, [view.regret_matching(rows), game.views[1].regret_matching(
        np.zeros(game.views[1].num_sequences))])
    start = noisy_baseline(game, seed=4)
    runs = {}
    for mode in ("da", "eda"):
        sampler = RegretSampler(game, "infoset_baseline", seed=9, epsilon=EPSILON, baseline=start.copy())
        sampler.settings = sampler.settings._replace(baseline_update=DA if mode == "da" else EDA,
                                                     baseline_decay=decay if mode == "eda" else 0.0)
        sampler.sample(policy, 1, 12)
        runs[mode] = sampler.buffers
    _, stride, _ = baseline_layout(game, "infoset_baseline")
    column = game.views[1]
    slots = stride + np.arange(column.offset, column.offset + column.num_sequences - 1)  # traverser 1's (I, a)
    n = runs["da"].state.baseline_visits[slots]
    assert n.min() >= 1 and n.max() >= 3  # every column sampled, some several times
    u = game.utility[[h for h in range(game.num_histories) if game.player[h] == -2]][:4]  # (row 0, a), a = 0..3
    ours = runs["eda"].baseline[slots]
    for rate, ok in ((decay, True), (decay ** 2, False), (1 - decay, False)):
        kept = (1 - rate) ** n
        expected = kept * start[slots] + (1 - kept) * u
        assert np.allclose(ours, expected, rtol=0, atol=1e-12) == ok, rate
