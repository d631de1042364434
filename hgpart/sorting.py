"""Stable argsorts for njit code: ``np.argsort(keys, kind="stable")`` of uint64 and int64 keys by a
least-significant-digit radix sort (insertion below :data:`SHORT`), and float64 keys mapped onto int64 keys of
the same order.

numba compiles its own mergesort anew for every key type that reaches it, a few seconds each of the first
command's compilation (docs/tuning.md, "Compilation and warm-up"); the refiners' orders (label propagation's
moves, the rebalancer's candidates, the flow pairs) and the contraction's order of net hashes share this one.
"""

from __future__ import annotations

import numba
import numpy as np

SHORT = 32  # keys up to this many are sorted by insertion: a radix pass costs 256 buckets whatever the length
_SIGN = np.uint64(1) << np.uint64(63)
_MAGNITUDE = np.int64(0x7FFFFFFFFFFFFFFF)


@numba.njit(cache=True, nogil=True)
def radix_argsort(digits):
    """The indices that sort ``digits`` (uint64[m], overwritten) ascending, equal ones in index order: int64[m]
    (``np.argsort(digits, kind="stable")``). Eight passes of 8 bits; a pass whose digit is the same for every
    key is skipped."""
    m = digits.shape[0]
    order = np.arange(m)
    next_order = np.empty(m, dtype=np.int64)
    next_digits = np.empty(m, dtype=np.uint64)
    counts = np.empty(257, dtype=np.int64)
    for shift in range(0, 64, 8):
        counts[:] = 0
        for i in range(m):
            counts[((digits[i] >> np.uint64(shift)) & np.uint64(255)) + 1] += 1
        if counts.max() == m:  # one digit for every key: the pass would keep the order
            continue
        for digit in range(256):
            counts[digit + 1] += counts[digit]
        for i in range(m):
            digit = (digits[i] >> np.uint64(shift)) & np.uint64(255)
            position = counts[digit]
            next_order[position] = order[i]
            next_digits[position] = digits[i]
            counts[digit] = position + 1
        order, next_order = next_order, order
        digits, next_digits = next_digits, digits
    return order


@numba.njit(cache=True, nogil=True)
def stable_argsort(keys):
    """The indices that sort ``keys`` (int64[m], any sign) ascending, equal keys in index order: int64[m], the
    same as ``np.argsort(keys, kind="stable")``. By insertion up to :data:`SHORT` keys, else by
    :func:`radix_argsort` of the keys with their sign bit flipped (so that they order as unsigned integers)."""
    m = keys.shape[0]
    if m > SHORT:
        digits = np.empty(m, dtype=np.uint64)
        for i in range(m):
            digits[i] = np.uint64(keys[i]) ^ _SIGN
        return radix_argsort(digits)
    order = np.arange(m)
    for i in range(1, m):
        index = order[i]
        key = keys[index]
        j = i
        while j > 0 and keys[order[j - 1]] > key:
            order[j] = order[j - 1]
            j -= 1
        order[j] = index
    return order


@numba.njit(cache=True, nogil=True)
def float_keys(values):
    """int64 keys (int64[m]) in the order of ``values`` (float64[m], no NaN), equal values equal keys (-0.0 and
    0.0 included), for :func:`stable_argsort`: a float's bits read as an int64, the magnitude bits of negative
    ones flipped so that the larger magnitude comes first."""
    bits = (values + 0.0).view(np.int64)  # -0.0 + 0.0 is 0.0
    return bits ^ ((bits >> 63) & _MAGNITUDE)
