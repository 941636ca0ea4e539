"""Goofspiel beyond the compiled tree: up to 13 cards (the int64 codes allow 14), refused by the compiled
path from its size estimate, walked by its rules with the bounds it declares. Chance-sampled CFR would walk
the whole game every iteration (Goofspiel has no chance), so above the compile limit it says so."""

from __future__ import annotations

import warnings

import pytest

import rcfr
from rcfr.errors import RulesPathWarning, TooLarge
from rcfr.games.goofspiel import MAX_CARDS
from rcfr.games.goofspiel_fast import goofspiel_code_space
from rcfr.solvers import mccfr
from rcfr.sources.rules import RulesGame


def test_thirteen_cards_have_int64_codes_and_fifteen_do_not():
    assert MAX_CARDS == 13
    assert rcfr.make_rules("goofspiel", cards=13).fast().code_space == goofspiel_code_space(13) < 2**63
    assert goofspiel_code_space(14) < 2**63 < goofspiel_code_space(15)


@pytest.mark.parametrize("cards", [0, 14])
def test_cards_beyond_the_cap_are_refused(cards):
    with pytest.raises(ValueError, match=rf"'cards' must be an integer in \[1, 13\], got {cards}"):
        rcfr.make_rules("goofspiel", cards=cards)


@pytest.mark.parametrize("cards", [2, 3, 4, 5])
@pytest.mark.parametrize("points_order", ["descending", "random"])
def test_walk_bounds_are_the_compiled_depth_and_width(cards, points_order):
    game = rcfr.load_game("goofspiel", cards=cards, points_order=points_order, cache=False)
    assert game.rules.walk_bounds() == (int(game.depth.max()), int(game.num_children.max()))


def test_one_card_is_a_single_terminal():
    # nothing to decide: the compiled game is one terminal; the bounds still give the walk one slot
    assert rcfr.make_rules("goofspiel", cards=1).walk_bounds() == (0, 1)
    assert int(rcfr.load_game("goofspiel", cards=1, cache=False).depth.max()) == 0


def test_thirteen_cards_are_walked_by_their_rules():
    with pytest.raises(TooLarge, match=r"goofspiel\(cards=13.*histories"):
        rcfr.load_game("goofspiel", cards=13, compiled=True, cache=False)
    with pytest.warns(RulesPathWarning, match="Walking it by its rules"):
        game = rcfr.load_game("goofspiel", cards=13)
    assert isinstance(game, RulesGame) and (game.depth, game.widest) == (24, 13)


def rules_game(cards):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RulesPathWarning)
        return rcfr.load_game("goofspiel", cards=cards)


@pytest.mark.parametrize("kwargs", [{}, {"chance_sampling": "paired"}, {"chance_sampling": "all"}])
def test_chance_sampling_that_walks_the_whole_game_warns(kwargs):
    with pytest.warns(RulesPathWarning, match=r"no chance events.*every iteration walks all .* histories"
                       if not kwargs.get("chance_sampling") == "all" else r"chance_sampling='all' walks"):
        mccfr.ChanceSamplingCFR(rules_game(13), **kwargs)


def test_chance_sampling_on_phantom_ttt_warns_of_its_hours():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RulesPathWarning)
        game = rcfr.load_game("phantom_ttt")
    with pytest.warns(RulesPathWarning, match=r"16,363,068,211 histories \(about 4.5 hours each"):
        mccfr.ChanceSamplingCFR(game)


def test_chance_sampling_on_a_small_game_walked_by_its_rules_is_quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mccfr.ChanceSamplingCFR(rcfr.load_game("goofspiel", cards=4, compiled=False))


@pytest.mark.slow  # a cold cache compiles the sampling driver for the rules path first (~2 CPU minutes)
def test_outcome_sampling_runs_on_thirteen_cards():
    solver = mccfr.OutcomeSamplingMCCFR(rules_game(13), seed=0)
    solver.run(50)
    # each iteration samples one terminal history per player (alternating updates): 24 decisions and a
    # terminal each, the forced last bids collapsed
    assert solver.nodes_touched == 50 * 2 * 25
    assert 24 < solver.buffers.num_sets <= 50 * 2 * 24
    assert len(solver.average_policy().codes) == solver.buffers.num_sets
