#!/usr/bin/python3
"""The layer map of libir, read from its one source each, for the layering checks and the docs.

- the matrix (which layer may use which): the ir_add_layer() calls of CMakeLists.txt
  ("---- layers"); a layer's folder is src/<layer>, runtime_x being src/runtime/x;
- the placement of every header of include/ir/ (the layer its implementation lives in), of the
  folders of src/ that are no layer, and a line on what each layer holds: scripts/layer_map.txt.

Every layer may use core's headers of include/ir/ (the contract every layer builds on, DESIGN.md:
"dependencies point inward, to include/ir/"); "USES core" in the matrix additionally opens
src/core's own headers. ops keeps op families in subfolders (src/ops/<family>/, globbed
recursively by cmake/ir_layers.cmake); any other subfolder of src/ is a layer of its own or is
placed in layer_map.txt.

Run as a script, it checks the includes of src/ and include/ir/ against the map:
  scripts/layer_map.py [SOURCE_DIR]   (called by scripts/check_layering.sh)
a layer may include "ir/x.h" only if x.h's owner is a layer it may use, every header of
include/ir/ must be placed, and a header of include/ir/ includes only headers its owner may use. [allowed_includes] of layer_map.txt lists
today's violations ("<file> <include>  # fix"); an entry that matches no include fails as stale.
Prints file:line for each violation and exits 1.
"""
import os
import re
import sys

CORE = "core"
# Layers whose folder holds subfolders of the same layer (cmake/ir_layers.cmake globs them recursively).
RECURSIVE_LAYERS = {"ops"}
INCLUDE_RE = re.compile(r'^\s*#\s*include\s*[<"]([^">]*)[">]')


class MapError(Exception):
    pass


def layer_folder(layer):
    """src/ folder of a layer: runtime_cpu -> runtime/cpu, c_api -> c_api (cmake/ir_layers.cmake)."""
    return re.sub(r"^runtime_", "runtime/", layer)


def _strip_cmake_comment(line):
    return line.split("#", 1)[0]


def parse_matrix(root):
    """The ir_add_layer() calls of CMakeLists.txt, in order: [(layer, uses, condition)], where
    condition is the if() the call sits in ("" at top level)."""
    path = os.path.join(root, "CMakeLists.txt")
    with open(path) as f:
        text = "\n".join(_strip_cmake_comment(l) for l in f.read().split("\n"))
    layers = []
    conditions = []
    token = re.compile(r"\b(if|elseif|else|endif|ir_add_layer)\s*\(([^)]*)\)", re.S)
    for m in token.finditer(text):
        word, args = m.group(1), m.group(2).split()
        if word == "if":
            conditions.append(" ".join(args))
        elif word in ("elseif", "else"):
            if conditions:
                conditions[-1] = "not (%s)%s" % (conditions[-1], (" and " + " ".join(args)) if args else "")
        elif word == "endif":
            if conditions:
                conditions.pop()
        else:
            if not args:
                raise MapError("%s: ir_add_layer() without a layer" % path)
            uses, mode = [], None
            for a in args[1:]:
                if a in ("USES", "LIBS"):
                    mode = a
                elif mode == "USES":
                    uses.append(a)
            layers.append((args[0], uses, " and ".join(conditions)))
    if not layers:
        raise MapError("%s: no ir_add_layer() call found (the matrix, \"---- layers\")" % path)
    return layers


def read_built_matrix(path):
    """The matrix as CMake configured it (cmake/ir_layers.cmake: <build>/layers/matrix.txt)."""
    matrix = {}
    with open(path) as f:
        for line in f:
            words = line.split()
            if not words or words[0].startswith("#"):
                continue
            matrix[words[0]] = (words[1], words[2:])
    return matrix


def read_map(root):
    """scripts/layer_map.txt: {'layers': {layer: text}, 'headers': {name: (owner, note)},
    'folders': {path: (placement, text)}}, each in file order."""
    path = os.path.join(root, "scripts", "layer_map.txt")
    sections = {"layers": {}, "headers": {}, "folders": {}, "allowed_includes": {}, "clients": {}}
    section = None
    with open(path) as f:
        for number, raw in enumerate(f, 1):
            line = raw.rstrip("\n")
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            m = re.match(r"^\[(\w+)\]$", line.strip())
            if m:
                section = m.group(1)
                if section not in sections:
                    raise MapError("%s:%d: unknown section [%s]" % (path, number, section))
                continue
            if section is None:
                raise MapError("%s:%d: entry before any [section]" % (path, number))
            words = line.split("#", 1)[0].split(None, 2) if section == "allowed_includes" else line.split(None, 2)
            if section == "layers":
                sections[section][words[0]] = line.split(None, 1)[1].strip() if len(words) > 1 else ""
            else:
                if len(words) < 2:
                    raise MapError("%s:%d: want '<name> <layer> [text]'" % (path, number))
                if words[0] in sections[section]:
                    raise MapError("%s:%d: %s placed twice" % (path, number, words[0]))
                sections[section][words[0]] = (words[1], words[2].strip() if len(words) > 2 else "")
    return sections


def allowed(layer, uses):
    """The layers `layer` may use: itself, its USES and core (include/ir/'s contract)."""
    return {layer, CORE} | set(uses)


class LayerMap:
    def __init__(self, root):
        self.root = root
        self.matrix = parse_matrix(root)
        self.uses = {layer: uses for layer, uses, _ in self.matrix}
        self.folder_layer = {layer_folder(layer): layer for layer in self.uses}
        self.map = read_map(root)
        self.headers = self.map["headers"]
        self.folders = self.map["folders"]
        # Folders outside src/ that use the library through its C API only: {folder: headers it may include}.
        self.clients = {f: set(h.split(",")) for f, (h, _) in self.map["clients"].items()}
        self.allowed_includes = {(f, h): [0] for f, (h, _) in self.map["allowed_includes"].items()}

    def may_use(self, user, owner):
        """Whether code placed in `user` (a layer, or a folder placement such as "plugin") may use `owner`."""
        return owner in allowed(user, self.uses.get(user, []))

    def placement_of(self, relpath):
        """The layer (or folder placement) of a file or folder under src/, None when unplaced."""
        parts = relpath.split("/")
        assert parts[0] == "src"
        best = None
        for n in range(2, len(parts) + 1):
            folder = "/".join(parts[1:n])
            if folder in self.folder_layer:
                best = self.folder_layer[folder]
            elif "src/" + folder in self.folders:
                best = self.folders["src/" + folder][0]
            elif os.path.isdir(os.path.join(self.root, "src", folder)):
                # A subfolder belongs to its parent only when the parent globs recursively.
                if best not in RECURSIVE_LAYERS:
                    best = None
        return best

    def source_folders(self):
        """Every folder under src/ (relative paths, sorted)."""
        out = []
        for dirpath, dirnames, _ in os.walk(os.path.join(self.root, "src")):
            dirnames.sort()
            for d in dirnames:
                out.append(os.path.relpath(os.path.join(dirpath, d), self.root))
        return sorted(out)

    def ir_headers(self):
        return sorted(h for h in os.listdir(os.path.join(self.root, "include", "ir")) if h.endswith(".h"))

    def problems(self):
        """What the map leaves unplaced or names wrongly, as (file, line, message)."""
        out = []
        table = "scripts/layer_map.txt"
        known = set(self.uses) | {p for p, _ in self.folders.values()}
        for name in self.ir_headers():
            if name not in self.headers:
                out.append(("include/ir/" + name, 1, "header not placed in a layer: give it its owner (the layer "
                            "of its implementation) in [headers] of " + table))
        for name, (owner, _) in self.headers.items():
            if not os.path.exists(os.path.join(self.root, "include", "ir", name)):
                out.append((table, 1, "[headers] places include/ir/%s, which does not exist: remove the line" % name))
            elif owner not in self.uses:
                out.append((table, 1, "[headers] %s: owner '%s' is no layer of CMakeLists.txt" % (name, owner)))
        for folder in self.source_folders():
            if self.placement_of(folder) is None:
                out.append((folder, 1, "folder not placed in a layer: add ir_add_layer(%s ...) to CMakeLists.txt "
                            "(\"---- layers\") or place it in [folders] of %s" %
                            (folder[len("src/"):].replace("runtime/", "runtime_", 1).replace("/", "_"), table)))
        for folder, (placement, _) in self.folders.items():
            if not os.path.isdir(os.path.join(self.root, folder)):
                out.append((table, 1, "[folders] places %s, which does not exist: remove the line" % folder))
        for folder in self.clients:
            if not os.path.isdir(os.path.join(self.root, folder)):
                out.append((table, 1, "[clients] names %s, which does not exist: remove the line" % folder))
        for layer in self.map["layers"]:
            if layer not in self.uses and layer not in known:
                out.append((table, 1, "[layers] describes '%s', which is no layer of CMakeLists.txt" % layer))
        return out


def _includes(path):
    with open(path, errors="replace") as f:
        for number, line in enumerate(f, 1):
            m = INCLUDE_RE.match(line)
            if m:
                yield number, m.group(1)


def check_includes(root):
    """(file, line, message) for every include of an ir/ header its includer may not use."""
    lm = LayerMap(root)
    out = lm.problems()

    def check(rel, user, what):
        for number, inc in _includes(os.path.join(root, rel)):
            m = re.match(r"^ir/([^/]+\.h)$", inc)
            if not m or m.group(1) not in lm.headers:
                continue
            owner = lm.headers[m.group(1)][0]
            hits = lm.allowed_includes.get((rel, inc))
            if hits is not None:
                hits[0] += 1
            elif not lm.may_use(user, owner):
                out.append((rel, number, 'include "%s": its implementation is in layer %s, which %s may not use '
                            "(%s may use %s; move what is shared to core, or place the header right in "
                            "scripts/layer_map.txt)" % (inc, owner, what, user,
                                                        ", ".join(sorted(allowed(user, lm.uses.get(user, [])))))))

    for dirpath, dirnames, filenames in os.walk(os.path.join(root, "src")):
        dirnames.sort()
        for name in sorted(filenames):
            if not name.endswith((".h", ".cc")):
                continue
            rel = os.path.relpath(os.path.join(dirpath, name), root)
            user = lm.placement_of(rel)
            if user is not None:
                check(rel, user, "layer " + user)
    for name in lm.ir_headers():
        if name in lm.headers:
            owner = lm.headers[name][0]
            check("include/ir/" + name, owner, "a header owned by " + owner)
    for folder, headers in sorted(lm.clients.items()):
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, folder)):
            dirnames.sort()
            for name in sorted(f for f in filenames if f.endswith((".h", ".cc"))):
                rel = os.path.relpath(os.path.join(dirpath, name), root)
                for number, inc in _includes(os.path.join(root, rel)):
                    if re.match(r"^ir(_\w+)?/", inc) and inc not in headers:
                        out.append((rel, number, 'include "%s": %s is a client of the C API, which may include only '
                                    "%s (scripts/layer_map.txt, [clients])" % (inc, folder, ", ".join(sorted(headers)))))
    for (rel, inc), hits in lm.allowed_includes.items():
        if hits[0] == 0:
            out.append(("scripts/layer_map.txt", 1, "stale [allowed_includes] entry '%s %s' matches no include: "
                        "remove it" % (rel, inc)))
    return out


def main(argv):
    root = argv[1] if len(argv) > 1 else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    try:
        problems = check_includes(root)
    except (MapError, OSError) as e:
        print("FAIL: %s" % e, file=sys.stderr)
        return 1
    for rel, line, message in problems:
        print("%s:%d: %s" % (rel, line, message), file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
