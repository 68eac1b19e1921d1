"""A PyTorch eager fused_q of the kind people write as a test oracle: torch
ops only, on the device the tensors live on, fp32 math after `.float()`,
every RoPE product and sum a separate op (no FMA). qcheck's profile
"torch-eager" names its conventions; against the profile "qcheck" it
differs where torch's conventions differ from the H200 kernels':

  - `.to(torch.float8_e4m3fn)` does not saturate: a magnitude that rounds
    above 448, and +-Inf, become NaN (0x7F / 0xFF) where a satfinite
    conversion gives +-448; a NaN keeps its sign;
  - `x.abs().amax(...)` propagates NaN (so does clamp): a row with a NaN gets
    a NaN scale, every code of the row NaN and a NaN weight, where the
    kernels skip NaN lanes;
  - RoPE without contraction: RN(RN(x1*c) - RN(x2*s)), which may differ by
    one ulp from a fused product;
  - on CUDA, torch divides a tensor by a Python float as x * RN(1/d) (its
    CPU-scalar fast path), so `r / q_scale` and `amax / 448.0` are
    multiplications by the rounded reciprocal there (seen on the H200, torch
    2.11: a / 448.0 equal to a * RN(1/448) on 202049 of 202049 values and
    1 ulp off RN(a / 448) on 110541 of them; 3.0 / 0.37 gives 0x4101BAD0, the
    IEEE quotient is 0x4101BACF). The same as a division for a power-of-two
    q_scale, but s0 = amax * RN(1/448) can sit one ulp above a power of two
    where RN(amax / 448) does not, and the log2 ceiling then doubles the
    scale (24 of 2048 inputs in the UE8M0 band). On the CPU they are IEEE
    divisions;
  - bf16 NaN bits: the device conversion gives 0x7FFF on CUDA, the CPU's
    0x7FC0 (or its sign) on the CPU.

`adapter(tensors)` is the qcheck adapter (python/README.md): it writes the
results into the given output views with `.copy_()`.
"""

import torch


def _rope_pairs(x, c, s):
    """Interleaved pairs (2i, 2i+1) of the last dim: r1 = x1*c - x2*s, r2 = x2*c + x1*s."""
    x1 = x[..., 0::2]
    x2 = x[..., 1::2]
    r1 = x1 * c - x2 * s
    r2 = x2 * c + x1 * s
    return torch.stack((r1, r2), dim=-1).flatten(-2)


def _rope_neox(x, c, s):
    """NeoX halves of the last dim: cat(x1*c - x2*s, x2*c + x1*s)."""
    h = x.shape[-1] // 2
    x1 = x[..., :h]
    x2 = x[..., h:]
    return torch.cat((x1 * c - x2 * s, x2 * c + x1 * s), dim=-1)


def _cos_sin(cache, positions, rope_dim):
    """cos, sin [T, 1, R/2] for the positions (cache rows [cos(R/2), sin(R/2)])."""
    rows = cache[positions].float()
    h = rope_dim // 2
    return rows[:, None, :h], rows[:, None, h:rope_dim]


def _same_view(a, b):
    return (a.data_ptr() == b.data_ptr() and a.shape == b.shape and a.stride() == b.stride()
            and a.dtype == b.dtype)


_last_case = [None, None]


def case_fields(tensors):
    """The case's fields as a dict, read once per case (qcheck.Case decodes
    its JSON on every `case[name]`)."""
    if _last_case[0] is not tensors.case:
        _last_case[0], _last_case[1] = tensors.case, tensors.case.fields
    return _last_case[1]


def fused_q_reference(tensors):
    """Writes query_out (and, with an indexer, index_q_fp8 and
    index_weights_out) of one case from its inputs."""
    case = case_fields(tensors)
    T = case["num_tokens"]
    if T == 0:
        return
    R = case["rope_dim"]
    L = case["nope_dim"]
    path = case["query_path"]
    positions = tensors["positions"]
    q_scale = tensors.q_scale

    # MQA: interleaved RoPE of q_pe.
    c, s = _cos_sin(tensors["mqa_cache"], positions, R)
    r = _rope_pairs(tensors["q_pe"].float(), c, s)
    out = tensors["query_out"]
    if path == "fp8-packed":
        out[..., L:].copy_((r / q_scale).to(torch.float8_e4m3fn))
        out[..., :L].copy_((tensors["ql_nope"].float() / q_scale).to(torch.float8_e4m3fn))
    elif path == "bf16-packed":
        out[..., L:].copy_(r.to(torch.bfloat16))
        front = out[..., :L]
        ql_nope = tensors["ql_nope"]
        if not _same_view(front, ql_nope):  # the absorbed bmm may have written it there already
            front.copy_(ql_nope)
    elif path == "bf16-separate":
        out.copy_(r.to(torch.bfloat16))
    else:
        raise ValueError(f"unknown query path {path!r}")

    if not case["has_indexer"]:
        return  # the indexer outputs stay as they are
    # Indexer: RoPE of the first R dims, NeoX or interleaved; R..D-1 unchanged.
    x = tensors["index_q"].float()
    c, s = _cos_sin(tensors["indexer_cache"], positions, R)
    rope = _rope_neox if case["indexer_rope"] == "neox" else _rope_pairs
    x = torch.cat((rope(x[..., :R], c, s), x[..., R:]), dim=-1)
    amax = x.abs().amax(dim=-1, keepdim=True)
    amax = amax.clamp(min=1e-4)
    scale = torch.exp2(torch.ceil(torch.log2(amax / 448.0)))
    tensors["index_q_fp8"].copy_((x / scale).to(torch.float8_e4m3fn))
    w = tensors["index_weights"][..., 0].float()
    w_out = w * scale[..., 0] * tensors.softmax_scale * tensors.head_scale
    out_w = tensors["index_weights_out"][..., 0]
    out_w.copy_(w_out.to(out_w.dtype))


def adapter(tensors):
    """qcheck adapter (torch tensors on any device)."""
    fused_q_reference(tensors)
