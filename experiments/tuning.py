"""Hyperparameter search with Hydra's Optuna sweeper (``hydra/sweeper=optuna``; pip install "rcfr[optuna]").

A trial is one run of the kit, its objective what ``rcfr.experiments.run`` returns: the final exploitability.
The preset ``tune_lean_rcfr`` keeps its study in SQLite (`study_storage`), so the same command resumes it.
Before any trial, `check_search_space` refuses an empty range; when the sweep ends, `report` prints the
best trial (value, parameters, the command that re-runs it as one run) and every failed trial (a trial
that raises is told to Optuna as failed; the sweep goes on while ``max_failure_rate`` allows).
"""

from __future__ import annotations

import shlex
from pathlib import Path

OPTUNA_SWEEPER = "hydra_plugins.hydra_optuna_sweeper.optuna_sweeper.OptunaSweeper"


def study_storage(url: str):
    """Optuna's database storage at `url` (a relative SQLite path is taken from the working directory, its
    folder made). It autocommits: optuna 2.10, the last version the Hydra plugin accepts, leaves its
    schema stamp uncommitted under SQLAlchemy 2 (which MLflow needs), and the storage would not open."""
    import optuna

    if url.startswith("sqlite:///"):
        Path(url[len("sqlite:///"):]).parent.mkdir(parents=True, exist_ok=True)
    return optuna.storages.RDBStorage(url, engine_kwargs={"isolation_level": "AUTOCOMMIT"})


def is_optuna(sweeper) -> bool:
    """Whether Hydra's ``hydra.sweeper`` node is the Optuna sweeper's."""
    return sweeper.get("_target_") == OPTUNA_SWEEPER


def search_space(config) -> dict[str, str]:
    """The swept keys and their expressions: the sweeper's ``params``, then the command line's sweeps."""
    from hydra.core.override_parser.overrides_parser import OverridesParser

    space = {str(k): str(v) for k, v in (config.hydra.sweeper.get("params") or {}).items()}
    for override in OverridesParser.create().parse_overrides(list(config.hydra.overrides.task)):
        if override.is_sweep_override():
            space[override.key_or_group] = override.input_line.split("=", 1)[1]
    return space


def check_search_space(space: dict[str, str]) -> None:
    """Refuse (ValueError naming the key) a range with no value in it, a log range that reaches 0, and an
    empty choice; a search over such a dimension would fail inside Optuna after the sweep started."""
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from hydra.core.override_parser.types import ChoiceSweep, IntervalSweep, RangeSweep

    parser = OverridesParser.create()
    for key, text in space.items():
        value = parser.parse_override(f"{key}={text}").value()
        where = f"search space {key}={text}"
        if isinstance(value, IntervalSweep):
            if not value.start < value.end:
                raise ValueError(f"{where}: an empty range (its low end {value.start} is not below its high end "
                                 f"{value.end}); give low < high, or fix the value")
            if "log" in value.tags and value.start <= 0:
                raise ValueError(f"{where}: a log range must start above 0, got {value.start}")
        elif isinstance(value, RangeSweep):
            step = value.step or 1
            if (value.stop - value.start) * step <= 0:
                raise ValueError(f"{where}: an empty range (no value from {value.start} up to {value.stop} in steps "
                                 f"of {step})")
        elif isinstance(value, ChoiceSweep) and not value.list:
            raise ValueError(f"{where}: an empty choice")


def rerun_command(config, params: dict) -> str:
    """The command that re-runs a trial with `params` as one run: the sweep's own overrides (its swept keys
    replaced by the trial's values) and ``hydra.mode=RUN``, which sets the sweeper aside."""
    from hydra.core.override_parser.overrides_parser import OverridesParser

    kept = [o.input_line for o in OverridesParser.create().parse_overrides(list(config.hydra.overrides.task))
            if o.get_key_element() not in params and o.get_key_element() != "hydra.mode"]
    words = kept + [f"{k}={v}" for k, v in params.items()] + ["hydra.mode=RUN"]
    return "rcfr-run " + " ".join(shlex.quote(w) for w in words)


def report(config) -> str:
    """The study after the sweep: trials by state, the best trial and its re-run command, the failed ones."""
    import optuna
    from hydra.utils import instantiate

    sweeper = config.hydra.sweeper
    storage = sweeper.storage
    storage = instantiate(storage) if hasattr(storage, "get") and storage.get("_target_") else storage
    study = optuna.load_study(study_name=sweeper.study_name, storage=storage)
    trials = study.get_trials(deepcopy=False)
    states = {}
    for trial in trials:
        states[trial.state.name.lower()] = states.get(trial.state.name.lower(), 0) + 1
    lines = [f"study {study.study_name}: {len(trials)} trials ("
             + ", ".join(f"{n} {state}" for state, n in sorted(states.items())) + ")"]
    complete = [t for t in trials if t.state == optuna.trial.TrialState.COMPLETE]
    if complete:
        best = study.best_trial
        lines += [f"best: trial {best.number}, objective {best.value:.6g}",
                  "  " + " ".join(f"{k}={v}" for k, v in best.params.items()),
                  f"re-run it: {rerun_command(config, best.params)}"]
    for trial in trials:
        if trial.state == optuna.trial.TrialState.FAIL:
            lines.append(f"failed: trial {trial.number} " + " ".join(f"{k}={v}" for k, v in trial.params.items()))
    return "\n".join(lines)
