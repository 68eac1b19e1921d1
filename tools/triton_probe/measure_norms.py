"""Measure Triton's RMSNorm and LayerNorm rows on this GPU, for the oracle's norms.

Runs the kernels of norm_kernels.py (one program a row, a masked block of
next_pow2(n) lanes, 4 warps, eps 1e-6, tl.sum, `/` by n, tl.rsqrt, the weight
in f32; LayerNorm's affine step as written) over rows of bf16 values at the
key side's widths (index K 128, the KV latent 512, the Q latent 1536 in a
block of 2048), reads the layout the compiler chose from the TTGIR, and writes
the rows in the format tests/reference/triton_norms_test reads:

    shape n block size_per_thread warps eps     eps as f32 bits; the lines below belong to it
    weight n | w[0 .. n)                        f32 bits (random, once a shape)
    bias n | b[0 .. n)                          f32 bits
    x n row | x[0 .. n)                         bf16 bits, 4 hex digits each, written together
    rms n row | mean_square r | y[0 .. 16) | FNV-1a 64 of y[0 .. n)
    ln n row | mean variance rstd | y[0 .. 16) | FNV-1a 64 of y[0 .. n)

Every value after a | is the device's f32 bits; the digest is taken here of
the device's output bits (each f32 as 4 bytes little-endian, in order).

Usage:
  a CUDA GPU with torch and triton:
    python3 measure_norms.py OUT.txt [--rows 24] [--save-npz RAW.npz]
  no GPU, from the arrays a run saved (--save-npz, or the probe of 2026-12-06):
    python3 measure_norms.py OUT.txt --from-npz RAW.npz --layout 128:1 --layout 512:4 --layout 2048:4 \
        --device "NVIDIA H100 (sm_90)" --triton 3.6.0 [--rows 24] [--note "where the arrays came from"]
  The arrays are norm{n}_x, _w, _b, _rms_y, _rms_s (mean square, r), _ln_y and
  _ln_s (mean, variance, rstd) for each n; --layout gives block:size_per_thread
  as the compiler chose it (the arrays do not hold the TTGIR).
Replace tests/reference/data/triton_sm90_norms.txt with OUT.txt and run the
test to check the norms' rules still hold for this Triton and device.
"""
import argparse
import shlex
import sys

import numpy as np

from probe_common import bf16_hex, f32_hex, fnv1a64, layout

SHAPES = [(128, 128), (512, 512), (1536, 2048)]  # (n, block)
WARPS = 4
EPS = 1e-6
OUTPUTS_KEPT = 16


def bf16_values(a):
    """a rounded to bf16 (to nearest even), held in f32; a has no NaN."""
    bits = np.ascontiguousarray(a, np.float32).view(np.uint32)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return rounded.astype(np.uint32).view(np.float32)


def measure(rows, seed):
    """Runs the kernels; returns the arrays (as --from-npz reads them), {block: size_per_thread}, the device."""
    import torch
    import triton

    from norm_kernels import layer_norm_rows, rms_norm_rows
    from probe_common import device_name

    rng = np.random.default_rng(seed)
    arrays, layouts = {}, {}
    for n, block in SHAPES:
        # Rows of normal values, each row scaled by its own 2^-6 .. 2^5, as bf16.
        x = bf16_values(rng.standard_normal((rows, n)) * np.exp2(rng.integers(-6, 6, (rows, 1))))
        w = (1 + 0.1 * rng.standard_normal(n)).astype(np.float32)
        b = (0.1 * rng.standard_normal(n)).astype(np.float32)
        xt, wt, bt = (torch.from_numpy(a).cuda() for a in (x, w, b))
        rms_y, rms_s = torch.empty_like(xt), torch.empty(rows, 2, device="cuda")
        ln_y, ln_s = torch.empty_like(xt), torch.empty(rows, 3, device="cuda")
        rms = rms_norm_rows[(rows,)](xt, wt, rms_y, rms_s, n, EPS, BLOCK=block, num_warps=WARPS)
        ln = layer_norm_rows[(rows,)](xt, wt, bt, ln_y, ln_s, n, EPS, BLOCK=block, num_warps=WARPS)
        torch.cuda.synchronize()
        found = {layout(rms.asm["ttgir"]), layout(ln.asm["ttgir"])}
        if len(found) != 1 or next(iter(found))[1] != WARPS:
            raise SystemExit(f"block {block}: the two kernels' layouts {found}, not one of {WARPS} warps")
        layouts[block] = next(iter(found))[0]
        got = dict(x=x, w=w, b=b, rms_y=rms_y, rms_s=rms_s, ln_y=ln_y, ln_s=ln_s)
        for key, value in got.items():
            arrays[f"norm{n}_{key}"] = value if isinstance(value, np.ndarray) else value.cpu().numpy()
        print(f"n {n} block {block} num_warps {WARPS}: sizePerThread {layouts[block]}, {rows} rows")
    return arrays, layouts, f"{device_name(torch)}, Triton {triton.__version__}"


def write_rows(out, arrays, layouts, rows):
    eps_bits = f32_hex(np.float32(EPS))
    for n, block in SHAPES:
        get = lambda key: np.asarray(arrays[f"norm{n}_{key}"], np.float32)
        x, w, b = get("x"), get("w"), get("b")
        rms_y, rms_s, ln_y, ln_s = get("rms_y"), get("rms_s"), get("ln_y"), get("ln_s")
        if x.shape[0] < rows or x.shape[1] != n or rms_s.shape[1] != 2 or ln_s.shape[1] != 3:
            raise SystemExit(f"n {n}: arrays of shapes {x.shape}, {rms_s.shape}, {ln_s.shape}; {rows} rows asked")
        out.write(f"shape {n} {block} {layouts[block]} {WARPS} {eps_bits}\n")
        out.write(f"weight {n} | {f32_hex(w)}\n")
        out.write(f"bias {n} | {f32_hex(b)}\n")
        for r in range(rows):
            out.write(f"x {n} {r} | {bf16_hex(x[r])}\n")
            out.write(f"rms {n} {r} | {f32_hex(rms_s[r])} | {f32_hex(rms_y[r, :OUTPUTS_KEPT])} | "
                      f"{fnv1a64(rms_y[r]):016X}\n")
            out.write(f"ln {n} {r} | {f32_hex(ln_s[r])} | {f32_hex(ln_y[r, :OUTPUTS_KEPT])} | "
                      f"{fnv1a64(ln_y[r]):016X}\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out")
    parser.add_argument("--rows", type=int, default=24, help="rows of each shape written (the first ones)")
    parser.add_argument("--seed", type=int, default=7, help="the inputs' random seed (on a GPU)")
    parser.add_argument("--save-npz", help="on a GPU: also save the measured arrays here")
    parser.add_argument("--from-npz", help="no GPU: write the rows of these arrays")
    parser.add_argument("--layout", action="append", default=[], help="with --from-npz: block:size_per_thread")
    parser.add_argument("--device", help="with --from-npz: the GPU that measured them")
    parser.add_argument("--triton", help="with --from-npz: the Triton version that compiled them")
    parser.add_argument("--note", help="a line for the header: where the arrays came from")
    args = parser.parse_args()
    if args.from_npz:
        if not (args.device and args.triton) or len(args.layout) != len(SHAPES):
            parser.error("--from-npz needs --device, --triton and one --layout for each block")
        arrays = dict(np.load(args.from_npz))
        layouts = {int(b): int(s) for b, s in (item.split(":") for item in args.layout)}
        if sorted(layouts) != sorted(block for _, block in SHAPES):
            parser.error(f"--layout needs the blocks {[block for _, block in SHAPES]}")
        saved = arrays[f"norm{SHAPES[0][0]}_x"].shape[0]
        given = [arg for k, arg in enumerate(sys.argv[1:]) if "--note" not in (arg, sys.argv[k])]
        command = shlex.join(arg.rsplit("/", 1)[-1] for arg in given)
        source = (f"{args.device}, Triton {args.triton}, by the kernels of tools/triton_probe/norm_kernels.py\n"
                  "# (the layouts as the compiler chose them, from its TTGIR then); this file written without a GPU\n"
                  f"# from the first {args.rows} of the {saved} rows a shape the run saved, by:\n"
                  f"# tools/triton_probe/measure_norms.py {command}")
    else:
        arrays, layouts, measured = measure(args.rows, args.seed)
        if args.save_npz:
            np.savez_compressed(args.save_npz, **arrays)
        source = f"{measured}, by tools/triton_probe/measure_norms.py (the layouts read from the TTGIR)"
    with open(args.out, "w") as out:
        out.write(f"# Measured on {source}.\n"
                  "# Each row one program of RMSNorm and one of LayerNorm over a masked block of next_pow2(n) lanes,\n"
                  f"# {WARPS} warps, eps {EPS}: tl.sum, `/` by n, tl.rsqrt, RMSNorm's x * r * w,\n"
                  "# LayerNorm's (x - mean) * rstd * w + b.\n"
                  "# shape n block size_per_thread warps eps | weight n | w | bias n | b (f32 bits), then each row:\n"
                  "#   x n row | x[0 .. n) as bf16 bits, 4 hex digits each, written together\n"
                  f"#   rms n row | mean_square r | y[0 .. {OUTPUTS_KEPT}) | FNV-1a 64 of y[0 .. n)\n"
                  f"#   ln n row | mean variance rstd | y[0 .. {OUTPUTS_KEPT}) | FNV-1a 64 of y[0 .. n)\n"
                  "# Values after a | are the device's f32 bits; a digest hashes each output's 4 bytes\n"
                  "# (little-endian) in order, taken of the device's bits.\n")
        if args.note:
            out.write(f"# {args.note}\n")
        write_rows(out, arrays, layouts, args.rows)
    print(f"{args.out}: {args.rows} rows of each of n = {', '.join(str(n) for n, _ in SHAPES)}")


if __name__ == "__main__":
    main()
