"""The counting and listing kernels of the triangle code on the GPU: vertex-centric, with hash tables in
shared memory. The twins of :func:`.host.count_triangles_cpu` and :func:`.host.list_triangles_cpu`;
:class:`.device.DeviceSteps` launches them.

The method follows T. M. Low, V. N. Rao, M. Lee, D. Popovici, F. Franchetti and S. McMillan, "First look:
linear algebra-based triangle counting without matrix multiplication", IEEE HPEC 2017, and a report that
extends it to enumeration; :mod:`.driver` describes the algorithm and the task order.

A task is a chunk of the input row of a rank x. ``small_kernel`` gives each warp its own chunks and its
own table (x with at most ``small_out`` out-neighbours); ``large_kernel`` gives a block of 8 warps a group
of up to 32 chunks of one x, which its warps take in turn (a shared counter), and a shared table filled
once per piece of N+(x). Tables hold at most a quarter of their slots (a look-up ends at its first slot 3
times in 4, and the warp waits for its longest probe). A lane whose entry u is an in-neighbour of x finds
the run of N+(u) within the piece's range (two binary searches; runs of up to 32 members are taken whole,
their members outside the range simply miss); an inclusive warp scan lays the runs end to end, and at each
step lane l takes entries 128 s + l + 32 j (j < 4), its row found from its previous one (the row, its end
and its start stay in registers; shared memory is read only when the row changes, and only the last step
checks for entries past the end): the four loads and then the four first probes go out together, and the
loads are side by side across the lanes. The hot path is 32-bit: numba widens integer arithmetic to 64
bits and wraps negative indices, so slots, rows and entries are cast to int32 and shared memory is indexed
with uint32, which makes the count markedly faster.

Each hit w counts on its table slot (shared atomics) and on the lane's tally of its row; after the chunk
the rows and slots with hits add to ``per_vertex`` (one global atomic each) and the chunk's count to x.
Listing (mode WRITE) re-runs the chunks of a range and writes each hit at the chunk's offset plus the
warp's ballot prefix.

The kernels' arrays are those of :class:`.plan.TrianglePlan` (``chunk_vertex`` int32[num_chunks],
``chunk_first`` int64[n + 1], ``order``, ``rank`` int32[n], ``offsets`` int64[n + 1], ``neighbors``
int32[2m], ``out_offsets`` int64[n + 1], ``out_neighbors`` int32[m]), the tasks (``tasks``, ``groups``
int64), and the outputs ``per_vertex`` int64[n] (by rank), ``chunk_counts`` int64[num_chunks],
``chunk_offsets`` int64[num_chunks + 1] and ``triangles`` int32[t, 3].
"""

from __future__ import annotations

from numba import cuda, int32, int64, uint32

from ...cuda.arrays import SIMULATED, cached_kernel
from ...cuda.warp import FULL_MASK, WARP_SIZE, lane_id, lanes_below, warp_inclusive_scan, warp_sum
from . import common
from .common import GROUP_CHUNKS

SMALL_WARPS = 8
LARGE_WARPS = 8
SMALL_ROWS = SMALL_WARPS * WARP_SIZE  # a row per lane
LARGE_ROWS = LARGE_WARPS * WARP_SIZE
EMPTY = -1
COUNT, WRITE = 0, 1
HASH_MULTIPLIER = 2654435761  # Knuth's multiplicative hash
COUNT_REGISTERS = 64  # registers per thread of the count kernels: lower limits (48, 56) made them slower
# the kernels' decorator: the register limit on a GPU; the simulator takes no limit
count_jit = cached_kernel if SIMULATED else cuda.jit(max_registers=COUNT_REGISTERS, cache=True)
SCAN_WHOLE = 32  # runs of N+(u) up to this long are looked up whole, without binary searches

put_sorted = cuda.jit(device=True, inline=True)(common.put_sorted)
run_bounds = cuda.jit(device=True, inline=True)(common.run_bounds)
chunk_entries = cuda.jit(device=True, inline=True)(common.chunk_entries)


def table_slots(members: int) -> int:
    """Slots of the table for ``members`` keys: the next power of two at least 4 times as many (a load of
    at most 1/4: a look-up ends at its first slot 3 times in 4, and the warp waits for its longest probe),
    at least 32."""
    slots = WARP_SIZE
    while slots < 4 * members:
        slots *= 2
    return slots


table_slots_device = cuda.jit(device=True, inline=True)(table_slots)


@cuda.jit(device=True, inline=True)
def _slot_bits(slots):
    bits = 0
    while (1 << bits) < slots:
        bits += 1
    return bits


@cuda.jit(device=True, inline=True)
def _home(key, bits):
    """The key's first slot (uint32): the top ``bits`` bits of its 32-bit multiplicative hash."""
    return uint32(uint32(uint32(key) * uint32(HASH_MULTIPLIER)) >> uint32(32 - bits))


@cuda.jit(device=True, inline=True)
def _clear_table(table, base, capacity, slots, thread, threads):
    """Empty ``slots`` keys (table[base:]) and their counts (table[base + capacity:])."""
    for slot in range(thread, slots, threads):
        table[base + slot] = EMPTY
        table[base + capacity + slot] = 0


@cuda.jit(device=True, inline=True)
def _fill_table(table, base, slots, bits, out_neighbors, first, stop, thread, threads):
    """Insert out_neighbors[first:stop] (distinct) by linear probing."""
    for member in range(first + thread, stop, threads):
        key = out_neighbors[member]
        slot = _home(key, bits)
        while cuda.atomic.cas(table, base + slot, EMPTY, key) != EMPTY:
            slot = (slot + 1) & (slots - 1)


@cuda.jit(device=True, inline=True)
def _probe(table, base, slots, key, slot, stored):
    """Finish the look-up of ``key`` (-1: none) whose first slot ``slot`` held ``stored`` (linear
    probing): the key's slot, or -1 (int32)."""
    if key < 0:
        return int32(-1)
    mask = uint32(slots - 1)
    while stored != key:
        if stored == EMPTY:
            return int32(-1)
        slot = uint32(uint32(slot + uint32(1)) & mask)
        stored = table[uint32(base + slot)]
    return int32(slot)


@cuda.jit(device=True, inline=True)
def _lane_row(x, entry, entry_stop, low, high, rank, neighbors, out_offsets, out_neighbors):
    """This lane's row: (u, run start, run length) for the entry's neighbour u when it is an in-neighbour of
    x, the run being N+(u)'s members in [low, high] (all of N+(u) when short); (-1, 0, 0) otherwise."""
    if entry < entry_stop:
        u = rank[neighbors[entry]]
        if u < x:
            first = out_offsets[u]
            length = out_offsets[u + 1] - first
            if length <= SCAN_WHOLE:  # cheaper to look all up than to search: members outside miss
                return u, first, length
            start, length = run_bounds(out_offsets, out_neighbors, u, low, high)
            return u, start, length
    return int32(-1), int64(0), int64(0)


@cuda.jit(device=True, inline=True)
def _lay_rows(u, start, length, lane, rows, row_end, row_address, row_vertex):
    """The warp's runs laid end to end (inclusive warp scan): entry k of them lies in the first row whose
    row_end exceeds k, at out_neighbors[row_address[row] + k]. Returns the number of entries."""
    length = int32(length)
    inclusive = warp_inclusive_scan(length, lane)
    row_end[uint32(rows + lane)] = inclusive
    row_address[uint32(rows + lane)] = start - (inclusive - length)
    row_vertex[uint32(rows + lane)] = u
    cuda.syncwarp()
    return cuda.shfl_sync(FULL_MASK, inclusive, WARP_SIZE - 1)


@cuda.jit(device=True, inline=True)
def _advance(entry, row, end, start, rows, row_end, row_address):
    """The row of entry ``entry`` (below the total), searched from ``row`` on (entries only grow), kept in
    registers with its end and start: returns (row, end, start); the entry lies at out_neighbors[start +
    entry]. Shared memory is read only when the row changes."""
    if end <= entry:
        row = int32(row + int32(1))
        end = row_end[uint32(rows + row)]
        while end <= entry:
            row = int32(row + int32(1))
            end = row_end[uint32(rows + row)]
        start = row_address[uint32(rows + row)]
    return row, end, start


@cuda.jit(device=True, inline=True)
def _take(x, w, slot, row, base, capacity, table, lane, rows, row_vertex, current_row, current_hits, row_hits,
          order, triangles, position, mode):
    """One entry w of row ``row``, found in the table at ``slot`` (-1: not found, or no entry). COUNT: a
    hit counts on its slot and on the lane's tally of its row (added to row_hits when the row changes).
    WRITE: the warp's hits written from ``position`` in entry order. Returns (current_row, current_hits,
    position)."""
    if mode == COUNT:
        if row != current_row:
            if current_hits:
                cuda.atomic.add(row_hits, uint32(rows + current_row), current_hits)
            current_row = row
            current_hits = int32(0)
        if slot >= 0:
            cuda.atomic.add(table, uint32(base + uint32(capacity) + uint32(slot)), 1)
            current_hits = int32(current_hits + int32(1))
    else:
        ballot = cuda.ballot_sync(FULL_MASK, slot >= 0)
        if slot >= 0:
            put_sorted(triangles, position + lanes_below(ballot, lane), order[row_vertex[uint32(rows + row)]],
                       order[x], order[w])
        position += cuda.popc(ballot)
    return current_row, current_hits, position


@cuda.jit(device=True, inline=True)
def _scan_runs(x, total, lane, table, base, capacity, slots, bits, rows, row_end, row_address, row_vertex,
               row_hits, out_neighbors, order, triangles, position, mode):
    """The warp's laid-out entries, 128 per step: lane l takes entries 128 s + l + 32 j (j < 4), whose
    loads, and then first table probes, go out together (the loads side by side across the lanes). COUNT
    adds each row's hits to row_hits[row]; WRITE writes the hits from ``position`` in entry order. Returns
    the position after the warp's hits."""
    row = int32(0)
    current_row = int32(0)
    current_hits = int32(0)
    base = uint32(base)
    rows = int32(rows)
    total = int32(total)
    end = row_end[uint32(rows)]
    start = row_address[uint32(rows)]
    step = int32(0)  # the same on every lane: WRITE takes ballots in the loop
    while step < total:
        entry0 = int32(step + lane)
        entry1 = int32(entry0 + int32(WARP_SIZE))
        entry2 = int32(entry0 + int32(2 * WARP_SIZE))
        entry3 = int32(entry0 + int32(3 * WARP_SIZE))
        step = int32(step + int32(4 * WARP_SIZE))
        if step <= total:  # a full step (the same on every lane): no entry past the total
            row, end, start = _advance(entry0, row, end, start, rows, row_end, row_address)
            row0 = row
            address0 = start + entry0
            row, end, start = _advance(entry1, row, end, start, rows, row_end, row_address)
            row1 = row
            address1 = start + entry1
            row, end, start = _advance(entry2, row, end, start, rows, row_end, row_address)
            row2 = row
            address2 = start + entry2
            row, end, start = _advance(entry3, row, end, start, rows, row_end, row_address)
            address3 = start + entry3
        else:
            row0 = row
            row1 = row
            row2 = row
            address0 = int64(-1)  # no entry
            address1 = address0
            address2 = address0
            address3 = address0
            if entry0 < total:
                row, end, start = _advance(entry0, row, end, start, rows, row_end, row_address)
                row0 = row
                address0 = start + entry0
            if entry1 < total:
                row, end, start = _advance(entry1, row, end, start, rows, row_end, row_address)
                row1 = row
                address1 = start + entry1
            if entry2 < total:
                row, end, start = _advance(entry2, row, end, start, rows, row_end, row_address)
                row2 = row
                address2 = start + entry2
            if entry3 < total:
                row, end, start = _advance(entry3, row, end, start, rows, row_end, row_address)
                address3 = start + entry3
        w0 = int32(-1)
        w1 = int32(-1)
        w2 = int32(-1)
        w3 = int32(-1)
        if address0 >= 0:
            w0 = out_neighbors[address0]
        if address1 >= 0:
            w1 = out_neighbors[address1]
        if address2 >= 0:
            w2 = out_neighbors[address2]
        if address3 >= 0:
            w3 = out_neighbors[address3]
        home0 = _home(w0, bits)
        home1 = _home(w1, bits)
        home2 = _home(w2, bits)
        home3 = _home(w3, bits)
        slot0 = _probe(table, base, slots, w0, home0, table[uint32(base + home0)])
        slot1 = _probe(table, base, slots, w1, home1, table[uint32(base + home1)])
        slot2 = _probe(table, base, slots, w2, home2, table[uint32(base + home2)])
        slot3 = _probe(table, base, slots, w3, home3, table[uint32(base + home3)])
        current_row, current_hits, position = _take(x, w0, slot0, row0, base, capacity, table, lane, rows,
                                                    row_vertex, current_row, current_hits, row_hits, order,
                                                    triangles, position, mode)
        current_row, current_hits, position = _take(x, w1, slot1, row1, base, capacity, table, lane, rows,
                                                    row_vertex, current_row, current_hits, row_hits, order,
                                                    triangles, position, mode)
        current_row, current_hits, position = _take(x, w2, slot2, row2, base, capacity, table, lane, rows,
                                                    row_vertex, current_row, current_hits, row_hits, order,
                                                    triangles, position, mode)
        current_row, current_hits, position = _take(x, w3, slot3, row, base, capacity, table, lane, rows,
                                                    row_vertex, current_row, current_hits, row_hits, order,
                                                    triangles, position, mode)
    if current_hits:
        cuda.atomic.add(row_hits, uint32(rows + current_row), current_hits)
    cuda.syncwarp()
    return position


@cuda.jit(device=True, inline=True)
def _flush_rows(u, rows, lane, row_hits, per_vertex):
    """This lane's row's hits to per_vertex[u] (and zeroed); returns the warp's hits (the chunk's count)."""
    hits = row_hits[rows + lane]
    if hits:
        cuda.atomic.add(per_vertex, u, hits)
        row_hits[rows + lane] = 0
    return warp_sum(int64(hits))


@cuda.jit(device=True, inline=True)
def _flush_slots(table, base, capacity, slots, thread, threads, per_vertex):
    """Each slot's hits to per_vertex of its key."""
    for slot in range(thread, slots, threads):
        hits = table[base + capacity + slot]
        if hits:
            cuda.atomic.add(per_vertex, table[base + slot], hits)


@count_jit
def small_kernel(tasks, chunk_vertex, chunk_first, order, rank, offsets, neighbors, out_offsets, out_neighbors,
                 capacity, per_vertex, chunk_counts, chunk_offsets, first_chunk, triangles, mode):
    """A warp per chunk of ``tasks``, its own table of ``capacity`` slots (dynamic shared memory: per warp,
    keys then counts). COUNT: chunk_counts[c] = triangles of chunk c; per_vertex (by rank) += each
    triangle's three vertices. WRITE: chunk c's triangles into triangles[chunk_offsets[c] -
    chunk_offsets[first_chunk]:]."""
    table = cuda.shared.array(0, int32)
    row_end = cuda.shared.array(SMALL_ROWS, int32)
    row_address = cuda.shared.array(SMALL_ROWS, int64)
    row_vertex = cuda.shared.array(SMALL_ROWS, int32)
    row_hits = cuda.shared.array(SMALL_ROWS, int32)
    lane = lane_id()
    warp = cuda.threadIdx.x // WARP_SIZE
    base = warp * 2 * capacity
    rows = warp * WARP_SIZE
    row_hits[rows + lane] = 0
    for task in range(cuda.blockIdx.x * SMALL_WARPS + warp, tasks.shape[0], cuda.gridDim.x * SMALL_WARPS):
        chunk = tasks[task]
        x, entry_first, entry_stop = chunk_entries(chunk, chunk_vertex, chunk_first, order, offsets)
        out_first = out_offsets[x]
        out_stop = out_offsets[x + 1]
        slots = table_slots_device(out_stop - out_first)
        bits = _slot_bits(slots)
        _clear_table(table, base, capacity, slots, lane, WARP_SIZE)
        cuda.syncwarp()
        _fill_table(table, base, slots, bits, out_neighbors, out_first, out_stop, lane, WARP_SIZE)
        u, start, length = _lane_row(x, entry_first + lane, entry_stop, out_neighbors[out_first],
                                     out_neighbors[out_stop - 1], rank, neighbors, out_offsets, out_neighbors)
        total = _lay_rows(u, start, length, lane, rows, row_end, row_address, row_vertex)
        position = int64(0)
        if mode == WRITE:
            position = chunk_offsets[chunk] - chunk_offsets[first_chunk]
        _scan_runs(x, total, lane, table, base, capacity, slots, bits, rows, row_end, row_address, row_vertex,
                   row_hits, out_neighbors, order, triangles, position, mode)
        if mode == COUNT:
            found = _flush_rows(u, rows, lane, row_hits, per_vertex)
            if lane == 0:
                chunk_counts[chunk] = found
                if found:
                    cuda.atomic.add(per_vertex, x, found)
            _flush_slots(table, base, capacity, slots, lane, WARP_SIZE, per_vertex)
        cuda.syncwarp()


@count_jit
def large_kernel(groups, chunk_vertex, chunk_first, order, rank, offsets, neighbors, out_offsets, out_neighbors,
                 piece, per_vertex, chunk_counts, chunk_offsets, first_chunk, last_chunk, triangles, mode):
    """A block per group of ``groups`` (up to GROUP_CHUNKS chunks of one rank x from g on, those in
    [first_chunk, last_chunk)): the block shares a table of ``table_slots(piece)`` slots (dynamic shared
    memory, keys then counts), filled once per piece of N+(x), and its warps take the group's chunks in
    turn (a shared counter). Outputs as :func:`small_kernel`."""
    table = cuda.shared.array(0, int32)
    row_end = cuda.shared.array(LARGE_ROWS, int32)
    row_address = cuda.shared.array(LARGE_ROWS, int64)
    row_vertex = cuda.shared.array(LARGE_ROWS, int32)
    row_hits = cuda.shared.array(LARGE_ROWS, int32)
    chunk_found = cuda.shared.array(GROUP_CHUNKS, int64)  # hits (COUNT) or written (WRITE) per chunk so far
    next_chunk = cuda.shared.array(1, int32)
    thread = cuda.threadIdx.x
    lane = lane_id()
    rows = (thread // WARP_SIZE) * WARP_SIZE
    capacity = table_slots_device(piece)
    row_hits[thread] = 0
    for group in range(cuda.blockIdx.x, groups.shape[0], cuda.gridDim.x):
        group_first = groups[group]
        x = chunk_vertex[group_first]
        group_stop = min(group_first + GROUP_CHUNKS, chunk_first[x + 1])
        if thread < GROUP_CHUNKS:
            chunk_found[thread] = 0
        out_stop = out_offsets[x + 1]
        for piece_first in range(out_offsets[x], out_stop, piece):
            piece_stop = min(piece_first + piece, out_stop)
            slots = table_slots_device(piece_stop - piece_first)
            bits = _slot_bits(slots)
            cuda.syncthreads()
            _clear_table(table, 0, capacity, slots, thread, cuda.blockDim.x)
            if thread == 0:
                next_chunk[0] = 0
            cuda.syncthreads()
            _fill_table(table, 0, slots, bits, out_neighbors, piece_first, piece_stop, thread, cuda.blockDim.x)
            cuda.syncthreads()
            while True:
                taken = int32(0)
                if lane == 0:
                    taken = cuda.atomic.add(next_chunk, 0, 1)
                chunk = group_first + cuda.shfl_sync(FULL_MASK, taken, 0)
                if chunk >= group_stop:
                    break
                if chunk < first_chunk or chunk >= last_chunk:
                    continue
                x, entry_first, entry_stop = chunk_entries(chunk, chunk_vertex, chunk_first, order, offsets)
                u, start, length = _lane_row(x, entry_first + lane, entry_stop, out_neighbors[piece_first],
                                             out_neighbors[piece_stop - 1], rank, neighbors, out_offsets,
                                             out_neighbors)
                total = _lay_rows(u, start, length, lane, rows, row_end, row_address, row_vertex)
                position = int64(0)
                if mode == WRITE:
                    position = chunk_offsets[chunk] - chunk_offsets[first_chunk] + chunk_found[chunk - group_first]
                position = _scan_runs(x, total, lane, table, 0, capacity, slots, bits, rows, row_end, row_address,
                                      row_vertex, row_hits, out_neighbors, order, triangles, position, mode)
                if mode == COUNT:
                    found = _flush_rows(u, rows, lane, row_hits, per_vertex)
                    if lane == 0:
                        chunk_found[chunk - group_first] += found
                elif lane == 0:
                    chunk_found[chunk - group_first] = position - (chunk_offsets[chunk] - chunk_offsets[first_chunk])
                cuda.syncwarp()
            cuda.syncthreads()
            if mode == COUNT:
                _flush_slots(table, 0, capacity, slots, thread, cuda.blockDim.x, per_vertex)
        cuda.syncthreads()
        if mode == COUNT and thread < group_stop - group_first:
            found = chunk_found[thread]
            chunk_counts[group_first + thread] = found
            if found:
                cuda.atomic.add(per_vertex, x, found)

