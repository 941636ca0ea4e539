"""The Deep CFR family (`rcfr.solvers.neural`): convergence on Kuhn, unbiased new estimators with negative controls,
exact resume, seeds, exact SD-CFR mixing, loud options, and the CUDA path (skipped without a GPU)."""

from __future__ import annotations

import numpy as np
import pytest

from rcfr import Policy, evaluate, load_game, make_solver
from rcfr.sampling import RegretSampler, exact_regrets
from rcfr.solvers.neural import history_features, history_values
from rcfr.solvers.neural.solver import ADVANTAGE, VALUE
from rcfr.solvers.neural.walks import Walker

TREES = {"name": "best_first", "max_leaves": 64}
TINY_MLP = {"name": "mlp", "hidden": [8], "epochs": 5, "learning_rate": 1e-2, "batch_size": 6}
FAST = {"deep-cfr": {"traversals": 100}, "sd-cfr": {"traversals": 100},
        "dream": {"traversals": 300, "value_traversals": 300}, "escher": {"traversals": 200, "value_traversals": 300}}


@pytest.fixture(scope="module")
def kuhn():
    return load_game("kuhn")


def _own(game, player):
    view = game.views[player]
    return slice(view.offset, view.offset + view.num_sequences - 1)


@pytest.mark.parametrize("name", sorted(FAST))
def test_each_method_gets_below_a_loose_threshold_on_kuhn(kuhn, name):
    solver = make_solver(name, kuhn, regressor=TREES, seed=0, **FAST[name])
    start = evaluate(kuhn, solver.average_policy()).exploitability_mbb
    solver.run(25)
    mbb = evaluate(kuhn, solver.average_policy()).exploitability_mbb
    assert start > 400  # uniform play
    assert mbb < 60, f"{name}: {mbb:.1f} mbb/g after 25 iterations"
    assert solver.nodes_touched > 25 * 2 * FAST[name]["traversals"]
    assert 0 < solver.size() <= 2 * TREES["max_leaves"]  # the two latest advantage trees' leaves
    assert solver.memory_size() > 0


# ---- unbiasedness of the new estimators, each with a negative control ----------------------------------
def _z_ok(mean, stderr, exact, z=5.0):
    return np.all(np.abs(mean - exact) <= z * stderr + 1e-9)


def _fixed_estimate(game, policy, values, player, n, seed=0):
    sums, squares, visits, _ = Walker(game, seed).fixed(policy.probs, values, player, n)
    mean = sums / n
    stderr = np.sqrt(np.maximum(squares / n - mean ** 2, 0.0) / n)
    view = game.views[player]
    uniform_plan = view.plan(view.regret_matching(np.zeros(view.num_sequences)))
    parent = game.infoset_parent_seq[game.sequence_infoset]
    own_reach = uniform_plan[np.where(parent < 0, 0, parent - view.offset + 1)]  # pi_u of each sequence's set
    own = _own(game, player)
    return mean[own] / own_reach[own], stderr[own] / own_reach[own]


@pytest.mark.parametrize("player", [0, 1])
def test_escher_walk_with_exact_values_is_unbiased_for_scaled_regrets(kuhn, player):
    policy = Policy.random(kuhn, 3)
    values = history_values(kuhn, policy.probs)
    mean, stderr = _fixed_estimate(kuhn, policy, values, player, 40_000)
    exact = exact_regrets(kuhn, policy, player)[_own(kuhn, player)]
    assert _z_ok(mean, stderr, exact)
    # negative control: a value table wrong on one action of one traverser history is biased there
    wrong = values.copy()
    h = int(np.flatnonzero(kuhn.player == player)[0])
    wrong[kuhn.first_child[h]] += 0.5
    mean, stderr = _fixed_estimate(kuhn, policy, wrong, player, 40_000)
    assert not _z_ok(mean, stderr, exact)


def test_value_rollouts_are_unbiased_under_exploration(kuhn):
    policy = Policy.random(kuhn, 5)
    exact = history_values(kuhn, policy.probs)
    n = 60_000

    def estimate(correct):
        walker = Walker(kuhn, 1)
        sums, counts = walker.rollouts(policy.probs, n, epsilon=0.5, correct=correct)
        seen = counts > 0
        return sums[seen] / counts[seen], counts[seen], seen

    mean, counts, seen = estimate(True)
    assert seen.all()  # exploration reaches every history of Kuhn
    # each target is at most max|u| x (sigma / q)^decisions <= 2 x 2^2 in absolute value (q >= sigma / 2 at
    # epsilon 0.5), so bound / sqrt(count) bounds the standard error of a history's mean
    bound = np.abs(kuhn.utility).max() * 2.0 ** 2
    assert np.all(np.abs(mean - exact[seen]) <= 5 * bound / np.sqrt(counts))
    assert np.abs(mean - exact[seen]).max() < 0.1
    mean, counts, seen = estimate(False)  # negative control: no importance weights, values of the mixture
    assert np.abs(mean - exact[seen]).max() > 0.3


@pytest.mark.parametrize("kind", ["random", "exact"])
def test_corrected_value_targets_are_unbiased_for_any_fixed_baseline(kuhn, kind):
    """Control-variate targets (``value_targets="corrected"``): unbiased with an arbitrary fixed baseline,
    exact (no variance at all) with the exact values as baseline; negative control: without the
    importance weights the same baseline leaves them biased."""
    policy = Policy.random(kuhn, 5)
    exact = history_values(kuhn, policy.probs)
    baseline = exact.copy() if kind == "exact" else np.random.default_rng(0).uniform(-2, 2, kuhn.num_histories)

    def batch_means(correct):
        walker = Walker(kuhn, 1)
        batches = [walker.rollouts(policy.probs, 2_000, epsilon=0.5, correct=correct, baseline=baseline)
                   for _ in range(20)]
        assert all((counts > 0).all() for _, counts in batches)
        means = np.array([sums / counts for sums, counts in batches])
        return means.mean(axis=0), means.std(axis=0, ddof=1) / np.sqrt(len(means))

    mean, stderr = batch_means(True)
    if kind == "exact":
        np.testing.assert_allclose(mean, exact, atol=1e-12)
        assert stderr.max() < 1e-12
    else:
        assert _z_ok(mean, stderr, exact)
        assert stderr.max() > 1e-3  # a random baseline leaves variance
        mean, stderr = batch_means(False)
        assert not _z_ok(mean, stderr, exact)


def test_dream_regrets_with_learned_baselines_stay_unbiased(kuhn):
    """Any baseline that does not depend on the sample keeps outcome sampling unbiased: here the value
    regressor's predictions after one rollout batch (a poor fit on purpose)."""
    solver = make_solver("dream", kuhn, regressor=TREES, traversals=10, value_traversals=20, seed=2)
    policy = Policy.random(kuhn, 7)
    values = solver._learn_values(policy.probs, 0, 1)
    exact_values = history_values(kuhn, policy.probs)
    assert np.abs(values - exact_values).max() > 0.1  # the learned baseline is not the exact value
    sampler = RegretSampler(kuhn, "baseline", seed=4, epsilon=0.6, baseline=values)
    for player in (0, 1):
        batch = sampler.sample(policy, player, 100_000)
        own = _own(kuhn, player)
        exact = exact_regrets(kuhn, policy, player)[own]
        assert _z_ok(batch.mean[own], batch.stderr[own], exact)
        other = exact_regrets(kuhn, Policy.random(kuhn, 8), player)[own]  # negative control: the test has power
        assert not _z_ok(batch.mean[own], batch.stderr[own], other)



def test_value_memory_pools_unbiased_targets_at_a_fixed_profile(kuhn):
    """The value memory's pooled per-history means are unbiased for the values of the profile its
    rollouts followed; negative control: after rollouts at another profile, the pool is biased for the
    latest (the memory trades this lag for variance)."""
    from rcfr.solvers.neural.solver import pooled_targets
    policy, other = Policy.random(kuhn, 5), Policy.random(kuhn, 6)
    exact = history_values(kuhn, policy.probs)
    inner = kuhn.player != -2

    def pooled(policies):
        solver = make_solver("escher", kuhn, regressor=TREES, traversals=5, value_traversals=5_000,
                             value_capacity=10 ** 6, seed=1)
        for t, sigma in enumerate(policies, 1):
            solver._learn_values(sigma.probs, 0, t)
        histories, targets, _ = pooled_targets(solver.value_memory, 0.0, kuhn.num_histories)
        counts = np.bincount(solver.value_memory.examples()[0], minlength=kuhn.num_histories)[histories]
        return histories, targets, counts

    histories, targets, counts = pooled([policy] * 8)
    assert np.array_equal(histories, np.flatnonzero(inner))  # every non-terminal history, no terminal one
    bound = np.abs(kuhn.utility).max() * (1 / 0.8) ** 2  # as in the rollouts' test, epsilon 0.2
    assert np.all(np.abs(targets - exact[histories]) <= 5 * bound / np.sqrt(counts))
    histories, targets, counts = pooled([other] * 8 + [policy] * 8)
    assert np.abs(targets - exact[histories]).max() > 0.2


def test_exact_terminals_take_the_utilities_and_stay_out_of_the_value_fit(kuhn):
    policy = Policy.random(kuhn, 5)
    terminal = kuhn.player == -2
    exact = make_solver("escher", kuhn, regressor=TREES, traversals=5, value_traversals=50, seed=1)
    values = exact._learn_values(policy.probs, 0, 1)
    np.testing.assert_array_equal(values[terminal], kuhn.utility[terminal])
    learned = make_solver("escher", kuhn, regressor=TREES, traversals=5, value_traversals=50, exact_terminals=False,
                          seed=1)._learn_values(policy.probs, 0, 1)
    assert not np.allclose(learned[terminal], kuhn.utility[terminal])  # the control: predictions there

# ---- checkpoints and seeds -----------------------------------------------------------------------------
@pytest.mark.parametrize("name,regressor,extra", [
    ("deep-cfr", TREES, {}), ("sd-cfr", TINY_MLP, {}), ("dream", TREES, {"value_capacity": 500}),
    ("escher", TINY_MLP, {"value_capacity": 500, "value_targets": "corrected"})])
def test_resume_is_bit_identical(kuhn, name, regressor, extra):
    options = {"traversals": 20, **({"value_traversals": 30} if name in ("dream", "escher") else {}), **extra}
    straight = make_solver(name, kuhn, regressor=regressor, seed=3, **options).run(4)
    first = make_solver(name, kuhn, regressor=regressor, seed=3, **options).run(2)
    state = first.state_dict()
    resumed = make_solver(name, kuhn, regressor=regressor, seed=3, **options)
    resumed.load_state_dict(state)
    resumed.run(2)
    assert resumed.iteration == straight.iteration == 4
    assert resumed.nodes_touched == straight.nodes_touched
    np.testing.assert_array_equal(resumed.current_policy().probs, straight.current_policy().probs)
    np.testing.assert_array_equal(resumed.average_policy().probs, straight.average_policy().probs)


def test_checkpoint_of_another_configuration_is_refused(kuhn):
    state = make_solver("sd-cfr", kuhn, regressor=TREES, traversals=5).run(1).state_dict()
    with pytest.raises(ValueError, match="checkpoint"):
        make_solver("deep-cfr", kuhn, regressor=TREES, traversals=5).load_state_dict(state)


def test_seeds_reach_network_initialization_and_minibatch_order(kuhn):
    solver = make_solver("dream", kuhn, regressor=TINY_MLP, traversals=5, seed=0)
    other = make_solver("dream", kuhn, regressor=TINY_MLP, traversals=5, seed=1)
    seeds = {solver._fresh(role, p, t).random_state for role in (ADVANTAGE, VALUE) for p in (0, 1) for t in (1, 2)}
    assert len(seeds) == 8  # one per role, player and iteration
    assert other._fresh(ADVANTAGE, 0, 1).random_state not in seeds
    # one derived seed fixes the initial weights and the minibatch order of a fit
    rows = solver.features.matrix
    y = np.linspace(-1, 1, len(rows))

    def fitted(random_state, batch_size):
        model = solver._fresh(ADVANTAGE, 0, 1).set_params(random_state=random_state, batch_size=batch_size)
        return model.fit(rows, y).predict(rows)

    np.testing.assert_array_equal(fitted(11, 4), fitted(11, 4))
    assert not np.array_equal(fitted(11, 4), fitted(12, 4))
    # same initialization (full batch: no order) but different minibatch orders: only the RNG differs
    full = fitted(11, None)
    assert not np.array_equal(full, fitted(11, 4))
    # and whole runs: same seed identical, another seed different
    a = make_solver("sd-cfr", kuhn, regressor=TINY_MLP, traversals=10, seed=5).run(2).average_policy().probs
    b = make_solver("sd-cfr", kuhn, regressor=TINY_MLP, traversals=10, seed=5).run(2).average_policy().probs
    c = make_solver("sd-cfr", kuhn, regressor=TINY_MLP, traversals=10, seed=6).run(2).average_policy().probs
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


# ---- averaging -----------------------------------------------------------------------------------------
def test_sd_cfr_average_is_the_exact_mixture_of_the_stored_networks(kuhn):
    solver = make_solver("sd-cfr", kuhn, regressor=TREES, traversals=30, keep_networks=True, seed=1).run(6)
    assert [t for t, _ in solver.networks[0]] == list(range(1, 7))
    np.testing.assert_allclose(solver.mixed_policy().probs, solver.average_policy().probs, atol=1e-12)


def _reconstructed_average(game, solver, weight) -> np.ndarray:
    """SD-CFR's average rebuilt from its stored networks without the solver's views: each network's
    predictions, regret matching per information set, the realization plan down each player's sequence
    tree, the plans summed with `weight(t)`, and each sequence's share of its set's summed plan."""
    total = np.zeros(game.num_sequences)
    for p in (0, 1):
        offset = game.views[p].offset
        sets = [i for i in range(game.num_infosets) if game.infoset_player[i] == p]  # parents come first
        for t, model in solver.networks[p]:
            own = np.arange(offset, offset + game.views[p].num_sequences - 1)
            regret = dict(zip(own.tolist(), np.asarray(model.predict(solver.features.matrix[own]), float)))
            plan = {}
            for i in sets:
                first, n = int(game.infoset_first_seq[i]), int(game.infoset_num_actions[i])
                positive = [max(regret[s], 0.0) for s in range(first, first + n)]
                mass = sum(positive)
                parent = int(game.infoset_parent_seq[i])
                reach = 1.0 if parent < 0 else plan[parent]
                for a, s in enumerate(range(first, first + n)):
                    plan[s] = reach * (positive[a] / mass if mass > 0 else 1.0 / n)
            for s, value in plan.items():
                total[s] += weight(t) * value
    probs = np.empty(game.num_sequences)
    for i in range(game.num_infosets):
        first, n = int(game.infoset_first_seq[i]), int(game.infoset_num_actions[i])
        mass = total[first:first + n].sum()
        probs[first:first + n] = total[first:first + n] / mass if mass > 0 else 1.0 / n
    return probs


def test_sd_cfr_average_matches_an_independent_reconstruction_from_its_networks(kuhn):
    """The t-weighted sum of the stored networks' realization plans, rebuilt here from the models alone, is
    the solver's average; a wrong weighting would fail: uniform or quadratic weights, or weighting each
    network's strategy by t without its reach, give another policy (negative controls)."""
    solver = make_solver("sd-cfr", kuhn, regressor=TREES, traversals=30, keep_networks=True, seed=2).run(8)
    ours = solver.average_policy().probs
    np.testing.assert_allclose(ours, _reconstructed_average(kuhn, solver, lambda t: float(t)), rtol=0, atol=1e-12)
    for wrong in (lambda t: 1.0, lambda t: float(t) ** 2):
        assert np.abs(ours - _reconstructed_average(kuhn, solver, wrong)).max() > 1e-3
    strategies = np.zeros(kuhn.num_sequences)  # t-weighted strategies, reach ignored
    for p in (0, 1):
        view = kuhn.views[p]
        for t, model in solver.networks[p]:
            estimate = np.zeros(view.num_sequences)
            estimate[1:] = model.predict(solver.features.player_rows(kuhn, p))
            strategies[view.offset:view.offset + view.num_sequences - 1] += t * view.regret_matching(estimate)[1:]
    sums = np.add.reduceat(strategies, kuhn.infoset_first_seq)
    ignoring_reach = strategies / np.repeat(sums, kuhn.infoset_num_actions)
    assert np.abs(ours - ignoring_reach).max() > 1e-3


def test_deep_cfr_policy_network_reproduces_the_strategy_memory_with_a_table(kuhn):
    """With indicator features and the exact table as the policy network, the average policy is the
    strategy memory's weighted mean per sequence: a visit- and t-weighted mean of the sigma_t."""
    solver = make_solver("deep-cfr", kuhn, regressor=TREES, features="indicator", policy_regressor="table",
                         traversals=50, seed=0).run(5)
    policy = solver.average_policy().probs
    for p in (0, 1):
        seqs, values, iterations = solver.strategy_memory[p].examples()
        for s in np.unique(seqs):
            pick = seqs == s
            expected = np.average(values[pick], weights=iterations[pick].astype(float))
            same_set = kuhn.sequence_infoset == kuhn.sequence_infoset[s]
            assert policy[s] == pytest.approx(expected / sum(
                np.average(values[seqs == r], weights=iterations[seqs == r].astype(float))
                for r in np.flatnonzero(same_set)), abs=1e-9)


def test_pooled_targets_match_the_reservoir_targets_of_sampled_rcfr(kuhn):
    from rcfr.sampling.reservoir import Reservoir
    from rcfr.solvers.neural.solver import pooled_targets
    from rcfr.solvers.targets import reservoir_targets
    memory = Reservoir(50, seed=3)
    rng = np.random.default_rng(0)
    for t in range(1, 9):
        memory.add(rng.integers(0, kuhn.num_sequences, 20), rng.normal(size=20), t)
    for power in (0.0, 1.0, 2.0):
        ours, expected = pooled_targets(memory, power, kuhn.num_sequences), reservoir_targets(*memory.examples(), power)
        for a, b in zip(ours, expected):
            np.testing.assert_allclose(a, b, rtol=1e-12)


def test_history_features_tell_every_kuhn_history_apart(kuhn):
    from rcfr.features import make_features
    rows = history_features(kuhn, make_features(kuhn, "auto").matrix)
    assert rows.shape[0] == kuhn.num_histories
    assert len(np.unique(rows, axis=0)) == kuhn.num_histories


# ---- loud options --------------------------------------------------------------------------------------
@pytest.mark.parametrize("name,options,match", [
    ("sd-cfr", {"sampler": "probing"}, "sampler"),
    ("deep-cfr", {"traversals": 0}, "traversals"),
    ("escher", {"average": "tree"}, "average"),
    ("dream", {"value_exploration": 1.0}, "value_exploration"),
    ("deep-cfr", {"regressor": "forest"}, "regressor"),
    ("sd-cfr", {"value_regressor": "mlp"}, "value_regressor"),
    ("deep-cfr", {"value_capacity": 100}, "value_capacity"),
    ("escher", {"value_capacity": 0}, "value_capacity"),
    ("dream", {"exact_terminals": "yes"}, "exact_terminals"),
    ("escher", {"value_targets": "bootstrap"}, "value_targets"),
])
def test_bad_options_fail_before_any_work(kuhn, name, options, match):
    with pytest.raises(ValueError, match=match):
        make_solver(name, kuhn, **options)


def test_network_average_needs_visit_counts(kuhn):
    from rcfr.solvers.neural import NeuralCFR
    with pytest.raises(ValueError, match="average='network'"):
        NeuralCFR(kuhn, sampler="outcome", average="network")


# ---- the CUDA path -------------------------------------------------------------------------------------
def _cuda() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available()


@pytest.mark.skipif(not _cuda(), reason="no CUDA device")
def test_networks_train_on_cuda(kuhn):
    network = {**TINY_MLP, "device": "cuda"}
    solver = make_solver("escher", kuhn, regressor=network, traversals=20, value_traversals=20, seed=0).run(3)
    model = solver._fit(ADVANTAGE, 0, 9, solver.rows[0], np.ones(len(solver.rows[0])), None)
    assert model.net_[0].weight.device.type == "cuda"
    assert np.isfinite(evaluate(kuhn, solver.average_policy()).exploitability_mbb)
    auto = make_solver("sd-cfr", kuhn, regressor={**TINY_MLP, "device": "auto"}, traversals=20, seed=0).run(2)
    assert np.isfinite(evaluate(kuhn, auto.average_policy()).exploitability_mbb)


# ---- the presets ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("preset", ["neural_leduc", "neural_leduc_quick"])
def test_neural_presets_compose_and_every_arm_builds(preset):
    from hydra import compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra

    from rcfr.experiments import build
    from rcfr.experiments.callbacks import sweep_jobs
    from rcfr.experiments.run import CONFIG_DIR
    from rcfr.experiments.schema import validate

    GlobalHydra.instance().clear()
    try:
        with initialize_config_dir(config_dir=CONFIG_DIR, version_base="1.3"):
            cfg = compose("config", overrides=[f"+experiment={preset}"], return_hydra_config=True)
            jobs = sweep_jobs(cfg)
            chosen = sorted({next(o.split("=", 1)[1] for o in job if o.startswith("+arm=")) for job in jobs})
            seeds = {next(o for o in job if o.startswith("run.seed=")) for job in jobs}
            assert len(seeds) == (5 if preset == "neural_leduc" else 2)
            assert {a.split("-", 1)[1] for a in chosen} == {"deep-cfr", "sd-cfr", "dream", "escher", "rcfr+", "es", "os"}
            assert {a.split("/")[1].split("-")[0] for a in chosen} == {"kuhn", "leduc"}
            for arm in chosen:
                if arm.startswith("neural/kuhn"):
                    spec = validate(compose("config", overrides=[f"+arm={arm}"]))
                    setup = build.make_setup(spec, build.make_game(spec))
                    assert setup.policy().game is setup.game
    finally:
        GlobalHydra.instance().clear()
