"""What a run measures at each evaluation besides exploitability (``run.measure``).

* ``exploitability`` (default): the exploitability of the average policy; nothing per iteration.
* ``full_regret``: (R_1^{T,+} + R_2^{T,+}) / T in the full game over the profiles σ^1..σ^T the solver
  *played* (Lanctot 2013, Fig 5.4; the library's tracker for the game's kind, `rcfr.regrets.full_regret`:
  `FullRegret`, or `rcfr.regrets.rules.RulesFullRegret` on a game walked by its rules, one walk of the whole game
  per profile). It needs every iteration's current
  policy, so the runner steps one iteration at a time and shows the measure σ^t before iteration t.
* ``approx_exploitability``: `rcfr.approx_exploitability` of the average policy, a sampled lower bound on
  its exploitability (responders trained within a budget of nodes touched), with options from ``run.approx``
  (``method``, ``budget``, ``seed``, ``samples``, ``evaluation``, ``eps``); metrics.csv also gets its 95%
  half-width (``approx_exploitability_ci95``) and the nodes its responders touched
  (``approx_nodes_touched``), and whether the bound says anything (``approx_informative``: its interval lies
  above 0). On a compiled game, beside the exact column, it shows how tight the bound is.

A measure's running sums go into the checkpoint (`state_dict`), so a resumed run measures exactly what
an uninterrupted one does. Its value is the ``<name>`` column of metrics.csv (exploitability has its
own columns) and the y axis of the aggregate's plots, labelled by `LABELS`.
"""

from __future__ import annotations

import numpy as np

MEASURES = ("exploitability", "full_regret", "approx_exploitability")
#: axis label of each measure, in chips (the convergence plot shows exploitability in mbb/g)
LABELS = {"exploitability": "exploitability (chips)",
          "full_regret": "(R1+ + R2+)/T of the played profiles, full game (chips)",
          "approx_exploitability": "approximate exploitability, a sampled lower bound (chips)"}


class Exploitability:
    """The default: the evaluation's exploitability; no per-iteration work."""

    name, steps = "exploitability", False

    def __init__(self, setup):
        pass

    def observe(self, setup) -> None:
        pass

    def value(self, result) -> float:
        return result.exploitability

    def columns(self, result) -> dict:
        return {}

    def state_dict(self) -> dict[str, np.ndarray]:
        return {}

    def load_state_dict(self, state: dict[str, np.ndarray], iteration: int) -> None:
        pass


class FullRegretMeasure:
    """Sums of the played profiles' realization plans and values (`FullRegret`), one profile per iteration."""

    name, steps = "full_regret", True

    def __init__(self, setup):
        from rcfr.regrets import full_regret
        self.tracker = full_regret(setup.game, **setup.sharding)  # the library picks it for the game's kind

    def observe(self, setup) -> None:
        """Count the profile the solver is about to play (call before each iteration)."""
        self.tracker.add(setup.current_policy())

    def value(self, result) -> float:
        return self.tracker.positive_sum()

    def columns(self, result) -> dict:
        return {self.name: self.value(result)}

    def state_dict(self) -> dict[str, np.ndarray]:
        return self.tracker.state_dict()

    def load_state_dict(self, state: dict[str, np.ndarray], iteration: int) -> None:
        if int(state["t"]) != iteration:
            raise ValueError(f"full_regret has {int(state['t'])} profiles for {iteration} iterations")
        self.tracker.load_state_dict(state)


class ApproxMeasure:
    """`rcfr.approx_exploitability` of the average policy at each evaluation; nothing per iteration (each
    evaluation trains its responders afresh, with the same seed)."""

    name, steps = "approx_exploitability", False

    def __init__(self, setup, options: dict | None = None):
        self.setup, self.options = setup, dict(options or {})

    def observe(self, setup) -> None:
        pass

    def value(self, result) -> float:
        return self.columns(result)[self.name]

    def columns(self, result) -> dict:
        from rcfr import approx_exploitability

        bound = approx_exploitability(self.setup.game, self.setup.policy(), **self.options)
        return {self.name: bound.exploitability, f"{self.name}_ci95": bound.ci95,
                "approx_nodes_touched": sum(bound.nodes_touched), "approx_informative": bound.informative}

    def state_dict(self) -> dict[str, np.ndarray]:
        return {}

    def load_state_dict(self, state: dict[str, np.ndarray], iteration: int) -> None:
        pass


_KINDS = {"exploitability": Exploitability, "full_regret": FullRegretMeasure,
          "approx_exploitability": ApproxMeasure}


def make_measure(name: str, setup, approx: dict | None = None):
    """The measure `name` (one of `MEASURES`) of a run's `build.Setup`; `approx` holds the options of
    ``approx_exploitability`` (``run.approx``)."""
    return ApproxMeasure(setup, approx) if name == "approx_exploitability" else _KINDS[name](setup)
