"""A run's metrics.csv: one row per evaluation of the average policy."""

from __future__ import annotations

import csv
import io
import logging
from pathlib import Path

from rcfr import evaluate
from rcfr.files import atomic_write
from rcfr.scores import Evaluation

from . import memory
from .checkpoints import Progress

log = logging.getLogger("rcfr.experiments")

METRICS = ["iteration", "seconds", "cpu_seconds", "wall_seconds", "exploitability", "exploitability_mbb", "value",
           "representation_size", "representation_pct", "nodes_touched", "state_bytes"]


def write_metrics(path: Path, rows: list[dict]) -> None:
    text = io.StringIO()
    writer = csv.DictWriter(text, fieldnames=METRICS + [k for k in (rows[:1] or [{}])[0] if k not in METRICS],
                            lineterminator="\n")  # + the run's measure (`rcfr.experiments.measures`)
    writer.writeheader()
    writer.writerows(rows)
    atomic_write(path, lambda f: f.write(text.getvalue().encode()))


def evaluate_policy(game, policy, sharding: dict | None = None, walk: str = "auto") -> Evaluation:
    """`rcfr.evaluate` on the run's game, where sets the solver never met play uniformly (a game walked by its
    rules; a compiled game's policy has every set). `sharding`: ``workers`` and ``ray_address`` (`Setup.sharding`; docs/distributed.md); ``walk``:
    `rcfr.evaluation.WALKS` ("general" forces the general rules walk)."""
    return evaluate(game, policy, default="uniform", walk=walk, **(sharding or {}))


def evaluate_average(setup) -> Evaluation:
    """The exact evaluation of the run's average policy: from the solver's own table where it evaluates it
    (`BluffPublicCFR.exploitability`: no policy of 176M sets built for Bluff(2,2)), else of `setup.policy()`."""
    from rcfr.solvers import BluffPublicCFR
    if isinstance(setup.solver, BluffPublicCFR):
        return setup.solver.exploitability()
    return evaluate_policy(setup.game, setup.policy(), setup.sharding)


def metrics_row(setup, it: int, progress: Progress, nodes, measure) -> dict:
    """Evaluate the average policy at iteration `it` into one metrics.csv row (the evaluation's memory
    is counted in the run's peak, not in the solve's), with what the solver holds (`state_bytes`)."""
    from rcfr.solvers.state_bytes import state_bytes
    sequences = setup.game.num_sequences  # None where not counted (a game walked by its rules)
    progress.note_memory(True)
    size, held = setup.size(), state_bytes(setup.solver)
    result = evaluate_average(setup)
    progress.note_memory(False)
    memory.reset_peak()
    log.info("iteration %d: exploitability %.6g chips (%.4g mbb/g), %.3g s",
             it, result.exploitability, result.exploitability_mbb, progress.solve_seconds)
    return {"iteration": it, "seconds": progress.solve_seconds, "cpu_seconds": progress.cpu_seconds,
            "wall_seconds": progress.wall(), "exploitability": result.exploitability,
            "exploitability_mbb": result.exploitability_mbb, "value": result.value, "representation_size": size,
            "representation_pct": None if size is None or sequences is None else 100.0 * size / sequences,
            "nodes_touched": nodes, "state_bytes": held, **measure.columns(result)}
