"""qcheck's adapter for triton_fused_q_production: its domain, and the copy of
the outputs its wrapper allocates into qcheck's tensors."""
import qcheck
from triton_fused_q_production import fused_q_production

# tl.arange spans whole dims: R, L and D powers of two.
DOMAIN = qcheck.Domain(power_of_two=("rope_dim", "nope_dim", "index_dim"))


def _run(tensors, variant):
    case, indexer = tensors.case.fields, "index_q" in tensors
    outputs = fused_q_production(
        tensors["positions"], tensors["q_pe"], tensors.get("ql_nope"), tensors["mqa_cache"], tensors.get("index_q"),
        tensors["index_weights"][..., 0] if indexer else None, tensors.get("indexer_cache"),
        tensors.q_scale, tensors.softmax_scale, tensors.head_scale, neox=case["indexer_rope"] == "neox",
        fp8=case["query_path"] == "fp8-packed", weights_out_dtype=tensors["index_weights_out"].dtype,
        query_out=tensors["query_out"] if tensors.aliased else None, variant=variant)
    for name, out in zip(("query_out", "index_q_fp8", "index_weights_out"), outputs):
        if out is not None and out is not tensors[name]:  # [T, NI] weights into qcheck's [T, NI, 1]
            (tensors[name][..., 0] if name == "index_weights_out" else tensors[name]).copy_(out)


@qcheck.kernel(domain=DOMAIN, profile="vllm-triton+any-fma")
def adapter(tensors):
    _run(tensors, "correct")


@qcheck.kernel(domain=DOMAIN, profile="vllm-triton+any-fma")
def adapter_weights_stride_1(tensors):
    _run(tensors, "weights-stride-1")


@qcheck.kernel(domain=DOMAIN, profile="vllm-triton+any-fma")
def adapter_tokens_on_grid_y(tensors):
    _run(tensors, "tokens-on-grid-y")
