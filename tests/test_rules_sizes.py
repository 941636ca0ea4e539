"""`rcfr.sources.sizes.count_sizes`, the depth-first size count, against the compiled games."""

from __future__ import annotations

import pytest

import rcfr
from rcfr.games import GameRules
from rcfr.games.phantom import phantom_counts
from rcfr.sources.sizes import Sizes, count_sizes
from tests.test_phantom import brute_force


@pytest.mark.parametrize("name, params", [("kuhn", {}), ("leduc", {}), ("latent_ttt", {"opening": (4, 0, 8)}),
                                          ("phantom_ttt", {"opening": (4, 0, 8, 2)}),
                                          ("phantom_ttt", {"opening": (0, 1, 4)}), ("liars_dice", {}),
                                          ("pam", {"horizon": 2})])
def test_counts_equal_the_compiled_game(name, params):
    game = rcfr.load_game(name, cache=False, **params)
    assert count_sizes(game.rules) == Sizes(game.num_histories, game.num_terminals, game.infosets_per_player,
                                            game.sequences_per_player)


def test_uncollapsed_counts():
    opening = (4, 0, 8)
    sizes = count_sizes(rcfr.make_rules("phantom_ttt", opening=opening), collapse=False)
    assert (sizes.histories, sizes.terminals) == phantom_counts(opening, collapse=False)
    assert tuple(sizes) == brute_force(opening, collapse=False)
    assert count_sizes(rcfr.make_rules("kuhn"), collapse=False) == count_sizes(rcfr.make_rules("kuhn"))


def test_needs_a_fast_path():
    with pytest.raises(ValueError, match="fast path"):
        count_sizes(GameRules())


@pytest.mark.parametrize("opening", [(4, 0, 8), (0, 1, 4)])
def test_phantom_belief_count_agrees_with_the_walk(opening):
    from rcfr.games.phantom_sizes import phantom_infosets
    sizes = count_sizes(rcfr.make_rules("phantom_ttt", opening=opening))
    assert phantom_infosets(opening) == (sizes.infosets, sizes.sequences)
