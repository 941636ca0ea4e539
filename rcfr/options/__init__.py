"""Every option word a solver takes, its allowed values and ranges, in one place.

The vocabulary (docs/architecture.md) as tuples, one ``check_*`` family that refuses a bad value before
any work with a message naming the field and what is allowed (the style of `rcfr.registry` and the
experiment kit), and one frozen options object per solver family, built by those checks. A solver keeps
its options object; ``state_dict()`` records it, so a checkpoint says whose it is. One job per module:
`checks` (the words and the check family), `objects` (what every options object shares, the full-width
and Monte Carlo solvers' objects, keyword signatures), `sampled` (the reservoir solvers' objects).
"""

from __future__ import annotations

from .checks import (
    ASYMMETRY_MAX,
    AVERAGE_MODES,
    AVERAGE_SPACES,
    AVERAGING,
    BASELINES,
    CHANCE_SAMPLING,
    LEAN_TARGETS,
    MAX_POWER,
    MAX_SCALE,
    MAX_SEED,
    MODEL_SAMPLERS,
    PROFILES,
    PUBLIC_CHANCE,
    REGRET_MATCHING,
    SAMPLED_TARGETS,
    SAMPLERS,
    SELECTIONS,
    TARGETS,
    UPDATES,
    Linear,
    check_asymmetry,
    check_bool,
    check_checkpoint,
    check_choice,
    check_discount,
    check_float,
    check_int,
    check_power,
    check_seed,
    check_weights,
    did_you_mean,
)
from .objects import (
    CFROptions,
    MCCFROptions,
    Options,
    RCFROptions,
    describe,
    dumps,
    option_differences,
    options_from,
    options_signature,
)
from .sampled import (
    NEURAL_AVERAGES,
    NEURAL_SAMPLERS,
    VALUE_TARGETS,
    NeuralOptions,
    ReservoirWeights,
    SampledRCFROptions,
)

__all__ = [
    "REGRET_MATCHING", "UPDATES", "AVERAGING", "AVERAGE_SPACES", "AVERAGE_MODES", "TARGETS", "SAMPLED_TARGETS",
    "LEAN_TARGETS", "SELECTIONS", "SAMPLERS", "CHANCE_SAMPLING", "PUBLIC_CHANCE", "BASELINES", "PROFILES",
    "MODEL_SAMPLERS", "MAX_POWER", "ASYMMETRY_MAX", "MAX_SCALE", "MAX_SEED", "did_you_mean", "check_choice",
    "check_bool", "check_int", "check_checkpoint", "check_seed", "check_float", "Linear", "check_power",
    "check_asymmetry", "check_discount", "check_weights", "describe", "Options", "option_differences", "dumps",
    "CFROptions", "MCCFROptions", "RCFROptions", "options_signature", "options_from", "ReservoirWeights",
    "SampledRCFROptions", "NEURAL_SAMPLERS", "NEURAL_AVERAGES", "VALUE_TARGETS", "NeuralOptions"
]
