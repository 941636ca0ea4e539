"""When a run evaluates and when it ends: log-spaced iterations, or log-spaced counts of nodes touched."""

from __future__ import annotations

import numpy as np

#: with a node budget, evaluations are log-spaced in nodes touched from this many to the budget
FIRST_NODE_MARK = 1000


def eval_schedule(iterations: int, points: int) -> list[int]:
    """About `points` log-spaced iterations from 1 to `iterations`, always including the last."""
    marks = np.unique(np.round(np.geomspace(1, iterations, max(min(points, iterations), 1))).astype(np.int64))
    return sorted(set(marks.tolist()) | {iterations})


def node_schedule(budget: int, points: int) -> list[float]:
    """About `points` log-spaced node counts from `FIRST_NODE_MARK` to `budget`, the budget included."""
    return sorted(set(np.geomspace(min(FIRST_NODE_MARK, budget), budget, max(points, 1)).tolist()) | {float(budget)})


class Schedule:
    """When a run evaluates and when it ends: at log-spaced iterations up to ``run.iterations``, or,
    with a node budget (``run.max_nodes_touched``), at log-spaced counts of nodes touched up to it."""

    def __init__(self, run, solver):
        self.total, self.budget, self.every = run.iterations, run.max_nodes_touched, run.checkpoint_every
        self.nodes = (lambda: solver.nodes_touched) if hasattr(solver, "nodes_touched") else (lambda: None)
        if self.budget:
            self.iterations, self.marks = [], [m for m in node_schedule(self.budget, run.eval_points) if m > self.nodes()]
        else:
            self.iterations = [i for i in eval_schedule(self.total, run.eval_points) if i > solver.iteration]
            self.marks = []

    def running(self, it: int) -> bool:
        return it < self.total and not (self.budget and self.nodes() >= self.budget)

    def stop_at(self, it: int, chunk: int) -> int:
        """Where the next batch of at most `chunk` iterations ends: at the next evaluation or
        ``checkpoint_every`` multiple, or, with a budget, about at the next node mark (from the nodes
        per iteration so far)."""
        stop_at = min([self.total, it + chunk] + self.iterations[:1]
                      + ([(it // self.every + 1) * self.every] if self.every else []))
        if self.budget:
            nodes = self.nodes()
            stop_at = min(stop_at, it + (max(1, int(np.ceil((self.marks[0] - nodes) * it / nodes)))
                                         if it and nodes else 1))
        return stop_at

    def evaluation_due(self, it: int) -> bool:
        """Whether the run evaluates at iteration `it`; passes the marks reached."""
        due_by_nodes = self.budget and (self.nodes() >= self.marks[0] or it == self.total)
        if not ((self.iterations and it == self.iterations[0]) or due_by_nodes):
            return False
        if self.iterations:
            self.iterations.pop(0)
        while self.marks and self.marks[0] <= self.nodes():
            self.marks.pop(0)
        return True
