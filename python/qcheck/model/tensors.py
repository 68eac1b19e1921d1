"""A case's tensors for a kernel to run on: qcheck.Tensors, a dict from name
to array (numpy, or torch on a device) that also holds the guarded
allocations behind the views, so that the verdict reads every byte the
kernel may have touched (sentinels and padding included)."""

import ctypes
import time

import numpy as np

from . import _capi

_NUMPY = {_capi.DTYPE_INT64: np.int64, _capi.DTYPE_F32: np.float32, _capi.DTYPE_BF16: np.uint16,
          _capi.DTYPE_E4M3: np.uint8, _capi.DTYPE_UINT8: np.uint8, _capi.DTYPE_INT32: np.int32}
DTYPE_NAMES = {_capi.DTYPE_INT64: "int64", _capi.DTYPE_F32: "float32", _capi.DTYPE_BF16: "bfloat16",
               _capi.DTYPE_E4M3: "float8_e4m3fn", _capi.DTYPE_UINT8: "uint8", _capi.DTYPE_INT32: "int32"}


def plan(case):
    """(buffers, tensors, aliased): the case's guarded allocations and the
    tensors as views into them (include/qcheck/qcheck.h, qcheck_plan_*).
    A case never changes, so its plan is asked for once and kept on it (an
    execution needs it for the memory rules and for each run); callers
    only read it."""
    kept = getattr(case, "_plan", None)
    if kept is None:
        kept = case._plan = _plan(case)
    return kept


def _plan(case):
    count = ctypes.c_size_t(0)
    _capi.call("qcheck_plan_buffers", case._handle, None, 0, ctypes.byref(count))
    buffers = (_capi.BufferInfo * count.value)()
    for b in buffers:
        b.struct_size = ctypes.sizeof(_capi.BufferInfo)
    _capi.call("qcheck_plan_buffers", case._handle, buffers, count.value, ctypes.byref(count))
    aliased = ctypes.c_int32(0)
    _capi.call("qcheck_plan_tensors", case._handle, None, 0, ctypes.byref(count), ctypes.byref(aliased))
    tensors = (_capi.TensorInfo * count.value)()
    for t in tensors:
        t.struct_size = ctypes.sizeof(_capi.TensorInfo)
    _capi.call("qcheck_plan_tensors", case._handle, tensors, count.value, ctypes.byref(count), ctypes.byref(aliased))
    return list(buffers), list(tensors), bool(aliased.value)


def host_buffers(case, poison=0, expected_profile=None, buffers=None, into=None):
    """The allocations as numpy uint8 arrays, filled as a run starts (or, with
    expected_profile, holding the oracle's outputs). `buffers`: the plan's
    buffers when the caller has them already; `into`: arrays of the
    allocations' sizes to fill (default: new ones)."""
    if buffers is None:
        buffers, _, _ = plan(case)
    raw = into if into is not None else [np.zeros(b.bytes, dtype=np.uint8) for b in buffers]
    pointers = pointer_array(raw)
    if expected_profile is None:
        _capi.call("qcheck_fill_buffers", case._handle, poison, pointers, len(raw))
    else:
        _capi.call("qcheck_expected_buffers", case._handle, expected_profile.encode(), pointers, len(raw))
    return raw


def pointer_array(arrays):
    pointers = (ctypes.c_void_p * len(arrays))()
    for i, a in enumerate(arrays):
        pointers[i] = a.ctypes.data
    return pointers


class Tensors(dict):
    """name -> array view. Also: .case, .poison (0 for run A, 1 for run B),
    .raw (one flat uint8 array per allocation: numpy, or torch on .device,
    where the allocations are spans of one device block, .block),
    .info (name -> the plan's TensorInfo), .aliased (ql_nope is query_out's
    front), and the scalars a fused_q kernel takes: .q_scale,
    .softmax_scale, .head_scale (Python floats, the exact fp32 values;
    None for another op's case, whose scalars are its fields)."""

    def host_raw(self, phases=None):
        """The allocations' bytes on the host (copied back from the device;
        the copy's seconds added to phases["transfers"] when given)."""
        if self.device is None:
            return self.raw
        start = time.monotonic()
        block = self.block.cpu().numpy()  # one copy for every allocation
        host = [block[o:o + n] for o, n in self.spans]
        if phases is not None:
            phases["transfers"] += time.monotonic() - start
        return host


def _views(case, infos):
    """[(name, info, shape, strides)] of the plan's tensors, read out of the
    ctypes structs once per case (kept on it, as its plan)."""
    kept = getattr(case, "_views", None)
    if kept is None:
        kept = case._views = [(info.name.decode(), info, tuple(info.shape[:info.ndim]),
                               tuple(info.strides[:info.ndim])) for info in infos]
    return kept


def _scalars(case):
    """(q_scale, softmax_scale, head_scale) as Python floats, once per case
    (fused_q's; None for another op's)."""
    kept = getattr(case, "_scalars", None)
    if kept is None and case.op != "fused_q":
        kept = case._scalars = (None, None, None)
    if kept is None:
        fields = case.fields
        kept = case._scalars = tuple(_fp32(fields[k]) for k in ("q_scale", "softmax_scale", "head_scale"))
    return kept


def _fp32(field):
    return float(np.array([int(field, 16)], dtype=np.uint32).view(np.float32)[0])


def make_tensors(case, poison, device, expected_profile=None, phases=None):
    """The case's Tensors on `device` (None: numpy). With `phases` (a dict),
    the seconds spent are added to its "inputs" and "transfers"."""
    start = time.monotonic()
    buffers, infos, aliased = plan(case)
    t = Tensors()
    t.case, t.poison, t.device, t.aliased = case, poison, device, aliased
    t.info = {}
    if device is None:
        t.raw = host_buffers(case, poison, expected_profile, buffers)
        built = copied = time.monotonic()
    else:
        import torch
        # Every allocation in one device block (each at a 256-byte boundary,
        # as cudaMalloc gives): filled in place in one host block, one copy
        # each way instead of one per tensor.
        t.spans, end = [], 0
        for b in buffers:
            t.spans.append((end, b.bytes))
            end = (end + b.bytes + 255) // 256 * 256
        staged = np.zeros(max(end, 1), dtype=np.uint8)
        host_buffers(case, poison, expected_profile, buffers, into=[staged[o:o + n] for o, n in t.spans])
        built = time.monotonic()
        t.block = torch.from_numpy(staged).to(device)
        t.raw = [t.block[o:o + n] for o, n in t.spans]
        copied = time.monotonic()
    for name, info, shape, strides in _views(case, infos):
        t.info[name] = info
        if device is None:
            dtype = np.dtype(_NUMPY[info.dtype])
            t[name] = np.ndarray(shape, dtype=dtype, buffer=t.raw[info.buffer], offset=info.offset_bytes,
                                 strides=tuple(s * dtype.itemsize for s in strides))
        else:
            import torch
            dtype = getattr(torch, DTYPE_NAMES[info.dtype])
            typed = t.raw[info.buffer].view(dtype)
            size = typed.element_size()
            # as_strided's offset counts from the start of the storage (the block).
            t[name] = torch.as_strided(typed, shape, strides, typed.storage_offset() + info.offset_bytes // size)
    t.q_scale, t.softmax_scale, t.head_scale = _scalars(case)
    if phases is not None:  # (the numpy path copies nothing: its transfers stay 0)
        phases["inputs"] += (built - start) + (time.monotonic() - copied)
        phases["transfers"] += copied - built
    return t
