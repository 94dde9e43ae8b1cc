#!/usr/bin/env python3
#
# test/layers.py: the files of src/ stack, each calling only files below it.
#
#   python3 test/layers.py [SRCDIR]      (default: src, after `make`)
#
# Reads the symbols of every object file (nm: what each defines, what each
# uses), draws an edge from a file to each file whose function it calls, and
# prints the files layer by layer, from the bottom: a file's layer is one
# more than the highest layer of the files it calls.  Exits 1, naming the
# files, if any files call each other, directly or around a circle (then no
# stacking exists), or if an object is missing.
#
import os
import subprocess
import sys


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


def main():
    srcdir = sys.argv[1] if len(sys.argv) > 1 else 'src'
    sources = sorted(f[:-2] for f in os.listdir(srcdir) if f.endswith('.c'))
    owner, uses = {}, {}
    for name in sources:
        obj = os.path.join(srcdir, name + '.o')
        if not os.path.exists(obj):
            print(f'layers.py: {obj} is missing: run make first', file=sys.stderr)
            return 1
        defined, used = symbols(obj)
        for sym in defined:
            owner[sym] = name
        uses[name] = used
    edges = {name: {owner[s] for s in uses[name] if s in owner} - {name}
             for name in sources}

    circles = [c for c in strongly_connected(sources, edges) if len(c) > 1]
    if circles:
        for c in circles:
            print('layers.py: these files call each other: ' + ', '.join(c))
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
    return 0


if __name__ == '__main__':
    sys.exit(main())
