"""How a worker process finds the kernel of the run: its TARGET on the
command line (target_spec: MODULE:FUNCTION, a script's PATH:FUNCTION, a
plugin) and the folder its module imports from (import_root), for the
workers of this host (qcheck.parallel.workers) and of a Ray cluster
(qcheck.parallel.ray_workers)."""

import sys
from pathlib import Path

from ..model.plugin import Plugin


def target_spec(kernel):
    """(TARGET, domain file or None): how a worker process names `kernel`."""
    if isinstance(kernel, Plugin):
        return f"plugin:{kernel.path}", getattr(kernel, "domain_file", None)
    inner = getattr(kernel, "_kernel", None)  # python -m qcheck's kernel with a --domain file
    if inner is not None:
        return target_spec(inner)[0], getattr(kernel, "domain_file", None)
    module = getattr(kernel, "__module__", None)
    name = getattr(kernel, "__qualname__", None) or getattr(kernel, "__name__", None)
    if not module or not name or "<" in name:
        raise ValueError(f"workers > 1 needs a kernel a new process can import by name: {kernel!r} is not one "
                         "(a lambda or a nested function); define it at a module's top level")
    if module == "__main__":
        main = getattr(sys.modules["__main__"], "__file__", None)
        if not main:
            raise ValueError("workers > 1: the kernel is defined in an interactive session; put it in a file")
        return f"{Path(main).resolve()}:{name}", getattr(kernel, "domain_file", None)
    return f"{module}:{name}", getattr(kernel, "domain_file", None)


def import_root(kernel):
    """The folder a worker must have on its path to import the kernel's
    module (pytest, for one, puts a test folder on sys.path by hand)."""
    kernel = getattr(kernel, "_kernel", kernel)
    module = sys.modules.get(getattr(kernel, "__module__", None) or "")
    path = getattr(module, "__file__", None)
    if not path or module.__name__ == "__main__":
        return None
    root = Path(path).resolve().parent
    for _ in range(module.__name__.count(".")):
        root = root.parent
    return str(root)
