"""The Ray campaign's plan (qcheck.parallel.ray_campaign.plan): the one-host rules per
node, in Ray's resources. No Ray needed: the plan is a pure function of the
nodes; the campaign itself on a Ray cluster is tests/fuzz_smoke/ray_campaign_test.py."""

from qcheck.parallel.ray_campaign import CPU_BACKENDS, CUDA_ROTATION, plan

EVERY = set(CUDA_ROTATION) | set(CPU_BACKENDS) | {"cpu-model-bug-tail"}


def per_node(workers, node):
    return [w for w in workers if w["node"] == node]


def test_one_h200_host_as_the_one_host_campaign():
    workers = plan([("n0", "h200", 16.0, 1.0)], EVERY)
    fused = [w for w in workers if w["target"] == "fused_q"]
    assert len(fused) == 15  # a worker per core but one, as on one host
    assert [w["backend"] for w in fused[:7]] == ["cuda-blocked", "cuda-blocked-threads256", "cuda-blocked-staged64",
                                                 "cuda-blocked-staged32", "cuda-blocked-parts", "cuda-legacy",
                                                 "cuda-blocked"]
    assert {w["cpus"] for w in fused} == {1} and {w["gpus"] for w in fused} == {0.0666}
    assert [w["size"] for w in fused].count("limit") == 1 and fused[0]["size"] == "limit"
    others = [(w["target"], w["cpus"], w["gpus"], w["nice"]) for w in workers if w["target"] != "fused_q"]
    assert others == [("numerics", 0, 0, True), ("case_decode", 0, 0, True)]
    assert [w["index"] for w in workers] == list(range(17))


def test_cpu_nodes_share_their_cpus():
    nodes = [("a", "h", 2.0, 0.0), ("b", "h", 2.0, 0.0), ("c", "h", 2.0, 0.0)]
    workers = plan(nodes, EVERY, ["cpu-model", "cpu-model-bug-tail"], "tiny")
    assert [(w["node"], w["target"], w["backend"]) for w in workers] == [
        ("a", "fused_q", "cpu-model"), ("a", "fused_q", "cpu-model-bug-tail"), ("a", "numerics", ""),
        ("a", "case_decode", ""), ("b", "fused_q", "cpu-model"), ("b", "fused_q", "cpu-model-bug-tail"),
        ("c", "fused_q", "cpu-model"), ("c", "fused_q", "cpu-model-bug-tail")]
    assert [w["cpus"] for w in per_node(workers, "a")] == [0.5] * 4
    assert [w["cpus"] for w in per_node(workers, "b")] == [1.0, 1.0]
    assert {w["size"] for w in workers} == {"tiny"} and not any(w["nice"] or w["gpus"] for w in workers)


def test_a_gpu_node_beside_a_cpu_node():
    workers = plan([("g", "gpu-host", 8.0, 2.0), ("c", "cpu-host", 4.0, 0.0)], EVERY)
    gpu, cpu = per_node(workers, "g"), per_node(workers, "c")
    assert [w["backend"] for w in gpu if w["target"] == "fused_q"] == list(CUDA_ROTATION) + ["cuda-blocked"]
    assert sum(w["gpus"] for w in gpu) <= 2.0 and {w["gpus"] for w in gpu if w["target"] == "fused_q"} == {0.2857}
    assert [w["backend"] for w in cpu] == ["cpu-simd", "cpu-model", "cpu-simd", "cpu-model"]
    assert sum(w["cpus"] for w in cpu) == 4.0 and not any(w["gpus"] for w in cpu)
    assert [w["size"] for w in workers].count("limit") == 1


def test_backends_the_binaries_lack_leave_a_gpu_node_to_the_cpu_backends():
    workers = plan([("g", "gpu-host", 4.0, 1.0)], set(CPU_BACKENDS))
    assert [w["backend"] for w in workers if w["target"] == "fused_q"] == ["cpu-simd", "cpu-model"]
    assert not any(w["gpus"] or w["size"] == "limit" for w in workers)


def test_cuda_backends_asked_for_run_on_gpu_nodes_only():
    workers = plan([("g", "gpu", 3.0, 1.0), ("c", "cpu", 3.0, 0.0)], EVERY, ["cuda-blocked", "cpu-simd"])
    assert [(w["node"], w["backend"]) for w in workers if w["target"] == "fused_q"] == [
        ("g", "cuda-blocked"), ("g", "cuda-blocked"), ("c", "cpu-simd"), ("c", "cpu-simd"), ("c", "cpu-simd")]


def test_a_node_without_cpus_for_ray_runs_nothing():
    workers = plan([("head", "h", 0.0, 0.0), ("w", "w", 3.0, 0.0)], EVERY)
    assert {w["node"] for w in workers} == {"w"}
    assert [w["target"] for w in workers] == ["fused_q", "fused_q", "numerics", "case_decode"]


# --- the Python door's workers on Ray (qcheck.parallel.ray_workers.plan; the run itself: python/tests/ray/ray_door.py)

from qcheck.parallel.ray_workers import plan as door_plan  # noqa: E402


def places(workers):
    return [(w["node"], w["cpus"], w["gpus"]) for w in workers]


def test_door_on_one_h200_host_as_qcheck_workers():
    workers = door_plan([("n0", "h200", 16.0, 1.0)], None, on_cuda=True)
    assert places(workers) == [("n0", 1, 0.0666)] * 15  # one per core but one, the GPU shared equally
    assert [w["index"] for w in workers] == list(range(15))


def test_door_on_cuda_skips_cpu_nodes_and_spreads_n_workers_in_turn():
    nodes = [("head", "a", 8.0, 0.0), ("g1", "b", 4.0, 1.0), ("g2", "c", 8.0, 2.0)]
    assert places(door_plan(nodes, None, on_cuda=True)) == [("g1", 1, 0.3333)] * 3 + [("g2", 1, 0.2857)] * 7
    # N in all: each node's first place, then each node's second, ...
    assert places(door_plan(nodes, 3, on_cuda=True)) == [("g1", 1, 0.5)] * 2 + [("g2", 1, 1)]
    # past every node's room: round again, each worker a smaller share
    assert [w["node"] for w in door_plan(nodes, 12, on_cuda=True)].count("g1") == 4
    assert places(door_plan(nodes, 12, on_cuda=True))[0] == ("g1", 0.75, 0.25)


def test_door_on_numpy_arrays_uses_every_cpu_of_every_node():
    nodes = [("a", "h", 2.0, 0.0), ("b", "h", 2.0, 0.0), ("c", "h", 2.0, 1.0)]
    assert places(door_plan(nodes, None, on_cuda=False)) == [(n, 1, 0) for n in "aabbcc"]
    assert places(door_plan(nodes, 1, on_cuda=False)) == [("a", 1, 0)]  # a process: one CPU at most


def test_door_finds_no_place_where_no_node_can_run_it():
    assert door_plan([("a", "h", 4.0, 0.0)], 4, on_cuda=True) == []
    assert door_plan([("a", "h", 0.0, 1.0)], None, on_cuda=False) == []
