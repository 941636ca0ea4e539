"""A run's metrics.csv: one row per evaluation of the average policy."""

from __future__ import annotations

import csv
import io
import logging
from pathlib import Path

from rcfr import evaluate
from rcfr.evaluation import Evaluation
from rcfr.files import atomic_write
from rcfr.options import check_choice

from . import memory
from .build import is_walked, num_sequences
from .checkpoints import Progress

log = logging.getLogger("experiments")

METRICS = ["iteration", "seconds", "cpu_seconds", "wall_seconds", "exploitability", "exploitability_mbb", "value",
           "representation_size", "representation_pct", "nodes_touched"]


def write_metrics(path: Path, rows: list[dict]) -> None:
    text = io.StringIO()
    writer = csv.DictWriter(text, fieldnames=METRICS + [k for k in (rows[:1] or [{}])[0] if k not in METRICS],
                            lineterminator="\n")  # + the run's measure (`experiments.measures`)
    writer.writeheader()
    writer.writerows(rows)
    atomic_write(path, lambda f: f.write(text.getvalue().encode()))


def evaluate_policy(game, policy, walk: str = "auto") -> Evaluation:
    """Exact evaluation on the run's state source: the compiled tree (`rcfr.evaluate`), or the rules
    (`rcfr.rules.evaluation`; Bluff on its public bid tree, Phantom Tic-Tac-Toe over its players' prebuilt
    sets), where sets the solver never met play uniformly. ``walk="general"`` forces the general rules walk."""
    walk = check_choice("walk", walk, ("auto", "general"))
    if not is_walked(game):
        return evaluate(game, policy)
    from rcfr.rules import bluff_evaluation, evaluation, phantom_evaluation
    fast = [m for m in (bluff_evaluation, phantom_evaluation) if walk == "auto" and m.walks(game.rules)]
    return (fast[0] if fast else evaluation).evaluate(game.rules, policy, default="uniform")


def metrics_row(setup, it: int, progress: Progress, nodes, measure) -> dict:
    """Evaluate the average policy at iteration `it` into one metrics.csv row (the evaluation's memory
    is counted in the run's peak, not in the solve's)."""
    game = setup.game
    progress.note_memory(True)
    size = setup.size()
    result = evaluate_policy(game, setup.policy())
    progress.note_memory(False)
    memory.reset_peak()
    log.info("iteration %d: exploitability %.6g chips (%.4g mbb/g), %.3g s",
             it, result.exploitability, result.exploitability_mbb, progress.solve_seconds)
    return {"iteration": it, "seconds": progress.solve_seconds, "cpu_seconds": progress.cpu_seconds,
            "wall_seconds": progress.wall(), "exploitability": result.exploitability,
            "exploitability_mbb": result.exploitability_mbb, "value": result.value, "representation_size": size,
            "representation_pct": None if size is None or is_walked(game) else 100.0 * size / num_sequences(game),
            "nodes_touched": nodes, **measure.columns(result)}
