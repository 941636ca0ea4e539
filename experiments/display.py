"""How the kit names things in tables and plots: games and method labels in words, numbers in cells."""

from __future__ import annotations

import textwrap

#: words for the games' registry names in plot titles (`game_title`)
GAME_WORDS = {"kuhn": "Kuhn poker", "leduc": "Leduc hold'em", "ocp": "one-card poker", "nlocp": "no-limit one-card poker",
              "nlocp_wagers": "no-limit one-card poker, abstract wagers", "liars_dice": "Liar's Dice (Bluff)",
              "goofspiel": "Goofspiel", "dieroll": "Die-Roll Poker", "pam": "Princess and Monster",
              "latent_ttt": "Latent Tic-Tac-Toe", "openspiel": "OpenSpiel"}


#: games whose exploitability is plotted in mbb/g (milli-big-blinds per game); the others in chips
POKER = {"kuhn", "leduc", "ocp", "nlocp", "nlocp_wagers"}


#: the kit's short method labels (`rcfr.experiments.arms`) in words, for legends
LABEL_WORDS = {"BF": "RCFR (best-first tree)", "BF+": "RCFR+ (best-first tree)",
               "BF_BS": "RCFR (best-first tree, bootstrapped targets)",
               "BF+_BS": "RCFR+ (best-first tree, bootstrapped targets)"}


#: in a label, what comes before it names the panel of the nodes-touched plot (`split_label`)
PANEL_SEPARATOR = " | "


def split_label(label: str) -> tuple[str, str]:
    """(panel, curve) of a label: "OS alternating optimistic | ε=0.6" is curve "ε=0.6" of panel "OS
    alternating optimistic"; a label without `PANEL_SEPARATOR` is a curve of the game's only panel."""
    panel, _, curve = label.rpartition(PANEL_SEPARATOR)
    return panel, curve


def game_title(game: str, sequences: float | None = None) -> str:
    """A game's description ("leduc(merge_suits=True)") in words, with its size when known."""
    name, _, params = game.partition("(")
    params = params.rstrip(")").replace("merge_suits=True", "rank-only")
    text = GAME_WORDS.get(name, name) + (f" ({params})" if params else "")
    text = f"{text}, {sequences:,.0f} sequences" if sequences else text
    return textwrap.fill(text, 60)  # OpenSpiel descriptions run to 200 characters: wrapped, not cut


def label_words(label: str) -> str:
    """A curve label for a legend: "BF+" -> "RCFR+ (best-first tree)", "CFR+ J.Q.K" -> "CFR+ on
    abstraction J.Q.K"; other labels as they are."""
    head, _, rest = label.partition(" ")
    if head in LABEL_WORDS:
        return LABEL_WORDS[head] + (f" {rest}" if rest else "")
    if head == "CFR+" and rest and not rest.startswith(("(", "[")):
        return f"CFR+ on abstraction {rest}"
    return label


def is_poker(game: str) -> bool:
    return game.split("(")[0] in POKER


def fmt(value, digits: int = 4) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.{digits}g}"
    return str(value)


def cell(value) -> str:
    """A Markdown table cell (a label's panel separator " | " must not split it)."""
    return str(value).replace("|", "\\|")
