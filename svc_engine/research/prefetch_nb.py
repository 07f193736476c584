"""A cache prefetch hint for numba kernels: ``prefetch_row(arr, i)`` asks for row ``i`` of a 2-d
array to be brought into cache without waiting for it, so that a kernel reading rows in random
places (the bootstrap's gather) has many misses in flight instead of one at a time.

Example:
    >>> import numpy as np
    >>> from numba import njit
    >>> @njit
    ... def first(a):
    ...     prefetch_row(a, 1)
    ...     return a[1, 0]
    >>> float(first(np.ones((2, 2))))
    1.0
"""

from __future__ import annotations

import llvmlite.binding as llvm
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

# LLVM names the intrinsic after its pointer type: opaque pointers ("p0") from LLVM 15 on
_PREFETCH = "llvm.prefetch.p0" if llvm.llvm_version_info[0] >= 15 else "llvm.prefetch.p0i8"


@intrinsic
def prefetch_row(typingctx, arr, i):
    """Ask for row ``i`` of a 2-d array to be brought into cache (no load, no wait)."""
    sig = types.void(arr, i)

    def codegen(context, builder, signature, args):
        aryty = signature.args[0]
        ary = context.make_array(aryty)(context, builder, args[0])
        zero = context.get_constant(types.intp, 0)
        ptr = cgutils.get_item_pointer(context, builder, aryty, ary, [args[1], zero])
        i8p = builder.bitcast(ptr, ir.IntType(8).as_pointer())
        i32 = ir.IntType(32)
        fnty = ir.FunctionType(ir.VoidType(), [i8p.type, i32, i32, i32])
        fn = cgutils.get_or_insert_function(builder.module, fnty, _PREFETCH)
        builder.call(fn, [i8p, i32(0), i32(3), i32(1)])  # read, keep in all levels, data
        return context.get_dummy_value()

    return sig, codegen
