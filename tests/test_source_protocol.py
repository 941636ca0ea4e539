"""Which source a game is (compiled or walked by its rules) is asked once per layer (docs/architecture.md, "Which
source a game is"): both game kinds and both sampler buffers answer the same questions, and the spellings of the
question stay in the modules that choose."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import rcfr
from rcfr.abstraction import make_abstraction
from rcfr.regrets import FullRegret, full_regret
from rcfr.regrets.rules import RulesFullRegret
from rcfr.sampling.buffers import SamplerBuffers
from rcfr.sampling.rules_buffers import RulesBuffers
from rcfr.sources.abstraction import CodeAbstraction
from rcfr.tree.abstraction import Abstraction

ROOT = Path(__file__).resolve().parent.parent
SPELLINGS = re.compile(r'on_rules|is_walked|is_rules|hasattr\([a-z_.]*tree, "states"\)|isinstance\([a-z_.]*, RulesGame\)')
#: where the question is still asked, and why: one place per layer, where the source is chosen
ASKED = {
    "rcfr/sampling/rules_source.py",  # the sampling walks: numba's compile-time choice of accessors (`rules_accessor`)
    "rcfr/solvers/base.py",  # `by_rules`: the solvers (MCCFR's buffers, sampled RCFR's form, Bluff's public tree)
    # and the kit (experiments/build.py: the rules path's config checks, a run's policy file)
    "rcfr/evaluation/__init__.py",  # rcfr.evaluate: the rules walks or the sequence form
}
#: at most this many lines ask it (issue 32)
MOST_SITES = 5


def test_the_question_is_asked_only_where_the_source_is_chosen():
    asking = {str(path.relative_to(ROOT)) for folder in ("rcfr", "experiments") for path in (ROOT / folder).rglob("*.py")
              if SPELLINGS.search(path.read_text())}
    assert asking <= ASKED, f"asked outside the modules that choose the source: {sorted(asking - ASKED)}"
    sites = [line for folder in ("rcfr", "experiments") for path in (ROOT / folder).rglob("*.py")
             for line in path.read_text().splitlines() if SPELLINGS.search(line)]
    assert len(sites) <= MOST_SITES, sites


def test_refusals_read_what_a_game_offers(kuhn):
    """What a kind of game cannot give is declared once (``offers``) and refused by `require`, by name."""
    from rcfr.solvers.base import require
    walked = rcfr.load_game("kuhn", compiled=False)
    assert kuhn.offers == {"arrays"} and walked.offers == {"rules"}
    for game, offer in ((kuhn, "arrays"), (walked, "rules"), ("kuhn", "arrays")):  # a string: check_game's to refuse
        require(game, offer, "x")
    with pytest.raises(ValueError, match=r"x on kuhn\(\) walked by its rules: needs"):
        require(walked, "arrays", "x", "needs")
    with pytest.raises(TypeError, match="x walks a game by its rules \\(a RulesGame\\), got Game"):
        require(kuhn, "rules", "x")
    with pytest.raises(ValueError, match="abstraction 'ehs' on kuhn\\(\\) walked by its rules: it needs the compiled"):
        make_abstraction(walked, "ehs")


def test_both_game_kinds_declare_their_sizes_and_abstractions(kuhn):
    walked = rcfr.load_game("kuhn", compiled=False)
    assert (walked.num_sequences, walked.num_infosets) == (None, None)
    assert (kuhn.num_sequences, kuhn.num_infosets) == (24, 12)
    dice, dice_walked = rcfr.load_game("liars_dice", dice1=1, dice2=1), rcfr.load_game("liars_dice", dice1=1, dice2=1,
                                                                                     compiled=False)
    code = make_abstraction(dice_walked, "bluff_last_bids", r=1)
    assert isinstance(code, CodeAbstraction) and dice_walked.as_abstraction(code) is code
    mapped = dice.as_abstraction(code)
    assert isinstance(mapped, Abstraction) and mapped.num_infosets < dice.num_infosets


def test_full_regret_is_the_library_s_choice_and_checkpoints_itself(kuhn):
    walked = rcfr.load_game("kuhn", compiled=False)
    assert isinstance(full_regret(walked), RulesFullRegret)
    tracker = full_regret(kuhn)
    assert isinstance(tracker, FullRegret)
    for seed in range(3):
        tracker.add(rcfr.Policy.random(kuhn, seed=seed))
    resumed = full_regret(kuhn)
    resumed.load_state_dict({k: np.array(v) for k, v in tracker.state_dict().items()})
    assert resumed.positive_sum() == tracker.positive_sum() and resumed.t == 3
    with pytest.raises(ValueError, match="plan of player 0"):
        resumed.load_state_dict({**tracker.state_dict(), "plan0": np.zeros(3)})


def test_both_buffers_answer_the_same_questions(kuhn):
    walked = rcfr.load_game("kuhn", compiled=False)
    for buffers in (SamplerBuffers(kuhn, "external"), RulesBuffers(walked, "external")):
        for name in ("SIZED", "sets_as_met", "overflowed", "num_slots", "num_set_ids", "current_policy",
                     "average_policy", "discovery_rows", "discovery_tree"):
            assert hasattr(buffers, name), (type(buffers).__name__, name)
        rows, region = buffers.discovery_rows()
        assert buffers.discovery_tree(rows) is not None and region >= 0
        assert not buffers.overflowed
