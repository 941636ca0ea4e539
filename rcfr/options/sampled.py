"""The options objects of the sampled learners, which keep reservoirs: sampled RCFR(+) (`SampledRCFROptions`) and
the Deep CFR family (`NeuralOptions`), with the weights both check alike (`ReservoirWeights`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .checks import (
    AVERAGES,
    LEAN_TARGETS,
    MAX_SCALE,
    MODEL_SAMPLERS,
    PROFILES,
    REGRET_MATCHING,
    SAMPLED_TARGETS,
    SAMPLERS,
    SELECTIONS,
    check_bool,
    check_choice,
    check_float,
    check_int,
    check_power,
    check_seed,
    check_weights,
)
from .objects import Options

if TYPE_CHECKING:

    from .checks import Linear

#: what `rcfr.options` hands out from here
__all__ = ["ReservoirWeights", "SampledRCFROptions", "NEURAL_SAMPLERS", "NEURAL_AVERAGES", "VALUE_TARGETS",
           "NeuralOptions"]


class ReservoirWeights:
    """The weights of the solvers that keep reservoirs (sampled RCFR, the Deep CFR family): the average's power
    (`averaging`) and the buffer's (`buffer_weighting`), checked as `check_power` checks them."""

    averaging: Any
    buffer_weighting: Any

    @property
    def power(self) -> float | Linear:
        return check_power("averaging", self.averaging)

    @property
    def buffer_power(self) -> float | Linear:
        return check_power("buffer_weighting", self.buffer_weighting)


@dataclass(frozen=True)
class SampledRCFROptions(ReservoirWeights, Options):
    """Sampled RCFR(+), dense (`features_on_demand=False`) or lean (True): every option checked, including
    the combinations the lean path refuses, before anything per sequence is allocated. ``tau``/``beta``
    None mean probing's 1 and 0 (only probing takes them); ``profile`` None means "visited", or "cache"
    under probing (only the lean path takes it; "model", the compiled models evaluated inside the walks, with
    external and outcome sampling)."""

    # "cache", "visited" and "model" give the same runs (bit for bit for trees: tests/test_visited_profile.py,
    # tests/test_inwalk_models.py)
    SAME_RESULTS = ("profile",)

    sampler: str = "external"
    regressor: Any = "best_first"
    features: Any = "auto"
    targets: str = "stored"
    traversals: int = 1
    refit_every: int = 1
    capacity: int = 100_000
    buffer_weighting: str | float = "linear"
    averaging: str | float | Linear = "uniform"
    epsilon: float = 0.6
    shared: bool = False
    weights: Any = None
    features_on_demand: bool = False
    # None: "recent" (stored and bootstrapped targets: the freshest), "uniform" for targets="rows" (Deep CFR's
    # reservoir, a uniform sample of every row written, whose mean is the average regret)
    selection: str | None = None
    tau: float | None = None
    beta: float | None = None
    profile: str | None = None
    average: str | None = None  # None: "sums" (an option added later is None when off: old checkpoints resume)
    snapshots: int | None = None
    # None: the rules path numbers no information set where nothing is kept per set (profile='model',
    # targets 'rows' or 'bootstrap', average='mixture'), every set otherwise; True: number them anyway
    set_index: bool | None = None
    regret_matching: str = "rm"
    seed: int = 0

    def __post_init__(self):
        set_ = lambda name, value: object.__setattr__(self, name, value)  # noqa: E731
        set_("features_on_demand", check_bool("features_on_demand", self.features_on_demand))
        self._check_set_index()
        lean = self.features_on_demand
        check_choice("sampler", self.sampler, SAMPLERS)
        check_choice("regret_matching", self.regret_matching, REGRET_MATCHING)
        check_choice("targets", self.targets, SAMPLED_TARGETS)
        if lean and self.targets not in LEAN_TARGETS:
            raise ValueError(f"features_on_demand=True: targets must be 'stored', 'reservoir', 'rows' or 'bootstrap' "
                             f"(with profile='model'), got {self.targets!r}")
        if lean and self.targets == "bootstrap" and self.profile != "model":
            raise ValueError(f"features_on_demand=True: targets='bootstrap' needs profile='model', got profile="
                             f"{self.profile!r} (there the walk writes each target from the model's prediction where "
                             f"it meets the set; elsewhere 'bootstrap' needs a prediction of every sequence at each "
                             f"refit)")
        if self.targets in ("reservoir", "rows") and self.regret_matching == "rm+":
            raise ValueError(f"targets={self.targets!r} has no regret_matching='rm+' variant (Q-regrets need "
                             f"per-sequence sums); use targets 'stored' or 'bootstrap' with 'rm+'")
        walked = self.targets == "rows" or (lean and self.targets == "bootstrap")
        if walked and (not lean or self.profile != "model" or self.sampler != "external"):
            raise ValueError(f"targets={self.targets!r} keeps the feature rows the walk writes where it meets the "
                             f"traverser's sets: it needs features_on_demand=True, profile='model' and "
                             f"sampler='external', got features_on_demand={lean}, profile={self.profile!r}, "
                             f"sampler={self.sampler!r}")
        for name in ("traversals", "refit_every", "capacity"):
            set_(name, check_int(name, getattr(self, name), 1))
        check_power("buffer_weighting", self.buffer_weighting)
        check_power("averaging", self.averaging)
        set_("epsilon", check_float("epsilon", self.epsilon, 0.0, 1.0, low_open=True))
        set_("shared", check_bool("shared", self.shared))
        set_("weights", check_weights(self.weights))
        if self.selection is None:
            set_("selection", "uniform" if self.targets == "rows" else "recent")
        check_choice("selection", self.selection, SELECTIONS)
        if self.sampler != "probing":
            if self.tau is not None or self.beta is not None:
                raise ValueError(f"tau and beta apply to sampler='probing' only, got sampler={self.sampler!r}")
        else:
            set_("tau", check_float("tau", 1.0 if self.tau is None else self.tau, 1.0, MAX_SCALE))
            set_("beta", check_float("beta", 0.0 if self.beta is None else self.beta, 0.0, MAX_SCALE))
        set_("seed", check_seed("seed", self.seed))
        self._check_average()
        if not lean:
            if self.profile is not None:
                raise ValueError(f"profile={self.profile!r} needs features_on_demand=True (the dense path "
                                 f"predicts every sequence at each refit); leave it None")
            return
        if self.shared:
            raise ValueError("features_on_demand=True fits one regressor per player: shared must be False, "
                             "got True")
        if self.weights is not None:
            raise ValueError("features_on_demand=True takes no per-sequence weights (weights must be None)")
        if self.profile is not None:
            check_choice("profile", self.profile, PROFILES)
            if self.profile == "visited" and self.sampler == "probing":
                raise ValueError("profile='visited' predicts what external and outcome sampling read; with "
                                 "sampler='probing' the allowed profiles are 'cache' and None")
            if self.profile == "model" and self.sampler not in MODEL_SAMPLERS:
                raise ValueError(f"profile='model' evaluates the models inside the walks of sampler "
                                 f"{' or '.join(map(repr, MODEL_SAMPLERS))}; got sampler={self.sampler!r} (use "
                                 f"profile 'visited' or 'cache' with it)")

    def _check_set_index(self) -> None:
        """``set_index=False`` (no set numbered, no action kept per set) serves only runs that keep nothing per set."""
        if self.set_index is None:
            return
        object.__setattr__(self, "set_index", check_bool("set_index", self.set_index))
        if self.set_index:
            return
        needs = {"features_on_demand": (self.features_on_demand, True), "profile": (self.profile, "model"),
                 "targets": (self.targets, ("rows", "bootstrap")), "average": (self.average, "mixture")}
        wrong = [f"{k}={v!r} (needs {' or '.join(map(repr, w)) if isinstance(w, tuple) else repr(w)})"
                 for k, (v, w) in needs.items() if not (v in w if isinstance(w, tuple) else v == w)]
        if wrong:
            raise ValueError(f"set_index=False numbers no information set, so it serves only runs that keep nothing "
                             f"per set; got {', '.join(wrong)}")

    def _check_average(self) -> None:
        """``average="mixture"`` keeps the models the walks played (``profile="model"``), at most ``snapshots``."""
        if self.average is not None:
            check_choice("average", self.average, AVERAGES)
            if self.average == "sums":
                object.__setattr__(self, "average", None)
        if self.snapshots is not None:
            object.__setattr__(self, "snapshots", check_int("snapshots", self.snapshots, 1))
            if self.average != "mixture":
                raise ValueError(f"snapshots={self.snapshots} bounds average='mixture'; got average="
                                 f"{self.average or 'sums'!r}")
        if self.average == "mixture" and (not self.features_on_demand or self.profile != "model"):
            raise ValueError(f"average='mixture' mixes the compiled models the walks played: it needs "
                             f"features_on_demand=True and profile='model', got features_on_demand="
                             f"{self.features_on_demand} and profile={self.profile!r}")


    @property
    def probing(self) -> tuple[float, float]:
        """(tau, beta) of probing: 1 and 0 for the samplers that do not probe."""
        if self.sampler != "probing" or self.tau is None or self.beta is None:  # both set under probing
            return 1.0, 0.0
        return self.tau, self.beta

    @property
    def visited_set(self) -> str:
        """The lean path's profile option resolved: "visited", or "cache" under probing, unless given."""
        if self.profile is not None:
            return self.profile
        return "cache" if self.sampler == "probing" else "visited"


NEURAL_SAMPLERS = ("external", "outcome", "baseline", "fixed")  # the Deep CFR family's data sources
NEURAL_AVERAGES = ("network", "mixture")
VALUE_TARGETS = ("returns", "corrected")


@dataclass(frozen=True)
class NeuralOptions(ReservoirWeights, Options):
    """The Deep CFR family (`rcfr.solvers.neural`): data source, memories, regressors and averaging.
    ``regressor`` None is the family's small network; ``value_regressor`` and ``policy_regressor`` None
    are ``regressor``; ``value_traversals`` None is ``traversals`` for the samplers that learn values.
    Regressor specs are checked by the solver (`make_regressor`), which builds them."""

    SAME_RESULTS = ("keep_networks",)  # kept networks are for inspection, never part of a checkpoint

    sampler: str = "external"
    average: str = "network"
    regressor: Any = None
    features: Any = "auto"
    value_regressor: Any = None
    policy_regressor: Any = None
    traversals: int = 200
    value_traversals: int | None = None
    capacity: int = 1_000_000
    buffer_weighting: str | float = "linear"
    averaging: str | float = "linear"
    epsilon: float = 0.6
    value_exploration: float = 0.2
    value_capacity: int | None = None
    exact_terminals: bool = True
    value_targets: str = "returns"
    keep_networks: bool = False
    seed: int = 0

    def __post_init__(self):
        set_ = lambda name, value: object.__setattr__(self, name, value)  # noqa: E731
        sampler = check_choice("sampler", self.sampler, NEURAL_SAMPLERS)
        average = check_choice("average", self.average, NEURAL_AVERAGES)
        if average == "network" and sampler not in ("external", "fixed"):
            raise ValueError(f"average='network' needs a strategy memory of visit counts: sampler 'external' or "
                             f"'fixed', not {sampler!r} (use average='mixture')")
        if self.policy_regressor is not None and average != "network":
            raise ValueError("policy_regressor applies to average='network' only")
        if not self.learns_values:
            for name in ("value_regressor", "value_traversals", "value_capacity"):
                if getattr(self, name) is not None:
                    raise ValueError(f"{name} applies to samplers 'baseline' and 'fixed' only, not {sampler!r}")
        check_choice("value_targets", self.value_targets, VALUE_TARGETS)
        for name in ("keep_networks", "exact_terminals"):
            set_(name, check_bool(name, getattr(self, name)))
        if self.keep_networks and average != "mixture":
            raise ValueError("keep_networks applies to average='mixture' only")
        set_("seed", check_seed("seed", self.seed))
        set_("epsilon", check_float("epsilon", self.epsilon, 0.0, 1.0, low_open=True))
        set_("value_exploration", check_float("value_exploration", self.value_exploration, 0.0, 1.0, high_open=True))
        for name in ("traversals", "capacity") + (("value_traversals", "value_capacity") if self.learns_values else ()):
            if getattr(self, name) is not None:
                set_(name, check_int(name, getattr(self, name), 1))
        check_power("buffer_weighting", self.buffer_weighting)
        check_power("averaging", self.averaging)

    @property
    def learns_values(self) -> bool:
        return self.sampler in ("baseline", "fixed")
