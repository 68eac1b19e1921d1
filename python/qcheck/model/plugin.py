"""qcheck.Plugin: a kernel built outside the project as a plugin library
(include/qcheck/qcheck_plugin.h), called on a case's tensors like any Python kernel.
libqcheck loads the library, lays the launch out over the allocations and
calls it; Python only hands over the addresses and the stream."""

import ctypes
import json

from . import _capi
from .domain import Domain
from .tensors import pointer_array


class Plugin:
    """plugin = qcheck.Plugin("./libmy_kernel.so"); plugin(tensors) launches it.
    Attributes: path, name, profile (the one it implements: qcheck.fuzz and
    qcheck.run judge under it unless told otherwise), memory ("cuda" or
    "host": torch tensors on a device, or numpy arrays), domain (the cases it
    declares it supports, a qcheck.Domain; outside(case) also asks its
    supports callback)."""

    def __init__(self, path):
        handle = ctypes.c_void_p()
        _capi.call("qcheck_plugin_load", str(path).encode(), ctypes.byref(handle))
        self._handle = handle
        info = json.loads(_capi.text("qcheck_plugin_info", handle))
        self.path, self.name, self.profile = info["path"], info["name"], info["profile"]
        self.memory, self.domain = info["memory"], Domain.from_json(info["domain"])
        self.__name__ = f"plugin {self.name}"

    def __repr__(self):
        return f"qcheck.Plugin({self.path!r}: {self.name}, profile {self.profile}, {self.memory} memory)"

    def outside(self, case):
        """None when the case is inside the plugin's domain (its declaration,
        then its supports callback), else why not."""
        try:
            _capi.call("qcheck_plugin_check_case", self._handle, case._handle)
            return None
        except _capi.QcheckError as e:
            return str(e)

    def __call__(self, tensors):
        on_device = tensors.device is not None
        if on_device != (self.memory == "cuda"):
            raise ValueError(f"plugin {self.name} takes {self.memory} memory: "
                             + ("pass device=None (numpy)" if self.memory == "host" else "pass a CUDA device"))
        stream = None
        if on_device:
            import torch
            stream = torch.cuda.current_stream(tensors.device).cuda_stream
            addresses = (ctypes.c_void_p * len(tensors.raw))(*[r.data_ptr() for r in tensors.raw])
        else:
            addresses = pointer_array(tensors.raw)
        _capi.call("qcheck_plugin_launch", self._handle, tensors.case._handle, addresses, len(tensors.raw),
                   ctypes.c_void_p(stream) if stream else None)
