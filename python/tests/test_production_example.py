"""The production-style Triton example (python/examples/triton_fused_q_production.py)
through its 35-line adapter and domain (production_adapter.py), on a CUDA
device (skipped without torch, Triton or a GPU; the GPU gate runs it on the
H200, where a skip is a failure): the correct kernel passes inside its
domain, the planted narrow-layout variant is found where the weights'
column stride is not 1, the size-gated one raises from T = 65536."""

import json
import sys
from pathlib import Path

import pytest

import qcheck

torch = pytest.importorskip("torch", reason="torch is not installed")
pytest.importorskip("triton", reason="Triton is not installed")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device visible to torch", allow_module_level=True)
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
import production_adapter  # noqa: E402


def case_with(fit=True, **fields):
    f = qcheck.Case.from_seed(3, "tiny").fields
    f.update(fields)
    case = qcheck.Case.from_json(json.dumps(f))
    return production_adapter.DOMAIN.fit(case) if fit else case


def test_the_correct_kernel_passes_inside_its_domain(tmp_path):
    result = qcheck.fuzz(production_adapter.adapter, executions=40, device="cuda", findings=tmp_path / "f",
                         progress=False)
    print(result.summary())
    assert result.executions == 40 and not result.findings, result.summary()
    # A case outside the domain (R = 6) is refused, never run.
    outside = qcheck.run(case_with(fit=False, rope_dim=6, index_dim=64, nope_dim=64, edits=[]),
                         production_adapter.adapter, device="cuda")
    assert outside.exit_code == 2 and "rope_dim 6 (the domain allows a power of two)" in outside.text


def test_the_weights_stride_assumed_1_is_found_where_the_stride_is_not_1():
    strided = case_with(has_indexer=True, weights_column_stride=3, num_tokens=5)
    verdict = qcheck.run(strided, production_adapter.adapter_weights_stride_1, device="cuda")
    assert verdict.exit_code == 1 and {c["tensor"] for c in verdict.json["counts"]} == {"index_weights_out"}, \
        verdict.text
    unit = case_with(has_indexer=True, weights_column_stride=1, num_tokens=5)
    assert qcheck.run(unit, production_adapter.adapter_weights_stride_1, device="cuda").passed


def test_tokens_on_grid_y_raise_from_65536():
    small = dict(mqa_heads=1, indexer_heads=1, index_dim=16, rope_dim=8, nope_dim=8, cache_rows=8)
    at_limit = qcheck.run(case_with(num_tokens=65535, **small), production_adapter.adapter_tokens_on_grid_y,
                          device="cuda")
    assert at_limit.passed, at_limit.text
    past = qcheck.run(case_with(num_tokens=65536, **small), production_adapter.adapter_tokens_on_grid_y,
                      device="cuda")
    print(past.text)
    assert past.exit_code == 3 and past.signature.startswith("kernel raised"), past.text
