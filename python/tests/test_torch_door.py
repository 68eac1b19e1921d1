"""The Python door on a CUDA device with torch (skipped without them; the
GPU gate runs them on the H200, where a skip is a failure): a wrapper that
allocates its own output and leaves a head unwritten is reported unwritten
(the poisoned allocator); a kernel with two planted bugs, fuzzed with the
first known, shows the second; a raising case is minimized."""

import json

import numpy as np
import pytest

import qcheck

torch = pytest.importorskip("torch", reason="torch is not installed: the CUDA door's tests need it")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device visible to torch", allow_module_level=True)


def _like(array, like):
    """The numpy array as a torch tensor of `like`'s dtype (same bits) on its device."""
    host = np.ascontiguousarray(array)
    if host.dtype == np.uint16:
        host = host.view(np.int16)
    return torch.from_numpy(host).view(like.dtype).to(like.device)


def _expected_into(tensors, skip_last_head=False):
    """A "wrapper": the oracle's outputs written into tensors it allocates
    itself (torch.empty), then copied into qcheck's by the adapter; with
    skip_last_head, query_out's last head is never written."""
    want = qcheck.expected(tensors.case)
    for name, info in tensors.info.items():
        if info.role != 1:
            continue
        own = torch.empty(tensors[name].shape, dtype=tensors[name].dtype, device=tensors[name].device)
        source = _like(want[name], own)
        if skip_last_head and name == "query_out":
            own[:, :-1] = source[:, :-1]
        else:
            own.copy_(source)
        tensors[name].copy_(own)


def case_with(**fields):
    f = qcheck.Case.from_seed(3, "tiny").fields
    f.update(fields)
    return qcheck.Case.from_json(json.dumps(f))


def test_an_output_the_wrapper_allocates_and_never_writes_is_unwritten():
    case = case_with(num_tokens=17, mqa_heads=3, alias="none")
    right = qcheck.run(case, _expected_into, device="cuda")
    assert right.passed, right.text
    verdict = qcheck.run(case, lambda t: _expected_into(t, skip_last_head=True), device="cuda")
    classes = {c["class"] for c in verdict.json["counts"]}
    assert classes == {"unwritten"}, verdict.text
    width = qcheck.expected(case)["query_out"].shape[2]
    assert verdict.json["total"] == 17 * width, verdict.text  # the last head of every token, nothing else
    assert not verdict.notes, verdict.notes
    # Without the poisoned allocator the same elements hold whatever torch.empty gave.
    blind = qcheck.run(case, lambda t: _expected_into(t, skip_last_head=True), device="cuda", poison_allocator=False)
    print("without the poisoned allocator:", blind.signature, {c["class"] for c in blind.json.get("counts", [])})


def test_the_kernels_allocations_land_in_the_poisoned_pool_which_stops_growing():
    from qcheck.model import allocator
    if not hasattr(torch.cuda, "MemPool"):
        pytest.skip(f"torch {torch.__version__} has no torch.cuda.MemPool: the shared cache is poisoned instead")
    addresses, totals = [], []

    def kernel(tensors):
        own = torch.empty(4096, dtype=torch.uint8, device=tensors["query_out"].device)
        addresses.append(own.data_ptr())
        _expected_into(tensors)

    for seed in range(12):
        verdict = qcheck.run(qcheck.Case.from_seed(seed, "tiny"), kernel, device="cuda")
        assert verdict.passed and not verdict.notes, verdict.text
        segments = allocator._POOLS[torch.cuda.current_device()].snapshot()
        # Every allocation of the kernel's, in both runs, is in qcheck's pool.
        assert len(addresses) == 2
        for address in addresses:
            assert any(s["address"] <= address < s["address"] + s["total_size"] for s in segments), address
        addresses.clear()
        totals.append(sum(s["total_size"] for s in segments))
    assert totals[-1] == totals[1], totals  # no new segment after the first runs


def _two_bugs(tensors):
    _expected_into(tensors)
    case = tensors.case
    if case["has_indexer"] and tensors["index_weights_out"].numel() > 0:
        w = tensors["index_weights_out"]
        bits = w.view(torch.int32) if w.dtype == torch.float32 else w.view(torch.int16)
        bits[(0,) * bits.dim()] ^= 1
    if case["num_tokens"] % 16 == 15:
        q = tensors["query_out"]
        q = q.view(torch.int8) if q.element_size() == 1 else q.view(torch.int16)
        q[-1, 0, 0] ^= 1


def test_the_first_bug_known_the_second_is_found(tmp_path):
    known = [qcheck.Known("index_weights_out/*", note="planted: the first weight's last bit")]
    result = qcheck.fuzz(_two_bugs, executions=400, max_findings=3, device="cuda", findings=tmp_path / "f",
                         progress=False, known=known)
    print(result.summary())
    assert result.known and result.known[0].count > 0
    assert result.findings and all(f.group.startswith("query_out/") for f in result.findings), result.summary()


def _divides_by_tail(tensors):
    _expected_into(tensors)
    if tensors.case["num_tokens"] % 16:
        raise ZeroDivisionError(f"integer division by zero with {tensors.case['num_tokens']} tokens")


def test_a_raising_case_is_minimized_on_the_device(tmp_path):
    start = case_with(num_tokens=41, mqa_heads=5)
    m = qcheck.minimize(start, _divides_by_tail, device="cuda", out=tmp_path / "min", budget=60,
                        adapter="test_torch_door:_divides_by_tail")
    print(m.report)
    assert m.case["num_tokens"] == 1 and m.case["mqa_heads"] == 1, m.report
    assert "kernel raised ZeroDivisionError" in m.report
    assert "--device cuda" in (tmp_path / "min" / "replay.txt").read_text()
