"""Information-set abstractions on a game walked by its rules (`rcfr.sources.abstraction.CodeAbstraction`).

The same code function that maps a compiled game's sets (`Abstraction.from_codes`) keys the rules path's
regret table and finds an abstract policy's rows in the evaluations, so: evaluations of an abstract
`CodePolicy` equal the compiled evaluation of its expansion; seeded sampling runs equal the compiled
path's under the same abstraction (slow: they compile the rules driver).
"""

from __future__ import annotations

import numpy as np
import pytest
from numba import njit

import rcfr
from rcfr.abstraction import CodeAbstraction, make_abstraction
from rcfr.errors import PolicyError
from rcfr.evaluation import bluff as bluff_evaluation
from rcfr.evaluation import rules as rules_evaluation
from rcfr.games.fast import ABSTRACT_CODE
from rcfr.policy.rules import CodePolicy
from rcfr.solvers import mccfr

CASES = [("liars_dice", {}, "bluff_last_bids", {"r": 2}),
         ("goofspiel", {"cards": 4}, "goofspiel_last_turns", {"r": 0, "lead": "sign"}),
         ("latent_ttt", {"opening": (4, 0, 8)}, "latent_ttt_last_moves", {"r": 1}),
         ("phantom_ttt", {"opening": (4, 0, 8)}, "phantom_ttt_forget", {"forget": "fos"})]
IDS = [c[0] for c in CASES]


def games(name, params, kind, options):
    compiled, walked = rcfr.load_game(name, **params), rcfr.load_game(name, compiled=False, **params)
    return compiled, walked, make_abstraction(walked, kind, **options)


def random_abstract_policy(game, abstraction, seed):
    """A random row per abstract set of compiled `game`, keyed as the rules path keys them."""
    keys = abstraction.keys(game)
    codes, at = np.unique(keys, return_index=True)
    n = game.infoset_num_actions[at].astype(np.int64)
    first = np.zeros(len(codes) + 1, np.int64)
    np.cumsum(n, out=first[1:])
    x = np.random.default_rng(seed).random(first[-1])
    return CodePolicy(game.rules, codes, first, x / np.repeat(np.add.reduceat(x, first[:-1]), n), abstraction)


@pytest.mark.parametrize("name, params, kind, options", CASES, ids=IDS)
def test_an_abstract_policy_evaluates_as_its_expansion(name, params, kind, options):
    compiled, walked, abstraction = games(name, params, kind, options)
    assert isinstance(abstraction, CodeAbstraction)
    policy = random_abstract_policy(compiled, abstraction, seed=1)
    full = policy.to_policy(compiled)
    merged = abstraction.on(compiled)
    assert merged.num_infosets < compiled.num_infosets  # it merges sets
    # every merged set plays its abstract set's row
    rows = {}
    for I, J in enumerate(merged.infoset_map):
        f, n = compiled.infoset_first_seq[I], compiled.infoset_num_actions[I]
        rows.setdefault(int(J), full.probs[f:f + n])
        assert np.array_equal(rows[int(J)], full.probs[f:f + n])
    expected = rcfr.evaluate(compiled, full)
    ours = rules_evaluation.evaluate(compiled.rules, policy)
    assert ours.best_response_values == pytest.approx(expected.best_response_values, abs=1e-12)
    assert ours.value == pytest.approx(expected.value, abs=1e-12)
    if bluff_evaluation.walks(compiled.rules):
        public = bluff_evaluation.evaluate(compiled.rules, policy)
        assert public.best_response_values == pytest.approx(expected.best_response_values, abs=1e-12)
        assert public.value == pytest.approx(expected.value, abs=1e-12)


def test_a_partial_abstract_policy_needs_the_default():
    compiled, walked, abstraction = games(*CASES[0])
    policy = random_abstract_policy(compiled, abstraction, seed=2)
    keep = np.arange(len(policy.codes)) % 2 == 0
    n = np.diff(policy.first)
    first = np.zeros(int(keep.sum()) + 1, np.int64)
    np.cumsum(n[keep], out=first[1:])
    partial = CodePolicy(compiled.rules, policy.codes[keep], first, policy.probs[np.repeat(keep, n)], abstraction)
    for evaluate in (rules_evaluation.evaluate, bluff_evaluation.evaluate):
        with pytest.raises(ValueError, match="not in the policy"):
            evaluate(compiled.rules, partial)
        assert evaluate(compiled.rules, partial, default="uniform").exploitability == pytest.approx(
            rcfr.exploitability(compiled, partial.to_policy(compiled, default="uniform")), abs=1e-12)


def test_a_file_keeps_its_abstraction(tmp_path):
    compiled, walked, abstraction = games(*CASES[0])
    policy = random_abstract_policy(compiled, abstraction, seed=3)
    path = tmp_path / "policy.npz"
    policy.save(path)
    back = CodePolicy.load(compiled.rules, path, abstraction=make_abstraction(walked, "bluff_last_bids", r=2))
    assert np.array_equal(back.probs, policy.probs) and back.abstraction.identity == abstraction.identity
    with pytest.raises(PolicyError, match="bluff_last_bids"):
        CodePolicy.load(compiled.rules, path)  # without it
    with pytest.raises(PolicyError, match="r=3"):
        CodePolicy.load(compiled.rules, path, abstraction=make_abstraction(walked, "bluff_last_bids", r=3))
    plain = tmp_path / "plain.npz"
    CodePolicy.from_policy(rcfr.Policy.uniform(compiled)).save(plain)
    with pytest.raises(PolicyError, match="none"):
        CodePolicy.load(compiled.rules, plain, abstraction=abstraction)


def test_what_does_not_fit_the_rules_path_is_refused():
    walked = rcfr.load_game("liars_dice", compiled=False)
    with pytest.raises(ValueError, match="bluff_last_bids"):  # lists those that work
        make_abstraction(walked, "identity")
    compiled_map = make_abstraction(rcfr.load_game("liars_dice"), "bluff_last_bids", r=1)
    with pytest.raises(TypeError, match="CodeAbstraction"):
        mccfr.ExternalSamplingMCCFR(walked, abstraction=compiled_map, average_space="abstract")
    abstraction = make_abstraction(walked, "bluff_last_bids", r=1)
    with pytest.raises(ValueError, match="average_space"):
        mccfr.ExternalSamplingMCCFR(walked, abstraction=abstraction)  # "full" needs every full set
    other = rcfr.load_game("liars_dice", compiled=False, dice1=1, dice2=2)
    with pytest.raises(ValueError, match="built for"):
        mccfr.ExternalSamplingMCCFR(other, abstraction=abstraction, average_space="abstract")


def test_a_code_abstraction_runs_on_the_compiled_game():
    """A `CodeAbstraction` given to a compiled game's solver is its map of the compiled sets."""
    compiled, walked, abstraction = games(*CASES[1])
    a = mccfr.ChanceSamplingCFR(compiled, abstraction=abstraction, average_space="abstract", seed=1).run(20)
    b = mccfr.ChanceSamplingCFR(compiled, abstraction=make_abstraction(compiled, "goofspiel_last_turns", r=0, lead="sign"),
                                average_space="abstract", seed=1).run(20)
    assert np.array_equal(a.average_policy().probs, b.average_policy().probs)


@njit(ABSTRACT_CODE, cache=True)
def _one_set(data, s, out):
    out[0] = 0
    out[1] = 0  # a signature that lies: Goofspiel's sets differ in their actions


@pytest.mark.slow
@pytest.mark.parametrize("sampler", [mccfr.ExternalSamplingMCCFR, mccfr.OutcomeSamplingMCCFR,
                                     mccfr.ChanceSamplingCFR])
@pytest.mark.parametrize("name, params, kind, options", CASES, ids=IDS)
def test_seeded_runs_equal_the_compiled_path(name, params, kind, options, sampler):
    """Outcome and chance sampling: the same nodes and average sums. External sampling draws an opponent's action once
    per *abstract* set per traversal on the rules path (once per full set on the compiled tree), so it
    equals the compiled run only where no traversal meets two sets of one abstract set; it must still
    converge as far (the check is loose)."""
    compiled, walked, abstraction = games(name, params, kind, options)
    runs = [sampler(g, abstraction=abstraction, average_space="abstract", seed=5).run(150) for g in (compiled, walked)]
    ours = runs[1].average_policy()
    assert ours.abstraction is abstraction
    expected = rcfr.exploitability(compiled, runs[0].average_policy())
    value = rules_evaluation.exploitability(compiled.rules, ours, default="uniform")
    if sampler is mccfr.ExternalSamplingMCCFR:
        assert value < 1.5 * expected + 0.02
        return
    assert runs[1].nodes_touched == runs[0].nodes_touched
    # the same sums, normalized in another order: equal to rounding
    np.testing.assert_allclose(ours.to_policy(compiled, default="uniform").probs, runs[0].average_policy().probs,
                               rtol=0, atol=1e-14)
    assert value == pytest.approx(expected, abs=1e-12)


@pytest.mark.slow
def test_an_abstraction_merging_different_actions_fails_loudly():
    walked = rcfr.load_game("goofspiel", compiled=False, cards=4)
    lying = CodeAbstraction("one set", walked.rules, _one_set, walked.fast.data)
    solver = mccfr.OutcomeSamplingMCCFR(walked, abstraction=lying, average_space="abstract", seed=0)
    with pytest.raises(ValueError, match="different legal actions"):
        solver.run(50)


@pytest.mark.slow
def test_an_abstract_checkpoint_resumes_bit_identically():
    compiled, walked, abstraction = games(*CASES[0])
    def make():
        return mccfr.ExternalSamplingMCCFR(walked, abstraction=abstraction, average_space="abstract", seed=2)
    straight, first = make().run(60), make().run(30)
    second = make()
    second.load_state_dict(first.state_dict())
    second.run(30)
    assert np.array_equal(straight.average_policy().probs, second.average_policy().probs)
    plain = mccfr.ExternalSamplingMCCFR(walked, seed=2)
    with pytest.raises(ValueError):
        plain.load_state_dict(first.state_dict())  # another abstraction's checkpoint


def test_a_match_reads_an_abstract_policy_by_its_abstract_keys():
    """An abstract policy plays exactly as its expansion into the full game: on the same seed, the same actions
    are drawn in every play-out, so the match results are equal. The control: the same rows read as if
    they had no abstraction play otherwise."""
    compiled, walked, abstraction = games(*CASES[1])
    policy = random_abstract_policy(compiled, abstraction, seed=4)
    full = CodePolicy.from_policy(policy.to_policy(compiled))
    opponent = CodePolicy.from_policy(rcfr.Policy.random(compiled, seed=9))

    def match(a):
        return rcfr.match_policies(walked, a, opponent, samples=500, seed=1, default="uniform").seat_values

    assert match(policy) == match(full)
    blind = CodePolicy(compiled.rules, policy.codes, policy.first, policy.probs)  # keys taken as full codes
    assert match(blind) != match(full)
    with pytest.raises(ValueError, match="abstract set"):
        rcfr.approx_exploitability(walked, policy, budget=1000)
