"""The options layer (`rcfr.options`): every bad value is refused with the field's name, before any work."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rcfr.options import (
    AVERAGING,
    MAX_POWER,
    MAX_SEED,
    CFROptions,
    MCCFROptions,
    RCFROptions,
    SampledRCFROptions,
    check_bool,
    check_choice,
    check_float,
    check_int,
    check_power,
    check_seed,
)

FIELD = "some_field"
NON_FINITE = st.sampled_from([math.nan, math.inf, -math.inf, np.nan, np.float64("inf"), np.float32("nan")])
BOOLS = st.sampled_from([True, False, np.True_, np.False_])
NOT_NUMBERS = st.one_of(st.text(max_size=5), st.none(), st.lists(st.integers(), max_size=2), st.just({}),
                        st.just(object()))


def _refused(fn, *args, **kwargs) -> str:
    with pytest.raises(ValueError) as err:
        fn(*args, **kwargs)
    return str(err.value)


# ---- check_int ---------------------------------------------------------------------------------------
@given(st.integers(-10 ** 20, 10 ** 20), st.integers(-100, 100), st.integers(0, 200))
def test_check_int_accepts_exactly_the_integers_in_range(value, low, width):
    high = low + width
    if low <= value <= high:
        assert check_int(FIELD, value, low, high) == value
        assert check_int(FIELD, np.int64(value) if abs(value) < 2 ** 62 else value, low, high) == value
    else:
        message = _refused(check_int, FIELD, value, low, high)
        assert message.startswith(f"{FIELD} must be an integer in [{low}, ") and repr(value) in message


@given(st.one_of(BOOLS, NON_FINITE, st.floats(allow_nan=False, allow_infinity=False), NOT_NUMBERS))
def test_check_int_refuses_bools_floats_and_non_numbers(value):
    assert _refused(check_int, FIELD, value, 0).startswith(f"{FIELD} must be an integer >= 0")


# ---- check_float -------------------------------------------------------------------------------------
@given(st.one_of(NON_FINITE, BOOLS, NOT_NUMBERS, st.just(10 ** 400)))
def test_check_float_refuses_nan_inf_bools_and_non_numbers(value):
    message = _refused(check_float, FIELD, value, 0.0, 1.0)
    assert message.startswith(f"{FIELD} must be a finite number in [0, 1]")


@given(st.floats(-1e6, 1e6), st.booleans(), st.booleans())
def test_check_float_bounds_open_and_closed(value, low_open, high_open):
    inside = (value > 0 if low_open else value >= 0) and (value < 1 if high_open else value <= 1)
    if inside:
        assert check_float(FIELD, value, 0.0, 1.0, low_open=low_open, high_open=high_open) == value
    else:
        message = _refused(check_float, FIELD, value, 0.0, 1.0, low_open=low_open, high_open=high_open)
        interval = f"{'(' if low_open else '['}0, 1{')' if high_open else ']'}"
        assert message.startswith(f"{FIELD} must be a finite number in {interval}")


# ---- check_power (averaging), check_seed, check_bool, check_choice -------------------------------------
@given(st.one_of(NON_FINITE, BOOLS, st.floats(MAX_POWER, 1e300, exclude_min=True), st.floats(-1e300, 0.0,
                                                                                             exclude_max=True)))
def test_averaging_refuses_what_would_overflow_or_is_not_a_power(value):
    assert "averaging must be one of uniform, linear, quadratic or a finite power" in _refused(
        check_power, "averaging", value)


@given(st.floats(0.0, MAX_POWER))
def test_every_accepted_power_keeps_the_weights_finite(power):
    assert check_power("averaging", power) == power
    assert math.isfinite(float(10 ** 15) ** power)


def test_averaging_names_map_to_powers():
    assert {name: check_power("averaging", name) for name in AVERAGING} == AVERAGING
    assert "allowed: uniform, linear, quadratic" in _refused(check_power, "averaging", "cubic")


@given(st.one_of(st.integers(max_value=-1), st.integers(min_value=MAX_SEED + 1), BOOLS, NOT_NUMBERS, NON_FINITE))
def test_check_seed_refuses_what_no_regressor_can_take(value):
    assert _refused(check_seed, "seed", value).startswith("seed must be an integer in [0, ")


@given(st.one_of(st.integers(), NOT_NUMBERS, NON_FINITE))
def test_check_bool_refuses_everything_but_bools(value):
    assert _refused(check_bool, "shared", value) == f"shared must be True or False, got {value!r}"


@given(st.one_of(st.text(max_size=6), st.integers(), BOOLS, NON_FINITE))
def test_check_choice_names_field_and_allowed(value):
    if isinstance(value, str) and value in ("rm", "rm+"):
        assert check_choice("regret_matching", value, ("rm", "rm+")) == value
    else:
        assert _refused(check_choice, "regret_matching", value, ("rm", "rm+")) == \
            f"unknown regret_matching {value!r}; allowed: rm, rm+"


def test_check_choice_never_compares_an_array_elementwise():
    assert "allowed: rm, rm+" in _refused(check_choice, "regret_matching", np.array(["rm", "rm"]), ("rm", "rm+"))


# ---- options objects -----------------------------------------------------------------------------------
BAD_FIELDS = [
    (CFROptions, "averaging", [math.nan, 300, -1, True, "cubic"]),
    (CFROptions, "alpha", [math.nan, math.inf, -0.5, 300]),
    (CFROptions, "updates", ["sometimes", True]),
    (MCCFROptions, "epsilon", [math.nan, -0.1, 1.5, math.inf]),
    (MCCFROptions, "seed", ["x", -1, 1.5, True, 2 ** 40]),
    (MCCFROptions, "tau", [0.5, math.inf, math.nan]),
    (MCCFROptions, "beta", [-1.0, math.inf]),
    (MCCFROptions, "baseline_decay", [1.5, math.nan]),
    (MCCFROptions, "chance_sampling", ["double"]),
    (RCFROptions, "refit_every", [0, 1.0, True, math.nan]),
    (RCFROptions, "shared", [1, "yes"]),
    (RCFROptions, "targets", ["reservoir"]),
    (RCFROptions, "seed", ["x", -3]),
    (SampledRCFROptions, "traversals", [0, 2.5, math.inf]),
    (SampledRCFROptions, "capacity", [0, -1, math.nan]),
    (SampledRCFROptions, "buffer_weighting", [math.nan, 21.0, "square"]),
    (SampledRCFROptions, "epsilon", [0.0, math.nan]),
    (SampledRCFROptions, "sampler", ["chance"]),
    (SampledRCFROptions, "selection", ["random"]),
    (SampledRCFROptions, "seed", ["x", 2 ** 31]),
]


@pytest.mark.parametrize("options_type, field, values", BAD_FIELDS, ids=[f"{t.__name__}.{f}" for t, f, _ in BAD_FIELDS])
def test_options_objects_refuse_bad_values_naming_the_field(options_type, field, values):
    for value in values:
        assert field in _refused(options_type, **{field: value}), value


@settings(max_examples=50)
@given(st.sampled_from([(CFROptions, "averaging"), (MCCFROptions, "averaging"), (RCFROptions, "averaging"),
                        (SampledRCFROptions, "averaging"), (MCCFROptions, "epsilon"), (SampledRCFROptions, "tau")]),
       NON_FINITE)
def test_no_options_object_takes_nan_or_inf(case, value):
    options_type, field = case
    extra = {"sampler": "probing"} if field == "tau" else {}
    assert field in _refused(options_type, **{field: value}, **extra)


def test_options_are_frozen_and_describe_themselves():
    options = MCCFROptions(epsilon=0.6, seed=3)
    with pytest.raises(AttributeError):
        options.seed = 4
    assert options.description()["seed"] == 3 and options.replace(seed=4).seed == 4
    with pytest.raises(ValueError, match="seed"):
        options.replace(seed=-1)


def test_sampled_options_check_combinations():
    with pytest.raises(ValueError, match="tau and beta apply to sampler='probing' only"):
        SampledRCFROptions(tau=2.0)
    with pytest.raises(ValueError, match="needs features_on_demand=True"):
        SampledRCFROptions(profile="cache")
    with pytest.raises(ValueError, match="'bootstrap' needs a prediction"):
        SampledRCFROptions(features_on_demand=True, targets="bootstrap")
    with pytest.raises(ValueError, match="no regret_matching='rm\\+' variant"):
        SampledRCFROptions(targets="reservoir", regret_matching="rm+")
    assert SampledRCFROptions(sampler="probing").probing == (1.0, 0.0)
    assert SampledRCFROptions(sampler="probing", features_on_demand=True).visited_set == "cache"
