"""The .npy exchange (qcheck-case export / expected, qcheck-check) read and
written with numpy alone, as a kernel outside this library would: every
file loads, the manifest's views rebuild the case's tensors, a kernel that
writes the oracle's outputs through the views passes, one changed element
fails at its coordinates."""

import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

import qcheck

CASE_TOOL = os.environ.get("QCHECK_CASE_TOOL")
CHECK_TOOL = os.environ.get("QCHECK_CHECK_TOOL")
pytestmark = pytest.mark.skipif(not CASE_TOOL or not CHECK_TOOL,
                                reason="QCHECK_CASE_TOOL / QCHECK_CHECK_TOOL not set (ctest sets them)")


def views(folder):
    """name -> (numpy view into its buffer's array, the arrays by file)."""
    manifest = json.loads((folder / "manifest.json").read_text())
    arrays = {b["file"]: np.load(folder / b["file"]) for b in manifest["buffers"]}
    out = {}
    for t in manifest["tensors"]:
        base = arrays[t["file"]]
        assert base.dtype == np.dtype(t["dtype"]) and base.ndim == 1
        size = base.dtype.itemsize
        out[t["name"]] = np.lib.stride_tricks.as_strided(
            base[t["offset"]:], shape=t["shape"], strides=[s * size for s in t["strides"]], writeable=True)
    return manifest, arrays, out


def run(*args):
    return subprocess.run(list(args), capture_output=True, text=True)


def test_export_views_rebuild_the_tensors_and_a_kernel_through_the_files_passes(tmp_path):
    for seed in range(1, 13):
        case = qcheck.Case.from_seed(seed, size="tiny")
        path = tmp_path / f"case{seed}.json"
        case.save(path)
        folder = tmp_path / f"x{seed}"
        r = run(CASE_TOOL, "export", str(path), str(folder))
        assert r.returncode == 0, r.stderr
        manifest, arrays, tensors = views(folder)
        mine = case.numpy_inputs()
        for name, view in tensors.items():
            assert view.shape == mine[name].shape, name
            assert view.tobytes() == mine[name].tobytes(), name  # values, inputs and poisoned outputs alike
        # A "kernel": the oracle's outputs written through the views, saved back.
        want = qcheck.expected(case, "qcheck")
        outputs = [t["name"] for t in manifest["tensors"] if t["role"] == "output"]
        for name in outputs:
            tensors[name][...] = want[name]
        for b in manifest["buffers"]:
            if b["is_output"]:
                np.save(folder / b["file"], arrays[b["file"]])
        r = run(CHECK_TOOL, str(folder), "--profile", "qcheck")
        assert r.returncode == 0 and r.stdout.startswith("PASS"), r.stdout + r.stderr
        # Expected outputs from qcheck-case expected are the same bits.
        r = run(CASE_TOOL, "expected", str(path), str(folder / "expected"), "--profile", "qcheck")
        assert r.returncode == 0, r.stderr
        for name in outputs:
            assert np.load(folder / "expected" / f"expected_{name}.npy").tobytes() == \
                np.ascontiguousarray(want[name]).tobytes(), name
        if not outputs or "query_out" not in outputs or tensors["query_out"].shape[0] < 1:
            continue
        tensors["query_out"][0, 0, 0] ^= 1
        np.save(folder / "query_out.npy", arrays["query_out.npy"])
        r = run(CHECK_TOOL, str(folder), "--profile", "qcheck", "--json")
        assert r.returncode == 1, r.stdout + r.stderr
        report = json.loads(r.stdout)
        assert report["total"] == 1 and report["first"][0]["token"] == 0 and report["first"][0]["dim"] == 0
        assert report["primary_signature"].startswith("query_out/")


def test_a_broken_file_is_one_line_with_its_name(tmp_path):
    case = qcheck.Case.from_seed(3, size="tiny")
    path = tmp_path / "case.json"
    case.save(path)
    folder = tmp_path / "x"
    assert run(CASE_TOOL, "export", str(path), str(folder)).returncode == 0
    np.save(folder / "q_pe.npy", np.zeros(3, dtype=np.float32))
    r = run(CHECK_TOOL, str(folder))
    assert r.returncode == 2
    assert r.stderr.count("\n") == 1 and "q_pe.npy: descr '<f4'" in r.stderr, r.stderr


def test_ml_dtypes_decodes_the_files_as_the_manifest_says(tmp_path):
    # An independent decoder (ml_dtypes, where installed: the GPU host has it):
    # the real dtypes of the manifest read the files' bits, and on the fp8
    # path the oracle's ql_nope codes are ml_dtypes' own e4m3 of
    # ql_nope / q_scale wherever it does not saturate (q_scale a power of two).
    ml_dtypes = pytest.importorskip("ml_dtypes")
    real = {"bfloat16": ml_dtypes.bfloat16, "float8_e4m3fn": ml_dtypes.float8_e4m3fn}
    compared = 0
    for seed in range(1, 40):
        case = qcheck.Case.from_seed(seed, size="tiny")
        if case["query_path"] != "fp8-packed" or int(case["q_scale"], 16) & 0x7FFFFF:
            continue
        path = tmp_path / f"c{seed}.json"
        case.save(path)
        folder = tmp_path / f"x{seed}"
        assert run(CASE_TOOL, "export", str(path), str(folder)).returncode == 0
        assert run(CASE_TOOL, "expected", str(path), str(folder), "--profile", "qcheck").returncode == 0
        manifest, arrays, tensors = views(folder)
        kinds = {t["name"]: t["real_dtype"] for t in manifest["tensors"]}
        nope = tensors["ql_nope"].view(real[kinds["ql_nope"]]).astype(np.float32)
        q_scale = np.float32(manifest["scalars"]["q_scale"]["value"])
        with np.errstate(invalid="ignore", over="ignore"):  # NaN and Inf inputs are left out below
            quotient = nope / q_scale
            mine = quotient.astype(ml_dtypes.float8_e4m3fn).view(np.uint8)
        expected = np.load(folder / "expected_query_out.npy")[..., :nope.shape[-1]]
        assert kinds["query_out"] == "float8_e4m3fn"
        fine = np.isfinite(quotient) & (np.abs(quotient) <= 448)
        assert (mine[fine] == expected[fine]).all(), seed
        compared += int(fine.sum())
    assert compared > 1000


def test_a_backend_or_plugin_run_through_the_files(tmp_path):
    """qcheck-case run DIR --backend B: an in-repo backend (and a plugin) as
    the kernel on the other side of the files; qcheck-check judges them."""
    plugin_dir = Path(os.environ.get("QCHECK_PLUGIN_DIR", Path(__file__).resolve().parents[2] / "build" / "default" /
                                     "capi" / "plugins"))
    bug = plugin_dir / "libqcheck_host_plugin_bug.so"
    for seed in range(1, 13):
        fields = qcheck.Case.from_seed(seed, size="tiny").fields
        fields["profile"] = "qcheck"  # the CPU model's: other profiles' FMA patterns differ where values decide them
        case = qcheck.Case.from_json(json.dumps(fields))
        path, folder = tmp_path / f"case{seed}.json", tmp_path / f"run{seed}"
        case.save(path)
        assert run(CASE_TOOL, "export", str(path), str(folder)).returncode == 0
        r = run(CASE_TOOL, "run", str(folder), "--backend", "cpu-model")
        assert r.returncode == 0, r.stderr
        r = run(CHECK_TOOL, str(folder))
        assert r.returncode == 0, r.stdout + r.stderr
        f = case.fields
        if bug.is_file() and f["has_indexer"] and f["indexer_rope"] == "interleaved" and f["rope_dim"] > 2:
            assert run(CASE_TOOL, "export", str(path), str(folder)).returncode == 0
            assert run(CASE_TOOL, "run", str(folder), "--backend", f"plugin:{bug}").returncode == 0
            r = run(CHECK_TOOL, str(folder))
            assert r.returncode == 1 and "index_q_fp8/" in r.stdout, r.stdout + r.stderr
    r = run(CASE_TOOL, "run", str(folder), "--backend", "no-such-backend")
    assert r.returncode == 2 and "unknown backend no-such-backend" in r.stderr
