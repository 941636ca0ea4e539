"""state_bytes(): what a solver keeps between iterations, counted once per array buffer, the game left out,
regressors as their compiled models; constant on a compiled game, growing with the sets met on the rules."""

import numpy as np
import pytest

import rcfr
from rcfr.regressors import ExactTable, compile_model
from rcfr.solvers import make_solver
from rcfr.solvers.state_bytes import regressor_bytes, state_breakdown

LEAN = {"features_on_demand": True, "features": "poker", "targets": "reservoir", "capacity": 200, "traversals": 1,
        "refit_every": 2, "seed": 1, "regressor": {"name": "best_first", "max_leaves": 2}, "profile": "cache"}


@pytest.fixture(scope="module")
def kuhn():
    return rcfr.load_game("kuhn")


def test_tables_count_per_sequence_and_leave_the_game_out(kuhn):
    es = make_solver("es-mccfr", kuhn, seed=0)
    parts = state_breakdown(es)
    assert parts["buffers.regrets"] == parts["buffers.avg"] == parts["buffers.sigma"] == 8 * kuhn.num_sequences
    assert sum(parts.values()) == es.state_bytes()
    assert not any(path.startswith("game") for path in parts)
    game_bytes = sum(np.asarray(getattr(kuhn, f)).nbytes for f in ("player", "parent", "infoset"))
    assert es.state_bytes() < 40 * kuhn.num_sequences + 2_000 < game_bytes + 40 * kuhn.num_sequences + 2_000


def test_each_buffer_counts_once(kuhn):
    """A view adds nothing, a new array its bytes (negative control: the count can change)."""
    es = make_solver("es-mccfr", kuhn, seed=0)
    before = es.state_bytes()
    es.view = es.buffers.regrets[2:]
    assert es.state_bytes() == before
    es.extra = np.zeros(100)
    assert es.state_bytes() == before + 800


def test_regressors_count_as_their_compiled_models(kuhn):
    lean = make_solver("sampled-rcfr", kuhn, **LEAN).run(4)
    parts = state_breakdown(lean)
    for p in (0, 1):
        assert parts[f"regressors[{p}]"] == compile_model(lean.regressors[p]).nbytes > 0
    table = ExactTable().fit(np.eye(3), np.arange(3.0))
    assert regressor_bytes(table) > 0  # not compilable: its pickle
    assert regressor_bytes(ExactTable()) == 0  # not fit yet


@pytest.mark.parametrize("name, options", [("es-mccfr", {"seed": 0}), ("cfr+", {}), ("sampled-rcfr", LEAN)])
def test_state_on_a_compiled_game_does_not_grow(kuhn, name, options):
    solver = make_solver(name, kuhn, **options).run(6)
    first = solver.state_bytes()
    assert solver.run(6).state_bytes() == first > 0


@pytest.mark.slow  # the sampling driver on the rules' state source (a minute to compile cold)
def test_state_on_the_rules_path_grows_with_the_sets_met(monkeypatch):
    """The rules path numbers sets as met and doubles its arrays when half used: bytes follow the sets."""
    from rcfr.sources.rules import RulesGame
    monkeypatch.setattr(RulesGame, "initial_sets", 4)
    game = rcfr.load_game("liars_dice", dice1=1, dice2=1, compiled=False)
    es = make_solver("es-mccfr", game, seed=0, walk="general")  # the general walk (Bluff's own preallocates)
    empty = es.state_bytes()
    es.run(200)
    assert es.state_bytes() > empty
    assert es.state_bytes() >= es.buffers.nbytes()
