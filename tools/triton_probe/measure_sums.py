"""Measure how Triton sums a block on this GPU, for the oracle's kTritonBlock order.

Runs kernels of our own shaped like the key side's norms (one program a row,
a masked 1-D block with other=0.0, tl.sum(x) and tl.sum(x * x)) over rows of
wide-range f32 values, reads the layout the compiler chose from the TTGIR, and
writes every row with its inputs and the device's sums as f32 bits, in the
format tests/reference/triton_measured_test reads:

    sums n block size_per_thread warps | sum sum_of_squares | x[0 .. n)

Usage (a CUDA GPU with torch and triton): python3 measure_sums.py OUT.txt [ROWS]
Replace tests/reference/data/triton_sm90_sums.txt with OUT.txt and run the test
to check the order still holds for this Triton and device.
"""
import sys

import numpy as np
import torch
import triton
import triton.language as tl

from probe_common import device_name, f32_hex, layout


@triton.jit
def sums(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n + offs, mask=offs < n, other=0.0)
    tl.store(out_ptr + row * 2 + 0, tl.sum(x, axis=0))
    tl.store(out_ptr + row * 2 + 1, tl.sum(x * x, axis=0))


# (n, block, num_warps): the norms' widths (index K 128, the KV latent 512,
# the Q latent 1536 in a block of 2048) under the warps kernels launch with.
SHAPES = [(128, 128, 1), (128, 128, 4), (512, 512, 4), (512, 512, 8), (1536, 2048, 4), (2048, 2048, 8)]


def main():
    out_path = sys.argv[1]
    rows = int(sys.argv[2]) if len(sys.argv) > 2 else 6
    rng = np.random.default_rng(7)
    with open(out_path, "w") as out:
        out.write(f"# Measured on {device_name(torch)}, "
                  f"Triton {triton.__version__}, by tools/triton_probe/measure_sums.py: each row one program's\n"
                  "# tl.sum(x) and tl.sum(x * x) over a masked block (other=0.0), with the layout the compiler chose.\n"
                  "# Line: sums n block size_per_thread warps | sum sum_of_squares | x[0 .. n) as f32 bits.\n")
        for n, block, warps in SHAPES:
            x = (rng.standard_normal((rows, n)) * np.exp2(rng.integers(-10, 10, (rows, n)))).astype(np.float32)
            got = torch.empty(rows, 2, device="cuda")
            compiled = sums[(rows,)](torch.from_numpy(x).cuda(), got, n, BLOCK=block, num_warps=warps)
            torch.cuda.synchronize()
            spt, layout_warps = layout(compiled.asm["ttgir"])
            got = got.cpu().numpy()
            for r in range(rows):
                out.write(f"sums {n} {block} {spt} {layout_warps} | {f32_hex(got[r])} | {f32_hex(x[r])}\n")
            print(f"n {n} block {block} num_warps {warps}: sizePerThread {spt}, {rows} rows")


if __name__ == "__main__":
    main()
