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
from rcfr.rules.abstraction import CodeAbstraction
from rcfr.rules.arrays import RulesBuffers
from rcfr.rules.regrets import RulesFullRegret
from rcfr.sampling.buffers import SamplerBuffers
from rcfr.tree.abstraction import Abstraction

ROOT = Path(__file__).resolve().parent.parent
SPELLINGS = re.compile(r'on_rules|is_walked|is_rules|hasattr\([a-z_.]*tree, "states"\)|isinstance\([a-z_.]*, RulesGame\)')
#: where the question is still asked, and why: each module chooses there once
ASKED = {
    "rcfr/rules/source.py",  # the sampling walks: numba's compile-time choice of accessors (`@overload`)
    "rcfr/evaluation.py",  # rcfr.evaluate: the rules walks or the sequence form
    "rcfr/approx_evaluation.py",  # the sampled evaluation's fast path of either kind
    "rcfr/solvers/mccfr.py",  # MCCFRSolver._setup: the buffers, chosen once
    "rcfr/solvers/sampled_rcfr.py",  # the sampled-RCFR factory: the form, chosen once
    "rcfr/solvers/lean_rules.py",  # RulesLeanSampledRCFR refuses a compiled game
    "rcfr/solvers/neural/solver.py",  # the Deep CFR family refuses a game walked by its rules, by name
    "rcfr/solvers/public_tree.py",  # walk="auto" takes Bluff's public tree on a Bluff walked by its rules
    "rcfr/abstraction/__init__.py",  # make_abstraction refuses map abstractions on the rules
    "experiments/build.py",  # the kit: the rules path's config checks, and a run's policy file
}


def test_the_question_is_asked_only_where_the_source_is_chosen():
    asking = {str(path.relative_to(ROOT)) for folder in ("rcfr", "experiments") for path in (ROOT / folder).rglob("*.py")
              if SPELLINGS.search(path.read_text())}
    assert asking <= ASKED, f"asked outside the modules that choose the source: {sorted(asking - ASKED)}"


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
