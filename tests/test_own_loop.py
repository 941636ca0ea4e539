"""The own-loop path: docs/own_loop.md runs as written, and its pieces agree with the library's loop."""

import re
from pathlib import Path

import numpy as np
import pytest

import rcfr
from rcfr.solvers import CFRSolver, RegretTable

PAGE = Path(__file__).resolve().parents[1] / "docs" / "own_loop.md"
BLOCKS = re.findall(r"```python\n(.*?)```", PAGE.read_text(), flags=re.S)


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_every_example_of_the_page_runs_and_learns(index):
    scope = {}
    exec(compile(BLOCKS[index], f"{PAGE.name} block {index}", "exec"), scope)
    policy = scope["average"] if "average" in scope else scope["solver"].average_policy()
    assert rcfr.exploitability(scope["game"], policy) < 0.1  # uniform: 0.458


def test_the_page_has_both_examples():
    assert len(BLOCKS) == 2


def test_counterfactual_regrets_drive_the_same_cfr_as_the_library(kuhn):
    """Tabular CFR written with the public pieces equals the library's CFR (simultaneous, uniform)."""
    ref = CFRSolver(kuhn, RegretTable(), updates="simultaneous").run(30)
    total, plans = np.zeros(kuhn.num_sequences), np.zeros(kuhn.num_sequences)
    policy = rcfr.Policy.uniform(kuhn)
    for _ in range(30):
        plans += rcfr.realization_plan(kuhn, policy)
        total += rcfr.counterfactual_regrets(kuhn, policy)
        policy = rcfr.Policy.from_regrets(kuhn, total)
    assert np.allclose(rcfr.Policy.from_plan(kuhn, plans).probs, ref.average_policy().probs, atol=1e-12)
    assert np.allclose(policy.probs, ref.current_policy().probs, atol=1e-12)


def test_one_player_regrets_leave_the_other_at_zero(kuhn):
    policy = rcfr.Policy.random(kuhn, seed=1)
    both = rcfr.counterfactual_regrets(kuhn, policy)
    split = kuhn.views[1].offset
    mine = rcfr.counterfactual_regrets(kuhn, policy, player=0)
    assert np.array_equal(mine[:split], both[:split]) and not mine[split:].any() and both[split:].any()
    with pytest.raises(ValueError, match="player must be 0, 1 or None"):
        rcfr.counterfactual_regrets(kuhn, policy, player=2)


def test_make_solver_takes_a_store_and_rejects_other_objects(kuhn):
    solver = rcfr.make_solver("cfr", kuhn, store=RegretTable("rm+")).run(5)
    assert solver.store.regret_matching == "rm+"
    with pytest.raises(ValueError, match="store must be a RegretStore"):
        rcfr.make_solver("cfr", kuhn, store="table")
