"""Public chance sampling (`pcs-cfr`): the public tree, exactness against vanilla CFR when public chance is
enumerated, unbiased sampled regrets (with a control the check rejects), seeds, resume, validation."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rcfr
from rcfr import Policy, evaluate, make_solver
from rcfr.abstraction import Abstraction, abstract_solver
from rcfr.sampling import RegretSampler, exact_regrets
from rcfr.sampling.public import CHANCE, NotPublicError, public_tree


@pytest.fixture(scope="module")
def leduc():
    return rcfr.load_game("leduc")


def _vanilla_regrets(solver):
    """A full-width solver's cumulative regrets in global sequence order."""
    return np.concatenate([solver.store.regrets[p][1:] for p in (0, 1)])


def test_public_tree_of_leduc_and_bluff(leduc):
    tree = public_tree(leduc)
    assert tree.histories.sum() == leduc.num_histories  # every history stands in exactly one public state
    chance = np.flatnonzero(tree.kind == CHANCE)  # the board card after each first-round call
    assert len(chance) == 5 and all(tree.num_children[chance] == 6)
    for c in chance:  # public chance probabilities sum to one
        assert np.isclose(tree.prob[tree.first_child[c]:tree.first_child[c] + tree.num_children[c]].sum(), 1.0)
    assert tree.count0[0] == tree.count1[0] == 6 and tree.count0[-1] == 5  # 6 cards, then 5 beside the board
    bluff = public_tree(rcfr.load_game("liars_dice"))
    assert not np.any(bluff.kind == CHANCE)  # all chance is private: only the bidding tree
    assert set(bluff.count0) == {6} and set(bluff.count1) == {6}


@pytest.mark.parametrize("name", ["kuhn", "leduc", "liars_dice", "dieroll"])
@pytest.mark.parametrize("updates", ["alternating", "simultaneous"])
def test_enumerated_public_chance_is_vanilla_cfr(name, updates):
    game = rcfr.load_game(name)
    ours = make_solver("pcs-cfr", game, public_chance="enumerate", updates=updates).run(4)
    vanilla = make_solver("cfr", game, updates=updates).run(4)
    np.testing.assert_allclose(ours.buffers.regrets, _vanilla_regrets(vanilla), rtol=0, atol=1e-12)
    np.testing.assert_allclose(ours.average_policy().probs, vanilla.average_policy().probs, rtol=0, atol=1e-12)
    assert ours.nodes_touched == 4 * (2 if updates == "alternating" else 1) * game.num_histories


def test_enumerated_rm_plus_with_linear_averaging_is_cfr_plus(leduc):
    ours = make_solver("pcs-cfr", leduc, public_chance="enumerate", regret_matching="rm+", averaging="linear").run(6)
    plus = make_solver("cfr+", leduc).run(6)
    np.testing.assert_allclose(ours.buffers.regrets, _vanilla_regrets(plus), rtol=0, atol=1e-12)
    np.testing.assert_allclose(ours.average_policy().probs, plus.average_policy().probs, rtol=0, atol=1e-12)


def test_on_an_imperfect_recall_abstraction_it_is_abstracted_vanilla_cfr(leduc):
    """Second-round sets that forget the first round's betting: merged sets sum their regrets."""
    forget = Abstraction.from_keys(leduc, "forget-round-1", lambda k: k if "/" not in k else
                                   k.split("|")[0] + "|" + k.split("|")[1] + "|" + k.split("/")[1])
    assert forget.num_infosets < leduc.num_infosets
    ours = make_solver("pcs-cfr", leduc, public_chance="enumerate", abstraction=forget).run(4)
    vanilla = abstract_solver("cfr", leduc, forget).run(4)
    np.testing.assert_allclose(ours.current_policy().probs, vanilla.current_policy().probs, rtol=0, atol=1e-12)
    np.testing.assert_allclose(ours.average_policy().probs, vanilla.average_policy().probs, rtol=0, atol=1e-12)


def test_bluff_has_nothing_to_sample():
    game = rcfr.load_game("liars_dice")
    a = make_solver("pcs-cfr", game, seed=1).run(2)
    b = make_solver("pcs-cfr", game, public_chance="enumerate", seed=2).run(2)
    np.testing.assert_array_equal(a.buffers.regrets, b.buffers.regrets)


@pytest.fixture(scope="module")
def enumerators():
    """One enumerating walk per game (the public tree derived once): its regrets are the exact ones."""
    return {name: RegretSampler(rcfr.load_game(name), "public", public_chance="enumerate")
            for name in ("leduc", "dieroll")}


@settings(max_examples=15, deadline=None)
@given(name=st.sampled_from(["leduc", "dieroll"]), seed=st.integers(0, 2 ** 31), traverser=st.sampled_from([0, 1]))
def test_enumerated_walk_gives_the_exact_regrets_of_any_profile(enumerators, name, seed, traverser):
    sampler = enumerators[name]
    policy = Policy.random(sampler.game, seed=seed)
    exact = exact_regrets(sampler.game, policy, traverser)
    np.testing.assert_allclose(sampler.sample(policy, traverser, 1).mean, exact, rtol=0, atol=1e-12)


def _unbiased(est, exact) -> bool:
    """The check of tests/test_mccfr_samplers.py: every sequence within 6 standard errors, and the whole
    vector within 15%."""
    z = np.abs(est.mean - exact) / np.maximum(est.stderr, 1e-12)
    return z.max() < 6.0 and np.linalg.norm(est.mean - exact) < 0.15 * np.linalg.norm(exact)


@pytest.mark.parametrize("traverser", [0, 1, 2])
def test_sampled_regrets_are_unbiased(leduc, traverser):
    policy = Policy.random(leduc, seed=7)
    players = (0, 1) if traverser == 2 else (traverser,)
    exact = sum(exact_regrets(leduc, policy, p) for p in players)
    enumerated = RegretSampler(leduc, "public", public_chance="enumerate").sample(policy, traverser, 1)
    np.testing.assert_allclose(enumerated.mean, exact, rtol=0, atol=1e-12)
    sampler = RegretSampler(leduc, "public", seed=11)
    est = sampler.sample(policy, traverser, 5000)
    assert _unbiased(est, exact)
    assert est.nodes_touched < 0.5 * 5000 * leduc.num_histories  # it really sampled the board
    # the average increment is the walking player's own realization plan (no chance factor)
    plans = np.zeros(leduc.num_sequences)
    for p in players:
        view = leduc.views[p]
        plans[view.offset:view.offset + view.num_sequences - 1] = view.plan(policy.local(p))[1:]
    assert np.abs(est.average_increment - plans).max() < 0.05
    # negative control: forgetting the 1/q weight of the sampled board is rejected by the same check
    biased = RegretSampler(leduc, "public", seed=11)
    biased.public = biased.public._replace(weight=np.ones_like(biased.public.weight))
    assert not _unbiased(biased.sample(policy, traverser, 5000), exact)


OPTIONS = [{}, {"updates": "simultaneous", "average_mode": "optimistic"},
           {"regret_matching": "rm+", "averaging": "linear"}]


@pytest.mark.parametrize("options", OPTIONS)
def test_identical_seeds_give_identical_runs_and_resume_is_exact(leduc, options):
    runs = [make_solver("pcs-cfr", leduc, seed=s, **options).run(60) for s in (5, 5, 6)]
    a, b, c = (r.state_dict() for r in runs)
    for key in a:
        np.testing.assert_array_equal(a[key], b[key])
    assert not np.array_equal(a["sampler.regrets"], c["sampler.regrets"])
    first = make_solver("pcs-cfr", leduc, seed=5, **options).run(35)
    resumed = make_solver("pcs-cfr", leduc, seed=5, **options)  # the RNG state comes from the checkpoint
    resumed.load_state_dict(first.state_dict())
    resumed.run(25)
    for key, value in a.items():
        np.testing.assert_array_equal(value, resumed.state_dict()[key])


def test_converges_on_leduc(leduc):
    solver = make_solver("pcs-cfr", leduc, seed=0).run(2000)
    assert evaluate(leduc, solver.average_policy()).exploitability < 0.1


@pytest.mark.parametrize("options,field", [({"public_chance": "all"}, "public_chance"),
                                           ({"updates": "parallel"}, "updates"),
                                           ({"average_mode": "lazy"}, "average_mode"),
                                           ({"regret_matching": "cfr+"}, "regret_matching"),
                                           ({"seed": -1}, "seed")])
def test_bad_options_name_the_field(options, field):
    with pytest.raises(ValueError, match=field):
        make_solver("pcs-cfr", rcfr.load_game("kuhn"), **options)


def test_a_game_with_hidden_actions_is_refused():
    with pytest.raises(NotPublicError, match="public actions"):
        make_solver("pcs-cfr", rcfr.load_game("goofspiel", cards=3))
