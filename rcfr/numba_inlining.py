"""Makes numba's ``inline="always"`` cost linear in the size of the inlined function, not quadratic.

numba's inliner (`numba.core.inline_closurecall.InlineWorker.inline_ir`) copies the callee's IR one
block at a time, each `copy.deepcopy` with a fresh memo; every block refers to the function's scope,
which holds every variable of the function, so each block copies the whole scope again. The sampling
driver inlines whole walks (thousands of variables, hundreds of blocks), and those copies were most of
its cold compile (docs/mccfr.md, "Kernel structure", has the profile). Here the blocks of one IR share one memo, as a
single `copy.deepcopy` of all blocks would: the copy has the structure of the original (one scope shared
by its blocks), and the compiled code is the same (the golden and bit-identity tests check the results).

Applied on import of `rcfr.sampling` (every module that inlines walks imports it first). If numba's
internals change shape, the patch is skipped and compiling is only slower.
"""

from __future__ import annotations

import copy

from numba.core import inline_closurecall, ir


class _BlockCopier:
    """Stands in for the `copy` module inside numba's inliner: consecutive block copies of one scope
    share a memo; every other call is the `copy` module's."""

    def __init__(self):
        self.reset()

    def reset(self) -> None:
        self.scope, self.memo = None, None

    def deepcopy(self, x, memo=None):
        if memo is None and isinstance(x, ir.Block):
            if x.scope is not self.scope:
                self.scope, self.memo = x.scope, {}
            return copy.deepcopy(x, self.memo)
        return copy.deepcopy(x, memo)

    def __getattr__(self, name):
        return getattr(copy, name)


def _with_fresh_memo(inline_ir):
    def inline(self, *args, **kwargs):
        # one inlining copies the callee and that copy once each: never reuse a memo across inlinings,
        # or a second inlining of the same callee would get the first one's (mutated) blocks back
        copier.reset()
        try:
            return inline_ir(self, *args, **kwargs)
        finally:
            copier.reset()

    inline.__wrapped__ = inline_ir
    return inline


copier = _BlockCopier()
_worker = getattr(inline_closurecall, "InlineWorker", None)
if getattr(inline_closurecall, "copy", None) is copy and callable(getattr(_worker, "inline_ir", None)):
    inline_closurecall.copy = copier
    _worker.inline_ir = _with_fresh_memo(_worker.inline_ir)
