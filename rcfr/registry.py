"""Name-to-constructor lookups that fail early, naming the bad field and the allowed values."""

from __future__ import annotations

import inspect
from typing import Any, Callable

from .options import check_choice  # noqa: F401  (re-exported: the registry's name for it)


def keyword_names(fn: Callable) -> list[str]:
    params = inspect.signature(fn).parameters.values()
    return [p.name for p in params if p.name != "self" and p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)]


def build(kind: str, registry: dict[str, Callable], name: str, /, *args, **options) -> Any:
    """`registry[name](*args, **options)`, rejecting an unknown name or option with the allowed ones."""
    factory = registry[check_choice(kind, name, sorted(registry))]
    allowed = keyword_names(factory)[len(args):]
    unknown = sorted(set(options) - set(allowed))
    if unknown:
        raise ValueError(f"unknown option(s) {', '.join(map(repr, unknown))} for {kind} {name!r}; "
                         f"allowed: {', '.join(allowed) or 'none'}")
    params = inspect.signature(factory).parameters
    missing = [n for n in allowed if n not in options and params[n].default is inspect.Parameter.empty
               and params[n].kind is not inspect.Parameter.VAR_KEYWORD]
    if missing:
        raise ValueError(f"{kind} {name!r} needs the option(s) {', '.join(map(repr, missing))}")
    return factory(*args, **options)
