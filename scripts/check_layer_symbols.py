#!/usr/bin/python3
"""Checks the layering at link level: what a layer's object files call, not only what they include.

A header of include/ir/ is visible to every layer, but its implementation may sit in a layer the
includer must not use. So: every undefined symbol of a layer's object files that another layer
defines strongly (nm: T, D, B, R, G, S; weak and inline definitions, V/W/u, confer no
ownership) must come from a layer it may use (itself, its USES in CMakeLists.txt's matrix, and
core, whose include/ir/ headers are every layer's contract: scripts/layer_map.py).

Input, written by cmake/ir_layers.cmake: <build>/layers/matrix.txt (the configured matrix) and
<build>/layers/<layer>.objects (the layer's object files, generated sources included).
Allowlist (ALLOW, default scripts/layer_symbols.allow): lines "<using layer> <defining layer>
<pattern>  # why; the fix that removes it", the pattern an fnmatch glob over the demangled
symbol. An allowed violation is printed as such; an entry that matches nothing in this tree (its
two layers configured) is stale and fails, so the list only shrinks.

Usage: scripts/check_layer_symbols.py BUILD_DIR [ALLOW]   (ctest: Build.LayerSymbols)
Prints each violation, "<source> (<layer>): <symbol> is defined in <source> (<layer>)...", and
exits 1; prints SKIP and exits 0 when nm is missing.
"""
import fnmatch
import os
import re
import shutil
import subprocess
import sys

STRONG = set("TDBRGS")
CORE = "core"
NM_LINE = re.compile(r"^(.*?\.o):\s*[0-9a-fA-F]*\s+(\S)\s+(\S+)$")


def source_of(obj):
    """The source an object file was compiled from: .../ir_ops.dir/src/ops/x.cc.o -> src/ops/x.cc."""
    m = re.search(r"/ir_[^/]+\.dir/(.*)\.o$", obj)
    return m.group(1) if m else obj


def read_matrix(build):
    path = os.path.join(build, "layers", "matrix.txt")
    matrix = {}
    with open(path) as f:
        for line in f:
            words = line.split()
            if words and not words[0].startswith("#"):
                matrix[words[0]] = words[2:]
    return matrix


def read_allowlist(path):
    entries = []
    if not path or not os.path.exists(path):
        return entries
    with open(path) as f:
        for number, raw in enumerate(f, 1):
            line = raw.split("#", 1)[0].strip()
            if not line:
                continue
            words = line.split(None, 2)
            if len(words) != 3:
                raise ValueError("%s:%d: want '<using layer> <defining layer> <symbol pattern>  # why; fix'" %
                                 (path, number))
            entries.append({"line": number, "user": words[0], "owner": words[1], "pattern": words[2].strip(),
                            "hits": 0})
    return entries


def demangle(symbols):
    symbols = sorted(symbols)
    if not symbols or not shutil.which("c++filt"):
        return {s: s for s in symbols}
    out = subprocess.run(["c++filt"], input="\n".join(symbols) + "\n", capture_output=True, text=True,
                         check=True).stdout.split("\n")
    return dict(zip(symbols, out))


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    build = argv[1]
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    allow_path = argv[2] if len(argv) > 2 else os.path.join(root, "scripts", "layer_symbols.allow")
    nm = shutil.which("nm")
    if not nm:
        print("SKIP: nm not found (binutils): the link-level layering is not checked")
        return 0
    try:
        matrix = read_matrix(build)
        entries = read_allowlist(allow_path)
    except (OSError, ValueError) as e:
        print("FAIL: %s (configure the build tree with CMake first)" % e, file=sys.stderr)
        return 1

    layer_of = {}  # object file -> layer
    missing = []
    for layer in matrix:
        listing = os.path.join(build, "layers", layer + ".objects")
        if not os.path.exists(listing):
            continue  # a layer without sources yet
        with open(listing) as f:
            for obj in f.read().split():
                layer_of[obj] = layer
                if not os.path.exists(obj):
                    missing.append(obj)
    if missing:
        print("FAIL: %d object file(s) not built, e.g. %s: build the library first (cmake --build %s --target ir)" %
              (len(missing), missing[0], build), file=sys.stderr)
        return 1

    defined = {}  # symbol -> [(layer, object)] of its strong definitions
    undefined = []  # (layer, object, symbol)
    objects = sorted(layer_of)
    for start in range(0, len(objects), 200):
        chunk = objects[start:start + 200]
        out = subprocess.run([nm, "-A", *chunk], capture_output=True, text=True, check=True).stdout
        for line in out.split("\n"):
            m = NM_LINE.match(line)
            if not m:
                continue
            obj, kind, symbol = m.groups()
            if kind in STRONG:
                defined.setdefault(symbol, []).append((layer_of[obj], obj))
            elif kind == "U":
                undefined.append((layer_of[obj], obj, symbol))

    violations = []  # (user, object, symbol, owner, owner object)
    for user, obj, symbol in undefined:
        may = {user, CORE} | set(matrix[user])
        owners = defined.get(symbol, [])
        if owners and not any(owner in may for owner, _ in owners):
            owner, owner_obj = owners[0]
            violations.append((user, obj, symbol, owner, owner_obj))
    names = demangle({v[2] for v in violations})

    failures = 0
    allowed_count = 0
    for user, obj, symbol, owner, owner_obj in sorted(violations, key=lambda v: (v[0], source_of(v[1]), names[v[2]])):
        name = names[symbol]
        entry = next((e for e in entries if e["user"] == user and e["owner"] == owner and
                      fnmatch.fnmatchcase(name, e["pattern"])), None)
        message = "%s (%s): %s is defined in %s (%s), a layer %s may not use (it may use %s)" % (
            source_of(obj), user, name, source_of(owner_obj), owner, user,
            ", ".join(sorted({user, CORE} | set(matrix[user]))))
        if entry:
            entry["hits"] += 1
            allowed_count += 1
            print("allowed (%s:%d): %s" % (os.path.basename(allow_path), entry["line"], message))
        else:
            failures += 1
            print(message, file=sys.stderr)
    for e in entries:
        if e["hits"] == 0 and e["user"] in matrix and e["owner"] in matrix:
            failures += 1
            print("%s:%d: stale allowlist entry '%s %s %s' matches no violation: remove it" %
                  (allow_path, e["line"], e["user"], e["owner"], e["pattern"]), file=sys.stderr)
    if failures:
        print("FAIL: %d link-level layering violation(s) in %d object files of %d layers (%d allowed; rules: "
              "scripts/check_layer_symbols.py, matrix: CMakeLists.txt \"---- layers\")" %
              (failures, len(objects), len(matrix), allowed_count), file=sys.stderr)
        return 1
    print("OK: %d object files of %d layers use only the layers they may (%d allowed violation(s) of %s)" %
          (len(objects), len(matrix), allowed_count, os.path.basename(allow_path)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
