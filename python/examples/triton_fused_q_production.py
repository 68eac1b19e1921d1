"""A Triton fused_q kernel written the way production kernels of this family
are written (an example kernel under test, this project's own code):

  - the shapes are `tl.constexpr` (heads, R/2, L, D, the tokens per program),
    so every new shape compiles a new variant;
  - strides and the token count are plain int arguments under Triton's
    default specialization (an argument equal to 1, or divisible by 16,
    selects another variant);
  - `tl.arange` spans whole dims without masks: R, L and D must be powers of
    two (Triton refuses to compile anything else);
  - the wrapper allocates its outputs (torch.empty) and returns them; only
    query_out may be passed in (the alias: ql_nope is query_out[..., :L]).

The math follows qcheck's profile "vllm-triton" as python/examples/
triton_fused_q.py does (the same conventions and contraction, same caveat
on the fp8 path's r1: "vllm-triton+any-fma" accepts it).

Two planted variants (`variant=`):
  "weights-stride-1"  the indexer weights' column stride assumed 1 (the load
                      ignores it): wrong weights wherever a case's
                      index_weights has a column stride other than 1, as a
                      [T, NI] view of a wider tensor does;
  "tokens-on-grid-y"  tokens on grid y, one per program: the launch fails
                      from T = 65536 (CUDA's grid y limit is 65535).
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _mqa_head(t, head, pos, q_pe_ptr, q_pe_s0, q_pe_s1, ql_nope_ptr, ql_nope_s0, ql_nope_s1, mqa_cs_ptr, mqa_cs_s0,
              q_out_ptr, q_out_s0, q_out_s1, q_scale,
              HALF: tl.constexpr, L: tl.constexpr, QUERY_PATH: tl.constexpr):
    i = tl.arange(0, HALF)
    cs = mqa_cs_ptr + pos * mqa_cs_s0
    c = tl.load(cs + i).to(tl.float32)
    s = tl.load(cs + HALF + i).to(tl.float32)
    x = q_pe_ptr + t * q_pe_s0 + head * q_pe_s1
    x1 = tl.load(x + 2 * i).to(tl.float32)
    x2 = tl.load(x + 2 * i + 1).to(tl.float32)
    r1 = x1 * c - x2 * s
    r2 = x2 * c + x1 * s
    out = q_out_ptr + t * q_out_s0 + head * q_out_s1
    if QUERY_PATH == 2:  # bf16 separate
        tl.store(out + 2 * i, r1.to(tl.bfloat16))
        tl.store(out + 2 * i + 1, r2.to(tl.bfloat16))
    else:
        n = tl.load(ql_nope_ptr + t * ql_nope_s0 + head * ql_nope_s1 + tl.arange(0, L))
        if QUERY_PATH == 0:  # fp8 packed
            tl.store(out + L + 2 * i, (r1 / q_scale).to(tl.float8e4nv))
            tl.store(out + L + 2 * i + 1, (r2 / q_scale).to(tl.float8e4nv))
            tl.store(out + tl.arange(0, L), (n.to(tl.float32) / q_scale).to(tl.float8e4nv))
        else:  # bf16 packed: a raw copy (the alias rewrites each element with its own bits)
            tl.store(out + L + 2 * i, r1.to(tl.bfloat16))
            tl.store(out + L + 2 * i + 1, r2.to(tl.bfloat16))
            tl.store(out + tl.arange(0, L), n)


@triton.jit
def _indexer_head(t, g, pos, index_q_ptr, index_q_s0, index_q_s1, w_ptr, w_s0, w_s1, index_cs_ptr, index_cs_s0,
                  index_fp8_ptr, index_fp8_s0, index_fp8_s1, w_out_ptr, w_out_s0, softmax_scale, head_scale,
                  HALF: tl.constexpr, D: tl.constexpr, NEOX: tl.constexpr, W_STRIDE_1: tl.constexpr):
    j = tl.arange(0, D)
    rm = j < 2 * HALF
    if NEOX:
        low = j < HALF
        partner = tl.where(low, j + HALF, j - HALF)
        ci = tl.where(low, j, j - HALF)
        sign = tl.where(low, -1.0, 1.0)
    else:
        partner = j ^ 1
        ci = j // 2
        sign = tl.where((j % 2) == 0, -1.0, 1.0)
    q = index_q_ptr + t * index_q_s0 + g * index_q_s1
    x = tl.load(q + j).to(tl.float32)
    xp = tl.load(q + partner, mask=rm, other=0.0).to(tl.float32)
    cs = index_cs_ptr + pos * index_cs_s0
    c = tl.load(cs + ci, mask=rm, other=0.0).to(tl.float32)
    s = tl.load(cs + HALF + ci, mask=rm, other=0.0).to(tl.float32)
    y = tl.where(rm, x * c + sign * xp * s, x)
    amax = tl.maximum(tl.max(tl.abs(y)), 1e-4)
    scale = tl.exp2(tl.ceil(tl.log2(tl.div_rn(amax, 448.0))))
    tl.store(index_fp8_ptr + t * index_fp8_s0 + g * index_fp8_s1 + j, tl.div_rn(y, scale).to(tl.float8e4nv))
    if W_STRIDE_1:
        w = tl.load(w_ptr + t * w_s0 + g).to(tl.float32)  # planted: the column stride assumed 1
    else:
        w = tl.load(w_ptr + t * w_s0 + g * w_s1).to(tl.float32)
    w_out = w_out_ptr + t * w_out_s0 + g
    tl.store(w_out, (((w * scale) * softmax_scale) * head_scale).to(w_out.dtype.element_ty))


@triton.jit
def _fused_q(positions_ptr, q_pe_ptr, q_pe_s0, q_pe_s1, ql_nope_ptr, ql_nope_s0, ql_nope_s1, mqa_cs_ptr, mqa_cs_s0,
             index_q_ptr, index_q_s0, index_q_s1, w_ptr, w_s0, w_s1, index_cs_ptr, index_cs_s0,
             q_out_ptr, q_out_s0, q_out_s1, index_fp8_ptr, index_fp8_s0, index_fp8_s1, w_out_ptr, w_out_s0,
             num_tokens, q_scale, softmax_scale, head_scale,
             H: tl.constexpr, HALF: tl.constexpr, L: tl.constexpr, D: tl.constexpr, BLOCK_T: tl.constexpr,
             QUERY_PATH: tl.constexpr, HAS_INDEXER: tl.constexpr, NEOX: tl.constexpr,
             W_STRIDE_1: tl.constexpr, TOKENS_ON_Y: tl.constexpr):
    if TOKENS_ON_Y:
        head = tl.program_id(0)
        first = tl.program_id(1).to(tl.int64) * BLOCK_T
    else:
        first = tl.program_id(0).to(tl.int64) * BLOCK_T
        head = tl.program_id(1)
    for k in tl.static_range(BLOCK_T):
        t = first + k
        if t < num_tokens:
            pos = tl.load(positions_ptr + t)
            if head < H:
                _mqa_head(t, head, pos, q_pe_ptr, q_pe_s0, q_pe_s1, ql_nope_ptr, ql_nope_s0, ql_nope_s1, mqa_cs_ptr,
                          mqa_cs_s0, q_out_ptr, q_out_s0, q_out_s1, q_scale, HALF, L, QUERY_PATH)
            elif HAS_INDEXER:
                _indexer_head(t, head - H, pos, index_q_ptr, index_q_s0, index_q_s1, w_ptr, w_s0, w_s1, index_cs_ptr,
                              index_cs_s0, index_fp8_ptr, index_fp8_s0, index_fp8_s1, w_out_ptr, w_out_s0,
                              softmax_scale, head_scale, HALF, D, NEOX, W_STRIDE_1)


def fused_q_production(positions, q_pe, ql_nope, mqa_cos_sin, index_q, index_weights, index_cos_sin, q_scale,
                       softmax_scale, head_scale, *, neox, fp8, weights_out_dtype=torch.float32, query_out=None,
                       variant="correct"):
    """positions [T]; q_pe [T, H, R] bf16; ql_nope [T, H, L] bf16 or None (bf16
    separate: query_out [T, H, R]); caches [P, R] rows [cos(R/2), sin(R/2)];
    index_q [T, NI, D], index_weights [T, NI] or None (no indexer). Returns
    (query_out, index_q_fp8, index_weights_out), allocated here (query_out
    may be given: the alias), the indexer outputs None without an indexer."""
    T, H, R = q_pe.shape
    assert R % 2 == 0, "rope dim must be even"
    for x in (q_pe, ql_nope, index_q, mqa_cos_sin, index_cos_sin):
        assert x is None or x.stride(-1) == 1, "the last dim must be contiguous"
    path = 2 if ql_nope is None else 0 if fp8 else 1
    L = 0 if ql_nope is None else ql_nope.shape[2]
    if query_out is None:
        dtype = torch.float8_e4m3fn if path == 0 else torch.bfloat16
        query_out = torch.empty((T, H, L + R), dtype=dtype, device=q_pe.device)
    NI, D = (0, 0) if index_q is None else index_q.shape[1:]
    index_fp8 = torch.empty((T, NI, D), dtype=torch.float8_e4m3fn, device=q_pe.device) if NI else None
    w_out = torch.empty((T, NI), dtype=weights_out_dtype, device=q_pe.device) if NI else None
    if T == 0:
        return query_out, index_fp8, w_out
    on_y = variant == "tokens-on-grid-y"
    block_t = 1 if on_y else 4
    blocks = triton.cdiv(T, block_t)
    grid = (H + NI, blocks) if on_y else (blocks, H + NI)
    nope = q_pe if ql_nope is None else ql_nope
    iq, w, ics, ifp8, wo = (index_q, index_weights, index_cos_sin, index_fp8, w_out) if NI else (q_pe,) * 5
    _fused_q[grid](positions, q_pe, q_pe.stride(0), q_pe.stride(1), nope, nope.stride(0), nope.stride(1),
                   mqa_cos_sin, mqa_cos_sin.stride(0), iq, iq.stride(0), iq.stride(1), w, w.stride(0), w.stride(1),
                   ics, ics.stride(0), query_out, query_out.stride(0), query_out.stride(1), ifp8, ifp8.stride(0),
                   ifp8.stride(1), wo, wo.stride(0), T, float(q_scale), float(softmax_scale), float(head_scale),
                   H=H, HALF=R // 2, L=max(L, 1), D=max(D, 1), BLOCK_T=block_t, QUERY_PATH=path,
                   HAS_INDEXER=NI > 0, NEOX=bool(neox), W_STRIDE_1=variant == "weights-stride-1",
                   TOKENS_ON_Y=on_y)
    return query_out, index_fp8, w_out
