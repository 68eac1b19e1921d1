"""Known bugs and finding groups (libqcheck's fuzz/verdict/known.h).

    known = [qcheck.Known("index_weights_out/*", note="weights stride assumed 1"),
             qcheck.Known("*/unwritten", domain=qcheck.Domain(min_tokens=65536), note="grid y limit")]
    qcheck.fuzz(kernel, known=known)          # or known="known.json"

A finding every signature of which a known entry covers (its pattern
matches, and its domain, when given, contains the case) is counted under
that entry, saved once, and neither stops the run nor fills the findings
cap, so the next bug becomes visible. Every finding is grouped by where its
outputs differ (the tensor/part pairs no known entry covers)."""

import ctypes
import json
from pathlib import Path

from . import _capi
from .domain import Domain


class Known:
    """One known bug: a signature pattern ("tensor/part/class", '*' for any
    run of characters, or "kernel raised TYPE"), an optional domain (the
    cases where it is known) and a note for the reports."""

    def __init__(self, signature, domain=None, note=""):
        if domain is not None and not isinstance(domain, Domain):
            raise TypeError("qcheck.Known: domain must be a qcheck.Domain")
        self.signature, self.domain, self.note = signature, domain, note

    def spec(self):
        entry = {"signature": self.signature, "note": self.note}
        if self.domain is not None:
            entry["domain"] = json.loads(self.domain.json)
        return entry

    def __repr__(self):
        return f"qcheck.Known({self.signature!r}" + (f", note={self.note!r}" if self.note else "") + ")"


class KnownList:
    """The entries (Known list) and libqcheck's handle of them."""

    def __init__(self, known):
        if isinstance(known, (str, Path)):
            self.path, text = str(known), Path(known).read_text()
            self._handle = self._parse(text)  # a bad entry is named before Python reads the entries
            self.entries = [Known(e["signature"], Domain.from_json(e["domain"]) if "domain" in e else None,
                                  e.get("note", "")) for e in json.loads(text)["known"]]
        else:
            self.path = None
            self.entries = [k if isinstance(k, Known) else Known(**k) for k in known]
            self._handle = self._parse(json.dumps({"known": [k.spec() for k in self.entries]}))

    @staticmethod
    def _parse(text):
        handle = ctypes.c_void_p()
        _capi.call("qcheck_known_parse", text.encode(), ctypes.byref(handle))
        return handle

    def __del__(self):
        if getattr(self, "_handle", None) and self._handle.value:
            _capi.lib().qcheck_known_free(self._handle)
            self._handle = ctypes.c_void_p()


def signatures_of(verdict):
    """Every signature of a verdict: each tensor/part/class it counts, or
    its one signature (a raised exception, an outside case)."""
    listed = [f"{c['tensor']}/{c['part']}/{c['class']}" for c in verdict.json.get("counts", [])]
    return listed or [verdict.signature or verdict.json.get("reason", "") or verdict.json.get("verdict", "")]


def classify(known, case, signatures):
    """(known entry index or None, group) of a finding (known: a KnownList or None)."""
    entry = ctypes.c_int32(-1)
    lines = "\n".join(signatures).encode()
    handle = known._handle if known is not None else None
    needed = ctypes.c_size_t(0)
    _capi.lib().qcheck_finding_classify(handle, case._handle, lines, ctypes.byref(entry), None, 0,
                                        ctypes.byref(needed))
    out = ctypes.create_string_buffer(needed.value)
    status = _capi.lib().qcheck_finding_classify(handle, case._handle, lines, ctypes.byref(entry), out,
                                                 needed.value, ctypes.byref(needed))
    if status != _capi.OK:
        raise _capi.QcheckError(status, "qcheck_finding_classify refused the finding")
    return (entry.value if entry.value >= 0 else None), out.value.decode()
