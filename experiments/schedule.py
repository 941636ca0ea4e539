"""When a run evaluates and when it ends: log-spaced iterations, or log-spaced marks of a budget (nodes touched, or
CPU seconds of the solve)."""

from __future__ import annotations

import numpy as np

#: with a node budget, evaluations are log-spaced in nodes touched from this many to the budget
FIRST_NODE_MARK = 1000
#: with a CPU budget, evaluations are log-spaced in the solve's CPU seconds from this many to the budget
FIRST_CPU_MARK = 1.0


def eval_schedule(iterations: int, points: int) -> list[int]:
    """About `points` log-spaced iterations from 1 to `iterations`, always including the last."""
    marks = np.unique(np.round(np.geomspace(1, iterations, max(min(points, iterations), 1))).astype(np.int64))
    return sorted(set(marks.tolist()) | {iterations})


def node_schedule(budget: float, points: int, first: float = FIRST_NODE_MARK) -> list[float]:
    """About `points` log-spaced marks from `first` (node counts by default) to `budget`, the budget included."""
    return sorted(set(np.geomspace(min(first, budget), budget, max(points, 1)).tolist()) | {float(budget)})


class Schedule:
    """When a run evaluates and when it ends: at log-spaced iterations up to ``run.iterations``, or, with a
    budget, at log-spaced marks of what it counts up to it: nodes touched (``run.max_nodes_touched``) or the
    solve's CPU seconds (``run.max_cpu_seconds``, read from `progress`)."""

    def __init__(self, run, solver, progress=None):
        self.total, self.every = run.iterations, run.checkpoint_every
        self.nodes = (lambda: solver.nodes_touched) if hasattr(solver, "nodes_touched") else (lambda: None)
        if run.max_cpu_seconds:
            self.budget, self.spent = run.max_cpu_seconds, (lambda: progress.cpu_seconds)
            marks = node_schedule(self.budget, run.eval_points, FIRST_CPU_MARK)
        else:
            self.budget, self.spent = run.max_nodes_touched, self.nodes
            marks = node_schedule(self.budget, run.eval_points) if self.budget else []
        if self.budget:
            self.iterations, self.marks = [], [m for m in marks if m > self.spent()]
        else:
            self.iterations = [i for i in eval_schedule(self.total, run.eval_points) if i > solver.iteration]
            self.marks = []

    def running(self, it: int) -> bool:
        return it < self.total and not (self.budget and self.spent() >= self.budget)

    def stop_at(self, it: int, chunk: int) -> int:
        """Where the next batch of at most `chunk` iterations ends: at the next evaluation or
        ``checkpoint_every`` multiple, or, with a budget, about at the next mark (from what an iteration has
        spent so far)."""
        stop_at = min([self.total, it + chunk] + self.iterations[:1]
                      + ([(it // self.every + 1) * self.every] if self.every else []))
        if self.budget:
            spent = self.spent()
            stop_at = min(stop_at, it + (max(1, int(np.ceil((self.marks[0] - spent) * it / spent)))
                                         if it and spent else 1))
        return stop_at

    def evaluation_due(self, it: int) -> bool:
        """Whether the run evaluates at iteration `it`; passes the marks reached."""
        due_by_budget = self.budget and (self.spent() >= self.marks[0] or it == self.total)
        if not ((self.iterations and it == self.iterations[0]) or due_by_budget):
            return False
        if self.iterations:
            self.iterations.pop(0)
        while self.marks and self.marks[0] <= self.spent():
            self.marks.pop(0)
        return True
