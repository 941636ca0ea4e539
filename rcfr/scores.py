"""What an exact evaluation returns, below every evaluator (the sequence form's and the rules walks')."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Evaluation:
    """Exact scores of a policy profile. Values are for player 0, in chips."""

    value: float
    best_response_values: tuple[float, float]
    nash_conv: float
    exploitability: float  # (BR_0 + BR_1) / 2 = NashConv / 2, chips
    exploitability_mbb: float  # milli-big-blinds per game
