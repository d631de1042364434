"""The refinement on the device (numba.cuda + CuPy): Jet-style rounds on each level, the GPU twin of
:mod:`hgpart.refinement.jet` (numba njit, the same partitions), one module a step.

After M. S. Gilbert, K. Madduri, E. G. Boman and S. Rajamanickam, "Jet: Multilevel Graph Partitioning on
Graphics Processing Units", SIAM Journal on Scientific Computing, 2024, for hypergraphs:

- :mod:`.gains`: pin counts Phi(e, b) and the rating of moves (best target, exact gain, internal weight);
- :mod:`.afterburner`: each candidate's gain after the better-ranked candidates' moves;
- :mod:`.moves`: moves applied, Phi, block weights and the objective kept exact by atomics;
- :mod:`.rebalancer`: moves out of overloaded blocks, least loss per unit of weight first;
- :mod:`.level_state`: :class:`DeviceLevelState`, one level and partition with the launches on it;
- :mod:`.jet`: the rounds (:func:`refine_device`, :func:`jet_round`) and small helpers.

The round loop and its constants are written once for both twins, in :mod:`hgpart.refinement.jet_rules`.
The tests compare both twins with a brute-force numpy model of the same steps (``tests/jet_model.py``).
"""

from .afterburner import (afterburner_kernel, afterburner_scan_kernel, incidence_keys_kernel, negated_gains_kernel,
                          neighbourhood_exceeds_kernel, ranked_moves_kernel)
from .gains import (HEAVY_DEGREE, MAX_K, pick_heavy_moves_kernel, pin_counts_kernel, rate_heavy_chunks_kernel,
                    rate_moves_kernel, rating_group)
from .jet import balanced_on_device, block_weights_device, jet_round, refine_device, upload_blocks
from .level_state import HEAVY_CHUNK_ROUNDS, SCAN_MAX_PIN_VISITS, SCAN_MEAN_NET_SIZE, DeviceLevelState
from .moves import apply_kept_kernel, apply_moves_kernel
from .rebalancer import (rebalance_accept_kernel, rebalance_active_kernel, rebalance_device, rebalance_keys_kernel,
                         rebalance_needed_kernel, rebalance_order_kernel)

__all__ = ["HEAVY_CHUNK_ROUNDS", "HEAVY_DEGREE", "MAX_K", "SCAN_MAX_PIN_VISITS", "SCAN_MEAN_NET_SIZE",
           "DeviceLevelState", "afterburner_kernel", "afterburner_scan_kernel", "apply_kept_kernel",
           "apply_moves_kernel", "balanced_on_device", "block_weights_device", "incidence_keys_kernel",
           "jet_round", "negated_gains_kernel", "neighbourhood_exceeds_kernel", "pick_heavy_moves_kernel",
           "pin_counts_kernel", "ranked_moves_kernel", "rate_heavy_chunks_kernel", "rate_moves_kernel",
           "rating_group", "rebalance_accept_kernel", "rebalance_active_kernel", "rebalance_device",
           "rebalance_keys_kernel", "rebalance_needed_kernel", "rebalance_order_kernel", "refine_device",
           "upload_blocks"]
