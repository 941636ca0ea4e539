"""The sampling engine's layout: one file name per module, the state source's accessors, the settings words."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from numba import njit

import rcfr
from rcfr.sampling import bundles
from rcfr.sampling.buffers import SamplerBuffers
from rcfr.sampling.states import child, infoset, mover, num_moves, outcome_probs, payoff


def test_no_sampling_module_shares_its_file_name():
    """`rcfr/kernels.py` is the sequence-form one; the sampling modules are named for their jobs."""
    root = Path(rcfr.__file__).parent
    names = Counter(p.name for p in root.rglob("*.py") if p.name != "__init__.py" and "__pycache__" not in p.parts)
    sampling = {p.name for p in (root / "sampling").glob("*.py") if p.name != "__init__.py"}
    assert [n for n in sorted(sampling) if names[n] > 1] == []


@njit(cache=True)
def _read_all(tree, out):
    """Every history's accessors, as the walks see them."""
    for h in range(tree.player.shape[0]):
        p = mover(tree, h)
        out[h, 0] = p
        out[h, 1] = num_moves(tree, h)
        if p == bundles.TERMINAL:
            out[h, 4] = payoff(tree, h)
            continue
        out[h, 2] = child(tree, h, num_moves(tree, h) - 1, 0)  # the last child
        if p == bundles.CHANCE:
            probs, start = outcome_probs(tree, h)
            out[h, 3] = probs[start]  # the first outcome's probability
        else:
            out[h, 3] = infoset(tree, h)


@pytest.mark.parametrize("name", ["kuhn", "leduc"])
def test_the_compiled_tree_as_state_source_reads_the_game_arrays(name):
    game = rcfr.load_game(name)
    tree = SamplerBuffers(game, "outcome").tree
    out = np.full((game.num_histories, 5), np.nan)
    _read_all(tree, out)
    player = np.asarray(game.player)
    assert np.array_equal(out[:, 0], player)
    assert np.array_equal(out[:, 1], game.num_children)
    inner = player != bundles.TERMINAL
    assert np.array_equal(out[inner, 2], (game.first_child + game.num_children - 1)[inner])
    chance = player == bundles.CHANCE
    assert np.array_equal(out[chance, 3], np.asarray(game.chance_prob)[game.first_child[chance]])
    decision = player >= 0
    assert np.array_equal(out[decision, 3], game.infoset[decision])
    assert np.array_equal(out[~inner, 4], np.asarray(game.utility)[~inner])


def test_settings_are_built_from_the_options_words():
    s = bundles.make_settings("public", updates="simultaneous", regret_matching="rm+", public_chance="enumerate",
                              average_mode="optimistic")
    assert (s.sampler, s.updates, s.regret_matching, s.chance_sampling, s.average_mode) == (
        bundles.PUBLIC_CHANCE, bundles.SIMULTANEOUS, bundles.RM_PLUS, bundles.ALL, bundles.AVG_OPTIMISTIC)
    s = bundles.make_settings("chance", chance_sampling="paired")
    assert (s.sampler, s.chance_sampling) == (bundles.CHANCE_SAMPLED, bundles.PAIRED)
    with pytest.raises(KeyError, match="parallel"):
        bundles.make_settings("outcome", updates="parallel")


def test_public_chance_sampling_runs_under_the_one_driver():
    """pcs-cfr's buffers carry the public tree in the Tree bundle and its walk's scratch in Scratch; the other
    samplers carry empty ones of the same dtypes, so one compiled driver serves both."""
    game = rcfr.load_game("kuhn")
    pcs, os_ = SamplerBuffers(game, "public"), SamplerBuffers(game, "outcome")
    assert len(pcs.tree.public.kind) > 0 and len(os_.tree.public.kind) == 0
    for a, b in zip(pcs.tree.public, os_.tree.public):
        assert a.dtype == b.dtype
    for a, b in zip(pcs.scratch.public, os_.scratch.public):
        assert a.dtype == b.dtype
