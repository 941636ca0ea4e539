"""Imperfect-recall abstractions of the dice games (Lanctot 2013, ch. 5): sizes against Table 5.1,
independent counts, the closed-form Bluff count, Skew-DRP's payoff."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from brute import policy_rows, walk_value

import rcfr
from rcfr.abstraction import FullRegret, abstract_solver, average_policy, bluff_counters, make_abstraction
from rcfr.games.dice import DieRollPoker
from rcfr.policy import Policy


# DRP betting round (one bet, one raise): decisions "" (2 actions), c (2), cr (3), crr (2), r (3), rr (2):
# 14 (I, a) pairs per private state; 5 sequences continue to round 2 (cc, crc, crrc, rc, rrc).
# DRP: 6 dice x 14 + 36 dice pairs x 5 x 14 = 2604; DRP-IR: 6 x 14 + 11 sums x 5 x 14 = 854.
# Table 5.1 reports 2610 and 860: 6 more in both (one per first die), as if the thesis's first round
# had one more (I, a) pair; its second-round structure, which the abstraction changes, agrees with ours.
def test_drp_ir_sizes():
    game = rcfr.load_game("dieroll")
    abstraction = make_abstraction(game, "drp_ir")
    assert game.num_sequences == 6 * 14 + 36 * 5 * 14 == 2610 - 6
    assert abstraction.num_sequences == 6 * 14 + 11 * 5 * 14 == 860 - 6
    assert game.num_sequences - abstraction.num_sequences == 2610 - 860  # the saving matches Table 5.1


def test_drp_ir_merges_exactly_equal_sums():
    game = rcfr.load_game("dieroll")
    abstraction = make_abstraction(game, "drp_ir")
    ids = dict(zip(map(str, game.infoset_keys), abstraction.infoset_map.tolist()))
    assert ids["15|cc/"] == ids["24|cc/"] == ids["33|cc/"] == ids["51|cc/"]
    assert ids["15|cc/"] != ids["16|cc/"] and ids["15|cc/"] != ids["15|rc/"]
    assert len({ids[k] for k in ids if "/" not in k}) == sum("/" not in k for k in ids)  # round 1 untouched


def _last_bids_count(game, r: int) -> int:
    """(I, a) pairs of the last-r-bids abstraction counted from the compiled game's keys directly."""
    actions = {}
    for key, player, n in zip(map(str, game.infoset_keys), game.infoset_player.tolist(),
                              game.infoset_num_actions.tolist()):
        own, bids = key.split("|")
        actions.setdefault((player, own, tuple(bids.split()[-r:])), n)
    return sum(actions.values())


@pytest.mark.parametrize("r", [1, 2, 4, 7, 12])
def test_bluff_last_bids_sizes(r):
    game = rcfr.load_game("liars_dice")
    abstraction = make_abstraction(game, "bluff_last_bids", r=r)
    forced = bool((game.infoset_num_actions == 1).any())  # a compiled game may collapse forced moves
    assert abstraction.num_sequences == _last_bids_count(game, r) == bluff_counters(1, 1, r, forced=forced)
    if r == 12:  # every bid remembered: the full game
        assert abstraction.num_infosets == game.num_infosets


def test_bluff_counters_match_table_5_1():
    table = {1: 12_600, 2: 97_608, 3: 543_900, 4: 2_329_068, 6: 22_518_468, 8: 108_323_418, 10: 295_534_218}
    assert {r: bluff_counters(2, 2, r) for r in table} == table
    assert bluff_counters(2, 2) == 704_643_030 == 21 * (2 ** 25 - 2)
    assert bluff_counters(1, 1) == 6 * (2 ** 13 - 2)
    # collapsing forced moves drops the 2^(n-1) sequences ending in the highest bid, per roll
    assert bluff_counters(1, 1, forced=False) == 6 * (2 ** 13 - 2) - 6 * 2 ** 11
    assert bluff_counters(2, 2, 1, forced=False) == 12_600 - 2 * 21


def test_errors_name_the_field():
    with pytest.raises(ValueError, match="'liars_dice'"):
        make_abstraction(rcfr.load_game("dieroll"), "bluff_last_bids")
    with pytest.raises(ValueError, match="r \\(bids remembered\\)"):
        make_abstraction(rcfr.load_game("liars_dice"), "bluff_last_bids", r=0)
    with pytest.raises(ValueError, match="'skew'"):
        DieRollPoker(skew=-1)
    with pytest.raises(ValueError, match="r \\(bids remembered\\)"):
        bluff_counters(2, 2, 0)
    tracker = FullRegret(rcfr.load_game("kuhn"))
    with pytest.raises(ValueError, match="no profiles yet"):
        tracker.average_regrets()
    with pytest.raises(ValueError, match="FullRegret measures kuhn"):
        tracker.add(Policy.uniform(rcfr.load_game("leduc")))


def _play(rules, moves):
    s = rules.initial_state()
    for m in moves:
        s = rules.next_state(s, m)
    return s


def test_skew_pays_player_0_on_an_even_second_die():
    plain, skewed = DieRollPoker(), DieRollPoker(skew=0.5)
    assert plain.description() == DieRollPoker(skew=0).description()  # same cache key and fingerprint
    # dice: P0 1, P1 1; check-check; P0 second die d, P1 2; check-check: pot 2, showdown
    for die, bonus in [(1, 1.0), (0, 0.0)]:  # index 1 is a 2 (even), index 0 a 1
        moves = [0, 0, 0, 0, die, 1, 0, 0]
        assert skewed.utility(_play(skewed, moves)) == plain.utility(_play(plain, moves)) + bonus
    folded = [0, 0, 1, 0]  # P0 bets, P1 folds: no showdown, no bonus
    assert skewed.utility(_play(skewed, folded)) == plain.utility(_play(plain, folded))


@pytest.mark.parametrize("name, options, identical", [("drp_ir", {}, True), ("bluff_last_bids", {"r": 4}, False)])
def test_full_and_abstract_averaging_as_in_fig_5_3(name, options, identical):
    """Thesis Fig 5.3: identical exploitability on DRP-IR, small differences on Bluff(1,1) r = 4."""
    game = rcfr.load_game("dieroll" if name == "drp_ir" else "liars_dice")
    solver = abstract_solver("cfr", game, make_abstraction(game, name, **options)).run(10)
    full, abstract = (rcfr.exploitability(game, average_policy(solver, a)) for a in ("full", "abstract"))
    assert not (average_policy(solver, "full").probs == average_policy(solver, "abstract").probs).all()
    assert abs(full - abstract) < 1e-12 if identical else 1e-6 < abs(full - abstract) < 1e-2


def test_full_regret_matches_brute_force_over_pure_strategies():
    game = rcfr.load_game("kuhn")
    profiles = [Policy.random(game, seed=s) for s in range(3)]
    tracker = FullRegret(game)
    for policy in profiles:
        tracker.add(policy)
    rows = [policy_rows(p) for p in profiles]
    for player, sign in ((0, 1.0), (1, -1.0)):
        mine = [str(k) for k, p in zip(game.infoset_keys, game.infoset_player) if p == player]
        best = -float("inf")
        for pure in itertools.product(*[range(len(rows[0][k])) for k in mine]):
            total = 0.0
            for r in rows:
                trial = dict(r, **{k: [float(b == a) for b in range(len(r[k]))] for k, a in zip(mine, pure)})
                total += sign * walk_value(game.rules, trial)
            best = max(best, total / len(rows))
        played = sum(sign * walk_value(game.rules, r) for r in rows) / len(rows)
        assert tracker.average_regrets()[player] == pytest.approx(best - played, abs=1e-12)
    assert tracker.positive_sum() == pytest.approx(sum(max(r, 0) for r in tracker.average_regrets()))


def test_skewed_die_roll_poker_compiles_to_the_rule_paths_arrays():
    """The compiled Skew-DRP pays the bonus exactly as the rules do (the fast encoder knows no skew)."""
    from rcfr import tree

    rules = rcfr.make_rules("dieroll", faces=3, skew=0.5)
    compiled, by_rules = tree.compile_game(rules), tree.compile_game(rules, fast=False)
    assert np.array_equal(compiled.utility, by_rules.utility)
    assert not np.array_equal(compiled.utility, tree.compile_game(rcfr.make_rules("dieroll", faces=3)).utility)
