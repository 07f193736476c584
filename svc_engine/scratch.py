"""Large arrays made inside numba kernels, on transparent huge pages as NumPy's own are.

NumPy asks the kernel for huge pages (``madvise(MADV_HUGEPAGE)``) on every allocation of 4 MB or
more; numba's ``np.empty`` does not, so the first write to a fresh 35 MB result (4.35 M float64)
takes some 8,500 page faults, about 10 ms, several times the kernel's own work. ``huge_nb`` gives a
fresh array the same advice before its first write; ``nans_nb``, ``zeros_nb``, ``falses_nb`` and
``empty_nb`` are the usual starting arrays. On systems without ``madvise`` huge pages (not
Linux) they only allocate.

Example:
    >>> nans_nb(3).tolist(), falses_nb(2).tolist()
    ([nan, nan, nan], [False, False])
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterable

import numpy as np
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

# NumPy's threshold (numpy/_core/src/multiarray/alloc.c) and the x86-64 / arm64 huge page size.
ADVISE_BYTES = 1 << 22
HUGE_PAGE = 1 << 21
MADV_HUGEPAGE = 14  # Linux <asm-generic/mman-common.h>
ON_LINUX = sys.platform.startswith("linux")


@intrinsic
def _madvise(typingctx, addr, length, advice):  # type: ignore[no-untyped-def]  # numba intrinsic
    """``madvise(addr, length, advice)`` of the C library, called from compiled code (cacheable:
    the symbol is resolved when the cached object is loaded, no Python object is captured)."""
    from llvmlite import ir

    sig = types.intc(types.uintp, types.uintp, types.intc)

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        size_t = context.get_value_type(types.uintp)
        fnty = ir.FunctionType(ir.IntType(32), [size_t, size_t, ir.IntType(32)])
        return builder.call(cgutils.get_or_insert_function(builder.module, fnty, "madvise"), args)

    return sig, codegen


if ON_LINUX:

    @njit(cache=True, nogil=True)
    def huge_nb(a: np.ndarray) -> np.ndarray:
        """``a`` (freshly allocated, not yet written) with its whole 2 MB pages advised as huge
        pages when it spans 4 MB or more; returns ``a``.

        >>> huge_nb(np.empty(4)).size
        4
        """
        nbytes = a.size * a.itemsize
        if nbytes >= ADVISE_BYTES:
            addr = a.ctypes.data
            lo = (addr + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1)
            hi = (addr + nbytes) & ~(HUGE_PAGE - 1)
            if hi > lo:
                _madvise(types.uintp(lo), types.uintp(hi - lo), np.intc(MADV_HUGEPAGE))
        return a

else:  # pragma: no cover - other systems place pages their own way

    @njit(cache=True, nogil=True)
    def huge_nb(a: np.ndarray) -> np.ndarray:
        """``a`` unchanged (huge pages are advised on Linux only).

        >>> huge_nb(np.empty(4)).size
        4
        """
        return a


@njit(cache=True, nogil=True)
def empty_nb(n: int) -> np.ndarray:
    """A fresh float64 array of ``n`` (values undefined), on huge pages when large.

    >>> empty_nb(2).size
    2
    """
    return huge_nb(np.empty(n))


@njit(cache=True, nogil=True)
def nans_nb(n: int) -> np.ndarray:
    """A fresh float64 array of ``n`` NaN, on huge pages when large (``np.full(n, np.nan)``).

    >>> nans_nb(2).tolist()
    [nan, nan]
    """
    out = huge_nb(np.empty(n))
    out[:] = np.nan
    return out


@njit(cache=True, nogil=True)
def zeros_nb(n: int) -> np.ndarray:
    """A fresh float64 array of ``n`` zeros, on huge pages when large (``np.zeros(n)``).

    >>> zeros_nb(2).tolist()
    [0.0, 0.0]
    """
    out = huge_nb(np.empty(n))
    out[:] = 0.0
    return out


@njit(cache=True, nogil=True)
def falses_nb(n: int) -> np.ndarray:
    """A fresh bool array of ``n`` False, on huge pages when large (``np.zeros(n, np.bool_)``).

    >>> falses_nb(2).tolist()
    [False, False]
    """
    out = huge_nb(np.empty(n, np.bool_))
    out[:] = False
    return out


# ---- Scratch arrays kept between evaluations ----------------------------------------------------
# A fresh 35 MB array costs its page faults again on every use (glibc maps any block over 32 MB
# afresh and unmaps it when freed), ~4 ms per array on the hosts measured. An evaluation whose
# arrays nobody sees afterwards gives them back here, and the thread's next one writes into them.

#: Bytes of given-back arrays a thread keeps (three 4.35 M-candle series); the newest first.
KEEP_BYTES = 1 << 27
_kept = threading.local()


def take(n: int) -> np.ndarray | None:
    """A float64 array of ``n`` values (contents undefined) that this thread gave back with `keep`,
    or None: then the caller allocates.

    >>> keep([np.empty(ADVISE_BYTES // 8)]); take(ADVISE_BYTES // 8).size, take(ADVISE_BYTES // 8)
    (524288, None)
    """
    arrays: list[np.ndarray] = getattr(_kept, "arrays", [])
    for i, a in enumerate(arrays):
        if a.size == n:
            return arrays.pop(i)
    return None


def keep(arrays: Iterable[np.ndarray]) -> None:
    """Give back float64 arrays that nothing references any more (the caller's promise), for this
    thread's next `take`. Arrays under ``ADVISE_BYTES`` are left to the allocator; at most
    ``KEEP_BYTES`` are kept, the newest first.

    >>> keep([np.empty(3)]); take(3) is None
    True
    """
    kept = [a for a in arrays if a.dtype == np.float64 and a.nbytes >= ADVISE_BYTES]
    kept += getattr(_kept, "arrays", [])
    total = 0
    for i, a in enumerate(kept):
        total += a.nbytes
        if total > KEEP_BYTES:
            del kept[i:]
            break
    _kept.arrays = kept


def drop_kept() -> None:
    """Free the arrays this thread keeps (`keep`), for a long-lived thread done with large series.

    >>> keep([np.empty(ADVISE_BYTES // 8)]); drop_kept(); take(ADVISE_BYTES // 8) is None
    True
    """
    _kept.arrays = []
