"""Checks against independent computations, each with a negative control: the exact weighted average
policy of the CFR loop, regression stores with enough capacity against tabular CFR, and games at
non-default parameters against chance probabilities derived from the parameters alone."""

import itertools
from math import prod

import numpy as np
import pytest
from brute import policy_rows, walk_value

import rcfr
from rcfr.games import CHANCE
from rcfr.games.dice import FACE_NAMES, DieRollPoker
from rcfr.solvers import CFRSolver, RegretTable, make_solver


# ---- the CFR loop's average policy ----------------------------------------------------------------
def hand_plan(game, probs: np.ndarray) -> np.ndarray:
    """Realization plan of every global sequence: its probability times the plan of the sequence leading
    to its information set (information sets are numbered parents first)."""
    plan = np.zeros(game.num_sequences)
    for i in range(game.num_infosets):
        parent = game.infoset_parent_seq[i]
        first, n = game.infoset_first_seq[i], game.infoset_num_actions[i]
        plan[first:first + n] = (1.0 if parent < 0 else plan[parent]) * probs[first:first + n]
    return plan


def hand_average(game, weighted_plan: np.ndarray) -> np.ndarray:
    """Per information set, the plan's share of its set's total (uniform where the total is zero)."""
    totals = np.bincount(game.sequence_infoset, weighted_plan, minlength=game.num_infosets)[game.sequence_infoset]
    uniform = 1.0 / game.infoset_num_actions[game.sequence_infoset]
    return np.where(totals > 0, weighted_plan / np.where(totals > 0, totals, 1.0), uniform)


@pytest.mark.parametrize("averaging, power", [("uniform", 0.0), ("linear", 1.0), ("quadratic", 2.0), (1.5, 1.5)])
@pytest.mark.parametrize("updates", ["alternating", "simultaneous"])
def test_average_policy_is_the_weighted_sum_of_the_current_plans(averaging, power, updates):
    """sum_t t^power x plan_t, with plan_t the realization plan of the current policy that iteration t
    plays, normalized per information set; iteration weights off by one, (t - 1)^power, must differ."""
    game = rcfr.load_game("leduc", ranks=3, suits=1)
    solver = CFRSolver(game, RegretTable(), updates=updates, averaging=averaging)
    total, shifted = np.zeros(game.num_sequences), np.zeros(game.num_sequences)
    for t in range(1, 9):
        plan = hand_plan(game, solver.current_policy().probs)  # what iteration t plays
        total += t ** power * plan
        shifted += (t - 1) ** power * plan
        solver.iterate()
    assert np.allclose(solver.average_policy().probs, hand_average(game, total), rtol=0, atol=1e-12)
    if power > 0:  # negative control: the off-by-one weighting is told apart
        assert np.abs(hand_average(game, shifted) - hand_average(game, total)).max() > 1e-3


# ---- regression stores with enough capacity are tabular CFR ---------------------------------------
@pytest.mark.parametrize("solver, reference", [("rcfr", "cfr"), ("rcfr+", "cfr+")])
@pytest.mark.parametrize("targets", ["stored", "bootstrap"])
def test_regressors_that_can_represent_every_sequence_reproduce_tabular_cfr(kuhn, solver, reference, targets):
    """A tree with one leaf per sequence (Kuhn: 12 per player) fits the targets exactly, so RCFR is
    CFR (RCFR+ is CFR+) to rounding; one leaf fewer is not. The bound comes from the tabular solver,
    not from a recorded number."""
    expected = make_solver(reference, kuhn, averaging="uniform").run(25).average_policy().probs
    assert kuhn.sequences_per_player == (12, 12)
    for spec in ({"name": "tree", "max_leaves": 12}, {"name": "best_first", "max_leaves": 12},
                 {"name": "recursive", "threshold": 0.0}):
        ours = make_solver(solver, kuhn, regressor=spec, features="poker", targets=targets, averaging="uniform")
        assert np.allclose(ours.run(25).average_policy().probs, expected, rtol=0, atol=1e-9), spec
    short = make_solver(solver, kuhn, regressor={"name": "tree", "max_leaves": 11}, features="poker",
                        targets=targets, averaging="uniform").run(25)
    assert np.abs(short.average_policy().probs - expected).max() > 1e-2


# ---- games at non-default parameters --------------------------------------------------------------
def deal(deck_size):
    """Cards dealt without replacement from a deck of `deck_size`: each remaining card equally likely."""
    def chance(state, outcomes):
        left = deck_size - len(state.cards)
        assert len(outcomes) == left
        return [1.0 / left] * left
    return chance


def dice(faces):
    def chance(state, outcomes):
        assert len(outcomes) == faces
        return [1.0 / faces] * faces
    return chance


GAMES = [
    ("dieroll", {"faces": 3}, lambda p: dice(3)),
    ("dieroll", {"faces": 4, "bets": (1, 3)}, lambda p: dice(4)),
    ("leduc", {"ranks": 2, "suits": 3}, lambda p: deal(6)),
    ("leduc", {"ranks": 4, "suits": 1}, lambda p: deal(4)),
    ("leduc", {"ranks": 4, "suits": 2, "merge_suits": True}, lambda p: deal(8)),
    ("ocp", {"cards": 5}, lambda p: deal(5)),
    ("nlocp", {"cards": 3, "stack": 5}, lambda p: deal(3)),
]


def _matches_independent_chance(game, chance, seeds=(0, 1)) -> bool:
    for seed in seeds:
        policy = rcfr.Policy.random(game, seed)
        independent = walk_value(game.rules, policy_rows(policy), chance=chance)
        if abs(rcfr.expected_value(game, policy) - independent) > 1e-12:
            return False
    return True


def _chance_rows_sum_to_one(game) -> bool:
    nodes = np.flatnonzero(game.player == CHANCE)
    sums = [game.chance_prob[game.first_child[h]:game.first_child[h] + game.num_children[h]].sum() for h in nodes]
    return bool(np.allclose(sums, 1.0, rtol=0, atol=1e-12))


@pytest.mark.parametrize("name, params, model", GAMES, ids=[f"{n}-{p}" for n, p, _ in GAMES])
def test_games_at_other_parameters_match_an_independent_chance_model(name, params, model):
    """Expected values of random policies on the compiled game equal a walk over the rules whose chance
    probabilities come from the parameters alone (uniform dice, dealing without replacement)."""
    game = rcfr.load_game(name, **params)
    assert _chance_rows_sum_to_one(game)
    assert _matches_independent_chance(game, model(params))


class SixSidedOdds(DieRollPoker):
    """A deliberately wrong die: 1/6 per face whatever the number of faces."""

    name = "dieroll_six_sided_odds"

    def chance_outcomes(self, s):
        return [(str(f + 1), 1.0 / 6) for f in range(self.faces)]


class LoadedDie(DieRollPoker):
    """A deliberately wrong die that still sums to one: 1/6 per face, the last face takes the rest."""

    name = "dieroll_loaded"

    def chance_outcomes(self, s):
        return [(str(f + 1), 1.0 / 6 if f < self.faces - 1 else 1 - (self.faces - 1) / 6) for f in range(self.faces)]


def test_a_chance_probability_hard_coded_for_six_faces_is_caught():
    """Negative controls for the test above: both mutants agree with the model at six faces only."""
    for mutant in (SixSidedOdds, LoadedDie):
        six = rcfr.compile_game(mutant(faces=6, bets=(2,), max_raises=0))  # one betting round: small
        assert _matches_independent_chance(six, dice(6), seeds=(0,))
    with pytest.raises(ValueError, match="must be a distribution"):  # the compiler's own check
        rcfr.compile_game(SixSidedOdds(faces=3))
    loaded = rcfr.compile_game(LoadedDie(faces=3))
    assert _chance_rows_sum_to_one(loaded) and not _matches_independent_chance(loaded, dice(3), seeds=(0,))


@pytest.mark.parametrize("count", [1, 2, 3])
def test_bluff_roll_probabilities_count_ordered_rolls(count):
    """Bluff rolls a player's dice as one sorted outcome; its probability is the share of the 6^count
    ordered rolls that sort to it."""
    rules = rcfr.make_rules("liars_dice", dice1=min(count, 2), dice2=1)
    state = rules.initial_state()
    if count == 3:  # player 1's single die after player 0's two: a different count, same rule
        state = rules.next_state(state, 0)
        count = 1
    counts = {}
    for roll in itertools.product(range(len(FACE_NAMES)), repeat=count):
        key = "".join(FACE_NAMES[f] for f in sorted(roll))
        counts[key] = counts.get(key, 0) + 1
    total = prod([len(FACE_NAMES)] * count)
    outcomes = dict(rules.chance_outcomes(state))
    assert outcomes.keys() == counts.keys()
    for key, n in counts.items():
        assert outcomes[key] == pytest.approx(n / total, abs=1e-15)


def test_rrm_rejects_non_finite_predictions():
    """Regression regret matching on a matrix game fails loudly on a NaN prediction, naming the round."""
    from sklearn.base import BaseEstimator, RegressorMixin

    from rcfr.solvers.rrm import RRM

    class NaNRegressor(RegressorMixin, BaseEstimator):
        def fit(self, X, y, sample_weight=None):
            return self

        def predict(self, X):
            return np.full(len(X), np.nan)

    learner = RRM(3, regressor=NaNRegressor())
    with pytest.raises(ValueError, match="round 1"):
        learner.observe(np.array([1.0, 0.0, -1.0]))
