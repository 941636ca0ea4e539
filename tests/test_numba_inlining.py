"""The inliner patch (`rcfr.numba_inlining`): blocks of one IR share one copied scope, inlinings never share."""

import numpy as np
from numba import njit
from numba.core import inline_closurecall

import rcfr.sampling  # noqa: F401  (applies the patch)
from rcfr.numba_inlining import copier


def _blocks():
    from numba.core.compiler import run_frontend

    def f(x):
        y = 0
        for i in range(x):
            if i % 2:
                y += i
        return y

    return run_frontend(f).blocks


def test_the_patch_is_applied():
    assert inline_closurecall.copy is copier
    assert hasattr(inline_closurecall.InlineWorker.inline_ir, "__wrapped__")


def test_blocks_of_one_ir_share_one_copied_scope_until_reset():
    blocks = list(_blocks().values())
    assert len(blocks) > 2 and len({id(b.scope) for b in blocks}) == 1
    copier.reset()
    copies = [copier.deepcopy(b) for b in blocks]
    assert len({id(c.scope) for c in copies}) == 1 and copies[0].scope is not blocks[0].scope
    copier.reset()
    again = copier.deepcopy(blocks[0])
    assert again is not copies[0] and again.scope is not copies[0].scope
    copier.reset()


def test_inlined_calls_compile_and_agree_with_python():
    @njit(inline="always")
    def step(a, i):
        return a[i] * 2 + 1 if a[i] > 0 else a[i] - 1

    @njit
    def total(a):
        s = 0.0
        for i in range(a.size):
            s += step(a, i) + step(a, a.size - 1 - i)  # the same callee inlined at two sites
        return s

    a = np.array([1.5, -2.0, 0.0, 3.0])
    expected = sum(step.py_func(a, i) + step.py_func(a, a.size - 1 - i) for i in range(a.size))
    assert total(a) == expected
