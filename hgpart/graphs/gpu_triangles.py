"""Triangle counting and listing on the GPU (seed 004), vertex-centric with hash tables in shared memory;
the algorithm and the task order are described in :mod:`.triangles`.

Orientation (``orient_kernel``): one pass, a warp per ORIENT_CHUNKS chunks of 32 input entries at a
time (four chains of dependent loads in flight), a lane per entry, counts each chunk's entries ranked above
its rank (a ballot) and writes their keys (x << 32 | w) at a place its block reserves with one atomic per
round; CUB's radix sort (CuPy) then orders them into N+ by rank, each row ascending, and a scan of the
chunk counts gives the row offsets. Chunks, not rows, so a hub's row is spread over many warps.

Counting: a task is a chunk of the input row of a rank x. ``small_kernel`` gives each warp its own chunks
and its own table (x with at most ``small_out`` out-neighbours); ``large_kernel`` gives a block of 8 warps
a group of up to 32 chunks of one x, which its warps take in turn (a shared counter), and a shared table
filled once per piece of N+(x). Tables hold at most a quarter of their slots (a look-up ends at its first
slot 3 times in 4, and the warp waits for its longest probe). A lane whose entry u is an in-neighbour of x
finds the run of N+(u) within the piece's range (two binary searches; runs of up to 32 members are taken
whole, their members outside the range simply miss); an inclusive warp scan lays the runs end to end, and
at each step lane l takes entries 128 s + l + 32 j (j < 4), its row found from its previous one (the row,
its end and its start stay in registers; shared memory is read only when the row changes, and only the
last step checks for entries past the end): the four loads and then the four first probes go out
together, and the loads are side by side across the lanes. The hot path is 32-bit: numba widens integer
arithmetic to 64 bits and wraps negative indices, so slots, rows and entries are cast to int32 and shared
memory is indexed with uint32 (R-MAT 2^23 on the H100: count 138 -> 108 ms).
Each hit w counts on its table slot (shared atomics) and on the lane's tally of its row; after the chunk
the rows and slots with hits add to ``per_vertex`` (one global atomic each) and the chunk's count to x.
Listing re-runs the chunks of a range and writes each hit at the chunk's offset plus the warp's ballot
prefix.
"""

from __future__ import annotations

import numpy as np
from numba import cuda, int32, int64, uint32

from ..cuda.arrays import SM_COUNT, SIMULATED, allow_dynamic_shared, cached_kernel, kernel_view, to_device, to_host, xp
from ..cuda.warp import FULL_MASK, WARP_SIZE, lane_id, lanes_below, warp_inclusive_scan, warp_sum
from .triangles import GROUP_CHUNKS, TrianglePlan, _chunk_entries, _put_sorted, _run_bounds

SMALL_WARPS = 8
LARGE_WARPS = 8
SMALL_ROWS = SMALL_WARPS * WARP_SIZE  # a row per lane
LARGE_ROWS = LARGE_WARPS * WARP_SIZE
EMPTY = -1
COUNT, WRITE = 0, 1
HASH_MULTIPLIER = 2654435761  # Knuth's multiplicative hash
COUNT_REGISTERS = 64  # measured on the H100 (R-MAT 2^23): 48 -> 184 ms, 56 -> 167, 64 -> 163
count_jit = cached_kernel if SIMULATED else cuda.jit(max_registers=COUNT_REGISTERS, cache=True)  # the simulator takes no limit
SCAN_WHOLE = 32  # runs of N+(u) up to this long are looked up whole, without binary searches

put_sorted = cuda.jit(device=True, inline=True)(_put_sorted)
run_bounds = cuda.jit(device=True, inline=True)(_run_bounds)
chunk_entries = cuda.jit(device=True, inline=True)(_chunk_entries)


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


ORIENT_WARPS = 8
ORIENT_CHUNKS = 4  # chunks per warp per round: four independent chains of loads in flight


@cuda.jit(device=True, inline=True)
def _upward(chunk, lane, chunk_vertex, chunk_first, order, rank, offsets, neighbors):
    """(key, ballot) for this lane's entry of ``chunk``: ballot marks the lanes whose neighbour ranks above
    the chunk's rank x, and their key is x << 32 | that rank. Every lane must call it (a ballot)."""
    key = int64(0)
    upward = False
    if chunk < chunk_vertex.shape[0]:
        x, entry_first, entry_stop = chunk_entries(chunk, chunk_vertex, chunk_first, order, offsets)
        if entry_first + lane < entry_stop:
            neighbor = rank[neighbors[entry_first + lane]]
            upward = neighbor > x
            key = (int64(x) << 32) | int64(neighbor)
    return key, cuda.ballot_sync(FULL_MASK, upward)


@cuda.jit(device=True, inline=True)
def _put_upward(keys, position, key, ballot, lane):
    """Write this lane's key at ``position`` plus its place among the ballot's lanes, when it is set."""
    if (ballot >> lane) & 1:
        place = position + lanes_below(ballot, lane)
        if place < keys.shape[0]:
            keys[place] = key


@cached_kernel
def orient_kernel(chunk_vertex, chunk_first, order, rank, offsets, neighbors, chunk_counts, keys, cursor):
    """One pass: a warp takes ORIENT_CHUNKS chunks a round, a lane an entry of each; chunk_counts[c] = the
    chunk's entries ranked above its rank x (a ballot), and their keys (x << 32 | their rank) go to keys at
    a place the block reserves with one atomic on ``cursor`` per round. The keys' order is then arbitrary;
    the sort that follows orders them."""
    warp_starts = cuda.shared.array(ORIENT_WARPS, int64)
    lane = lane_id()
    warp = cuda.threadIdx.x // WARP_SIZE
    round_chunks = ORIENT_WARPS * ORIENT_CHUNKS
    for round_first in range(cuda.blockIdx.x * round_chunks, chunk_vertex.shape[0], cuda.gridDim.x * round_chunks):
        first = round_first + warp * ORIENT_CHUNKS
        key0, ballot0 = _upward(first, lane, chunk_vertex, chunk_first, order, rank, offsets, neighbors)
        key1, ballot1 = _upward(first + 1, lane, chunk_vertex, chunk_first, order, rank, offsets, neighbors)
        key2, ballot2 = _upward(first + 2, lane, chunk_vertex, chunk_first, order, rank, offsets, neighbors)
        key3, ballot3 = _upward(first + 3, lane, chunk_vertex, chunk_first, order, rank, offsets, neighbors)
        count0 = cuda.popc(ballot0)
        count1 = cuda.popc(ballot1)
        count2 = cuda.popc(ballot2)
        count3 = cuda.popc(ballot3)
        if lane < ORIENT_CHUNKS and first + lane < chunk_vertex.shape[0]:
            chunk_counts[first + lane] = (count0 if lane == 0 else count1 if lane == 1 else
                                          count2 if lane == 2 else count3)
        if lane == 0:
            warp_starts[warp] = count0 + count1 + count2 + count3
        cuda.syncthreads()
        if cuda.threadIdx.x == 0:
            running = int64(0)
            for other in range(ORIENT_WARPS):
                count = warp_starts[other]
                warp_starts[other] = running
                running += count
            start = cuda.atomic.add(cursor, 0, running)
            for other in range(ORIENT_WARPS):
                warp_starts[other] += start
        cuda.syncthreads()
        position = warp_starts[warp]
        _put_upward(keys, position, key0, ballot0, lane)
        _put_upward(keys, position + count0, key1, ballot1, lane)
        _put_upward(keys, position + count0 + count1, key2, ballot2, lane)
        _put_upward(keys, position + count0 + count1 + count2, key3, ballot3, lane)


def _blocks(tasks: int, per_block: int) -> int:
    if SIMULATED:
        return 2
    return max(1, min((tasks + per_block - 1) // per_block, SM_COUNT * 16))


class DeviceSteps:
    @staticmethod
    def module():
        return xp()

    @staticmethod
    def to_device(array):
        return to_device(array)

    @staticmethod
    def to_host(array):
        return to_host(array)

    @staticmethod
    def synchronize():
        if not SIMULATED:
            cuda.synchronize()

    @staticmethod
    def orient(offsets, neighbors, rank, order, chunk_first, chunk_vertex):
        """N+ by rank: one pass counts each chunk's upward entries and writes their keys (x << 32 | w) at
        places reserved per block, CUB's radix sort (CuPy) orders them, and a scan of the chunk counts gives
        out_offsets (chunks are in rank order). A Graph holds each edge in both directions, so exactly half
        the entries point upward. (R-MAT 2^23 on the H100: 13.0 ms in all, where two passes, a count and then
        a write at scanned places, took 17.5; a segmented sort, a warp per row of up to 32 and a block per
        longer row, took 28 ms where this sort takes 8.4.)"""
        array = xp()
        num_chunks = chunk_vertex.shape[0]
        upward = neighbors.shape[0] // 2
        chunk_counts = array.empty(num_chunks, dtype=np.int64)
        keys = array.empty(max(1, upward), dtype=np.int64)
        if num_chunks:
            cursor = array.zeros(1, dtype=np.int64)
            orient_kernel[_blocks(num_chunks, ORIENT_WARPS * ORIENT_CHUNKS), ORIENT_WARPS * WARP_SIZE](
                kernel_view(chunk_vertex), kernel_view(chunk_first), kernel_view(order), kernel_view(rank),
                kernel_view(offsets), kernel_view(neighbors), kernel_view(chunk_counts), kernel_view(keys),
                kernel_view(cursor))
            written = int(to_host(cursor)[0])
            if written != upward:
                raise ValueError(f"{written} of {neighbors.shape[0]} adjacency entries point upward, not half: "
                                 "the graph is not symmetric")
        keys = keys[:upward]
        keys.sort()  # in place: no copy of the 8 bytes per edge
        chunk_offsets = array.zeros(num_chunks + 1, dtype=np.int64)
        chunk_offsets[1:] = array.cumsum(chunk_counts)
        return chunk_offsets[chunk_first], array.ascontiguousarray(keys.view(np.int32)[0::2])  # w: low words

    @staticmethod
    def _launch(plan: TrianglePlan, small_tasks, large_groups, per_vertex, chunk_counts, chunk_offsets, first_chunk,
                last_chunk, triangles, mode):
        common = (kernel_view(plan.chunk_vertex), kernel_view(plan.chunk_first), kernel_view(plan.order),
                  kernel_view(plan.rank), kernel_view(plan.offsets), kernel_view(plan.neighbors),
                  kernel_view(plan.out_offsets), kernel_view(plan.out_neighbors))
        outputs = (kernel_view(per_vertex), kernel_view(chunk_counts), kernel_view(chunk_offsets))
        if small_tasks.shape[0]:
            capacity = table_slots(plan.config.small_out)
            nbytes = SMALL_WARPS * 2 * capacity * 4
            arguments = (kernel_view(small_tasks), *common, capacity, *outputs, first_chunk, kernel_view(triangles),
                         mode)
            allow_dynamic_shared(small_kernel, arguments, nbytes)
            small_kernel[_blocks(small_tasks.shape[0], SMALL_WARPS), SMALL_ROWS, 0, nbytes](*arguments)
        if large_groups.shape[0]:
            capacity = table_slots(plan.config.piece)
            nbytes = 2 * capacity * 4
            arguments = (kernel_view(large_groups), *common, plan.config.piece, *outputs, first_chunk, last_chunk,
                         kernel_view(triangles), mode)
            allow_dynamic_shared(large_kernel, arguments, nbytes)
            large_kernel[_blocks(large_groups.shape[0], 1), LARGE_ROWS, 0, nbytes](*arguments)

    @staticmethod
    def count(plan: TrianglePlan):
        array = xp()
        per_vertex = array.zeros(plan.rank.shape[0], dtype=np.int64)
        chunk_counts = array.zeros(plan.num_chunks, dtype=np.int64)
        unused_offsets = array.zeros(1, dtype=np.int64)  # distinct arrays: the simulator copies each one back
        unused_triangles = array.zeros((1, 3), dtype=np.int32)
        DeviceSteps._launch(plan, plan.small_chunks, plan.large_groups, per_vertex, chunk_counts, unused_offsets, 0,
                            plan.num_chunks, unused_triangles, COUNT)
        return chunk_counts, per_vertex

    @staticmethod
    def list(plan: TrianglePlan, chunk_offsets, first_chunk, last_chunk):
        array = xp()
        total = int(chunk_offsets[last_chunk] - chunk_offsets[first_chunk])
        triangles = array.empty((total, 3), dtype=np.int32)
        small_first, small_stop = to_host(array.searchsorted(plan.small_chunks, array.asarray(
            [first_chunk, last_chunk], dtype=np.int64))).tolist()
        groups_first, groups_stop = to_host(array.searchsorted(plan.large_groups, array.asarray(
            [first_chunk - GROUP_CHUNKS + 1, last_chunk], dtype=np.int64))).tolist()
        small = plan.small_chunks[small_first:small_stop]
        groups = plan.large_groups[groups_first:groups_stop]
        DeviceSteps._launch(plan, small, groups, array.zeros(1, dtype=np.int64), array.zeros(1, dtype=np.int64),
                            chunk_offsets, first_chunk, last_chunk, triangles, WRITE)
        return triangles
