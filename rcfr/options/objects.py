"""What the options objects share (`Options`: what a checkpoint records, `describe`, `option_differences`), the
full-width, Monte Carlo and RCFR families' objects, and the signature of a solver that takes an options object's
fields as keywords (`options_signature`, `options_from`); the sampled learners' objects are in `sampled`."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, fields
from numbers import Integral, Real
from typing import TYPE_CHECKING, Any, Iterable

import numpy as np

from .checks import (
    AVERAGE_MODES,
    AVERAGE_SPACES,
    BASELINES,
    CHANCE_SAMPLING,
    MAX_SCALE,
    PUBLIC_CHANCE,
    REGRET_MATCHING,
    TARGETS,
    UPDATES,
    check_asymmetry,
    check_bool,
    check_choice,
    check_discount,
    check_float,
    check_int,
    check_power,
    check_seed,
    check_weights,
)

if TYPE_CHECKING:
    import inspect

    from .checks import Linear

#: what `rcfr.options` hands out from here
__all__ = ["describe", "Options", "option_differences", "dumps", "CFROptions", "MCCFROptions", "RCFROptions",
           "options_signature", "options_from"]


# ---- options objects -----------------------------------------------------------------------------------
def describe(value: Any) -> Any:
    """A JSON value that identifies an option: scalars as they are, arrays by shape, dtype and digest,
    mappings recursively, anything else by its repr (a scikit-learn estimator's lists its parameters)."""
    if value is None or isinstance(value, (str, bool)):
        return value
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, Integral):
        return int(value)
    if isinstance(value, Real):
        return float(value)
    if isinstance(value, np.ndarray):
        data = np.ascontiguousarray(value)
        return f"array{list(data.shape)} {data.dtype} sha1:{hashlib.sha1(data.tobytes()).hexdigest()[:16]}"
    if isinstance(value, dict):
        return {str(k): describe(v) for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))}
    if isinstance(value, (list, tuple)):
        return [describe(v) for v in value]
    if hasattr(value, "matrix") and isinstance(getattr(value, "matrix"), np.ndarray):  # a Features object
        return {"type": type(value).__name__, "matrix": describe(value.matrix)}
    return repr(value)


class Options:
    """Base of the frozen options objects: `description()` is what a checkpoint records."""

    #: options that change how the work is done, never the results (a checkpoint may resume across them)
    SAME_RESULTS: tuple[str, ...] = ()

    def description(self) -> dict[str, Any]:
        return {f.name: describe(getattr(self, f.name)) for f in fields(self)}  # type: ignore[arg-type]

    def replace(self, **changes) -> "Options":
        """A copy with `changes`, checked again."""
        values = {f.name: getattr(self, f.name) for f in fields(self)}  # type: ignore[arg-type]
        values.update(changes)
        return type(self)(**values)


def option_differences(saved: dict[str, Any], own: dict[str, Any], ignore: Iterable[str] = ()) -> list[str]:
    """``"name: saved -> own"`` for every option but those in `ignore` that differs between two descriptions.
    An option absent on one side and None on the other is no difference: options added later default to None
    (off), so a checkpoint written before one existed still resumes."""
    ignore = set(ignore)
    keys = [k for k in list(own) + [k for k in saved if k not in own] if k not in ignore]
    return [f"{k}: {saved.get(k, '<absent>')!r} -> {own.get(k, '<absent>')!r}" for k in keys
            if saved.get(k) != own.get(k)]


def dumps(description: dict[str, Any]) -> str:
    return json.dumps(description, sort_keys=True)


@dataclass(frozen=True)
class CFROptions(Options):
    """Full-width CFR: update schedule, average weighting, regret matching and DCFR's discounts."""

    updates: str = "alternating"
    averaging: str | float | Linear = "uniform"
    regret_matching: str = "rm"
    alpha: float | None = None
    beta: float | None = None
    asymmetry: float | str | None = None  # predictive stores only (`check_asymmetry`)

    def __post_init__(self):
        check_choice("updates", self.updates, UPDATES)
        check_power("averaging", self.averaging)
        check_choice("regret_matching", self.regret_matching, REGRET_MATCHING)
        for name in ("alpha", "beta"):
            value = check_discount(name, getattr(self, name))
            object.__setattr__(self, name, value)
        object.__setattr__(self, "asymmetry", check_asymmetry("asymmetry", self.asymmetry))

    @property
    def power(self) -> float | Linear:
        return check_power("averaging", self.averaging)


@dataclass(frozen=True)
class MCCFROptions(Options):
    """Monte Carlo CFR (every sampler): the shared options and each sampler's own (unused ones keep
    their defaults; the solver classes check which apply)."""

    regret_matching: str = "rm"
    average_mode: str = "stochastic"
    averaging: str | float | Linear = "uniform"
    average_space: str = "full"
    updates: str = "alternating"
    seed: int = 0
    epsilon: float = 0.0  # outcome sampling's exploration (0, 1]; average strategy sampling's floor
    baseline: str = "none"  # MCCFRb
    baseline_decay: float = 0.0  # VR-MCCFR [0, 1]; MCCFRb's eda (0, 1]
    tau: float = 1.0  # average strategy sampling, probing: [1, inf)
    beta: float = 0.0  # [0, inf)
    chance_sampling: str = "single"
    public_chance: str = "sample"
    alpha: float | None = None  # the regrets' discount power (linear / discounted MCCFR); None: none

    def __post_init__(self):
        check_choice("regret_matching", self.regret_matching, REGRET_MATCHING)
        object.__setattr__(self, "alpha", check_discount("alpha", self.alpha, 1.0, "; 1 is linear MCCFR, and "
                                                         "below 1 the sampled regrets' weights grow without bound"))
        check_choice("average_mode", self.average_mode, AVERAGE_MODES)
        check_power("averaging", self.averaging)
        check_choice("average_space", self.average_space, AVERAGE_SPACES)
        check_choice("updates", self.updates, UPDATES)
        object.__setattr__(self, "seed", check_seed("seed", self.seed))
        object.__setattr__(self, "epsilon", check_float("epsilon", self.epsilon, 0.0, 1.0))
        check_choice("baseline", self.baseline, BASELINES)
        object.__setattr__(self, "baseline_decay", check_float("baseline_decay", self.baseline_decay, 0.0, 1.0))
        object.__setattr__(self, "tau", check_float("tau", self.tau, 1.0, MAX_SCALE))
        object.__setattr__(self, "beta", check_float("beta", self.beta, 0.0, MAX_SCALE))
        check_choice("chance_sampling", self.chance_sampling, CHANCE_SAMPLING)
        check_choice("public_chance", self.public_chance, PUBLIC_CHANCE)
        if self.average_mode != "stochastic" and self.power != 0.0:
            raise ValueError(f"averaging weights apply to average_mode='stochastic' only; use averaging='uniform' "
                             f"with average_mode={self.average_mode!r}")
        if self.average_space == "abstract" and self.average_mode == "lazy":
            raise ValueError("average_mode='lazy' needs average_space='full' (it reads the parent sequence's "
                             "average, which merged information sets do not share)")
        if self.chance_sampling == "common" and self.updates != "alternating":
            raise ValueError("chance_sampling='common' walks the updating player's chance outcomes, so it needs "
                             "updates='alternating'")

    @property
    def power(self) -> float | Linear:
        return check_power("averaging", self.averaging)


@dataclass(frozen=True)
class RCFROptions(Options):
    """Full-width RCFR(+): the regression store's options and the CFR loop's."""

    regressor: Any = "best_first"
    features: Any = "auto"
    targets: str = "stored"
    refit_every: int = 1
    shared: bool = False
    weights: Any = None
    updates: str = "alternating"
    averaging: str | float | Linear = "uniform"
    regret_matching: str = "rm"
    seed: int = 0

    def __post_init__(self):
        check_choice("targets", self.targets, TARGETS)
        object.__setattr__(self, "refit_every", check_int("refit_every", self.refit_every, 1))
        object.__setattr__(self, "shared", check_bool("shared", self.shared))
        object.__setattr__(self, "weights", check_weights(self.weights))
        check_choice("updates", self.updates, UPDATES)
        check_power("averaging", self.averaging)
        check_choice("regret_matching", self.regret_matching, REGRET_MATCHING)
        object.__setattr__(self, "seed", check_seed("seed", self.seed))

    @property
    def power(self) -> float | Linear:
        return check_power("averaging", self.averaging)


# ---- solvers whose keywords are an options object's fields ----------------------------------------------
def options_signature(options_type: type, defaults: dict[str, Any] | None = None,
                      exclude: Iterable[str] = ()) -> inspect.Signature:
    """``(game, *, <the fields of options_type>)`` with `defaults` in place of the dataclass's: the
    signature of a solver that takes its options as keywords (so `rcfr.registry` and the kit see them)."""
    import inspect
    defaults, exclude = dict(defaults or {}), set(exclude)
    params = [inspect.Parameter("game", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    params += [inspect.Parameter(f.name, inspect.Parameter.KEYWORD_ONLY, default=defaults.get(f.name, f.default))
               for f in fields(options_type) if f.name not in exclude]
    return inspect.Signature(params)


def options_from(options_type: type, signature, given: dict[str, Any], owner: str,
                 fixed: dict[str, Any] | None = None):
    """`options_type` built from the keywords `given` to `owner`, whose signature (`options_signature`)
    lists the keywords it takes and their defaults, and the `fixed` values of the fields it does not take;
    an unknown keyword is a TypeError naming the allowed ones."""
    allowed = [p for p in signature.parameters.values() if p.kind is p.KEYWORD_ONLY]
    unknown = sorted(set(given) - {p.name for p in allowed})
    if unknown:
        raise TypeError(f"{owner} got unknown option(s) {', '.join(map(repr, unknown))}; allowed: "
                        f"{', '.join(p.name for p in allowed)}")
    values = {p.name: p.default for p in allowed}
    values.update(fixed or {})
    values.update(given)
    return options_type(**values)
