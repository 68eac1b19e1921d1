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


def test_the_poisoned_allocator_reaches_what_the_last_kernel_freed(monkeypatch):
    """Between poisonings a "kernel" writes 0x11 into blocks it allocates and
    frees, and every other run keeps one of them (the cache is then not as
    the last poisoning left it). Each block handed out after a poisoning
    holds that run's poison; runs with an unchanged cache take no snapshot;
    without the poisoning the same probes show the kernel's bytes."""
    from qcheck.model import allocator
    snapshots = []
    real_snapshot = torch.cuda.memory_snapshot
    monkeypatch.setattr(torch.cuda, "memory_snapshot", lambda *a, **k: snapshots.append(1) or real_snapshot(*a, **k))
    device = torch.device("cuda")
    sizes = (9_000, 123_456, 3 << 20, 33 << 20)
    kept = []

    def kernel(keep_one):
        blocks = [torch.full((size,), 0x11, dtype=torch.uint8, device=device) for size in sizes]
        if keep_one:
            kept.append(blocks.pop(len(kept) % len(blocks)))

    def probes():  # the kernel's sizes again: best fit hands back the blocks it freed
        return [torch.empty(size, dtype=torch.uint8, device=device) for size in sizes]

    kernel(False)
    runs = 8
    for run in range(runs):
        kernel(keep_one=run % 4 == 1)
        poison = run % 2
        watch = allocator.poison_allocator(device, poison, 0)
        for block in probes():
            assert bool((block == allocator.POISON_BYTES[poison]).all()), (run, block.numel())
        assert not watch.notes(), watch.notes()
    assert 2 <= len(snapshots) < runs, snapshots  # the first run and those after a kept block look; the rest do not
    kernel(False)
    assert any(bool((block == 0x11).any()) for block in probes())  # unpoisoned, the probes see the kernel's bytes


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
