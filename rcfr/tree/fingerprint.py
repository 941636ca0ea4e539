"""Identity of a game: a hash of the rules class, its source and its parameters, and of the compiled
format. Policies, checkpoints and cache entries carry it so that they meet only their own game."""

from __future__ import annotations

import hashlib
import inspect
import sys

from ..games.base import GameRules

#: Version of the compiled arrays and of the cache file; part of every fingerprint.
FORMAT_VERSION = 2
#: Version of the code-keyed policy file (`rcfr.policy.rules`); part of every `rules_identity`.
CODES_VERSION = 1


def _source_modules(cls: type) -> list:
    """Modules whose source defines the rules of `cls`: those of its classes up to `GameRules`, and
    the modules of the same package they take functions or classes from (a game's fast path)."""
    modules = []
    for klass in cls.__mro__:
        if klass is GameRules or klass is object:
            break
        module = inspect.getmodule(klass)
        if module is None or module.__name__ == "__main__":
            modules.append(klass)
            continue
        modules.append(module)
        package = module.__name__.rpartition(".")[0]
        for value in vars(module).values():
            home = getattr(value, "__module__", None)
            if (package and isinstance(home, str) and home != module.__name__ and home.startswith(package + ".")
                    and (inspect.isfunction(value) or inspect.isclass(value))):
                modules.append(sys.modules.get(home, value))
    return modules


def rules_fingerprint(cls: type) -> str:
    """Hash of the source of the modules defining `cls` and its bases up to `GameRules` (whole modules,
    so that helpers such as a deck's showdown count too, and the sibling modules they import from, such
    as a fast path): editing the rules invalidates their cached trees. A class whose source is
    unavailable (defined in a REPL or by exec) contributes its name only."""
    digest = hashlib.sha256()
    seen = set()
    for item in _source_modules(cls):
        try:
            source = inspect.getsource(item)
        except (OSError, TypeError):
            source = f"<no source: {getattr(item, '__module__', '')}.{getattr(item, '__qualname__', item)}>"
        if source not in seen:
            seen.add(source)
            digest.update(source.encode())
    return digest.hexdigest()[:16]


def game_fingerprint(rules: GameRules) -> str:
    """Hash of the compiled format version, the rules class, its source and its parameters."""
    ident = (f"v{FORMAT_VERSION}:{type(rules).__module__}.{type(rules).__qualname__}:"
             f"{rules_fingerprint(type(rules))}:{rules.description()}")
    return hashlib.sha256(ident.encode()).hexdigest()[:16]


def rules_identity(rules: GameRules) -> str:
    """Hash of the rules class, its source (`rules_fingerprint`) and its parameters. Unlike
    `game_fingerprint` it leaves out the compiled format's version: a code-keyed policy never meets the
    compiled arrays, only the rules' codes."""
    if not isinstance(rules, GameRules):
        raise TypeError(f"rules must be a GameRules object (e.g. rcfr.make_rules('leduc')), "
                        f"got {type(rules).__name__}")
    ident = (f"codes-v{CODES_VERSION}:{type(rules).__module__}.{type(rules).__qualname__}:"
             f"{rules_fingerprint(type(rules))}:{rules.description()}")
    return hashlib.sha256(ident.encode()).hexdigest()[:16]
