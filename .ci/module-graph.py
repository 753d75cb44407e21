#!/usr/bin/env python3
"""Prints the graph of a crate's modules and fails on a circle.

    python3 .ci/module-graph.py crates/acp-cli/src [--modules]

Reads every `.rs` file under SRC (not `main.rs` nor `bin/`, which are other
crates), takes the paths it names (`use crate::…`, `use super::…`, a `use` of a
child module, and `crate::…`/`super::…`/`self::…` paths in code; test modules
are left out), and prints which top-level module (layer) uses which. With
`--modules`, every module's edges too.

It exits 1 when top-level modules use each other in a circle, or when modules
anywhere do (a module's use of its own ancestors or descendants is how Rust
folders work — `super::` from a child, `child::` from its parent — and is not
counted).
"""

import re
import sys
from pathlib import Path


def strip(text):
    """The text without comments, string and char literals (kept as spaces)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            depth, i = 1, i + 2
            while i < n and depth:
                if text.startswith("/*", i):
                    depth, i = depth + 1, i + 2
                elif text.startswith("*/", i):
                    depth, i = depth - 1, i + 2
                else:
                    i += 1
        elif re.match(r'b?r(#*)"', text[i:i + 260]) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = re.match(r'b?r(#*)"', text[i:])
            end = '"' + m.group(1)
            j = text.find(end, i + m.end())
            i = n if j < 0 else j + len(end)
            out.append('""')
        elif c == '"':
            i += 1
            while i < n and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
            i += 1
            out.append('""')
        elif c == "'":
            # A char literal ('a', '\n', '\u{1b}'), or a lifetime ('a).
            m = re.match(r"'(\\u\{[0-9a-fA-F]+\}|\\.|[^\\'])'", text[i:])
            if m:
                i += m.end()
                out.append("' '")
            else:
                out.append(c)
                i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def without_tests(text):
    """The text without `#[cfg(test)] mod NAME { … }` blocks."""
    while True:
        m = re.search(r"#\[cfg\(test\)\]\s*(pub(\([^)]*\))?\s+)?mod\s+\w+\s*\{", text)
        if not m:
            return text
        depth, i = 1, m.end()
        while i < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            i += 1
        text = text[: m.start()] + text[i:]


def use_paths(tree):
    """The paths of a use tree: `a::{b, c::{d, e}}` gives a::b, a::c::d, a::c::e."""
    tree = re.sub(r"\s+", "", tree)
    depth, parts, start = 0, [], 0
    for i, c in enumerate(tree):
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
        elif c == "," and depth == 0:
            parts.append(tree[start:i])
            start = i + 1
    parts.append(tree[start:])
    paths = []
    for part in filter(None, parts):
        brace = part.find("{")
        if brace < 0:
            paths.append(re.sub(r"\bas\w+$", "", part.split(" as ")[0]))
            continue
        prefix = part[:brace].rstrip(":")
        for inner in use_paths(part[brace + 1 : part.rindex("}")]):
            paths.append(prefix if inner == "self" else f"{prefix}::{inner}")
    return paths


def module_of(path, src):
    rel = path.relative_to(src).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] in ("mod", "lib"):
        parts.pop()
    return tuple(parts)


def resolve(segments, here, modules):
    """The module a path names (its longest known prefix), or None."""
    if not segments:
        return None
    head = segments[0]
    if head == "crate":
        base, rest = (), segments[1:]
    elif head in ("super", "self"):
        base, rest = here, segments
        while rest and rest[0] in ("super", "self"):
            if rest[0] == "super":
                base = base[:-1]
            rest = rest[1:]
    elif here + (head,) in modules:
        base, rest = here, segments
    else:
        return None
    target = base
    for seg in rest:
        if target + (seg,) in modules:
            target = target + (seg,)
        else:
            break
    return target


def circles(edges):
    """The strongly connected components with more than one node (Tarjan)."""
    index, low, stack, on, found, counter = {}, {}, [], set(), [], [0]
    nodes = set(edges) | {t for ts in edges.values() for t in ts}

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return found


def name(module):
    return "::".join(module) or "crate"


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if len(args) != 1:
        sys.exit(__doc__)
    src = Path(args[0])
    files = [
        p
        for p in sorted(src.rglob("*.rs"))
        if p.name != "main.rs" and "bin" not in p.relative_to(src).parts
    ]
    modules = {module_of(p, src) for p in files}
    edges = {}
    for path in files:
        here = module_of(path, src)
        text = without_tests(strip(path.read_text()))
        paths = []
        for m in re.finditer(r"\buse\s+([^;]+);", text):
            paths += use_paths(m.group(1))
        paths += [m.group(0) for m in re.finditer(r"\b(?:crate|super|self)(?:::\w+)+", text)]
        for p in paths:
            target = resolve(tuple(p.split("::")), here, modules)
            if target is not None and target != here:
                edges.setdefault(here, set()).add(target)

    layers = {}
    for a, targets in edges.items():
        for b in targets:
            if a[:1] != b[:1] and a and b:
                layers.setdefault(a[0], set()).add(b[0])
    print("Layers (top-level modules) and the ones each uses:")
    for layer in sorted({m[0] for m in modules if m}):
        print(f"  {layer:12} -> {', '.join(sorted(layers.get(layer, ()))) or '-'}")
    crate_uses = sorted({b[0] for b in edges.get((), ()) if b})
    print(f"  {'(lib.rs)':12} -> {', '.join(crate_uses) or '-'}")

    # Edges between modules that are not each other's ancestors.
    related = lambda a, b: a[: len(b)] == b or b[: len(a)] == a
    flat = {a: {b for b in ts if not related(a, b)} for a, ts in edges.items()}
    if "--modules" in sys.argv:
        print("\nModules:")
        for a in sorted(flat):
            if flat[a]:
                print(f"  {name(a)} -> {', '.join(sorted(map(name, flat[a])))}")

    bad = False
    for comp in circles(layers):
        bad = True
        print(f"\ncircle between layers: {' <-> '.join(comp)}")
    for comp in circles(flat):
        bad = True
        print(f"\ncircle between modules: {' <-> '.join(map(name, comp))}")
    if not bad:
        print("\nNo circle: between layers nor between modules.")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
