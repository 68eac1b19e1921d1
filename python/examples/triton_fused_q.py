"""A Triton fused_q kernel written for this project (an example kernel under
test), in the style of the Triton kernels of this family: fp32 math after
loading, default FMA contraction, plain `/` for the MQA division by q_scale
(div.full.f32), IEEE division (tl.div_rn) inside the UE8M0 quantizer, the
log2 ceiling of the scale, `.to(tl.float8e4nv)` for the codes (satfinite).
qcheck's profile "vllm-triton" names these conventions (SEMANTICS.md, "Other
implementations"), except for the contraction pattern of one product: see
CONTRACTION below.

What it computes, per token t (one program per (token, head)):
  - MQA head h: RoPE of q_pe[t, h] on interleaved pairs (2i, 2i+1) with
    c = cos[pos][i], s = sin[pos][i]: r1 = x1*c - x2*s, r2 = x2*c + x1*s;
      fp8 packed   q_out[t, h] = [e4m3(ql_nope / q_scale), e4m3(r / q_scale)]
      bf16 packed  q_out[t, h] = [ql_nope (a copy; ql_nope may be the view
                                  q_out[..., :L]), bf16(r)]
      bf16 separate q_out[t, h] = bf16(r)        (ql_nope handed on elsewhere)
  - indexer head g (only with an indexer): RoPE of the first R of D dims,
    NeoX halves or interleaved pairs, dims R..D-1 unchanged; one UE8M0 scale
    per row, scale = exp2(ceil(log2(max(amax, 1e-4) / 448))); codes
    e4m3(x / scale); weight ((w * scale) * softmax_scale) * head_scale in
    fp32, stored as the output's dtype (fp32 or bf16).

CONTRACTION (read from the PTX Triton 3.6 emits for sm_90, every path): the
MQA RoPE compiles to r1 = fma(x1, c, -RN(x2*s)) and r2 = fma(x1, s, RN(x2*c))
on the fp8 and both bf16 paths, the indexer to r_j = fma(x_j, c,
RN(sign*x_partner*s)). vLLM's kernel (SEMANTICS.md, H200 measurement) has the
same bf16 and indexer patterns but r1 = fma(-x2, s, RN(x1*c)) on its fp8
path, so on the fp8 path this kernel's r1 can differ from profile
"vllm-triton" by one code where an fp32 ulp decides the e4m3 rounding (and
by NaN against a number where a product overflows); "vllm-triton+any-fma"
accepts it.

`fused_q(...)` is the kernel's own entry point (real tensors, any strides on
dims 0 and 1, unit last dim); `adapter(tensors)` maps a qcheck.Tensors onto
it (python/README.md, "The adapter contract"). `adapter_bug_rope_swap` is the
same kernel with a planted bug (see there).

Recompilations: only block sizes and path flags are constexpr; strides,
dims and scalars are ordinary arguments that Triton is told not to
specialize (no "== 1" or "divisible by 16" variants), and the blocks have
a floor (32 rope pairs, 64 lanes for L and D), so the fuzz loop compiles one
variant per (path, has_indexer, rope style, dtypes) combination at small
sizes: about a hundred in all.
"""

import torch
import triton
import triton.language as tl

# Query paths (constexpr QUERY_PATH).
FP8_PACKED, BF16_PACKED, BF16_SEPARATE = 0, 1, 2

_RUNTIME_ARGS = [
    "positions_ptr",
    "q_pe_ptr", "q_pe_s0", "q_pe_s1",
    "ql_nope_ptr", "ql_nope_s0", "ql_nope_s1",
    "mqa_cs_ptr", "mqa_cs_s0",
    "index_q_ptr", "index_q_s0", "index_q_s1",
    "w_ptr", "w_s0", "w_s1",
    "index_cs_ptr", "index_cs_s0",
    "q_out_ptr", "q_out_s0", "q_out_s1",
    "index_fp8_ptr", "index_fp8_s0", "index_fp8_s1",
    "w_out_ptr", "w_out_s0", "w_out_s1",
    "num_heads", "rope_dim", "nope_dim", "index_dim",
]


@triton.jit
def _mqa_head(t, head, pos, q_pe_ptr, q_pe_s0, q_pe_s1, ql_nope_ptr, ql_nope_s0, ql_nope_s1, mqa_cs_ptr, mqa_cs_s0,
              q_out_ptr, q_out_s0, q_out_s1, q_scale, rope_dim, nope_dim,
              QUERY_PATH: tl.constexpr, BLOCK_HALF: tl.constexpr, BLOCK_L: tl.constexpr):
    """MQA head: interleaved RoPE of q_pe[t, head], and the ql_nope part."""
    half = rope_dim // 2
    i = tl.arange(0, BLOCK_HALF)
    im = i < half
    cs_row = mqa_cs_ptr + pos * mqa_cs_s0
    c = tl.load(cs_row + i, mask=im, other=0.0).to(tl.float32)
    s = tl.load(cs_row + half + i, mask=im, other=0.0).to(tl.float32)
    x_row = q_pe_ptr + t * q_pe_s0 + head * q_pe_s1
    x1 = tl.load(x_row + 2 * i, mask=im, other=0.0).to(tl.float32)
    x2 = tl.load(x_row + 2 * i + 1, mask=im, other=0.0).to(tl.float32)
    r1 = x1 * c - x2 * s
    r2 = x2 * c + x1 * s
    out_row = q_out_ptr + t * q_out_s0 + head * q_out_s1
    if QUERY_PATH == 0:
        rope_out = out_row + nope_dim
        tl.store(rope_out + 2 * i, (r1 / q_scale).to(tl.float8e4nv), mask=im)
        tl.store(rope_out + 2 * i + 1, (r2 / q_scale).to(tl.float8e4nv), mask=im)
        k = tl.arange(0, BLOCK_L)
        km = k < nope_dim
        n = tl.load(ql_nope_ptr + t * ql_nope_s0 + head * ql_nope_s1 + k, mask=km, other=0.0)
        tl.store(out_row + k, (n.to(tl.float32) / q_scale).to(tl.float8e4nv), mask=km)
    elif QUERY_PATH == 1:
        rope_out = out_row + nope_dim
        tl.store(rope_out + 2 * i, r1.to(tl.bfloat16), mask=im)
        tl.store(rope_out + 2 * i + 1, r2.to(tl.bfloat16), mask=im)
        # A raw 16-bit copy; when ql_nope is q_out[..., :L] this rewrites each
        # element with its own bits.
        k = tl.arange(0, BLOCK_L)
        km = k < nope_dim
        n = tl.load(ql_nope_ptr + t * ql_nope_s0 + head * ql_nope_s1 + k, mask=km)
        tl.store(out_row + k, n, mask=km)
    else:
        tl.store(out_row + 2 * i, r1.to(tl.bfloat16), mask=im)
        tl.store(out_row + 2 * i + 1, r2.to(tl.bfloat16), mask=im)


@triton.jit
def _indexer_head(t, g, pos, index_q_ptr, index_q_s0, index_q_s1, w_ptr, w_s0, w_s1, index_cs_ptr, index_cs_s0,
                  index_fp8_ptr, index_fp8_s0, index_fp8_s1, w_out_ptr, w_out_s0, w_out_s1,
                  softmax_scale, head_scale, rope_dim, index_dim,
                  NEOX: tl.constexpr, BLOCK_D: tl.constexpr):
    """Indexer head g: RoPE of the first R dims, one UE8M0 scale, fp8 codes, the weight."""
    half = rope_dim // 2
    j = tl.arange(0, BLOCK_D)
    jm = j < index_dim
    rm = j < rope_dim
    if NEOX:
        low = j < half
        partner = tl.where(low, j + half, j - half)
        ci = tl.where(low, j, j - half)
        sign = tl.where(low, -1.0, 1.0)
    else:
        partner = j ^ 1
        ci = j // 2
        sign = tl.where((j % 2) == 0, -1.0, 1.0)
    q_row = index_q_ptr + t * index_q_s0 + g * index_q_s1
    x = tl.load(q_row + j, mask=jm, other=0.0).to(tl.float32)
    xp = tl.load(q_row + partner, mask=rm, other=0.0).to(tl.float32)
    cs_row = index_cs_ptr + pos * index_cs_s0
    c = tl.load(cs_row + ci, mask=rm, other=0.0).to(tl.float32)
    s = tl.load(cs_row + half + ci, mask=rm, other=0.0).to(tl.float32)
    r = x * c + sign * xp * s
    y = tl.where(rm, r, x)
    amax = tl.maximum(tl.max(tl.abs(y)), 1e-4)
    # IEEE divisions here (tl.div_rn), as the family's UE8M0 quantizers write
    # them: Triton's `/` is div.full.f32, which on the H200 is 1 ulp off
    # RN(amax / 448) for about half of all amax and then moves the scale of
    # some rows in the log2 band (s0 just above a power of two).
    scale = tl.exp2(tl.ceil(tl.log2(tl.div_rn(amax, 448.0))))
    codes = tl.div_rn(y, scale).to(tl.float8e4nv)
    tl.store(index_fp8_ptr + t * index_fp8_s0 + g * index_fp8_s1 + j, codes, mask=jm)
    w = tl.load(w_ptr + t * w_s0 + g * w_s1).to(tl.float32)
    w_out = ((w * scale) * softmax_scale) * head_scale
    w_out_ptrs = w_out_ptr + t * w_out_s0 + g * w_out_s1
    tl.store(w_out_ptrs, w_out.to(w_out_ptrs.dtype.element_ty))


@triton.jit(do_not_specialize=_RUNTIME_ARGS)
def _fused_q_kernel(
    positions_ptr,
    q_pe_ptr, q_pe_s0, q_pe_s1,
    ql_nope_ptr, ql_nope_s0, ql_nope_s1,
    mqa_cs_ptr, mqa_cs_s0,
    index_q_ptr, index_q_s0, index_q_s1,
    w_ptr, w_s0, w_s1,
    index_cs_ptr, index_cs_s0,
    q_out_ptr, q_out_s0, q_out_s1,
    index_fp8_ptr, index_fp8_s0, index_fp8_s1,
    w_out_ptr, w_out_s0, w_out_s1,
    q_scale, softmax_scale, head_scale,
    num_heads, rope_dim, nope_dim, index_dim,
    QUERY_PATH: tl.constexpr,
    HAS_INDEXER: tl.constexpr,
    NEOX: tl.constexpr,
    BLOCK_HALF: tl.constexpr,
    BLOCK_L: tl.constexpr,
    BLOCK_D: tl.constexpr,
):
    # Grid (T, H + NI): tokens on grid x (up to 2^31 - 1 of them), one
    # program per MQA head then per indexer head on grid y. Every offset is
    # int64 (head * stride in int32 overflows at production sizes).
    t = tl.program_id(0).to(tl.int64)
    head = tl.program_id(1).to(tl.int64)
    pos = tl.load(positions_ptr + t)
    if head < num_heads:
        _mqa_head(t, head, pos, q_pe_ptr, q_pe_s0, q_pe_s1, ql_nope_ptr, ql_nope_s0, ql_nope_s1, mqa_cs_ptr,
                  mqa_cs_s0, q_out_ptr, q_out_s0, q_out_s1, q_scale, rope_dim, nope_dim,
                  QUERY_PATH, BLOCK_HALF, BLOCK_L)
    else:
        if HAS_INDEXER:
            _indexer_head(t, head - num_heads, pos, index_q_ptr, index_q_s0, index_q_s1, w_ptr, w_s0, w_s1,
                          index_cs_ptr, index_cs_s0, index_fp8_ptr, index_fp8_s0, index_fp8_s1,
                          w_out_ptr, w_out_s0, w_out_s1, softmax_scale, head_scale, rope_dim, index_dim,
                          NEOX, BLOCK_D)


def _block(n, least):
    """A power-of-two block of at least `least` lanes: every small dim shares
    one variant (the fuzzer's tiny and usual sizes compile once per path and
    dtypes, not once per dim)."""
    return max(least, triton.next_power_of_2(max(int(n), 1)))


def fused_q(positions, q_pe, ql_nope, mqa_cos_sin, index_q, index_weights_2d, index_cos_sin,
            q_out, index_q_fp8, index_weights_out_2d, q_scale, softmax_scale, head_scale, neox):
    """The kernel's own entry point.

    positions [T] int64; q_pe [T, H, R] bf16; ql_nope [T, H, L] bf16, or None
    for the bf16 separate path (q_out [T, H, R]); mqa_cos_sin, index_cos_sin
    [P, R] fp32 or bf16 (rows [cos(R/2), sin(R/2)]); index_q [T, NI, D] bf16,
    index_weights_2d [T, NI] fp32 or bf16, or all indexer tensors None for a
    layer without an indexer (its outputs are then not touched; they may be
    None too); q_out [T, H, L+R] e4m3 (fp8 packed) or bf16 (bf16 packed), or
    [T, H, R] bf16; index_q_fp8 [T, NI, D] e4m3; index_weights_out_2d [T, NI]
    fp32 or bf16. q_scale, softmax_scale, head_scale: fp32 values. neox: the
    indexer's RoPE style (True NeoX halves, False interleaved pairs); the MQA
    RoPE is always interleaved. Dims 0 and 1 may have any stride; the last
    dim must be contiguous.
    """
    T, H, R = q_pe.shape
    if T == 0:
        return  # a valid no-op: no empty grid is launched
    if R % 2 != 0:
        raise ValueError(f"rope dim {R} must be even")
    for name, x in (("q_pe", q_pe), ("ql_nope", ql_nope), ("index_q", index_q), ("q_out", q_out),
                    ("index_q_fp8", index_q_fp8), ("mqa_cos_sin", mqa_cos_sin), ("index_cos_sin", index_cos_sin)):
        if x is not None and x.shape[-1] > 1 and x.stride(-1) != 1:
            raise ValueError(f"{name}: the last dim must have unit stride")
    if ql_nope is None:
        path, L = BF16_SEPARATE, 0
        ql_nope = q_pe  # never read on this path
    else:
        L = ql_nope.shape[2]
        path = FP8_PACKED if q_out.dtype == torch.float8_e4m3fn else BF16_PACKED
    has_indexer = index_q is not None
    if has_indexer:
        NI, D = index_q.shape[1], index_q.shape[2]
        if D < R:
            raise ValueError(f"index dim {D} < rope dim {R}")
        iq, w, ics, ifp8, wo = index_q, index_weights_2d, index_cos_sin, index_q_fp8, index_weights_out_2d
    else:
        NI, D = 0, 0
        # Never read or written (HAS_INDEXER is off): fixed stand-ins, so that
        # a layer without an indexer compiles one variant whatever its dtypes.
        iq = w = ics = wo = q_pe
        ifp8 = q_out if index_q_fp8 is None else index_q_fp8
        neox = False
    grid = (T, H + NI)
    _fused_q_kernel[grid](
        positions,
        q_pe, q_pe.stride(0), q_pe.stride(1),
        ql_nope, ql_nope.stride(0), ql_nope.stride(1),
        mqa_cos_sin, mqa_cos_sin.stride(0),
        iq, iq.stride(0), iq.stride(1),
        w, w.stride(0), w.stride(1),
        ics, ics.stride(0),
        q_out, q_out.stride(0), q_out.stride(1),
        ifp8, ifp8.stride(0), ifp8.stride(1),
        wo, wo.stride(0), wo.stride(1),
        float(q_scale), float(softmax_scale), float(head_scale),
        H, R, L, D,
        QUERY_PATH=path,
        HAS_INDEXER=has_indexer,
        NEOX=bool(neox),
        BLOCK_HALF=_block(R // 2, 32),
        BLOCK_L=_block(L, 64),
        BLOCK_D=_block(D, 64),
    )


_last_case = [None, None]


def case_fields(tensors):
    """The case's fields as a dict, read once per case: qcheck.Case decodes
    its JSON on every `case[name]` (about 60 us each), and the fuzz loop calls
    the adapter twice per case."""
    if _last_case[0] is not tensors.case:
        _last_case[0], _last_case[1] = tensors.case, tensors.case.fields
    return _last_case[1]


def _run(tensors, neox):
    has_indexer = "index_q" in tensors  # the indexer inputs exist only with an indexer
    separate = "ql_nope" not in tensors  # bf16 separate path: no ql_nope
    fused_q(
        tensors["positions"],
        tensors["q_pe"],
        None if separate else tensors["ql_nope"],
        tensors["mqa_cache"],
        tensors["index_q"] if has_indexer else None,
        tensors["index_weights"][..., 0] if has_indexer else None,
        tensors["indexer_cache"] if has_indexer else None,
        tensors["query_out"],
        tensors["index_q_fp8"] if has_indexer else None,
        tensors["index_weights_out"][..., 0] if has_indexer else None,
        tensors.q_scale, tensors.softmax_scale, tensors.head_scale,
        neox,
    )


def adapter(tensors):
    """qcheck adapter: the case's tensors onto fused_q's signature."""
    _run(tensors, neox="index_q" in tensors and case_fields(tensors)["indexer_rope"] == "neox")


def adapter_bug_rope_swap(tensors):
    """Planted bug: the indexer RoPE style swapped (NeoX halves applied to an
    interleaved model and interleaved pairs to a NeoX one).

    The real bug it imitates (SEMANTICS.md, "Bugs this kernel family really
    shipped", 1): DeepSeek-V3.2 rotates the indexer's rope dims as NeoX
    halves and GLM-5 as interleaved pairs; DeepSeek's own reference, vLLM
    #28968, sglang #30088/#30111/#30342 (GSM8K 0.955 -> 0.931) and
    vllm-ascend (twice) shipped the wrong one. It changes only the indexer
    outputs, and only where the two styles differ (R >= 4, a row whose
    rotated pairs are not all equal: with R = 2 the two styles are the same
    rotation); the MQA part is untouched.
    """
    _run(tensors, neox="index_q" in tensors and case_fields(tensors)["indexer_rope"] != "neox")
