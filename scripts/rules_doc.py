#!/usr/bin/env python3
"""Regenerates the per-file rule tables of docs/REWRITE_RULES.md ("### <set> (N rules)" up to
"### Guards") from rules/*.rules, so the manual lists every shipped rule with its tag.

Usage: scripts/rules_doc.py [--check]   (--check: exit 1 when the manual is out of date)
"""
import glob
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOC = os.path.join(ROOT, "docs", "REWRITE_RULES.md")


def clauses(body):
    """The rule's clauses (continuation lines joined), comments removed."""
    out, key = {}, None
    for line in body.splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        m = re.match(r"(match|rewrite|where|test|why):\s*(.*)", line)
        if m:
            key = m.group(1)
            out[key] = m.group(2)
        elif key:
            out[key] += " " + line
    return out


def tables():
    text = []
    for path in sorted(glob.glob(os.path.join(ROOT, "rules", "*.rules"))):
        src = open(path).read()
        rules = re.findall(r"^rule\s+(\w+)\s+(\w+)\s*\{(.*?)^\}", src, re.M | re.S)
        name = os.path.splitext(os.path.basename(path))[0]
        text.append("### %s (%d rules)\n\n| rule | tag | match -> rewrite (where) |\n| --- | --- | --- |\n"
                    % (name, len(rules)))
        for rule, tag, body in rules:
            c = clauses(body)
            where = " (%s)" % c["where"] if "where" in c else ""
            text.append("| `%s` | %s | `%s` -> `%s`%s |\n" % (rule, tag, c["match"], c["rewrite"], where))
        text.append("\n")
    return "".join(text)


def main():
    doc = open(DOC).read()
    start = doc.index("### ", doc.index("## Shipped rules"))
    end = doc.index("### Guards", start)
    new = doc[:start] + tables() + doc[end:]
    if "--check" in sys.argv:
        sys.exit(0 if new == doc else 1)
    open(DOC, "w").write(new)


if __name__ == "__main__":
    main()
