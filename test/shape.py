#!/usr/bin/env python3
#
# test/shape.py: the shape of src/ that keeps it readable.
#
#   python3 test/shape.py [SRCDIR]      (default: src, after `make`)
#
# 1. The files stack, each calling only files below it.  Reads the symbols
#    of every object file (nm: what each defines, what each uses), draws an
#    edge from a file to each file whose function it calls, and prints the
#    files layer by layer, from the top: a file's layer is one more than the
#    highest layer of the files it calls.  Files that call each other,
#    directly or around a circle, have no layers: they are named, with the
#    calls, and the check fails.
# 2. No C file is longer than MAX_FILE_LINES lines, and no function longer
#    than MAX_FUNCTION_LINES (from its opening brace to its closing one, in
#    pgindent's layout: both at the start of a line).
#
# Exits 1 if either fails, or if an object is missing.
#
import os
import subprocess
import sys

MAX_FILE_LINES = 650
MAX_FUNCTION_LINES = 110


def symbols(path):
    """The functions and data an object defines, and those it uses."""
    out = subprocess.run(['nm', path], check=True, capture_output=True,
                         text=True).stdout
    defined, used = set(), set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == 'U':
            used.add(parts[1])
        elif len(parts) == 3 and parts[1] in 'TDBR':
            defined.add(parts[2])
    return defined, used


def strongly_connected(nodes, edges):
    """Tarjan's algorithm: the sets of files that reach each other."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges[v]):
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
            out.append(sorted(comp))

    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


def too_long(path):
    """The file if it is too long, and each function that is."""
    out = []
    with open(path) as f:
        lines = f.read().split('\n')
    if len(lines) - 1 > MAX_FILE_LINES:
        out.append(f'{path}: {len(lines) - 1} lines (at most {MAX_FILE_LINES})')
    start = None
    for n, line in enumerate(lines, 1):
        if line == '{':
            start = n
            name = lines[n - 2]
        elif line == '}' and start is not None:
            if n - start + 1 > MAX_FUNCTION_LINES:
                out.append(f'{path}:{start}: {name.strip()}: {n - start + 1} lines '
                           f'(at most {MAX_FUNCTION_LINES})')
            start = None
    return out


def main():
    srcdir = sys.argv[1] if len(sys.argv) > 1 else 'src'
    sources = sorted(f[:-2] for f in os.listdir(srcdir) if f.endswith('.c'))
    owner, uses = {}, {}
    for name in sources:
        obj = os.path.join(srcdir, name + '.o')
        if not os.path.exists(obj):
            print(f'shape.py: {obj} is missing: run make first', file=sys.stderr)
            return 1
        defined, used = symbols(obj)
        for sym in defined:
            owner[sym] = name
        uses[name] = used
    edges = {name: {owner[s] for s in uses[name] if s in owner} - {name}
             for name in sources}

    failed = False
    for name in sources:
        for problem in too_long(os.path.join(srcdir, name + '.c')):
            print('shape.py: ' + problem)
            failed = True

    circles = [c for c in strongly_connected(sources, edges) if len(c) > 1]
    if circles:
        for c in circles:
            print('shape.py: these files call each other: ' + ', '.join(c))
            for a in c:
                for b in sorted(edges[a] & set(c)):
                    calls = sorted(s for s in uses[a] if owner.get(s) == b)
                    print(f'  {a} -> {b}: {", ".join(calls)}')
        return 1

    layer = {}

    def depth(v):
        if v not in layer:
            layer[v] = 1 + max((depth(w) for w in edges[v]), default=-1)
        return layer[v]

    for v in sources:
        depth(v)
    top = max(layer.values())
    for n in range(top, -1, -1):
        names = sorted(v for v in sources if layer[v] == n)
        print(f'layer {n}: ' + ' '.join(names))
    print(f'{len(sources)} files in {top + 1} layers; no file calls one above it')
    if not failed:
        print(f'no file past {MAX_FILE_LINES} lines, no function past {MAX_FUNCTION_LINES}')
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
