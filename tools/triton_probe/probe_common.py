"""What the Triton probes share, without torch or triton: the compiler's layout
read from a kernel's TTGIR, and the hex forms the probe files are written in.
"""
import re

import numpy as np


def layout(ttgir):
    """(size_per_thread, warps) of the kernel's one 1-D blocked layout."""
    found = re.findall(r"#ttg\.blocked<\{sizePerThread = \[(\d+)\], threadsPerWarp = \[32\], "
                       r"warpsPerCTA = \[(\d+)\]", ttgir)
    if len(set(found)) != 1:
        raise SystemExit(f"expected one 1-D blocked layout in the TTGIR, found {found}")
    spt, warps = found[0]
    return int(spt), int(warps)


def f32_bits(a):
    """The f32 bit patterns of a, flattened."""
    return np.ascontiguousarray(a, np.float32).view(np.uint32).ravel()


def f32_hex(a):
    """Each f32 of a as 8 hex digits, separated by spaces."""
    return " ".join(f"{v:08X}" for v in f32_bits(a))


def bf16_hex(a):
    """Each value of a, which must be a bf16 held in an f32, as 4 hex digits, written together."""
    bits = f32_bits(a)
    if np.any(bits & 0xFFFF):
        raise SystemExit("a value to write as bf16 is not a bf16")
    return "".join(f"{v >> 16:04X}" for v in bits)


def fnv1a64(a):
    """FNV-1a (64 bits) over the f32 bit patterns of a, each as its 4 bytes little-endian, in order."""
    digest = 0xCBF29CE484222325
    for byte in f32_bits(a).astype("<u4").tobytes():
        digest = ((digest ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return digest


def device_name(torch):
    """The GPU's name and compute capability, as the probe files' headers give it."""
    major, minor = torch.cuda.get_device_capability()
    return f"{torch.cuda.get_device_name()} (sm_{major}{minor})"
