"""A poisoned allocator for torch kernels.

A wrapper that allocates an output itself (torch.empty) and has the adapter
copy it into qcheck's tensor hands qcheck whatever the device memory held
where the kernel wrote nothing: stale values that read as wrong or as runs
that differ. Before each run on a CUDA device qcheck therefore fills the
memory torch's caching allocator will hand out next with that run's poison
(0xFF bytes for run A, 0x5B for run B, as qcheck's own outputs), so an
element the kernel never wrote arrives as the poison and is reported
unwritten.

What it reaches: every free block cached in a segment torch holds (each
allocated at its own size, filled, given back), and a pool of `pool_bytes`
in the large pool and 16 MiB in the small one (allocations of at most
1 MiB), added where the cache lacks them. What it cannot reach, and says so in the verdict's notes
rather than guess: an allocation for which the cache had no poisoned block
(torch then asks the driver for a new segment, whose bytes are whatever the
device held), free blocks the allocator would not hand back for
poisoning, allocations on another stream than the current one, and memory
from other allocators (cudaMalloc in a C++ extension, CuPy) or from a
CUDA graph's private pool.
"""

POISON_BYTES = (0xFF, 0x5B)  # run A, run B: the bytes qcheck_fill_buffers poisons outputs with
SMALL_POOL_BYTES = 16 << 20
MIN_POOL_BYTES = 64 << 20


class PoisonWatch:
    """What the poisoning reached, and after the kernel ran, what it did not:
    notes() lists it in words (empty when everything the kernel allocated
    came from poisoned memory)."""

    def __init__(self, device, unreached_bytes, segments_before):
        self.device, self.unreached_bytes, self.segments_before = device, unreached_bytes, segments_before

    def notes(self):
        import torch
        stats = torch.cuda.memory_stats(self.device)
        new_segments = stats.get("segment.all.allocated", 0) - self.segments_before
        notes = []
        if new_segments > 0:
            notes.append(f"poisoned allocator: the kernel's allocations took {new_segments} new device segment(s) "
                         "beyond the poisoned pool: an element it left unwritten there holds what the device held, "
                         "not the poison (raise pool_bytes)")
        if self.unreached_bytes > 0:
            notes.append(f"poisoned allocator: {self.unreached_bytes} bytes of free cached memory could not be "
                         "poisoned (the allocator did not hand them back)")
        return notes


def _free_blocks(index, stream):
    """([(size, small pool)], other): each free block torch caches on device
    `index` where an allocation on `stream` can land (segments of that
    stream in the default pool), and the bytes of the other free blocks (a
    CUDA graph's private pool, other streams' segments: they serve other
    allocations)."""
    import torch
    blocks, other = [], 0
    for segment in torch.cuda.memory_snapshot():
        if segment.get("device") != index:
            continue
        ours = (tuple(segment.get("segment_pool_id", (0, 0))) == (0, 0) and
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


def poison_allocator(device, poison, pool_bytes):
    """Fills what torch's caching allocator on `device` hands out next with
    poison A (0) or B (1); returns a PoisonWatch for the notes.

    Every free block the cache holds is taken (at its own size), filled and
    given back; a pool of `pool_bytes` (at least 64 MiB) and 16 MiB of small
    blocks are added only where the cache lacks them, so the cache stops
    growing after the first runs and no segment goes back to the driver
    between runs (a cudaFree and cudaMalloc per run cost more than the
    kernel). The fills run on the current stream before the kernel's
    launches: no synchronization is needed."""
    import torch
    device = torch.device(device)
    index = device.index if device.index is not None else torch.cuda.current_device()
    stream = torch.cuda.current_stream(device).cuda_stream
    blocks, other = _free_blocks(index, stream)
    held = [torch.empty(piece, dtype=torch.uint8, device=device)
            for size, small in sorted(blocks, reverse=True) for piece in _pieces(size, small)]
    small_free = sum(size for size, small in blocks if small)
    held += [torch.empty(1 << 20, dtype=torch.uint8, device=device)
             for _ in range(max(0, SMALL_POOL_BYTES - small_free) >> 20)]
    want = max(MIN_POOL_BYTES, pool_bytes)
    if max((size for size, small in blocks if not small), default=0) < want:
        held.append(torch.empty(want, dtype=torch.uint8, device=device))
    stats = torch.cuda.memory_stats(device)
    # Free bytes still cached with everything taken: blocks the allocator did
    # not hand back for poisoning (the other pools' and streams' excepted).
    unreached = max(0, stats.get("reserved_bytes.all.current", 0) - stats.get("allocated_bytes.all.current", 0) -
                    other)
    for block in held:
        block.fill_(POISON_BYTES[poison])
    del held  # back to the cache, poisoned
    return PoisonWatch(device, unreached, stats.get("segment.all.allocated", 0))
