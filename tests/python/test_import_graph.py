"""The tinyflow package's import graph has no cycle, and its core imports no op module.

The graph is built from the source with `ast`, so it sees every import a module can make: module-level and
function-local, absolute (`import tinyflow.x`, `from tinyflow.x import y`) and relative (`from . import x`,
`from .x import y`, `from .. import x`). `from PKG import NAME` counts as an edge to the module PKG.NAME when
that is a module, else to PKG. Nothing is imported, so the test needs no library.
"""
import ast
import os

import pytest

PKG_DIR = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", "..", "tinyflow_demo", "tinyflow"))
PKG = "tinyflow"

# The core: Graph, Operation, Tensor and the op-definition machinery, and what they need. Nothing in it may
# import an op module (or anything else outside the core): math_ops installs Tensor's operators, array_ops its
# indexing; session, graph_def and ir fill in the core's hooks (_hooks.py).
CORE = {"framework", "dtypes", "tensor_shape", "errors", "_lib", "_symbol", "_hooks", "static_shapes", "op_def"}


def _modules(pkg_dir=PKG_DIR, pkg=PKG):
    """{dotted module name: file path} of every module of the package."""
    mods = {}
    for root, dirs, files in os.walk(pkg_dir):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        rel = os.path.relpath(root, pkg_dir)
        prefix = pkg if rel == "." else pkg + "." + rel.replace(os.sep, ".")
        for f in sorted(files):
            if f.endswith(".py"):
                mods[prefix if f == "__init__.py" else prefix + "." + f[:-3]] = os.path.join(root, f)
    return mods


def _resolve(mod, is_pkg, level, name):
    """The absolute name of `from <level dots><name> import ...` written in module `mod`."""
    if level == 0:
        return name
    base = mod.split(".") if is_pkg else mod.split(".")[:-1]
    if level > 1:
        base = base[:-(level - 1)]
    return ".".join(base + ([name] if name else []))


def import_graph(pkg_dir=PKG_DIR, pkg=PKG):
    """{module: {(imported module, line)}} over the package's own modules (stdlib and numpy are left out)."""
    mods = _modules(pkg_dir, pkg)

    def owner(name):  # the package module a dotted name lives in (tinyflow.nn.rnn_cell -> tinyflow.nn)
        while name and name not in mods:
            name = name.rpartition(".")[0]
        return name or None

    graph = {}
    for mod, path in mods.items():
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read(), path)
        is_pkg = path.endswith("__init__.py")
        edges = set()
        for node in ast.walk(tree):
            targets = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = _resolve(mod, is_pkg, node.level, node.module)
                for a in node.names:
                    full = base + "." + a.name
                    targets.append(full if full in mods else base)
            for t in targets:
                o = owner(t)
                if o is not None and o != mod and (o == pkg or o.startswith(pkg + ".")):
                    edges.add((o, node.lineno))
        graph[mod] = edges
    return graph


def find_cycles(graph):
    """The strongly connected components with more than one module (Tarjan), each as a sorted list."""
    index, low, stack, on, out = {}, {}, [], set(), []
    succ = {m: sorted({t for t, _ in e}) for m, e in graph.items()}

    def visit(v):
        work = [(v, iter(succ.get(v, ())))]
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        while work:
            node, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(succ.get(w, ()))))
                    break
                if w in on:
                    low[node] = min(low[node], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        comp.append(w)
                        if w == node:
                            break
                    if len(comp) > 1:
                        out.append(sorted(comp))

    for m in sorted(succ):
        if m not in index:
            visit(m)
    return sorted(out)


def cycle_path(graph, comp):
    """One cycle through the component's first module, as 'a -> b (line) -> ... -> a'."""
    members = set(comp)
    start = comp[0]
    succ = {m: sorted((t, ln) for t, ln in graph[m] if t in members) for m in comp}
    # BFS from start back to start.
    prev = {}
    frontier = [start]
    seen = set()
    while frontier:
        nxt = []
        for v in frontier:
            for w, ln in succ[v]:
                if w == start:
                    path = [(w, ln)]
                    while v != start:
                        pv, pln = prev[v]
                        path.append((v, pln))
                        v = pv
                    path.append((start, None))
                    path.reverse()
                    return " -> ".join(m.replace(PKG + ".", "") + ("" if ln is None else " (line %d)" % ln)
                                       for m, ln in path)
                if w not in seen:
                    seen.add(w)
                    prev[w] = (v, ln)
                    nxt.append(w)
        frontier = nxt
    return " <-> ".join(comp)


def _short(m):
    return m[len(PKG) + 1:] if m.startswith(PKG + ".") else m


def test_graph_sees_every_kind_of_import(tmp_path):
    """The graph builder itself: module-level, function-local, relative, absolute and `from . import x`."""
    pkg = tmp_path / "pk"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("from . import a\n")
    (pkg / "a.py").write_text("def f():\n    from .b import g\n")
    (pkg / "b.py").write_text("import pk.sub.c\n")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "c.py").write_text("from .. import a\nfrom ..b import x\nimport os\n")
    g = import_graph(str(pkg), "pk")
    assert {t for t, _ in g["pk"]} == {"pk.a"}
    assert {t for t, _ in g["pk.a"]} == {"pk.b"}
    assert {t for t, _ in g["pk.b"]} == {"pk.sub.c"}
    assert {t for t, _ in g["pk.sub.c"]} == {"pk.a", "pk.b"}
    comps = find_cycles(g)
    assert comps == [["pk.a", "pk.b", "pk.sub.c"]]
    assert cycle_path(g, comps[0]).startswith("pk.a -> pk.b (line 2) -> pk.sub.c (line 1) -> pk.a")


def test_no_import_cycle():
    graph = import_graph()
    assert len(graph) > 40, "found only %d modules under %s" % (len(graph), PKG_DIR)
    comps = find_cycles(graph)
    msg = "\n".join("cycle among %s:\n  %s" % (", ".join(_short(m) for m in c), cycle_path(graph, c)) for c in comps)
    assert not comps, "tinyflow has import cycles:\n" + msg


def _core_modules(graph):
    return {m for m in graph if _short(m).split(".")[-1] in CORE and not _short(m).startswith(("ops.", "train."))}


def test_core_imports_no_op_module():
    graph = import_graph()
    core = _core_modules(graph)
    assert PKG + ".framework" in core
    bad = sorted("%s imports %s (line %d)" % (_short(m), _short(t), ln)
                 for m in core for t, ln in graph[m] if t not in core)
    assert not bad, "the core (%s) may import only itself:\n  " % ", ".join(sorted(_short(m) for m in core)) + \
        "\n  ".join(bad)


if __name__ == "__main__":
    pytest.main([__file__, "-q"])


# Which subpackages each subpackage may not import (the layers: core < ops < eager < data, layers < train < horovod;
# top-level modules such as session, nest, compat and ir are shared).
FORBIDDEN = {
    "ops": {"train", "data", "eager", "layers", "horovod"},
    "eager": {"train", "data", "layers", "horovod"},
    "data": {"train", "eager", "layers", "horovod"},
    "layers": {"train", "data", "horovod"},
    "train": {"data", "layers", "horovod"},
}


def _subpackage(m):
    parts = _short(m).split(".")
    return parts[0] if len(parts) > 1 or parts[0] in FORBIDDEN else None


def test_subpackages_import_only_downwards():
    graph = import_graph()
    for sub in FORBIDDEN:
        assert any(_subpackage(m) == sub for m in graph), "no subpackage tinyflow.%s" % sub
    bad = sorted("%s imports %s (line %d)" % (_short(m), _short(t), ln) for m in graph for t, ln in graph[m]
                 if _subpackage(t) in FORBIDDEN.get(_subpackage(m), ()))
    assert not bad, "imports against the layers (%s):\n  " % FORBIDDEN + "\n  ".join(bad)
