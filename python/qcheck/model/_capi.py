"""ctypes bindings of libqcheck (include/qcheck/qcheck.h). Translation only: every
decision is made in the C++ behind it."""

import ctypes
import os
import threading
from pathlib import Path

API_VERSION = 6  # the C API's versions only add functions: a newer library serves this package

OK, MISMATCH, INVALID_INPUT, RUNTIME_ERROR = 0, 1, 2, 3
DTYPE_INT64, DTYPE_F32, DTYPE_BF16, DTYPE_E4M3, DTYPE_UINT8, DTYPE_INT32 = 0, 1, 2, 3, 4, 5
ROLE_INPUT, ROLE_OUTPUT, ROLE_UNTOUCHED_OUTPUT = 0, 1, 2
FORM_BINARY, FORM_JSON = 0, 1


class QcheckError(Exception):
    """A call libqcheck refused: `status` is its code (2 invalid input, 3
    runtime error), the message names the field and the limit."""

    def __init__(self, status, message):
        super().__init__(message)
        self.status = status


class BufferInfo(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_uint32), ("name", ctypes.c_char * 32), ("bytes", ctypes.c_uint64),
                ("is_output", ctypes.c_int32)]


class TensorInfo(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_uint32), ("name", ctypes.c_char * 32), ("role", ctypes.c_int32),
                ("dtype", ctypes.c_int32), ("ndim", ctypes.c_int32), ("shape", ctypes.c_int64 * 3),
                ("strides", ctypes.c_int64 * 3), ("buffer", ctypes.c_int32), ("offset_bytes", ctypes.c_uint64)]


class MinimizeOptions(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_uint32), ("budget_seconds", ctypes.c_double), ("explain", ctypes.c_int32),
                ("domain", ctypes.c_void_p)]


EVALUATE = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t)


class VerdictOptions(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_uint32), ("profile", ctypes.c_char_p), ("kernel", ctypes.c_char_p),
                ("max_listed", ctypes.c_uint32), ("run_graph", ctypes.POINTER(ctypes.c_void_p))]


def _candidates():
    env = os.environ.get("QCHECK_LIBRARY")
    if env:
        yield Path(env)
    here = Path(__file__).resolve().parents[1]  # the package's folder (this module is in its model/)
    yield here / "libqcheck.so"                       # installed beside the package
    yield here.parent.parent / "lib" / "libqcheck.so"  # a GPU bundle: DIR/python/qcheck, DIR/lib
    yield here.parent.parent / "build" / "default" / "capi" / "libqcheck.so"  # the source tree


def _load():
    tried = []
    for path in _candidates():
        tried.append(str(path))
        if path.is_file():
            lib = ctypes.CDLL(str(path))
            break
    else:
        raise ImportError("libqcheck.so not found (tried " + ", ".join(tried) +
                          "): set QCHECK_LIBRARY, or build it with cmake --build --preset default")
    version = lib.qcheck_api_version()
    if version < API_VERSION:
        raise ImportError(f"libqcheck at {path} has API version {version}, this package needs {API_VERSION} or later")
    return lib, path


_lib, library_path = _load()

_P = ctypes.c_void_p
_S = ctypes.c_size_t
_MSG = [ctypes.c_char_p, _S]
_u8pp = ctypes.POINTER(ctypes.c_void_p)
_signatures = {
    "qcheck_case_decode": [ctypes.c_char_p, _S, ctypes.POINTER(_P)] + _MSG,
    "qcheck_case_from_seed": [ctypes.c_uint64, ctypes.c_char_p, ctypes.POINTER(_P)] + _MSG,
    "qcheck_case_from_seed_op": [ctypes.c_char_p, ctypes.c_uint64, ctypes.c_char_p, ctypes.POINTER(_P)] + _MSG,
    "qcheck_case_mutate": [_P, ctypes.c_uint64, ctypes.c_char_p, ctypes.POINTER(_P)] + _MSG,
    "qcheck_case_limit": [ctypes.c_uint64, ctypes.c_int64, ctypes.c_int64, ctypes.c_char_p, ctypes.POINTER(_P)] + _MSG,
    "qcheck_case_mutate_warm": [_P, ctypes.c_uint64, ctypes.c_char_p, ctypes.POINTER(_P)] + _MSG,
    "qcheck_case_compile_key": [_P, ctypes.c_char_p, _S, ctypes.POINTER(_S)],
    "qcheck_case_cross_over": [_P, _P, ctypes.c_uint64, ctypes.c_char_p, ctypes.POINTER(_P)] + _MSG,
    "qcheck_case_validate": [_P] + _MSG,
    "qcheck_case_encode": [_P, ctypes.c_int, ctypes.c_char_p, _S, ctypes.POINTER(_S)] + _MSG,
    "qcheck_case_describe": [_P, ctypes.c_char_p, _S, ctypes.POINTER(_S)],
    "qcheck_case_digest": [_P, ctypes.c_char_p, _S, ctypes.POINTER(_S)],
    "qcheck_plan_buffers": [_P, ctypes.POINTER(BufferInfo), _S, ctypes.POINTER(_S)] + _MSG,
    "qcheck_plan_tensors": [_P, ctypes.POINTER(TensorInfo), _S, ctypes.POINTER(_S),
                            ctypes.POINTER(ctypes.c_int32)] + _MSG,
    "qcheck_fill_buffers": [_P, ctypes.c_int, _u8pp, _S] + _MSG,
    "qcheck_expected_buffers": [_P, ctypes.c_char_p, _u8pp, _S] + _MSG,
    "qcheck_judge": [_P, ctypes.POINTER(VerdictOptions), _u8pp, _u8pp, _S, ctypes.POINTER(_P)] + _MSG,
    "qcheck_differ": [_P, ctypes.c_char_p, _u8pp, ctypes.c_char_p, _u8pp, _S, ctypes.c_uint32,
                      ctypes.POINTER(_P)] + _MSG,
    "qcheck_plugin_load": [ctypes.c_char_p, ctypes.POINTER(_P)] + _MSG,
    "qcheck_plugin_info": [_P, ctypes.c_char_p, _S, ctypes.POINTER(_S)],
    "qcheck_plugin_check_case": [_P, _P] + _MSG,
    "qcheck_plugin_fit_case": [_P, _P, ctypes.POINTER(_P)] + _MSG,
    "qcheck_plugin_launch": [_P, _P, _u8pp, _S, _P] + _MSG,
    "qcheck_domain_parse": [ctypes.c_char_p, ctypes.POINTER(_P)] + _MSG,
    "qcheck_domain_json": [_P, ctypes.c_char_p, _S, ctypes.POINTER(_S)],
    "qcheck_domain_check_case": [_P, _P] + _MSG,
    "qcheck_domain_fit_case": [_P, _P, ctypes.POINTER(_P)] + _MSG,
    "qcheck_known_parse": [ctypes.c_char_p, ctypes.POINTER(_P)] + _MSG,
    "qcheck_finding_classify": [_P, _P, ctypes.c_char_p, ctypes.POINTER(ctypes.c_int32), ctypes.c_char_p, _S,
                                ctypes.POINTER(_S)],
    "qcheck_verdict_exit_code": [_P],
    "qcheck_verdict_signature": [_P, ctypes.c_char_p, _S, ctypes.POINTER(_S)],
    "qcheck_verdict_profiles": [_P, ctypes.c_char_p, _S, ctypes.POINTER(_S)],
    "qcheck_verdict_text": [_P, ctypes.c_char_p, _S, ctypes.POINTER(_S)],
    "qcheck_verdict_json": [_P, ctypes.c_char_p, _S, ctypes.POINTER(_S)],
    "qcheck_profile_names": [ctypes.c_char_p, _S, ctypes.POINTER(_S)],
    "qcheck_ops_json": [ctypes.c_char_p, _S, ctypes.POINTER(_S)],
    "qcheck_case_bins": [_P, ctypes.c_char_p, ctypes.c_char_p, _S, ctypes.POINTER(_S)] + _MSG,
    "qcheck_verdict_bins": [_P, ctypes.c_char_p, _S, ctypes.POINTER(_S)],
    "qcheck_case_bin_names": [_P, ctypes.c_char_p, _S, ctypes.POINTER(_S)],
    "qcheck_bin_name": [_S, ctypes.c_char_p, _S, ctypes.POINTER(_S)],
    "qcheck_minimize": [_P, EVALUATE, _P, ctypes.POINTER(MinimizeOptions), ctypes.POINTER(_P)] + _MSG,
    "qcheck_minimized_case": [_P, ctypes.POINTER(_P)],
    "qcheck_minimized_report": [_P, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, _S,
                                ctypes.POINTER(_S)],
    "qcheck_minimized_pytest": [_P, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, _S,
                                ctypes.POINTER(_S)],
}
for _name, _args in _signatures.items():
    _fn = getattr(_lib, _name)
    _fn.argtypes = _args
    _fn.restype = ctypes.c_int
_lib.qcheck_case_op.argtypes = [_P]
_lib.qcheck_case_op.restype = ctypes.c_char_p
_lib.qcheck_version.argtypes = []
_lib.qcheck_version.restype = ctypes.c_char_p
VERSION = _lib.qcheck_version().decode()
for _name in ("qcheck_case_free", "qcheck_verdict_free", "qcheck_minimized_free", "qcheck_domain_free",
              "qcheck_known_free"):
    getattr(_lib, _name).argtypes = [_P]
    getattr(_lib, _name).restype = None


def call(name, *args):
    """Calls a function that ends with a message buffer; raises QcheckError
    with the library's message when it does not return OK."""
    message = ctypes.create_string_buffer(1024)
    status = getattr(_lib, name)(*args, message, len(message))
    if status != OK:
        raise QcheckError(status, message.value.decode(errors="replace"))


_TEXT = threading.local()  # .buffer: this thread's buffer for texts


def text(name, *args):
    """A text the library writes into a caller buffer: into this thread's
    64 KiB buffer when it fits (one call; a verdict's texts nearly always
    do), else asked again at the size the library said it needs."""
    buffer = getattr(_TEXT, "buffer", None)
    if buffer is None:
        buffer = _TEXT.buffer = ctypes.create_string_buffer(1 << 16)
    needed = _S(0)
    status = getattr(_lib, name)(*args, buffer, len(buffer), ctypes.byref(needed))
    if status == OK:
        return buffer.value.decode()
    if needed.value <= len(buffer):  # refused for another reason than room
        raise QcheckError(status, f"{name} returned {status}")
    out = ctypes.create_string_buffer(needed.value)
    status = getattr(_lib, name)(*args, out, needed.value, ctypes.byref(needed))
    if status != OK:
        raise QcheckError(status, f"{name} returned {status}")
    return out.value.decode()


def lib():
    return _lib
