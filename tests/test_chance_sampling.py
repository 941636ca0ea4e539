"""Paired and common chance-sampling (Lanctot 2013, §7.5): who observes which chance node, unbiased sampled
regrets (with a stale-profile control the same check rejects), lower variance than one sampled outcome
per chance node (with a same-sampler control the same test does not call lower), what one traversal
walks, reproducibility, validation."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

import rcfr
from rcfr import Policy, evaluate, make_solver
from rcfr.sampling import RegretSampler, estimate_regrets, exact_regrets, expected_average_increment
from rcfr.sampling.chance import common_keys, observers

SAMPLES = {"kuhn": 5_000, "leduc": 5_000}


@pytest.fixture(scope="module", params=["kuhn", "leduc"])
def game(request):
    return rcfr.load_game(request.param)


@pytest.fixture(scope="module")
def bluff():
    return rcfr.load_game("liars_dice")


def _unbiased(est, exact) -> bool:
    """The check: every sequence within 6 standard errors, and the whole vector within 15%."""
    z = np.abs(est.mean - exact) / np.maximum(est.stderr, 1e-12)
    return z.max() < 6.0 and np.linalg.norm(est.mean - exact) < 0.15 * np.linalg.norm(exact)


def test_bluff_has_the_seven_chance_node_model(bluff):
    """Player 0's die, then one node per outcome for player 1's die: the root belongs to player 0, the six
    others to player 1; for player 0 the six are one event, for player 1 the root is one event."""
    nodes = np.flatnonzero(bluff.player == -1)
    assert len(nodes) == 7 and nodes[0] == 0 and np.all(bluff.num_children[nodes] == 6)
    seen = observers(bluff)
    assert seen[0, 0] and not seen[1, 0]
    assert np.all(seen[1, nodes[1:]]) and not np.any(seen[0, nodes[1:]])
    keys = common_keys(bluff)
    assert keys[0, 0] == -1 and np.all(keys[0, nodes[1:]] == 0)
    assert keys[1, 0] == 0 and np.all(keys[1, nodes[1:]] == -1)


def test_leduc_board_is_public():
    game = rcfr.load_game("leduc")
    nodes = np.flatnonzero(game.player == -1)
    seen = observers(game)[:, nodes]
    both = seen[0] & seen[1]
    assert both.sum() == len(nodes) - 7  # every board card; the two private deals are seen by one player each
    assert (seen[0] & ~seen[1]).sum() == 1 and (seen[1] & ~seen[0]).sum() == 6


@pytest.mark.parametrize("chance_sampling,traverser", [("paired", 0), ("paired", 1), ("paired", 2),
                                                       ("common", 0), ("common", 1)])
def test_sampled_regrets_are_unbiased(game, chance_sampling, traverser):
    policy = Policy.random(game, seed=7)
    players = (0, 1) if traverser == 2 else (traverser,)
    exact = sum(exact_regrets(game, policy, p) for p in players)
    options = dict(seed=11, chance_sampling=chance_sampling)
    est = estimate_regrets(game, "chance", policy, traverser, SAMPLES[game.name], **options)
    assert _unbiased(est, exact)
    others = (0, 1) if traverser == 2 else (1 - traverser,)
    expected = sum(expected_average_increment(game, policy, p) for p in others)
    assert np.abs(est.average_increment - expected).max() < 0.05 * np.abs(expected).max()
    # negative control: the same estimator at a profile 20% away (a stale strategy) is rejected
    stale = Policy(game, 0.8 * policy.probs + 0.2 * Policy.uniform(game).probs)
    assert not _unbiased(estimate_regrets(game, "chance", stale, traverser, SAMPLES[game.name], **options), exact)


def _batch_variances(game, policy, chance_sampling, batches, size, seed):
    """Per batch of `size` traversals: the within-batch variance of the sampled regrets summed over sequences
    (an unbiased estimate of E||delta - r||^2 for one traversal), and the mean over all traversals."""
    sampler = RegretSampler(game, "chance", seed=seed, chance_sampling=chance_sampling)
    variances, means = [], []
    for _ in range(batches):
        est = sampler.sample(policy, 0, size)
        variances.append((est.stderr ** 2).sum() * size * size / (size - 1))
        means.append(est.mean)
    return np.array(variances), np.mean(means, axis=0)


def test_paired_and_common_lower_the_variance_on_bluff(bluff):
    """Per traversal at a random profile of Bluff(1,1), player 0's sampled regrets vary less: paired
    chance-sampling by more than 2x (measured 3.5x: four rolls of the dice instead of one), common
    chance-sampling by more than 4x (measured 11x: all six of player 0's rolls). One-sided Welch t-tests on
    20 batch variances each, p < 1e-4; the same test comparing chance sampling with itself (another seed)
    must not call it 2x lower."""
    policy = Policy.random(bluff, seed=7)
    exact = exact_regrets(bluff, policy, 0)
    single, _ = _batch_variances(bluff, policy, "single", 20, 20, seed=1)
    for name, factor, size in (("paired", 2.0, 10), ("common", 4.0, 5)):
        variances, mean = _batch_variances(bluff, policy, name, 20, size, seed=2)
        assert np.linalg.norm(mean - exact) < 0.25 * np.linalg.norm(exact)  # unbiased, roughly
        assert stats.ttest_ind(single, factor * variances, equal_var=False, alternative="greater").pvalue < 1e-4
    again, _ = _batch_variances(bluff, policy, "single", 20, 20, seed=3)
    assert stats.ttest_ind(single, 2.0 * again, equal_var=False, alternative="greater").pvalue > 1e-4


def test_what_one_traversal_walks(bluff):
    """Paired: player 0's regrets come from two rolls, k and its partner 5 - k (1 and star, 2 and 5, 3 and 4).
    Common: all six of player 0's rolls, each against the same roll of player 1 (player 1's average credit
    falls on the sets of one roll only)."""
    policy = Policy.random(bluff, seed=1)
    roll = {k: k.split("|")[0] for k in bluff.infoset_keys}
    faces = "12345*"
    for seed in range(4):
        est = estimate_regrets(bluff, "chance", policy, 0, 1, seed=seed, chance_sampling="paired")
        rolls = {roll[bluff.infoset_keys[i]] for i in np.unique(bluff.sequence_infoset[np.flatnonzero(est.visits)])}
        assert len(rolls) == 2 and sum(faces.index(r) for r in rolls) == 5
        est = estimate_regrets(bluff, "chance", policy, 0, 1, seed=seed, chance_sampling="common")
        rolls = {roll[bluff.infoset_keys[i]] for i in np.unique(bluff.sequence_infoset[np.flatnonzero(est.visits)])}
        assert rolls == set(faces)
        credited = np.unique(bluff.sequence_infoset[np.flatnonzero(est.average_increment)])
        assert len({roll[bluff.infoset_keys[i]] for i in credited}) == 1


@pytest.mark.parametrize("chance_sampling", ["paired", "common"])
def test_convergence_kuhn(chance_sampling):
    game = rcfr.load_game("kuhn")
    solver = make_solver("cscfr", game, updates="alternating", chance_sampling=chance_sampling, seed=0).run(5_000)
    assert evaluate(game, solver.average_policy()).exploitability < 0.01


@pytest.mark.parametrize("options,field", [({"chance_sampling": "antithetic"}, "chance_sampling"),
                                           ({"chance_sampling": "common"}, "updates")])
def test_bad_options_name_the_field(options, field):
    with pytest.raises(ValueError, match=field):
        make_solver("cscfr", rcfr.load_game("kuhn"), **options)


def test_other_samplers_and_simultaneous_common_are_refused():
    game = rcfr.load_game("kuhn")
    with pytest.raises(ValueError, match="chance_sampling"):
        RegretSampler(game, "external", chance_sampling="paired")
    with pytest.raises(ValueError, match="traverser"):
        RegretSampler(game, "chance", chance_sampling="common").sample(Policy.uniform(game), 2, 10)


@pytest.mark.parametrize("preset, seeds", [("lanctot_fig75_quick", 3), ("lanctot_fig75", 5)])
def test_fig75_presets_expand_to_the_three_variants(preset, seeds):
    from hydra import compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra

    from rcfr.experiments.callbacks import sweep_jobs
    from rcfr.experiments.run import CONFIG_DIR
    from rcfr.experiments.schema import validate

    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=CONFIG_DIR, version_base="1.3"):
        cfg = compose("config", overrides=[f"+experiment={preset}"], return_hydra_config=True)
        jobs = sweep_jobs(cfg)
        assert len(jobs) == 3 * seeds
        first_seed = [job for job in jobs if "run.seed=0" in job]  # every variant once
        configs = [compose("config", overrides=job) for job in first_seed]
        specs = [validate(c) for c in configs] if preset.endswith("quick") else configs
    GlobalHydra.instance().clear()
    assert {s.label for s in specs} == {"CS single", "CS paired", "CS common"}
    assert all(s.game.name == "liars_dice" and s.solver.name == "cscfr" for s in specs)
    assert all(s.solver.options["updates"] == "alternating" and s.run.max_nodes_touched > 0 for s in specs)
