#!/usr/bin/env python3
"""An independent oracle for `uopc run`, `uopc jit-run` and `uopc simplify`.

Generates random closed tensor programs (every op of docs/uir.md's table that
a closed program can hold: constants, STACK, the movement ops, the
elementwise ops of every dtype, CAST, WHERE, REDUCE), computes each program's
value here, in Python, from the spec's definitions alone (i32 wraps; floats
round to their dtype after every op; floor division as Python's; MAX as
`b if b > a else a`; libm's double exp2/log2/sin through Python's math; a
REDUCE from its first element, left to right), and checks that

  * `uopc run P` prints that value,
  * `uopc jit-run --guard-pages --threads T P` (the plan of loop kernels,
    its result, temporaries and constant arrays each ending against an
    inaccessible page: a read past one is a crash) prints it, also with
    every plan pass forced on at the strong tier (EVERY_PASS below; without
    guard pages, so that the result kernel's streaming copy runs),
  * `uopc run` of `uopc simplify P` prints it (the default simplify is exact),
  * one program in three again as a program with an input: one of its
    STACKs of constants becomes `param : slot=0`, its values an .npy file,
    and `uopc exec --guard-pages --arg 0=IN.npy --print` prints the value
    (the host's path: arguments in the caller's memory, here ending against
    an inaccessible page),

comparing floats at their dtype's bits (every NaN alike, the sign of zero
counted).  One program in five may divide by zero somewhere: it has no value
to compare, but every run must end with a value or an error, never a crash.
The others stay clear of what the spec leaves undefined (division by
zero, INT_MIN // -1, a float outside i32's range cast to i32): the generator
knows every value as it builds a node, and builds such an op only where each
element is defined.

Usage: scripts/oracle.py [--uopc PATH] [--count N] [--seed S] [--threads T]
                         [--max-nodes K] [--keep DIR] [-v]
Exit status 0 when every program agrees, 1 otherwise (each disagreement is
printed with its program; --keep DIR also writes it there).  Standard
library only.
"""
import argparse
import ast
import ctypes
import math
import os
import random
import re
import struct
import subprocess
import sys
import tempfile

INT_MIN, INT_MAX = -(1 << 31), (1 << 31) - 1
FLOATS = ("f32", "f16")


# ---------------------------------------------------------------- arithmetic

def wrap(x):
    """An integer as i32: two's complement wrap-around."""
    return ((x - INT_MIN) & 0xFFFFFFFF) + INT_MIN


def round_to(dt, x):
    """A Python number (exact int, or a double) rounded to dtype dt."""
    if dt == "bool":
        return bool(x)
    if dt == "i32":
        return wrap(int(x))
    x = float(x)
    if dt == "f32":
        return ctypes.c_float(x).value  # C's double -> float: nearest even, overflow to inf
    try:  # f16: CPython packs with round-half-even and refuses what overflows
        return struct.unpack("<e", struct.pack("<e", x))[0]
    except OverflowError:
        return math.copysign(math.inf, x)


def libm(fn, x):
    """libm's double exp2 / log2 / sin of x, where Python raises instead."""
    if math.isnan(x):
        return x
    if fn == "exp2":
        try:
            return math.exp2(x)
        except OverflowError:
            return math.inf
    if fn == "log2":
        if x < 0:
            return math.nan
        if x == 0:
            return -math.inf
        return math.log2(x)
    if math.isinf(x):  # sin
        return math.nan
    return math.sin(x)


def binary(op, dt, a, b):
    if op == "add":
        return a or b if dt == "bool" else round_to(dt, a + b)
    if op == "mul":
        return a and b if dt == "bool" else round_to(dt, a * b)
    if op == "max":
        return b if b > a else a
    if op == "cmplt":
        return a < b
    if op == "cmpne":
        return a != b
    if op == "floordiv":
        return wrap(a // b)
    if op == "floormod":
        return wrap(a % b)
    raise ValueError(op)


def unary(op, dt, a):
    if op == "recip":
        if a == 0:
            return math.copysign(math.inf, a)
        return round_to(dt, 1.0 / a) if not math.isinf(a) else math.copysign(0.0, a)
    if op == "sqrt":
        if math.isnan(a) or a < 0:
            return math.nan
        return round_to(dt, math.sqrt(a)) if not math.isinf(a) else a
    return round_to(dt, libm(op, a))


def div_defined(a, b):
    """1 when a // b and a % b have a value in i32 (not b = 0, not INT_MIN // -1)."""
    return b != 0 and (a, b) != (INT_MIN, -1)


def cast_defined(x):
    """1 when the float x cast to i32 has a value: finite and in range after truncation."""
    return math.isfinite(x) and INT_MIN <= math.trunc(x) <= INT_MAX


def reduce_flat(op, dt, flat, m):
    """REDUCE of each run of m elements of flat: from its first element, left to right."""
    out = []
    for o in range(0, len(flat), m):
        acc = flat[o]
        for x in flat[o + 1:o + m]:
            acc = binary(op, dt, acc, x)
        out.append(acc)
    return out


def ended_cleanly(rc, err):
    """A run with no value to compare: a value (exit 0) or an error (exit 1), never a crash."""
    return rc == 0 or (rc == 1 and "error" in err)


def keep_case(directory, name, text):
    """Writes a disagreeing case into directory (--keep), when one was given."""
    if directory:
        os.makedirs(directory, exist_ok=True)
        with open(os.path.join(directory, name), "w") as f:
            f.write(text)


NPY = {"f32": ("<f4", "f"), "f16": ("<f2", "e"), "i32": ("<i4", "i"), "bool": ("|b1", "?")}


def write_npy(path, v):
    """v's values as a .npy file (version 1.0, C order)."""
    descr, code = NPY[v.dt]
    hdr = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, tup(v.shape) if v.shape else "()")
    hdr += " " * ((64 - (10 + len(hdr) + 1) % 64) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(hdr)) + hdr.encode())
        f.write(struct.pack("<%d%s" % (len(v.flat), code), *v.flat))


def with_input(gen, rng):
    """gen's program with one of its STACKs (never in a CALL body: the generator's bodies hold
    only PARAMs and ops) written as `param : slot=0` instead, and that STACK's value; None when
    it has no STACK."""
    used, todo = set(), [len(gen.lines) - 1]  # the nodes the root reaches
    while todo:
        i = todo.pop()
        if i not in used:
            used.add(i)
            todo += [int(d) for d in re.findall(r"%v(\d+)", gen.lines[i].split(" = ", 1)[1])]
    stacks = [v for v in gen.all
              if int(v.name[2:]) in used and gen.lines[int(v.name[2:])].split(" = ", 1)[1].startswith("stack ")]
    if not stacks:
        return None
    v = rng.choice(stacks)
    lines = list(gen.lines)
    sh = (" shape=%s" % tup(v.shape)) if v.shape else ""
    lines[int(v.name[2:])] = "%s = param : slot=0 dtype=%s%s" % (v.name, v.dt, sh)
    return "\n".join(lines) + "\n", v


def work_dir(prefix):
    """A temporary directory under TEST_TMPDIR (the test runner's) or the system's."""
    return tempfile.TemporaryDirectory(prefix=prefix, dir=os.environ.get("TEST_TMPDIR") or None)


def cast(src, dst, a):
    if dst == "bool":
        return a != 0  # NaN != 0 too
    if src == "bool":
        return round_to(dst, 1 if a else 0)
    if dst == "i32":
        return math.trunc(a)  # C's conversion; the generator casts only floats in range
    return round_to(dst, a)


# ---------------------------------------------------------------- values

class Val:
    """A node: its .uir name, dtype, shape and value (flat, C order)."""

    def __init__(self, name, dt, shape, flat):
        self.name, self.dt, self.shape, self.flat = name, dt, tuple(shape), list(flat)
        assert len(self.flat) == numel(self.shape)


def numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def strides(shape):
    s, acc = [], 1
    for d in reversed(shape):
        s.append(acc)
        acc *= d
    return list(reversed(s))


def indices(shape):
    """Every index tuple of shape, in C order."""
    if not shape:
        yield ()
        return
    for i in range(shape[0]):
        for rest in indices(shape[1:]):
            yield (i,) + rest


def literal(dt, x):
    if dt == "bool":
        return "True" if x else "False"
    if dt == "i32":
        return str(x)
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return repr(float(x))


# ---------------------------------------------------------------- generator

class Gen:
    def __init__(self, rng, max_nodes):
        self.rng, self.max_nodes = rng, max_nodes
        self.lines, self.pool, self.all, self.n = [], [], [], 0
        self.undefined_ok = rng.random() < 0.2  # a program that may divide by zero (no value; no crash)
        self.undefined = False

    def emit(self, text, dt, shape, flat):
        name = "%%v%d" % self.n
        self.n += 1
        self.lines.append("%s = %s" % (name, text))
        v = Val(name, dt, shape, flat)
        self.pool.append(v)
        self.all.append(v)
        return v

    # leaves
    def scalar_value(self, dt):
        r = self.rng
        if dt == "bool":
            return r.random() < 0.5
        if dt == "i32":
            return r.choice([0, 1, -1, 2, 3, 7, -7, 100, INT_MAX, INT_MIN, INT_MAX - 1, INT_MIN + 1,
                             r.randint(-50, 50), r.randint(-1000, 1000), r.randint(INT_MIN, INT_MAX)])
        special = [0.0, -0.0, 1.0, -1.0, 0.5, 2.0, 3.0, math.inf, -math.inf, math.nan, 1e-3, 1e4]
        special += [1e30, 3.4e38, 1e-40, 1.5e-45] if dt == "f32" else [65504.0, 6e-8, 6.1e-5, 1e-6]
        x = r.choice(special) if r.random() < 0.35 else r.uniform(-8, 8) * 10 ** r.randint(-3, 3)
        return round_to(dt, x)

    def const(self, dt):
        x = self.scalar_value(dt)
        return self.emit("const %s : dtype=%s" % (literal(dt, x), dt), dt, (), [x])

    def leaf(self, dt, shape):
        """A fresh value of dt and shape: a constant, or STACKs of constants."""
        if not shape:
            return self.const(dt)
        parts = [self.leaf(dt, shape[1:]) for _ in range(shape[0])]
        flat = [x for p in parts for x in p.flat]
        return self.emit("stack " + ", ".join(p.name for p in parts), dt, shape, flat)

    def pick(self, pred=lambda v: True):
        c = [v for v in self.pool if pred(v)]
        return self.rng.choice(c) if c else None

    def operand(self, dt, shape):
        """An existing node of dt and shape (often), else a fresh leaf."""
        v = self.pick(lambda v: v.dt == dt and v.shape == shape)
        if v is not None and self.rng.random() < 0.75:
            return v
        return self.leaf(dt, shape)

    # ops
    def op_binary(self, a):
        r = self.rng
        ops = ["add", "mul", "max", "cmplt", "cmpne"]
        if a.dt == "i32":
            ops += ["floordiv", "floormod"] * 2
        op = r.choice(ops)
        b = self.operand(a.dt, a.shape)
        if r.random() < 0.5:
            a, b = b, a
        div = op in ("floordiv", "floormod")
        if div and not all(div_defined(x, y) for x, y in zip(a.flat, b.flat)):
            if self.undefined_ok:
                self.undefined = True  # left as it is: the program has no value (see main)
            else:
                b = self.divisor(b)  # b as it is where every element is defined
        dt = "bool" if op in ("cmplt", "cmpne") else a.dt
        flat = [binary(op, a.dt, x, y) if not div or div_defined(x, y) else 0 for x, y in zip(a.flat, b.flat)]
        return self.emit("%s %s, %s" % (op, a.name, b.name), dt, a.shape, flat)

    def divisor(self, b):
        """A divisor made from b that is never 0 nor -1: (b mod 12) + 1, or -((b mod 12) + 2)."""
        neg = self.rng.random() < 0.4
        m = self.emit("floormod %s, %s" % (b.name, self.splat("i32", 12, b.shape).name), "i32", b.shape,
                      [x % 12 for x in b.flat])
        k = 2 if neg else 1
        d = self.emit("add %s, %s" % (m.name, self.splat("i32", k, b.shape).name), "i32", b.shape,
                      [x + k for x in m.flat])
        if neg:
            d = self.emit("mul %s, %s" % (d.name, self.splat("i32", -1, b.shape).name), "i32", b.shape,
                          [-x for x in d.flat])
        return d

    def splat(self, dt, x, shape):
        """The constant x as a value of shape."""
        return self.broadcast(self.emit("const %s : dtype=%s" % (literal(dt, x), dt), dt, (), [x]), shape)

    def broadcast(self, s, shape):
        """A scalar node as a value of shape: RESHAPE to all ones, then EXPAND."""
        if not shape:
            return s
        ones = (1,) * len(shape)
        r = self.emit("reshape %s, %s" % (s.name, tup(ones)), s.dt, ones, s.flat)
        return self.emit("expand %s, %s" % (r.name, tup(shape)), s.dt, shape, s.flat * numel(shape))

    def op_unary(self, a):
        r = self.rng
        if a.dt in FLOATS and r.random() < 0.6:
            op = r.choice(["recip", "sqrt", "exp2", "log2", "sin"])
            return self.emit("%s %s" % (op, a.name), a.dt, a.shape, [unary(op, a.dt, x) for x in a.flat])
        defined = a.dt in ("i32", "bool") or all(cast_defined(x) for x in a.flat)
        targets = ["bool", "f32", "f16"] + (["i32"] if defined else [])
        dst = r.choice(targets)
        return self.emit("cast %s : dtype=%s" % (a.name, dst), dst, a.shape, [cast(a.dt, dst, x) for x in a.flat])

    def op_where(self, a):
        c = self.operand("bool", a.shape)
        b = self.operand(a.dt, a.shape)
        flat = [x if k else y for k, x, y in zip(c.flat, a.flat, b.flat)]
        return self.emit("where %s, %s, %s" % (c.name, a.name, b.name), a.dt, a.shape, flat)

    def op_stack(self, a):
        if numel(a.shape) * 3 > 48 or len(a.shape) >= 3:
            return None
        k = self.rng.randint(1, 3)
        parts = [a] + [self.operand(a.dt, a.shape) for _ in range(k - 1)]
        self.rng.shuffle(parts)
        flat = [x for p in parts for x in p.flat]
        return self.emit("stack " + ", ".join(p.name for p in parts), a.dt, (k,) + a.shape, flat)

    def op_reshape(self, a):
        n = numel(a.shape)
        shape = factor(self.rng, n)
        return self.emit("reshape %s, %s" % (a.name, tup(shape)), a.dt, shape, a.flat)

    def op_expand(self, a):
        if 1 not in a.shape:
            a = self.emit("reshape %s, %s" % (a.name, tup(a.shape + (1,))), a.dt, a.shape + (1,), a.flat)
        shape = tuple(self.rng.randint(1, 3) if d == 1 else d for d in a.shape)
        if numel(shape) > 48:
            return None
        st = strides(a.shape)
        flat = [a.flat[sum((0 if a.shape[k] == 1 else ix[k]) * st[k] for k in range(len(shape)))]
                for ix in indices(shape)]
        return self.emit("expand %s, %s" % (a.name, tup(shape)), a.dt, shape, flat)

    def op_permute(self, a):
        if len(a.shape) < 2:
            return None
        perm = list(range(len(a.shape)))
        self.rng.shuffle(perm)
        shape = tuple(a.shape[p] for p in perm)
        st = strides(a.shape)
        flat = [a.flat[sum(ix[k] * st[perm[k]] for k in range(len(perm)))] for ix in indices(shape)]
        return self.emit("permute %s, %s" % (a.name, tup(perm)), a.dt, shape, flat)

    def op_shrink(self, a):
        if not a.shape:
            return None
        r = self.rng
        bounds = []
        for d in a.shape:
            b = r.randint(0, d - 1)
            bounds.append((b, r.randint(b + 1, d)))
        shape = tuple(e - b for b, e in bounds)
        st = strides(a.shape)
        flat = [a.flat[sum((ix[k] + bounds[k][0]) * st[k] for k in range(len(shape)))] for ix in indices(shape)]
        text = "(" + ", ".join("(%d, %d)" % be for be in bounds) + ("," if len(bounds) == 1 else "") + ")"
        return self.emit("shrink %s, %s" % (a.name, text), a.dt, shape, flat)

    def op_reduce(self, a):
        if not a.shape:
            return None
        r = self.rng
        k = r.randint(1, len(a.shape))
        ops = ["add", "mul", "max"]
        op = r.choice(ops)
        keep = a.shape[:len(a.shape) - k]
        flat = reduce_flat(op, a.dt, a.flat, numel(a.shape[len(a.shape) - k:]))
        return self.emit("reduce %s : op=%s pop=%d" % (a.name, op, k), a.dt, keep, flat)

    def op_matmul(self, a):
        """a (M, K) @ b (K, N) as the seed writes it: reshape, expand, mul, reduce; at sizes where the
        plan's register tile and panel copy apply (N a multiple of 16 above 16), now and then."""
        r = self.rng
        if a.dt not in ("f32", "i32", "f16") or len(a.shape) != 2 or numel(a.shape) > 48:
            M, K = r.choice([2, 4, 8]), r.randint(1, 6)
            a = self.leaf(r.choice(["f32", "f32", "i32", "f16"]), (M, K))
        M, K = a.shape
        N = r.choice([1, 2, 3, 32, 48])
        b = self.leaf(a.dt, (K, N))
        a3 = self.emit("reshape %s, %s" % (a.name, tup((M, 1, K))), a.dt, (M, 1, K), a.flat)
        ae = self.emit("expand %s, %s" % (a3.name, tup((M, N, K))), a.dt, (M, N, K),
                       [a.flat[i * K + k] for i in range(M) for j in range(N) for k in range(K)])
        bt = self.emit("permute %s, (1, 0)" % b.name, b.dt, (N, K), [b.flat[k * N + j] for j in range(N) for k in range(K)])
        b3 = self.emit("reshape %s, %s" % (bt.name, tup((1, N, K))), b.dt, (1, N, K), bt.flat)
        be = self.emit("expand %s, %s" % (b3.name, tup((M, N, K))), b.dt, (M, N, K), bt.flat * M)
        m = self.emit("mul %s, %s" % (ae.name, be.name), a.dt, (M, N, K),
                      [binary("mul", a.dt, x, y) for x, y in zip(ae.flat, be.flat)])
        return self.emit("reduce %s : op=add pop=1" % m.name, a.dt, (M, N), reduce_flat("add", a.dt, m.flat, K))

    def op_call(self, a):
        """CALL of a body over PARAMs (slots 0 and 1, a's dtype and shape): one or two elementwise ops."""
        r = self.rng
        b = self.operand(a.dt, a.shape)
        sh = (" shape=%s" % tup(a.shape)) if a.shape else ""
        p0 = self.emit("param : slot=0 dtype=%s%s" % (a.dt, sh), a.dt, a.shape, a.flat)
        p1 = self.emit("param : slot=1 dtype=%s%s" % (a.dt, sh), a.dt, a.shape, b.flat)
        ops = ["add", "mul", "max"] + (["floordiv", "floormod"] if a.dt == "i32" else [])
        op = r.choice(ops)
        if op in ("floordiv", "floormod") and not all(div_defined(x, y) for x, y in zip(a.flat, b.flat)):
            op = "add"
        inner = [p0, p1]
        body = self.emit("%s %s, %s" % (op, p0.name, p1.name), a.dt, a.shape,
                         [binary(op, a.dt, x, y) for x, y in zip(a.flat, b.flat)])
        if r.random() < 0.5:  # a second op, reading a parameter again
            op2 = r.choice(["add", "mul", "max", "cmplt"])
            inner.append(body)
            body = self.emit("%s %s, %s" % (op2, body.name, p0.name), "bool" if op2 == "cmplt" else a.dt, a.shape,
                             [binary(op2, a.dt, x, y) for x, y in zip(body.flat, a.flat)])
        inner.append(body)
        self.pool = [v for v in self.pool if v not in inner]  # the body is not a value of the program
        return self.emit("call %s, %s, %s : name=f%d" % (body.name, a.name, b.name, self.n), body.dt, a.shape, body.flat)

    def program(self):
        r = self.rng
        dt = r.choice(["i32", "i32", "f32", "f32", "f16", "bool"])
        shape = tuple(r.randint(1, 4) for _ in range(r.randint(0, 3)))
        cur = self.leaf(dt, shape)
        steps = [self.op_binary] * 5 + [self.op_unary] * 2 + [self.op_where, self.op_stack, self.op_reshape,
                                                                 self.op_expand, self.op_permute,
                                                                 self.op_shrink] + [self.op_reduce] * 2 + [self.op_matmul, self.op_call]
        while self.n < self.max_nodes:
            src = cur if r.random() < 0.7 else r.choice(self.pool)
            v = r.choice(steps)(src)
            if v is not None:
                cur = v
        if cur is not self.pool[-1]:  # the root is the last line
            cur = self.emit("reshape %s, %s" % (cur.name, tup(cur.shape)), cur.dt, cur.shape, cur.flat)
        return "\n".join(self.lines) + "\n", cur


def tup(t):
    return "(" + ", ".join(str(x) for x in t) + ("," if len(t) == 1 else "") + ")"


def factor(rng, n):
    """A random shape with n elements, 1 to 3 dims."""
    dims, left = [], n
    for _ in range(rng.randint(0, 2)):
        divs = [d for d in range(1, left + 1) if left % d == 0]
        d = rng.choice(divs)
        dims.append(d)
        left //= d
    dims.append(left)
    rng.shuffle(dims)
    return tuple(dims)


# ---------------------------------------------------------------- comparing

TOKEN = re.compile(r"-?inf|nan")


def parse_value(text):
    """uopc's printed value (a Python literal with inf and nan) as nested lists."""
    return ast.literal_eval(TOKEN.sub(lambda m: "'%s'" % m.group(0), text.strip()))


def flatten(x):
    if isinstance(x, list):
        return [y for e in x for y in flatten(e)]
    return [x]


def shape_of(x):
    return (len(x),) + shape_of(x[0]) if isinstance(x, list) and x else ((0,) if isinstance(x, list) else ())


def same(dt, want, got):
    if dt == "bool":
        return isinstance(got, bool) and got == want
    if dt == "i32":
        return isinstance(got, int) and not isinstance(got, bool) and got == want
    if isinstance(got, str):
        got = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}[got]
    if not isinstance(got, (int, float)) or isinstance(got, bool):
        return False
    got = round_to(dt, got)  # the shortest digits read back to the dtype's value
    if math.isnan(want) or math.isnan(got):
        return math.isnan(want) and math.isnan(got)
    return got == want and math.copysign(1, got) == math.copysign(1, want)


def check_output(out, v):
    """None when out prints v's value, else why not."""
    try:
        x = parse_value(out)
    except (ValueError, SyntaxError) as e:
        return "unparsable output %r (%s)" % (out[:200], e)
    if shape_of(x) != v.shape:
        return "shape %s, expected %s" % (shape_of(x), v.shape)
    got = flatten(x)
    for i, (w, g) in enumerate(zip(v.flat, got)):
        if not same(v.dt, w, g):
            return "element %d (flat): got %r, expected %s" % (i, g, literal(v.dt, w))
    return None


# The plan's passes at every size (their thresholds at 1: split across threads, streaming stores,
# register tiles, panel copies), as bench_plandiff runs them; results must not change.
EVERY_PASS = {"UOPC_SPLIT_MIN_WORK": "1", "UOPC_STREAM_MIN_BYTES": "1", "UOPC_TILE_MIN_WORK": "1",
              "UOPC_PACK_MIN_BYTES": "1"}


def uopc(exe, args, stdin=None, env=None):
    p = subprocess.run([exe] + args, input=stdin, capture_output=True, text=True, timeout=120,
                       env=dict(os.environ, **env) if env else None)
    return p.returncode, p.stdout, p.stderr


def arg_parser(doc, count):
    """The options every oracle script takes: --uopc, --count, --seed, --keep, -v."""
    ap = argparse.ArgumentParser(description=doc.split("\n")[0])
    ap.add_argument("--uopc", default=os.path.join(os.path.dirname(__file__), "..", "build", "uopc"))
    ap.add_argument("--count", type=int, default=count)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--keep", default=None, help="write each disagreeing case into this directory")
    ap.add_argument("-v", action="store_true", help="a line for every case")
    return ap


def main():
    ap = arg_parser(__doc__, 200)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--max-nodes", type=int, default=24)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    bad = 0
    counts = {"run": 0, "jit-run": 0, "jit-run every pass": 0, "simplify+run": 0, "exec --arg": 0, "undefined": 0}
    with work_dir("uopc_oracle_") as tmp:
        path = os.path.join(tmp, "p.uir")
        for k in range(a.count):
            gen = Gen(rng, rng.randint(3, a.max_nodes))
            text, root = gen.program()
            with open(path, "w") as f:
                f.write(text)
            fails = []
            rc, out, err = uopc(a.uopc, ["run", path])
            fails.append(("run", rc, out, err))
            rc, out, err = uopc(a.uopc, ["jit-run", "--guard-pages", "--threads", str(a.threads), path])
            fails.append(("jit-run", rc, out, err))
            rc, out, err = uopc(a.uopc, ["jit-run", "--threads", str(a.threads), "--tier=strong", path], env=EVERY_PASS)
            fails.append(("jit-run every pass", rc, out, err))
            rc, simp, err = uopc(a.uopc, ["simplify", path])
            if rc == 0:
                rc, out, err = uopc(a.uopc, ["run", "-"], stdin=simp)
            fails.append(("simplify+run", rc, out, err))
            pick = random.Random(a.seed * 1000003 + k)  # apart from the generator's: the same programs as before
            opened = with_input(gen, pick) if pick.random() < 1 / 3 else None
            if opened:
                ptext, pv = opened
                ppath, npy = os.path.join(tmp, "q.uir"), os.path.join(tmp, "q0.npy")
                with open(ppath, "w") as f:
                    f.write(ptext)
                write_npy(npy, pv)
                rc, out, err = uopc(a.uopc, ["exec", ppath, "--guard-pages", "--threads", str(a.threads),
                                             "--arg", "0=" + npy, "--print"])
                fails.append(("exec --arg", rc, out, err))
            msgs = []
            for verb, rc, out, err in fails:
                if gen.undefined:  # some element divides by zero: no value to compare, but no crash either
                    why = None if ended_cleanly(rc, err) else "exit %d: %s" % (rc, err.strip()[:300])
                    counts["undefined"] += why is None
                else:
                    why = ("exit %d: %s" % (rc, err.strip()[:300])) if rc != 0 else check_output(out, root)
                if why:
                    msgs.append("%s: %s" % (verb, why))
                elif not gen.undefined:
                    counts[verb] += 1
            if msgs:
                bad += 1
                print("program %d (seed %d) disagrees:\n  %s\n%s" % (k, a.seed, "\n  ".join(msgs), text))
                keep_case(a.keep, "oracle_%d_%d.uir" % (a.seed, k), text)
                if opened:  # and as exec ran it, with its input
                    print("as exec ran it, PARAM slot 0 = %s:\n%s" % (pv.flat, ptext))
                    keep_case(a.keep, "oracle_%d_%d_input.uir" % (a.seed, k), ptext)
            elif a.v:
                print("program %d: %s %s agrees" % (k, root.dt, root.shape))
    print("%d programs (seed %d): run %d, jit-run %d, jit-run with every pass %d, simplify+run %d, exec with an "
          "input %d agree with the oracle; %d runs of programs that divide by zero exited without a crash; %d disagree"
          % (a.count, a.seed, counts["run"], counts["jit-run"], counts["jit-run every pass"], counts["simplify+run"],
             counts["exec --arg"], counts["undefined"], bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
