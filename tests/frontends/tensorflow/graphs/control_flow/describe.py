#!/usr/bin/python3
"""Structural report of TensorFlow control flow in GraphDef .pbtxt files.

A tool for the importer author: for each graph it prints the while frames
(Enter frame_name, is_constant, parallel_iterations, parent frame, loop vars,
LoopCond, Exits), the Switch/Merge groups of each tf.cond (by predicate),
TensorArray / Stack ops with their attributes, TF2 functional ops (If / While /
Case ...) with the library functions they call, and control-dependency edges.
Finally an op-type table (op -> count over all graphs) with the ops that are
hard to import flagged.

Usage: /usr/bin/python3 describe.py [file.pbtxt ...]   (default: *.pbtxt here)
"""
import collections
import glob
import os
import sys

import pbtxt

FUNCTIONAL = {"If", "StatelessIf", "While", "StatelessWhile", "Case", "StatelessCase",
              "PartitionedCall", "StatefulPartitionedCall"}
HARD = {
    "TensorArrayGradV3": "gradient TensorArray (only in training graphs)",
    "StackV2": "stack of per-iteration values for backprop", "StackPushV2": "",
    "StackPopV2": "", "Stack": "", "StackPush": "", "StackPop": "",
    "_Retval": "function-style output marker: treat as a graph output",
    "_Arg": "function-style input marker", "_SwitchN": "",
    "ControlTrigger": "", "RefEnter": "", "RefSwitch": "", "RefMerge": "",
    "Case": "n-way functional branch", "StatelessCase": "n-way functional branch",
}


def _src(inp):
    """'name:1' / '^name' -> (name, output index, is_control)."""
    s = inp.decode()
    if s.startswith("^"):
        return s[1:], -1, True
    name, _, idx = s.partition(":")
    return name, int(idx) if idx else 0, False


def _frames_of(nodes):
    """Frame of every node (None = root), propagated from Enter/Exit to a fixed point."""
    parent, frame = {}, {n: None for n in nodes}
    for _ in range(len(nodes) + 1):
        changed = False
        for name, node in nodes.items():
            op = node.get("op").decode()
            ins = [_src(i) for i in node.all("input")]
            ins = [i for i in ins if i[0] in nodes]
            src_frames = [frame[i[0]] for i in ins if not i[2]] or [frame[i[0]] for i in ins]
            if op in ("Enter", "RefEnter"):
                new = pbtxt.attr(node, "frame_name").get("s").decode()
                if src_frames and new not in parent:
                    parent[new] = src_frames[0]
            elif op == "Exit":
                new = parent.get(src_frames[0]) if src_frames else None
            elif op == "NextIteration":
                new = src_frames[0] if src_frames else None
            else:
                known = [f for f in src_frames if f is not None]
                new = known[0] if known else None
            if new != frame[name]:
                frame[name], changed = new, True
        if not changed:
            break
    return frame, parent


def _describe_frames(nodes, frame, parent, out):
    by_frame = collections.defaultdict(list)
    for name, node in nodes.items():
        if node.get("op") in (b"Enter", b"RefEnter"):
            by_frame[pbtxt.attr(node, "frame_name").get("s").decode()].append((name, node))
    for fname, enters in by_frame.items():
        members = [n for n, f in frame.items() if f == fname]
        ops = collections.Counter(nodes[n].get("op").decode() for n in members)
        loopconds = [n for n in members if nodes[n].get("op") == b"LoopCond"]
        loop_vars = [e for e, n in enters if not pbtxt.attr(n, "is_constant").get("b")]
        consts = [e for e, n in enters if pbtxt.attr(n, "is_constant").get("b")]
        pi = {pbtxt.attr(n, "parallel_iterations").get("i") for _, n in enters}
        out.append(f"  frame '{fname}' parent={parent.get(fname)!r} parallel_iterations={sorted(pi)}")
        out.append(f"    loop vars ({len(loop_vars)}): " + ", ".join(
            f"{e}<-{nodes[e].all('input')[0].decode()}" for e in loop_vars))
        out.append(f"    constant Enters ({len(consts)}): " + ", ".join(
            f"{e}<-{nodes[e].all('input')[0].decode()}" for e in consts))
        out.append(f"    LoopCond: {loopconds}; {len(members)} nodes; "
                   f"Merge={ops['Merge']} Switch={ops['Switch']} NextIteration="
                   f"{ops['NextIteration']}; Exits: "
                   + ", ".join(n for n, nd in nodes.items() if nd.get("op") == b"Exit"
                               and frame.get(_src(nd.all('input')[0])[0]) == fname))


def _describe_conds(nodes, out):
    """Switch/Merge groups whose predicate is not a LoopCond (i.e. tf.cond)."""
    groups = collections.defaultdict(list)
    for name, node in nodes.items():
        if node.get("op") == b"Switch":
            pred = _src(node.all("input")[1])[0]
            if nodes.get(pred) is not None and nodes[pred].get("op") != b"LoopCond":
                groups[pred].append(name)
    merges = [n for n, nd in nodes.items() if nd.get("op") == b"Merge"
              and not any(nodes.get(_src(i)[0]) is not None
                          and nodes[_src(i)[0]].get("op") == b"NextIteration"
                          for i in nd.all("input"))]
    for pred, switches in groups.items():
        out.append(f"  cond pred={pred}: Switch {switches}")
    if merges:
        out.append(f"  cond Merges: " + ", ".join(
            f"{m}({', '.join(i.decode() for i in nodes[m].all('input'))})" for m in merges))


def _describe_arrays(nodes, out):
    for name, node in nodes.items():
        op = node.get("op").decode()
        if op.startswith("TensorArray") or op.startswith("Stack") or op.startswith("TensorList"):
            attrs = []
            for key in ("dtype", "element_dtype", "dynamic_size", "clear_after_read",
                        "identical_element_shapes", "element_shape", "elem_type"):
                v = pbtxt.attr(node, key)
                if v is not None:
                    val = v.get("shape")
                    val = pbtxt.shape_of(val) if val is not None else (
                        v.get("type") if v.get("type") is not None else v.get("b"))
                    attrs.append(f"{key}={val}")
            ins = ", ".join(i.decode() for i in node.all("input"))
            out.append(f"  {op} {name}({ins}) " + " ".join(attrs))


def _describe_functional(graph, nodes, out):
    for name, node in nodes.items():
        op = node.get("op").decode()
        if op in FUNCTIONAL:
            fns = []
            for a in node.all("attr"):
                f = a.get("value").get("func")
                if f is not None:
                    fns.append(f"{a.get('key').decode()}={f.get('name').decode()}")
                lst = a.get("value").get("list")
                if lst is not None and lst.all("func"):
                    fns.append(f"{a.get('key').decode()}=[" + ",".join(
                        x.get("name").decode() for x in lst.all("func")) + "]")
            ins = ", ".join(i.decode() for i in node.all("input"))
            out.append(f"  {op} {name}({ins}) " + " ".join(fns))
    lib = graph.get("library")
    for fn in (lib.all("function") if lib else []):
        sig = fn.get("signature")
        args = [f"{a.get('name').decode()}:{a.get('type')}" for a in sig.all("input_arg")]
        rets = [f"{a.get('name').decode()}:{a.get('type')}" for a in sig.all("output_arg")]
        body = collections.Counter(n.get("op").decode() for n in fn.all("node_def"))
        out.append(f"  function {sig.get('name').decode()}({', '.join(args)}) -> "
                   f"({', '.join(rets)}) body ops {dict(body)}")


def describe(path, op_counts):
    """Report lines for one graph; adds its op types (top level + library) to op_counts."""
    graph = pbtxt.load(path)
    nodes = pbtxt.nodes(graph)
    lib = graph.get("library")
    all_nodes = list(nodes.values()) + [n for fn in (lib.all("function") if lib else [])
                                         for n in fn.all("node_def")]
    for n in all_nodes:
        op_counts[n.get("op").decode()] += 1
    frame, parent = _frames_of(nodes)
    ph = [f"{n}:{pbtxt.attr(nd, 'dtype').get('type')}"
          f"{pbtxt.shape_of(pbtxt.attr(nd, 'shape').get('shape')) if pbtxt.attr(nd, 'shape') else '?'}"
          for n, nd in nodes.items() if nd.get("op") == b"Placeholder"]
    consumed = {_src(i)[0] for nd in nodes.values() for i in nd.all("input")}
    sinks = [n for n in nodes if n not in consumed]
    out = [f"== {os.path.basename(path)}: {len(nodes)} nodes, "
           f"{sum(len(fn.all('node_def')) for fn in (lib.all('function') if lib else []))} "
           f"library nodes", f"  placeholders: {ph or 'none'}", f"  sinks: {sinks}"]
    _describe_frames(nodes, frame, parent, out)
    _describe_conds(nodes, out)
    _describe_arrays(nodes, out)
    _describe_functional(graph, nodes, out)
    ctrl = [(n, _src(i)[0]) for n, nd in nodes.items() for i in nd.all("input") if _src(i)[2]]
    into_frames = [c for c in ctrl if frame[c[0]] is not None]
    out.append(f"  control edges: {len(ctrl)} ({len(into_frames)} inside frames, e.g. "
               f"{into_frames[:2]})")
    return out


def main(paths):
    """Print the per-graph reports and the op-type table."""
    here = os.path.dirname(os.path.abspath(__file__))
    paths = paths or sorted(glob.glob(os.path.join(here, "*.pbtxt")))
    op_counts = collections.Counter()
    for p in paths:
        print("\n".join(describe(p, op_counts)))
    print("\n| op | count | note |\n| --- | --- | --- |")
    for op, c in sorted(op_counts.items()):
        print(f"| {op} | {c} | {HARD.get(op, '')} |")


if __name__ == "__main__":
    main(sys.argv[1:])
