"""The lean sampled RCFR's checkpoint (`LeanSampledRCFR`, `rcfr.solvers.on_demand`): what it keeps and how it
resumes, apart from how it learns."""

from __future__ import annotations

import numpy as np


class LeanCheckpoint:
    """`_state` and `_load_state` of `LeanSampledRCFR` (a mixin: it reads the solver's buffers, fits, regressors
    and snapshots)."""

    def _state(self) -> dict[str, np.ndarray]:
        """Iteration, sampler state (average sums and RNG), the reservoirs or stored sums, each player's latest
        training set and the state of stateful regressors: resuming refits (or reloads) the same models, so it
        is exact."""
        from ..regressors import stateful
        state = {f"sampler.{k}": v for k, v in self.buffers.state_dict().items() if k != "regrets"}
        for p in (0, 1):
            state.update(self._data(p).state_dict(f"player{p}.buffer."))
            state.update({f"player{p}.fit.{k}": v.copy() for k, v in self.fits[p].items()})
            if stateful(self.regressors[p]):
                state.update({f"regressor{p}.{k}": v for k, v in self.regressors[p].state_dict().items()})
        if self._walk_rows:  # the models the walks play (a fit on rows the reservoir no longer holds)
            from .snapshots import model_state
            for p in (0, 1):
                state.update(model_state(self._snapshot(p, force=True).model, f"model{p}."))
        if self.options.average == "mixture":
            for p in (0, 1):
                state.update(self.snapshots[p].state_dict(f"player{p}.snapshots."))
            state["credit"] = self._credit.copy()
        state["iteration"] = np.array(self.iteration)
        return state

    def _load_buffers(self, sampler: dict[str, np.ndarray]) -> None:
        sampler["regrets"] = self.buffers.regrets  # unused by sampled RCFR (zero), not checkpointed
        self.buffers.load_state_dict(sampler)

    def _load_state(self, state: dict[str, np.ndarray]) -> None:
        from ..regressors import stateful
        self._load_buffers({k[8:]: v for k, v in state.items() if k.startswith("sampler.")})
        for p in (0, 1):
            self._data(p).load_state_dict(state, f"player{p}.buffer.")
            for k, v in self.fits[p].items():
                v[:] = state[f"player{p}.fit.{k}"]
            model = self.regressors[p]
            if stateful(model):
                prefix = f"regressor{p}."
                model.load_state_dict({k[len(prefix):]: v for k, v in state.items() if k.startswith(prefix)})
                self._refresh(p)
            elif self._walk_rows:
                from .model_strategies import with_model
                from .snapshots import model_from_state
                model = model_from_state(state, f"model{p}.")
                self._walk_model = with_model(self._walk_model, p, model, int(self.fits[p]["count"][1]))
            elif self.fits[p]["count"][1] > 0:
                self._train(p)
            else:
                self._refresh(p)
        if self.options.average == "mixture":
            for p in (0, 1):
                self.snapshots[p].load_state_dict(state, f"player{p}.snapshots.")
            self._credit[:] = state["credit"]
        self.iteration = int(state["iteration"])
