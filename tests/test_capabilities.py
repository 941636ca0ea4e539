"""What a solver cannot do on a game walked by its rules is declared once (`rcfr.solvers.capabilities`): the library
refuses by that table when a solver is built, and the kit refuses by the same table before any work, each naming
the option. Every registered solver is either built on a rules game or refused by the table (none raises anything
else), and every refused option value is refused by both."""

import re
import warnings

import pytest

import rcfr
from rcfr.solvers import SOLVERS
from rcfr.solvers.capabilities import NEEDS_ARRAYS, RULES_REFUSALS

#: options a solver needs whatever the game (not the rules path's business)
REQUIRED = {"ddcfr": {"horizon": 10}}


def _kit(solver, options):
    return {"game": {"name": "kuhn", "params": {}, "compiled": False}, "solver": {"name": solver, "options": options},
            "run": {"iterations": 10, "eval_points": 2, "checkpoint_seconds": 1e9}, "label": solver}


@pytest.fixture(scope="module")
def kuhn_rules():
    return rcfr.load_game("kuhn", compiled=False)


@pytest.mark.parametrize("name", sorted(SOLVERS))
def test_every_solver_walks_the_rules_or_is_refused_by_the_table(name, kuhn_rules):
    options = {**REQUIRED.get(name, {}), **({"features_on_demand": True, "features": "poker"} if name.startswith("sampled-rcfr") else {})}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if name in NEEDS_ARRAYS:
            with pytest.raises(ValueError, match=re.escape(f"{name} on kuhn() walked by its rules: ")):
                rcfr.make_solver(name, kuhn_rules, **options)
        else:
            assert rcfr.make_solver(name, kuhn_rules, **options).game is kuhn_rules


CASES = sorted({(name, r.field, r.value) for name, refused in RULES_REFUSALS.items() for r in refused}, key=str)


@pytest.mark.parametrize("name, field, value", CASES)
def test_the_library_and_the_kit_refuse_the_same_options(name, field, value, kuhn_rules):
    from rcfr.experiments.schema import ConfigError, validate
    options = {"features_on_demand": True, "features": "poker"} if name.startswith("sampled-rcfr") else {}
    options[field] = value
    if name == "cscfr" and field == "chance_sampling":
        options["updates"] = "alternating"  # simultaneous updates need chance_sampling 'all' or 'single'
    with pytest.raises(ValueError, match=re.escape(f"walked by its rules: {field}={value!r}")):
        rcfr.make_solver(name, kuhn_rules, **options)
    with pytest.raises(ConfigError, match=re.escape(f"walked by its rules: solver.options.{field}={value!r}")):
        validate(_kit(name, options))
    # control: the compiled game takes the same options
    compiled = rcfr.load_game("kuhn")
    if not (name.startswith("sampled-rcfr") and field == "features_on_demand"):
        rcfr.make_solver(name, compiled, **options)


def test_the_kit_reads_the_defaults_of_the_solver():
    """sampled-rcfr's features_on_demand defaults to False, which the rules refuse: the kit says so without the key."""
    from rcfr.experiments.schema import ConfigError, validate
    with pytest.raises(ConfigError, match="solver.options.features_on_demand=False"):
        validate(_kit("sampled-rcfr", {}))
