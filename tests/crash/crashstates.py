#!/usr/bin/env python3
"""crashstates.py - build the crash states a file-system trace allows and check each.

Reads a trace made by tests/crash/trace.c (LD_PRELOAD) of a program that ran
under TOP, with PRE a copy of TOP taken before the run (everything in it
durable). Replays the trace on a model of the namespace (directories of
entries that name inodes) and of each inode's bytes, and builds crash states
by the persistence model of tests/crash/README.md (ALICE's abstract model, the
weakest that POSIX allows):

  * a crash after any prefix of the operations;
  * within the prefix, an operation is durable when a barrier follows it
    before the crash: a write/truncate of a file when an fsync or fdatasync of
    that file follows; a create, mkdir, unlink, rmdir or rename when an fsync
    of the directory holding the (new) entry follows; anything when sync or
    syncfs follows. Every other operation of the prefix may or may not have
    reached the disk, independently of its neighbours (dropped or reordered);
    a write may also be torn (only its first pages landed).

For each crash point the states tried are: everything persisted, only the
durable part, each pending operation dropped alone, each kept alone, each
pending write torn, and RANDOM seeded random subsets. Identical trees are run
once. Each state is written out as a directory tree at OUT (the same layout as
TOP), then CHECK runs (a shell command; CRASH_STATE names the tree) and must
exit 0: restart restored the old or the new generation, bit for bit.

The state before the first operation runs OLD_CHECK instead (it must restart
the old generation), the complete one NEW_CHECK (the new generation).

Usage: crashstates.py --label L --top TOP --pre PRE --trace TRACE --out OUT --check CMD
                      --old-check CMD --new-check CMD [--only NAME] [--max N] [--random R]
                      [--seed S] [--keep-failed DIR] [--report FILE]
Prints "crash: L states=N failures=F (of T distinct states)" and exits 1 when any state failed.
"""
import argparse
import hashlib
import mmap
import os
import random
import shutil
import subprocess
import sys

PAGE = 4096


class Model:
    """The namespace and inodes at trace time, and the operations with inode ids."""

    def __init__(self, top, pre):
        self.top = top.rstrip('/')
        self.next_ino = 1
        self.kind = {}       # ino -> 'd' or 'f'
        self.mode = {}       # ino -> permission bits
        self.base = {}       # ino -> bytes (pre-state content of files)
        self.entries = {}    # dir ino -> {name: ino}, at trace time
        self.root = self.new('d', 0o700)
        self.pre_entries = None
        self.load(pre, self.root)
        self.pre_entries = {d: dict(e) for d, e in self.entries.items()}
        self.ops = []        # (kind, args..., trace line number)

    def new(self, kind, mode):
        ino = self.next_ino
        self.next_ino += 1
        self.kind[ino] = kind
        self.mode[ino] = mode
        if kind == 'd':
            self.entries[ino] = {}
        return ino

    def load(self, path, dino):
        st = os.lstat(path)
        self.mode[dino] = st.st_mode & 0o7777
        for name in sorted(os.listdir(path)):
            p = os.path.join(path, name)
            st = os.lstat(p)
            if os.path.isdir(p) and not os.path.islink(p):
                ino = self.new('d', st.st_mode & 0o7777)
                self.load(p, ino)
            elif os.path.isfile(p) and not os.path.islink(p):
                ino = self.new('f', st.st_mode & 0o7777)
                with open(p, 'rb') as f:
                    self.base[ino] = f.read()
            else:
                raise SystemExit(f'crashstates: {p}: only files and directories are modelled')
            self.entries[dino][name] = ino

    def split(self, path):
        """(parent dir ino, name) of PATH under TOP at trace time."""
        if not path.startswith(self.top + '/'):
            raise SystemExit(f'crashstates: {path} is not under {self.top}')
        parts = [p for p in path[len(self.top) + 1:].split('/') if p and p != '.']
        d = self.root
        for p in parts[:-1]:
            d = self.entries[d][p]
        return d, parts[-1]

    def lookup(self, path):
        d, n = self.split(path)
        return self.entries[d].get(n)

    def parse(self, trace):
        fds, maps = {}, {}
        with open(trace) as f:
            for lineno, line in enumerate(f, 1):
                line = line.rstrip('\n')
                op, _, rest = line.partition(' ')
                if op == 'open':
                    fd, created, trunc, isdir, path = rest.split(' ', 4)
                    if created == '1':
                        d, n = self.split(path)
                        ino = self.new('f', 0o600)
                        self.entries[d][n] = ino
                        self.ops.append(('link', d, n, ino, lineno))
                    ino = self.lookup(path)
                    if ino is None:
                        raise SystemExit(f'crashstates: line {lineno}: {path} opened but never made')
                    fds[int(fd)] = ino
                    if trunc == '1':
                        self.ops.append(('trunc', ino, 0, lineno))
                elif op == 'mkdir':
                    d, n = self.split(rest)
                    ino = self.new('d', 0o700)
                    self.entries[d][n] = ino
                    self.ops.append(('link', d, n, ino, lineno))
                elif op in ('unlink', 'rmdir'):
                    d, n = self.split(rest)
                    ino = self.entries[d].pop(n)
                    self.ops.append(('unlink', d, n, ino, lineno))
                elif op == 'rename':
                    a, b = rest.split('\t')
                    da, na = self.split(a)
                    db, nb = self.split(b)
                    ino = self.entries[da].pop(na)
                    self.entries[db][nb] = ino
                    self.ops.append(('rename', da, na, db, nb, ino, lineno))
                elif op == 'write':
                    fd, off, n, at = (int(x) for x in rest.split())
                    if off < 0:
                        raise SystemExit(f'crashstates: line {lineno}: a write at an unknown offset')
                    self.ops.append(('write', fds[fd], off, n, at, lineno))
                elif op == 'trunc':
                    fd, n = (int(x) for x in rest.split())
                    self.ops.append(('trunc', fds[fd], n, lineno))
                elif op == 'grow':
                    fd, n = (int(x) for x in rest.split()[:2])
                    self.ops.append(('grow', fds[fd], n, lineno))
                elif op in ('fsync', 'fdatasync'):
                    self.ops.append(('fsync', fds[int(rest)], lineno))
                elif op in ('sync', 'syncfs'):
                    self.ops.append(('sync', lineno))
                elif op == 'dup':
                    a, b = (int(x) for x in rest.split())
                    fds[b] = fds[a]
                elif op == 'close':
                    fds.pop(int(rest), None)
                elif op == 'pmem':
                    addr, _n, path = rest.split(' ', 2)
                    maps[addr] = self.lookup(path)
                elif op == 'mflush':  # bytes of a mapping made durable: a write and its barrier
                    addr, off, n, at = rest.split()
                    self.ops.append(('write', maps[addr], int(off), int(n), int(at), lineno))
                    self.ops.append(('fsync', maps[addr], lineno))
                elif op == 'munmap':
                    maps.pop(rest, None)
                elif op in ('sfr', 'falloc_keep'):  # neither changes what a reader sees nor persists
                    pass
                else:
                    raise SystemExit(f'crashstates: line {lineno}: cannot model "{line}"')


def pending(ops, k):
    """Indices of the effectful operations before K that no barrier before K covers."""
    synced_files, synced_dirs, all_synced = set(), set(), False
    out = []
    for i in range(k - 1, -1, -1):
        o = ops[i]
        if o[0] == 'sync':
            all_synced = True
        elif o[0] == 'fsync':
            synced_files.add(o[1])
            synced_dirs.add(o[1])
        elif all_synced:
            continue
        elif o[0] in ('write', 'trunc', 'grow'):
            if o[1] not in synced_files:
                out.append(i)
        elif o[0] in ('link', 'unlink'):
            if o[1] not in synced_dirs:
                out.append(i)
        elif o[0] == 'rename':
            if o[3] not in synced_dirs and o[1] not in synced_dirs:
                out.append(i)
    return sorted(out)


class State:
    """One crash state: the first K operations, minus DROPPED, with TORN writes cut."""

    def __init__(self, k, dropped=(), torn=()):
        self.k, self.dropped, self.torn = k, frozenset(dropped), frozenset(torn)

    def describe(self, ops):
        lines = lambda s: ','.join(str(n) for n in sorted({ops[i][-1] for i in s})) or '-'
        return (f'crash after trace line {ops[self.k - 1][-1] if self.k else 0} '
                f'(op {self.k}); not persisted: lines {lines(self.dropped)}; torn: lines {lines(self.torn)}')


class Bodies:
    """The files' bytes of one state, each built when first asked for: a file no
    path reaches (a probe written after its unlink) costs nothing. A file the
    state does not change is its pre-state bytes, shared."""

    def __init__(self, model, data):
        self.model, self.data = model, data
        self.ops, self.built = {}, {}  # ino -> [(op, bytes written)] in order; ino -> bytes

    def change(self, ino, op, n=0):
        self.ops.setdefault(ino, []).append((op, n))

    def get(self, ino, default=b''):
        if ino in self.built:
            return self.built[ino]
        ops = self.ops.get(ino)
        if ops is None:
            return self.model.base.get(ino, default)
        b = self.built[ino] = bytearray(self.model.base.get(ino, b''))
        for o, n in ops:
            if o[0] == 'write':
                off, at = o[2], o[4]
                if len(b) < off:
                    b.extend(bytes(off - len(b)))
                b[off:off + n] = self.data[at:at + n]  # (a memoryview: copied once, into b)
            elif o[0] == 'trunc':
                del b[o[2]:]
                b.extend(bytes(o[2] - len(b)))
            elif o[0] == 'grow':
                b.extend(bytes(max(0, o[2] - len(b))))
        return b


def apply(model, data, st):
    """The tree of a state: {dir ino: {name: ino}} and the files' Bodies."""
    ents = {d: dict(e) for d, e in model.pre_entries.items()}
    body = Bodies(model, data)
    for i in range(st.k):
        if i in st.dropped:
            continue
        o = model.ops[i]
        if o[0] == 'link':
            ents.setdefault(o[1], {})[o[2]] = o[3]
            if model.kind[o[3]] == 'd':
                ents.setdefault(o[3], {})
        elif o[0] == 'unlink':
            if ents.get(o[1], {}).get(o[2]) == o[3]:
                del ents[o[1]][o[2]]
        elif o[0] == 'rename':
            if ents.get(o[1], {}).get(o[2]) == o[5]:
                del ents[o[1]][o[2]]
            ents.setdefault(o[3], {})[o[4]] = o[5]
            if model.kind[o[5]] == 'd':
                ents.setdefault(o[5], {})
        elif o[0] == 'write':
            n = o[3]
            if i in st.torn:
                n = max(PAGE, (n // 2) // PAGE * PAGE) if n > PAGE else n // 2
            body.change(o[1], o, n)
        elif o[0] in ('trunc', 'grow'):
            body.change(o[1], o)
    return ents, body


def walk(model, ents, body, only):
    """(relative path, kind, mode, bytes) of every reachable entry, sorted."""
    out = []

    def rec(dino, rel, depth):
        for name in sorted(ents.get(dino, {})):
            if depth == 0 and only and name not in only:
                continue
            ino = ents[dino][name]
            p = f'{rel}/{name}' if rel else name
            if model.kind[ino] == 'd':
                out.append((p, 'd', model.mode[ino], b''))
                rec(ino, p, depth + 1)
            else:
                out.append((p, 'f', model.mode[ino], body.get(ino, b'')))  # (this state's own)
    rec(model.root, '', 0)
    return out


BASE_DIGESTS = {}  # id of a pre-state file's bytes (alive all run, so the id is its own) -> digest


def key_of(tree):
    h = hashlib.sha256()
    for p, kind, mode, b in tree:
        h.update(f'{p}\0{kind}\0{mode}\0{len(b)}\0'.encode())
        h.update(BASE_DIGESTS.get(id(b)) or hashlib.sha256(b).digest())
    return h.hexdigest()


def materialize(tree, out, names):
    if os.path.exists(out):
        shutil.rmtree(out)
    os.makedirs(out, mode=0o700)
    for n in names:  # the top-level directories always exist (a missing one is a config error)
        os.makedirs(os.path.join(out, n), mode=0o700, exist_ok=True)
    for p, kind, mode, b in tree:
        full = os.path.join(out, p)
        if kind == 'd':
            os.makedirs(full, exist_ok=True)
            os.chmod(full, mode)
        else:
            fd = os.open(full, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
            os.write(fd, b)
            os.close(fd)
            os.chmod(full, mode)


def candidates(ops, rnd, nrandom):
    """(class, state) of the crash states to try, in order (duplicates are removed later)."""
    for k in range(len(ops) + 1):
        pend = pending(ops, k)
        yield 'prefix', State(k)
        if not pend:
            continue
        yield 'durable-only', State(k, pend)
        for i in pend:
            yield 'one-lost', State(k, [i])
            yield 'one-kept', State(k, [j for j in pend if j != i])
            if ops[i][0] == 'write' and ops[i][3] > 1:
                yield 'torn', State(k, (), [i])
        for _ in range(nrandom if len(pend) > 1 else 0):
            yield 'random', State(k, [i for i in pend if rnd.random() < 0.5])


def sample(states, n):
    """At most N of STATES: the first and the last, then the classes in turn, each
    class's states taken in a low-discrepancy order (spread over the trace)."""
    if not n or len(states) <= n:
        return states
    chosen = [states[0], states[-1]]
    classes = {}
    for s in states[1:-1]:
        classes.setdefault(s[0], []).append(s)
    golden = 0.6180339887498949
    queues = [[s for _, s in sorted(enumerate(v), key=lambda t: ((t[0] + 1) * golden) % 1.0)]
              for v in classes.values()]
    while len(chosen) < n and any(queues):
        for q in queues:
            if q and len(chosen) < n:
                chosen.append(q.pop(0))
    return chosen


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--label', required=True)
    ap.add_argument('--top', required=True)
    ap.add_argument('--pre', required=True)
    ap.add_argument('--trace', required=True)
    ap.add_argument('--out', required=True)
    ap.add_argument('--check', required=True)
    ap.add_argument('--only', action='append', default=[],
                    help='materialize only these top-level directories (the others empty)')
    ap.add_argument('--max', type=int, default=0, help='try at most N states (an even sample)')
    ap.add_argument('--random', type=int, default=4)
    ap.add_argument('--seed', type=int, default=29)
    ap.add_argument('--keep-failed', default='')
    ap.add_argument('--old-check', required=True, help='CHECK for the state before the first operation')
    ap.add_argument('--new-check', required=True, help='CHECK for the state after the last one')
    ap.add_argument('--report', default='', help='write the closing "crash:" line here too')
    a = ap.parse_args()

    model = Model(a.top, a.pre)
    for b in model.base.values():  # each unchanged file hashed once, not once per state
        BASE_DIGESTS[id(b)] = hashlib.sha256(b).digest()
    model.parse(a.trace)
    ops = model.ops
    if not any(o[0] == 'write' for o in ops):
        raise SystemExit('crashstates: the trace holds no write under TOP: nothing was traced')
    with open(a.trace + '.data', 'rb') as f:
        data = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) if os.path.getsize(a.trace + '.data') else b''
        data = memoryview(data)  # slices are views: a write's bytes copied once, into its file
    names = sorted(os.listdir(a.pre))
    seen, states = set(), []
    for cls, st in candidates(ops, random.Random(a.seed), a.random):
        ents, body = apply(model, data, st)
        tree = walk(model, ents, body, a.only)
        k = key_of(tree)
        if k not in seen:
            seen.add(k)
            states.append((cls, st, tree))
    final = apply(model, data, State(len(ops)))
    final = walk(model, final[0], final[1], a.only)
    if key_of(final) == key_of(states[0][2]):
        raise SystemExit('crashstates: the trace changes nothing a restart reads')
    # The state before the first operation must restart the old generation, the
    # one after the last the new one (stricter checks); the rest either.
    states = [s for s in states if key_of(s[2]) != key_of(final)]
    states.append(('complete', State(len(ops)), final))
    total = len(states)
    states = sample(states, a.max)
    print(f'# crash {a.label}: {len(ops)} operations traced, {total} distinct crash states, '
          f'trying {len(states)}', flush=True)
    failures = 0
    for n, (cls, st, tree) in enumerate(states):
        materialize(tree, a.out, names)
        env = dict(os.environ, CRASH_STATE=a.out)
        check = a.old_check if n == 0 else a.new_check if cls == 'complete' else a.check
        r = subprocess.run(['bash', '-c', check], env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
        if r.returncode != 0:
            failures += 1
            print(f'# crash {a.label}: FAILED state {n} ({cls}): {st.describe(ops)}')
            for line in r.stdout.strip().splitlines()[-4:]:
                print(f'#     {line}')
            if a.keep_failed and failures == 1:
                if os.path.exists(a.keep_failed):
                    shutil.rmtree(a.keep_failed)
                shutil.copytree(a.out, a.keep_failed, symlinks=True)
                print(f'#     (the state is kept in {a.keep_failed})')
    shutil.rmtree(a.out, ignore_errors=True)
    line = f'crash: {a.label} states={len(states)} failures={failures} (of {total} distinct states)'
    print(line)
    if a.report:
        with open(a.report, 'w') as f:
            f.write(line + '\n')
    sys.exit(1 if failures else 0)


if __name__ == '__main__':
    main()
