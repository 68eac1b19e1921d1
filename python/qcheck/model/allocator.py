"""A poisoned allocator for torch kernels.

A wrapper that allocates an output itself (torch.empty) and has the adapter
copy it into qcheck's tensor hands qcheck whatever the device memory held
where the kernel wrote nothing: stale values that read as wrong or as runs
that differ. Before each run on a CUDA device qcheck therefore fills the
memory the kernel's allocations will get with that run's poison (0xFF bytes
for run A, 0x5B for run B, as qcheck's own outputs), so an element the
kernel never wrote arrives as the poison and is reported unwritten.

Where torch has memory pools (torch.cuda.MemPool, torch 2.6 on), the kernel
runs with its allocations routed into a pool of qcheck's own (watch.routing()
around the call): the case's tensors and everything else stay in torch's
default pool, so the private pool holds only the kernel's memory and its free
blocks are few and cheap to list (the pool's own snapshot, not the whole
cache's). Each run takes every free block of that pool at its own size,
fills it and gives it back, and keeps a free block of at least `pool_bytes`
(64 MiB or more) in its large pool and 4 MiB in its small one (allocations
of at most 1 MiB; the pool keeps what the kernel took beyond that, so the
fills follow the kernel's own needs). The snapshots leave out torch's trace
entries where torch can (include_traces=False: a 20th of the time on an
H100). release_pools() hands the pools back (before
torch.cuda.empty_cache(), when memory ran out).

Without memory pools, the shared cache is poisoned instead: every free block
torch caches in a segment it holds, found in memory_snapshot(), plus the same
pools where the cache lacks them.

What it cannot reach, and says so in the verdict's notes rather than guess:
an allocation for which the pool had no poisoned block (torch then asks the
driver for a new segment, whose bytes are whatever the device held), free
blocks the allocator would not hand back for poisoning (a block cached for
another stream than the current one), and memory from other allocators
(cudaMalloc in a C++ extension, CuPy) or from a CUDA graph's private pool.
"""

import contextlib

POISON_BYTES = (0xFF, 0x5B)  # run A, run B: the bytes qcheck_fill_buffers poisons outputs with
# Small blocks kept poisoned (two 2 MiB segments): each costs a fill per run,
# and the private pool grows to what a wrapper takes (a new segment shows in
# that run's notes once, then stays in the pool, poisoned).
SMALL_POOL_BYTES = 4 << 20
MIN_POOL_BYTES = 64 << 20


_POOLS = {}  # device index -> the torch.cuda.MemPool the kernel's allocations go to


def release_pools():
    """Hands qcheck's private pools back to torch, so that
    torch.cuda.empty_cache() can return their segments to the driver."""
    _POOLS.clear()


def _snapshot(pool=None):
    """torch's allocator snapshot (of `pool`, or of the whole cache), without
    the trace entries where this torch can leave them out."""
    import torch
    pool_id = pool.id if pool is not None else None
    try:
        return torch.cuda.memory_snapshot(pool_id, include_traces=False)
    except TypeError:  # a torch without include_traces (or without pools)
        return torch.cuda.memory_snapshot(pool_id) if pool is not None else torch.cuda.memory_snapshot()


def _private_pool(index):
    """qcheck's pool on device `index`, or None where this torch has no memory pools."""
    import torch
    if not (hasattr(torch.cuda, "MemPool") and hasattr(torch.cuda, "use_mem_pool")):
        return None
    if index not in _POOLS:
        _POOLS[index] = torch.cuda.MemPool()
    return _POOLS[index]


class PoisonWatch:
    """What the poisoning reached, and after the kernel ran, what it did not:
    notes() lists it in words (empty when everything the kernel allocated
    came from poisoned memory). routing() is the context the kernel runs in:
    its allocations go to the poisoned pool."""

    def __init__(self, device, unreached_bytes, segments_before, pool=None):
        self.device, self.unreached_bytes, self.segments_before = device, unreached_bytes, segments_before
        self.pool = pool

    def routing(self):
        if self.pool is None:
            return contextlib.nullcontext()
        import torch
        return torch.cuda.use_mem_pool(self.pool, self.device)

    def _segments(self):
        import torch
        if self.pool is not None:
            return len(_snapshot(self.pool))
        return torch.cuda.memory_stats(self.device).get("segment.all.allocated", 0)

    def notes(self):
        new_segments = self._segments() - self.segments_before
        notes = []
        if new_segments > 0:
            notes.append(f"poisoned allocator: the kernel's allocations took {new_segments} new device segment(s) "
                         "beyond the poisoned pool: an element it left unwritten there holds what the device held, "
                         "not the poison (raise pool_bytes)")
        if self.unreached_bytes > 0:
            notes.append(f"poisoned allocator: {self.unreached_bytes} bytes of free cached memory could not be "
                         "poisoned (the allocator did not hand them back)")
        return notes


def _free_blocks(segments, index, pool_id, stream):
    """([(size, small pool)], other): each free block of `segments` (a
    memory snapshot) on device `index` where an allocation on `stream` in
    pool `pool_id` can land, and the bytes of the other free blocks (another
    pool's, other streams' segments: they serve other allocations)."""
    blocks, other = [], 0
    for segment in segments:
        if segment.get("device", index) != index:
            continue
        ours = (tuple(segment.get("segment_pool_id", pool_id)) == tuple(pool_id) and
                segment.get("stream", stream) == stream)
        for block in segment.get("blocks", []):
            if block.get("state") == "inactive" and block.get("size", 0) > 0:
                if ours:
                    blocks.append((block["size"], segment.get("segment_type") == "small"))
                else:
                    other += block["size"]
    return blocks, other


def _pieces(size, small):
    """The allocations that take a free block of `size` bytes: the block
    itself, or for a block of the small pool (allocations of at most 1 MiB;
    its 2 MiB segments can hold a larger free block) pieces of 1 MiB or less,
    each landing in the smallest free block that fits."""
    if not small:
        return [size]
    return [min(1 << 20, size - at) for at in range(0, size, 1 << 20)]


def _take(blocks, device, pool_bytes):
    """Tensors that hold every free block of `blocks` (at its size, or in
    pieces for the small pool), plus what the pool lacks of 4 MiB of small
    blocks and of one large block of at least `pool_bytes`."""
    import torch
    held = [torch.empty(piece, dtype=torch.uint8, device=device)
            for size, small in sorted(blocks, reverse=True) for piece in _pieces(size, small)]
    small_free = sum(size for size, small in blocks if small)
    held += [torch.empty(1 << 20, dtype=torch.uint8, device=device)
             for _ in range(max(0, SMALL_POOL_BYTES - small_free) >> 20)]
    want = max(MIN_POOL_BYTES, pool_bytes)
    if max((size for size, small in blocks if not small), default=0) < want:
        held.append(torch.empty(want, dtype=torch.uint8, device=device))
    return held


def poison_allocator(device, poison, pool_bytes):
    """Fills what the kernel's allocations on `device` get next with poison
    A (0) or B (1); returns a PoisonWatch: run the kernel in its routing()
    and read its notes() after.

    Every free block of the pool is taken (at its own size), filled and
    given back; a pool of `pool_bytes` (at least 64 MiB) and 4 MiB of small
    blocks are added only where the pool lacks them, so it stops growing
    after the first runs and no segment goes back to the driver between
    runs (a cudaFree and cudaMalloc per run cost more than the kernel). The
    fills run on the current stream before the kernel's launches: no
    synchronization is needed."""
    import torch
    device = torch.device(device)
    index = device.index if device.index is not None else torch.cuda.current_device()
    device = torch.device("cuda", index)
    stream = torch.cuda.current_stream(device).cuda_stream
    pool = _private_pool(index)
    if pool is None:
        return _poison_shared_cache(device, index, stream, poison, pool_bytes)
    segments = _snapshot(pool)
    blocks, other = _free_blocks(segments, index, pool.id, stream)
    with torch.cuda.use_mem_pool(pool, device):
        held = _take(blocks, device, pool_bytes)
    for block in held:
        block.fill_(POISON_BYTES[poison])
    del held  # back to the pool, poisoned
    # The segments after the poisoning: a new one during the kernel's run is
    # memory the poison never reached.
    return PoisonWatch(device, other, len(_snapshot(pool)), pool)


def _poison_shared_cache(device, index, stream, poison, pool_bytes):
    """poison_allocator where torch has no memory pools: the free blocks of
    torch's shared cache (the default pool)."""
    import torch
    blocks, other = _free_blocks(_snapshot(), index, (0, 0), stream)
    held = _take(blocks, device, pool_bytes)
    stats = torch.cuda.memory_stats(device)
    # Free bytes still cached with everything taken: blocks the allocator did
    # not hand back for poisoning (the other pools' and streams' excepted).
    unreached = max(0, stats.get("reserved_bytes.all.current", 0) - stats.get("allocated_bytes.all.current", 0) -
                    other)
    for block in held:
        block.fill_(POISON_BYTES[poison])
    del held  # back to the cache, poisoned
    return PoisonWatch(device, unreached, stats.get("segment.all.allocated", 0))
