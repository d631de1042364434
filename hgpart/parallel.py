"""When to run a numba kernel in parallel: starting threads costs more than a small loop.

Kernels with a ``prange`` come in two drivers over one loop body (a serial ``range`` and a parallel
``prange``); :func:`pick` chooses by the amount of work.
"""

from __future__ import annotations

SERIAL_BELOW = 100_000  # items (pins, vertices) under which the serial driver is faster


def pick(work: int, serial, parallel):
    """The serial driver for small work, else the parallel one."""
    return serial if work < SERIAL_BELOW else parallel
