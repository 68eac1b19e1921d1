"""Norm rows as the key side's fused Triton norms compute them (one program a
row, a masked 1-D block of next_pow2(n) lanes, tl.sum, `/` by n, tl.rsqrt,
the weight multiplied in f32), for measure_norms.py. Our own kernels; the
statistics are stored beside the outputs so each step can be checked.
"""
import triton
import triton.language as tl


@triton.jit
def rms_norm_rows(x_ptr, w_ptr, y_ptr, stats_ptr, n, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + row * n + offs, mask=mask, other=0.0)
    w = tl.load(w_ptr + offs, mask=mask)
    mean_square = tl.sum(x * x, axis=0) / n
    r = tl.rsqrt(mean_square + eps)
    tl.store(y_ptr + row * n + offs, x * r * w, mask=mask)
    tl.store(stats_ptr + row * 2, mean_square)
    tl.store(stats_ptr + row * 2 + 1, r)


@triton.jit
def layer_norm_rows(x_ptr, w_ptr, b_ptr, y_ptr, stats_ptr, n, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + row * n + offs, mask=mask, other=0.0)
    w = tl.load(w_ptr + offs, mask=mask)
    b = tl.load(b_ptr + offs, mask=mask)
    mean = tl.sum(x, axis=0) / n
    centred = tl.where(mask, x - mean, 0.0)
    variance = tl.sum(centred * centred, axis=0) / n
    rstd = tl.rsqrt(variance + eps)
    tl.store(y_ptr + row * n + offs, centred * rstd * w + b, mask=mask)
    tl.store(stats_ptr + row * 3, mean)
    tl.store(stats_ptr + row * 3 + 1, variance)
    tl.store(stats_ptr + row * 3 + 2, rstd)
