#!/usr/bin/env python3
"""Every import inside the Python package follows its layers, and no import
closes a circle.

The layers are the list in the package's own text (its __init__.py's
docstring, the lines after "The package's layers, lowest first": a
sub-package's name first on each), the one place they are written. A
module belongs to the layer of the sub-package it lies in; the package's
own modules (qcheck/*.py) stand above every layer. A module may import from
its own layer and the layers below; an import from a higher layer runs back
up and is refused, as is a module in a sub-package the list does not name.
Imports are read with ast, without running anything: module-level and
inside functions, `import qcheck.x`, `from qcheck.x import y`, `from .
import x`, `from ..a import b`, and a script's import of a module beside it
(`import ray_nodes`, as ray_campaign.py runs without the package). Any
circle of imports between the package's modules is refused too, each with
the imports that close it (a circle across layers holds an import that runs
back up, refused as such: circles are looked for among the others, inside
a layer).

usage: check_python_imports.py PACKAGE_DIR
  Exit 0 when every import follows the layers, 1 with one line per import
  that runs back up and per circle (file:line), 2 when the layers cannot be
  read.
"""
import ast
import os
import sys

LAYERS_HEADING = "The package's layers, lowest first"
TOP = "(top)"  # the package's own modules: above every layer


def unreadable(message):
    print(message, file=sys.stderr)
    sys.exit(2)


def read_layers(package):
    """The sub-packages in layer order, lowest first, from the package's docstring."""
    init = os.path.join(package, "__init__.py")
    with open(init) as f:
        text = ast.get_docstring(ast.parse(f.read(), init)) or ""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith(LAYERS_HEADING)), None)
    if start is None:
        unreadable(f"{init}: no list of layers (a paragraph starting \"{LAYERS_HEADING}\")")
    layers, i = [], start
    while i < len(lines) and lines[i].strip():  # the heading's paragraph
        i += 1
    while i < len(lines) and not lines[i].strip():
        i += 1
    while i < len(lines) and lines[i].startswith(" ") and lines[i].strip():  # the indented list
        layers.append(lines[i].split()[0])
        i += 1
    if not layers:
        unreadable(f"{init}: the paragraph \"{LAYERS_HEADING}\" is followed by no indented list of sub-packages")
    return layers


def modules_of(package):
    """{dotted name: file} of every module of the package (a folder's __init__.py is the folder's name)."""
    name = os.path.basename(os.path.normpath(package))
    modules = {}
    for folder, dirs, files in os.walk(package):
        dirs[:] = sorted(d for d in dirs if os.path.isfile(os.path.join(folder, d, "__init__.py")))
        parts = [name] + os.path.relpath(folder, package).split(os.sep)
        parts = [p for p in parts if p != "."]
        for f in sorted(files):
            if f.endswith(".py"):
                dotted = parts if f == "__init__.py" else parts + [f[:-3]]
                modules[".".join(dotted)] = os.path.join(folder, f)
    return modules


def imports_of(module, path, modules):
    """[(line, imported module)] for every import in the file that lands in the package."""
    is_init = path.endswith("__init__.py")
    here = module.split(".") if is_init else module.split(".")[:-1]  # the package a relative import starts at
    beside = {m.rsplit(".", 1)[-1]: m for m in modules if m.rsplit(".", 1)[0] == ".".join(here)}
    top = module.split(".")[0]
    with open(path) as f:
        tree = ast.parse(f.read(), path)
    found = []

    def land(line, dotted, names=()):
        """An import of `dotted` (and of `names` from it): each a module where one exists, else the package."""
        if dotted not in modules:
            return
        targets = [f"{dotted}.{n}" for n in names if f"{dotted}.{n}" in modules]
        if len(targets) < len(names) or not names:
            targets.append(dotted)  # (a name that is no module is taken from the package's __init__)
        found.extend((line, t) for t in targets)

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                first = alias.name.split(".")[0]
                if first == top:
                    land(node.lineno, alias.name)
                elif first in beside and first != module.rsplit(".", 1)[-1]:  # a script's module beside it
                    land(node.lineno, beside[first] + alias.name[len(first):])
        elif isinstance(node, ast.ImportFrom):
            names = [a.name for a in node.names if a.name != "*"]
            if node.level:
                base = here[:len(here) - (node.level - 1)] if node.level - 1 <= len(here) else []
                dotted = ".".join(base + (node.module.split(".") if node.module else []))
                land(node.lineno, dotted, names)
            elif node.module and node.module.split(".")[0] == top:
                land(node.lineno, node.module, names)
            elif node.module and node.module.split(".")[0] in beside:
                first = node.module.split(".")[0]
                land(node.lineno, beside[first] + node.module[len(first):], names)
    return found


def layer_of(module, folders):
    """The sub-package a module lies in (its layer), or TOP for the package's own modules."""
    parts = module.split(".")
    return parts[1] if len(parts) > 2 or module in folders and len(parts) == 2 else TOP


def circles(graph):
    """(modules, cycle) of each strongly connected set of two or more modules (or one that imports itself):
    its modules, and a shortest cycle of imports through its first."""
    index, low, on_stack, stack, found, counter = {}, {}, set(), [], [], [0]

    def visit(v):  # Tarjan's (recursive: a package's modules are a few dozen)
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1 or v in graph.get(v, ()):
                found.append((group, _cycle_in(sorted(group), graph)))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def _cycle_in(group, graph):
    """A shortest path from the group's first module back to itself, inside the group."""
    start, members = group[0], set(group)
    previous, todo = {}, [start]
    while todo:
        v = todo.pop(0)
        for w in sorted(graph.get(v, ())):
            if w not in members:
                continue
            if w == start:
                path = [v]
                while path[-1] != start:
                    path.append(previous[path[-1]])
                return path[::-1] + [start]
            if w not in previous:
                previous[w] = v
                todo.append(w)
    return group + [group[0]]


def main(argv):
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    package = os.path.normpath(argv[1])
    layers = read_layers(package)
    modules = modules_of(package)
    name = os.path.basename(package)
    folders = {m for m, path in modules.items() if path.endswith("__init__.py")}
    rank = {layer: i for i, layer in enumerate(layers)}
    rank[TOP] = len(layers)
    root = os.path.dirname(package)
    problems, graph, where = [], {}, {}
    for module, path in sorted(modules.items()):
        shown = os.path.relpath(path, root)
        layer = layer_of(module, folders)
        if layer not in rank:
            problems.append(f"{shown}: in sub-package {name}.{layer}, which the layers of {name}/__init__.py "
                            "do not name")
            continue
        for line, target in imports_of(module, path, modules):
            if target == module:
                continue  # (a package's __init__ naming itself)
            other = layer_of(target, folders)
            if other in rank and rank[other] > rank[layer]:
                problems.append(f"{shown}:{line}: {module} (layer {layer}) imports {target} of layer {other}, "
                                "above it: an import that runs back up")
                continue  # (a circle through it is this import's: circles are looked for without them)
            graph.setdefault(module, set()).add(target)
            where.setdefault((module, target), f"{shown}:{line}")
    for group, cycle in circles(graph):
        steps = "; ".join(f"{where[(a, b)]}: {a} imports {b}" for a, b in zip(cycle, cycle[1:]))
        more = set(group) - set(cycle)
        problems.append(f"import circle {' -> '.join(cycle)}: {steps}" +
                        (f" (and through {', '.join(sorted(more))})" if more else ""))
    for problem in problems:
        print(problem)
    edges = sum(len(t) for t in graph.values())
    print(f"check_python_imports: {len(modules)} modules, {edges} imports between them that do not run up, layers "
          f"{' < '.join(layers)} < {TOP}; {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
