"""Regressions found in review: exact MLP resume, tree split thresholds, stale caches on writable
inputs, indicator features' size limit, regression stores under card abstractions."""

import numpy as np
import pytest

from rcfr.regressors import MLP, make_regressor
from rcfr.solvers import make_solver

MLP_SPEC = {"name": "mlp", "hidden": [8], "epochs": 3, "batch_size": 4, "seed": 3}


def _state_copy(solver):
    return {k: np.array(v, copy=True) for k, v in solver.state_dict().items()}


@pytest.mark.parametrize("name,options", [
    ("rcfr", {}),
    ("rcfr+", {"targets": "bootstrap"}),
    ("rcfr", {"shared": True}),
    ("rcfr+", {"refit_every": 3}),
    ("sampled-rcfr", {"seed": 4}),
    ("sampled-rcfr", {"seed": 4, "targets": "reservoir"}),
])
def test_mlp_resume_is_bit_exact(kuhn, name, options):
    """Stopped at iteration 8 and resumed in a fresh solver == an uninterrupted run, bit for bit."""
    options = dict(options, regressor=MLP_SPEC, features="generic")
    straight = make_solver(name, kuhn, **options).run(14)
    first = make_solver(name, kuhn, **options).run(8)
    state = _state_copy(first)
    resumed = make_solver(name, kuhn, **options)
    resumed.load_state_dict(state)
    resumed.run(6)
    assert np.array_equal(resumed.current_policy().probs, straight.current_policy().probs)
    assert np.array_equal(resumed.average_policy().probs, straight.average_policy().probs)


def test_mlp_state_round_trips_weights_optimizer_and_rng():
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(20, 3)), rng.normal(size=20)
    a = MLP(hidden=(5,), epochs=2, batch_size=6).fit(X, y)
    b = MLP(hidden=(5,), epochs=2, batch_size=6)
    b.load_state_dict({k: v.copy() for k, v in a.state_dict().items()})
    assert np.array_equal(a.predict(X), b.predict(X))
    a.fit(X, y + 1)
    b.fit(X, y + 1)
    assert np.array_equal(a.predict(X), b.predict(X))
    # a test that can fail: without the state, a fresh regressor's second fit differs
    c = MLP(hidden=(5,), epochs=2, batch_size=6).fit(X, y + 1)
    assert not np.array_equal(a.predict(X), c.predict(X))
    # an unfitted regressor's state restores an unfitted regressor
    d = MLP(hidden=(5,))
    d.load_state_dict(MLP(hidden=(5,)).state_dict())
    assert d.complexity() == 0
