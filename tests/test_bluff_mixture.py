"""The snapshot mixture's average policy on Bluff's public bid tree (`rcfr.solvers.public_tree.mixture`, issue 34 item 6).

Checked against the general mixture (`rcfr.solvers.snapshots.mixture` at the sets of one walk of the rules,
``average_policy(walk="general")``): the same policy at every set of Bluff(1,1) and at sampled sets of Bluff(2,1),
the same exploitability, to 1e-12; negative control: other snapshot weights give another exploitability."""

import numpy as np
import pytest

import rcfr
from rcfr.solvers import SampledRCFRPlus
from rcfr.solvers.model_strategies import zero_model
from rcfr.solvers.public_tree.mixture import public_mixture
from rcfr.solvers.snapshots import Snapshot

LEAN = {"features_on_demand": True, "features": "liars_dice", "traversals": 2, "seed": 3, "profile": "model",
        "average": "mixture", "snapshots": 3, "refit_every": 2, "capacity": 4000,
        "regressor": {"name": "best_first", "max_leaves": 16}}


def _rows(policy, codes):
    at = np.searchsorted(policy.codes, codes)
    assert np.array_equal(policy.codes[at], codes)
    return [policy.probs[policy.first[i]:policy.first[i + 1]] for i in at]


@pytest.mark.slow
@pytest.mark.parametrize("dice1, iterations, sampled", [(1, 12, None), (2, 10, 5000)])
def test_public_mixture_is_the_general_mixture(dice1, iterations, sampled):
    game = rcfr.load_game("liars_dice", dice1=dice1, dice2=1, compiled=False)
    run = SampledRCFRPlus(game, **LEAN).run(iterations)
    assert all(len(s.kept) == 3 for s in run.snapshots) and run.snapshots[0].seen > 3  # the bound dropped some
    public = run.average_policy()  # on Bluff: the public tree's
    general = run.average_policy(walk="general")  # every set of one walk of the rules
    assert public.probs.dtype == np.float64 and np.array_equal(public.codes, general.codes)
    codes = general.codes if sampled is None else np.random.default_rng(0).choice(general.codes, sampled, replace=False)
    gap = max(np.max(np.abs(a - b)) for a, b in zip(_rows(public, codes), _rows(general, codes)))
    assert gap < 1e-12
    if sampled is None:
        assert np.max(np.abs(public.probs - general.probs)) < 1e-12
    exact = rcfr.exploitability(game, public)
    assert abs(exact - rcfr.exploitability(game, general)) < 1e-12
    if dice1 > 1:
        return  # the rest on Bluff(1,1): each exact evaluation of Bluff(2,1) takes about 14 s
    # float32: the temporary policy of the large games, within its rounding
    kept = run._kept_snapshots()
    assert abs(rcfr.exploitability(game, public_mixture(game.rules, kept, run.encoder, np.float32)) - exact) < 1e-5
    # negative controls: equal weights, and player 1's weights reversed, give another average
    equal = [[s._replace(weight=1.0) for s in mine] for mine in kept]
    assert abs(rcfr.exploitability(game, public_mixture(game.rules, equal, run.encoder)) - exact) > 1e-6
    reversed_ = [kept[0], [s._replace(weight=w.weight) for s, w in zip(kept[1], kept[1][::-1])]]
    assert abs(rcfr.exploitability(game, public_mixture(game.rules, reversed_, run.encoder)) - exact) > 1e-6


def test_public_mixture_refuses_bad_snapshots():
    """Refusals, naming the field: a model of another width, a negative or non-finite weight, not a pair."""
    from rcfr.features.encoders import make_encoder
    game = rcfr.load_game("liars_dice", dice1=1, dice2=1, compiled=False)
    encoder = make_encoder(game, "liars_dice")
    good = Snapshot(zero_model(encoder.num_features), 0.0, 1.0)
    wrong = Snapshot(zero_model(encoder.num_features + 1), 0.0, 1.0)
    with pytest.raises(ValueError, match=r"snapshots\[1\]\[1\]\.model\.width is .* but the encoder writes"):
        public_mixture(game.rules, [[good], [good, wrong]], encoder)
    with pytest.raises(ValueError, match=r"snapshots\[0\]\[0\]\.weight must be a finite number >= 0"):
        public_mixture(game.rules, [[good._replace(weight=-1.0)], []], encoder)
    with pytest.raises(ValueError, match=r"snapshots\[0\]\[0\]\.t must be a finite number"):
        public_mixture(game.rules, [[good._replace(t=float("nan"))], []], encoder)
    with pytest.raises(ValueError, match=r"snapshots\[0\]\[0\]\.model must be a CompiledModel"):
        public_mixture(game.rules, [[good._replace(model="tree")], []], encoder)
    with pytest.raises(ValueError, match="snapshots must be a pair"):
        public_mixture(game.rules, [[good]], encoder)
    with pytest.raises(TypeError, match="built-in Liar's Dice rules"):
        public_mixture(rcfr.make_rules("kuhn"), [[good], [good]], encoder)


def test_public_mixture_of_untrained_snapshots_is_uniform():
    """t = 0 (and no snapshot at all) plays uniformly: the uniform policy's exploitability."""
    from rcfr.evaluation.bluff import bluff_policy
    from rcfr.features.encoders import make_encoder
    game = rcfr.load_game("liars_dice", dice1=1, dice2=1, compiled=False)
    encoder = make_encoder(game, "liars_dice")
    uniform = bluff_policy(game.rules)
    for snaps in ([[Snapshot(zero_model(encoder.num_features), 0.0, 2.0)], []], [[], []]):
        policy = public_mixture(game.rules, snaps, encoder)
        assert np.array_equal(policy.codes, uniform.codes)
        assert np.max(np.abs(policy.probs - uniform.probs)) < 1e-15
