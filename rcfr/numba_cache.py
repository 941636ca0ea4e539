"""Numba's on-disk cache, keyed by every source file a cached function's compiled code comes from.

numba keys a cached function by a hash of its own file only. A function that calls or inlines jitted
functions of other files (the sampling driver inlines the walks) compiles their code into its own, so
after an edit to one of those files the cached function kept running the old code until its cache was
deleted. Here each cached function's key (numba's "source stamp") also holds a digest of the files,
in a watched package (`rcfr` itself), that its code can come from:

* the files of the jitted functions it names, transitively (as globals, as attributes of a module it
  names, or in its closure), and of the plain functions and classes it names;
* the module each global it names is imported from (a constant is frozen into the compiled code);
* the files that register a numba ``@overload`` of a function it names (`REGISTRARS`; the implementation of
  ``states.mover`` for a rules source lives in `rcfr.sampling.rules_source`, which the driver never imports).

The names are read from the bytecode, and the overloads from the sources, so the key does not depend on
which modules happen to be imported. It is computed at the first load or save of each cached function in
a process (every module it names is imported by then). `install` patches numba once numba is imported
(`import rcfr` stays free of numba); `watch` adds a package (the tests watch a temporary one).
"""

from __future__ import annotations

import ast
import hashlib
import importlib.abc
import importlib.util
import inspect
import re
import sys
import types
from functools import lru_cache
from pathlib import Path

#: package directories whose cached functions get the wider key (and whose files count): `rcfr`'s own
ROOTS: list[Path] = [Path(__file__).resolve().parent]
_CACHING = "numba.core.caching"


def watch(root) -> None:
    """Key the cached functions of the package directory `root` by their dependencies too."""
    path = Path(root).resolve()
    if path not in ROOTS:
        ROOTS.append(path)


def _root_of(path) -> Path | None:
    try:
        resolved = Path(path).resolve()
        if not resolved.is_file():  # "<string>": code made by exec
            return None
    except (TypeError, OSError):
        return None
    return next((root for root in ROOTS if resolved.is_relative_to(root)), None)


def _file_of(obj) -> str | None:
    try:
        return inspect.getfile(obj)
    except TypeError:
        return None


def _names(code: types.CodeType) -> set[str]:
    """Every global or attribute name the code (and the code nested in it) reads."""
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _names(const)
    return names


@lru_cache(maxsize=None)
def _imported_from(path: str) -> dict[str, str]:
    """name -> module for the ``from module import name [as alias]`` statements of the file at `path`,
    relative imports resolved against the file's package."""
    file = Path(path)
    root = _root_of(file)
    try:
        tree = ast.parse(file.read_text())
    except (OSError, SyntaxError, ValueError):
        return {}
    package = list(file.relative_to(root.parent).with_suffix("").parts)[:-1]
    out = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = package[:len(package) - node.level + 1] if node.level else []
            module = ".".join(base + ([node.module] if node.module else []))
            for alias in node.names:
                out[alias.asname or alias.name] = module
    return out


#: decorators that register a numba ``@overload`` of the function they name: numba's own, and the state
#: sources' (`rcfr.sampling.states.implements`, `rcfr.sampling.rules_source.rules_accessor`)
REGISTRARS = ("overload", "implements", "rules_accessor")


@lru_cache(maxsize=None)
def _overloads(root: Path) -> dict[str, frozenset[str]]:
    """Function name -> the files under `root` that register a numba ``@overload`` of it (`REGISTRARS`)."""
    found: dict[str, set[str]] = {}
    pattern = re.compile(r"@(?:%s)\(\s*(?:[\w.]*\.)?(\w+)" % "|".join(REGISTRARS))
    for path in root.rglob("*.py"):
        try:
            text = path.read_text()
        except (OSError, UnicodeDecodeError):
            continue
        for name in pattern.findall(text):
            found.setdefault(name, set()).add(str(path))
    return {name: frozenset(paths) for name, paths in found.items()}


def _module_file(name: str, root: Path) -> str | None:
    """The file of module `name` in the package `root` (found without importing anything), or None."""
    base = root.parent.joinpath(*name.split("."))
    if not base.resolve().is_relative_to(root):
        return None
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return str(path)
    return None


def sources(py_func) -> list[str]:
    """The files of `py_func`'s watched package that its compiled code can come from (its own included)."""
    root = _root_of(_file_of(py_func))
    if root is None:
        return []
    files: set[str] = set()
    seen: set[int] = set()
    todo = [py_func]

    def note(obj) -> None:
        """A named object: follow a jitted function, record the file of anything else with one."""
        inner = getattr(obj, "py_func", None)  # a numba dispatcher
        if callable(inner):
            todo.append(inner)
        elif isinstance(obj, types.FunctionType):
            todo.append(obj)
        elif isinstance(obj, (type, types.ModuleType)):
            path = _file_of(obj) if not isinstance(obj, types.ModuleType) else getattr(obj, "__file__", None)
            if path and _root_of(path) == root:
                files.add(path)

    while todo:
        func = todo.pop()
        if id(func) in seen:
            continue
        seen.add(id(func))
        path = _file_of(func)
        if not path or _root_of(path) != root:
            continue
        files.add(path)
        names = _names(func.__code__)
        origins = _imported_from(path)
        overloads = _overloads(root)
        scope = func.__globals__
        for name in names:
            for where in overloads.get(name, ()):  # and what the overloads' implementations name in turn
                if where not in files:
                    files.add(where)
                    module = next((m for m in list(sys.modules.values()) if getattr(m, "__file__", None) == where), None)
                    for member in vars(module).values() if module is not None else ():
                        if getattr(member, "__module__", None) == module.__name__:
                            note(member)
            if name in origins:
                origin = _module_file(origins[name], root)
                if origin:
                    files.add(origin)
            if name not in scope:
                continue
            obj = scope[name]
            note(obj)
            if isinstance(obj, types.ModuleType):  # module.attribute: follow the attributes it names
                for attr in names:
                    if attr in vars(obj):
                        note(vars(obj)[attr])
        for cell in func.__closure__ or ():
            try:
                note(cell.cell_contents)
            except ValueError:  # an empty cell
                pass
    return sorted(files)


def digest(py_func) -> str:
    """sha256 over the contents of `sources(py_func)`, by relative path."""
    root = _root_of(_file_of(py_func))
    h = hashlib.sha256()
    for path in sources(py_func):
        h.update(str(Path(path).resolve().relative_to(root.parent)).encode())
        h.update(Path(path).read_bytes())
    return h.hexdigest()


# ---- the numba side ------------------------------------------------------------------------------------
def _widen(cache) -> None:
    """Fold the digest into the stamp of `cache` (numba's FunctionCache), once per process."""
    if getattr(cache, "_rcfr_widened", False):
        return
    cache._rcfr_widened = True
    py_func = getattr(cache, "_py_func", None)
    if py_func is not None and _root_of(_file_of(py_func)) is not None:
        stamped = cache._cache_file
        stamped._source_stamp = (stamped._source_stamp, digest(py_func))


def _patch(caching) -> None:
    cache_class = caching.Cache
    if getattr(cache_class, "_rcfr_patched", False):
        return
    load, save = cache_class._load_overload, cache_class._save_overload

    def _load_overload(self, sig, target_context):
        _widen(self)
        return load(self, sig, target_context)

    def _save_overload(self, sig, data):
        _widen(self)
        return save(self, sig, data)

    cache_class._load_overload, cache_class._save_overload = _load_overload, _save_overload
    cache_class._rcfr_patched = True


class _AfterImport(importlib.abc.MetaPathFinder):
    """Patches numba's caching module as soon as it is imported (numba loads it on import)."""

    def find_spec(self, name, path, target=None):
        if name != _CACHING:
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None:
            return spec
        exec_module = spec.loader.exec_module

        def run(module):
            exec_module(module)
            _patch(module)

        spec.loader.exec_module = run
        return spec


def install() -> None:
    """Patch numba now if it is imported, else as soon as it is."""
    if _CACHING in sys.modules:
        _patch(sys.modules[_CACHING])
    elif not any(isinstance(f, _AfterImport) for f in sys.meta_path):
        sys.meta_path.insert(0, _AfterImport())
