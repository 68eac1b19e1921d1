"""The ops of the family this libqcheck knows (qcheck_ops_json): each with
its case fields, the tensors of a launch, the parts a mismatch names and the
profiles its oracle judges under. A case without an op is fused_q's."""

import json

from . import _capi

DEFAULT_OP = "fused_q"


class Op:
    """One op's vocabulary, read from libqcheck (a plain record: name,
    schema, description, fields, tensors, parts, profiles)."""

    def __init__(self, record):
        self.name = record["op"]
        self.schema = record["schema"]
        self.description = record["description"]
        self.fields = record["fields"]      # [{"name", "kind", "required", "choices"?, "default"}]
        self.tensors = record["tensors"]    # [{"name", "role", "dtypes", "shape", "when"?}]
        self.parts = record["parts"]
        self.profiles = record["profiles"]
        self._record = record

    def field(self, name):
        """The field's record; KeyError naming the op's fields when it has none of that name."""
        for f in self.fields:
            if f["name"] == name:
                return f
        raise KeyError(f"op {self.name} has no field {name!r} (its fields: {', '.join(f['name'] for f in self.fields)})")

    def to_json(self):
        return self._record

    def describe(self):
        """The text `python -m qcheck ops` prints for this op."""
        lines = [f"{self.name} (schema {self.schema}): {self.description}", "  tensors:"]
        width = max(len(t["name"]) for t in self.tensors)
        for t in self.tensors:
            when = f"  when {t['when']}" if t.get("when") else ""
            lines.append(f"    {t['name']:<{width}}  {t['role']:<6}  {'|'.join(t['dtypes']):<8}  {t['shape']}{when}")
        lines.append("  fields:")
        width = max(len(f["name"]) for f in self.fields)
        for f in self.fields:
            kind = "|".join(f["choices"]) if f.get("choices") else f["kind"]
            lines.append(f"    {f['name']:<{width}}  {kind}  (default {json.dumps(f['default'])}"
                         f"{', required in JSON' if f['required'] else ''})")
        lines.append("  parts: " + ", ".join(self.parts))
        lines.append("  profiles: " + ", ".join(self.profiles))
        return "\n".join(lines)

    def __repr__(self):
        return f"qcheck.Op({self.name})"


_ops = None


def ops():
    """Every op this libqcheck knows, by name, in the registry's order."""
    global _ops
    if _ops is None:
        _ops = {record["op"]: Op(record) for record in json.loads(_capi.text("qcheck_ops_json"))}
    return dict(_ops)


def op(name):
    """The op of that name; ValueError naming the ops there are when none is."""
    known = ops()
    if name not in known:
        raise ValueError(f"op {name!r} is not one this libqcheck knows ({', '.join(known)}: python -m qcheck ops)")
    return known[name]
