#!/usr/bin/env python3
"""An independent oracle for `uopc exec` of loop kernels.

Generates random kernels (docs/uir.md, "Kernels"): BUFFERs of every dtype,
one to three loop nests of RANGEs (constant ends, now and then an end LOADed
from a buffer), STOREs of ALU expressions over LOADs, addresses from affine,
floor-divided and floor-modded counters, from loaded values (gathers, which
bounds cannot prove in range), and from the output buffer itself (a read
after an earlier iteration's write).  Runs each here, in Python, one
iteration after another as the spec says (effects in program order, each
iteration complete before the next), with oracle.py's arithmetic, and checks
`uopc exec` at both tiers (with `--guard-pages`: each buffer ends where a
PROT_NONE page begins, so that a read past it is a crash even where its
value goes unused), and with streaming stores at any size and every loop
pass (`--stream --hot --guard-pages`, UOPC_STREAM_MIN_BYTES=1: the buffers
at whatever offset from a 64-byte boundary their sizes give), against it:

  * every address in range: the output files hold exactly the values
    computed here (floats compared at their dtype's bits, every NaN alike);
  * some address out of range: exit status 1 and "out of bounds" in the
    error, nothing written (the bounds guard, docs/lowering.md).

A kernel whose Python run meets an undefined operation (division by zero,
INT_MIN // -1, a float outside i32 cast to i32) has no value to compare: uopc
must run it without crashing (exit 0 with some values, or 1 with an error;
never a signal such as the SIGFPE of an x86 division by zero), and another
kernel is drawn for the count.

Usage: scripts/oracle_kernel.py [--uopc PATH] [--count N] [--seed S] [--keep DIR] [-v]
Standard library only; exit status 1 when any kernel disagrees.
"""
import math
import os
import random
import struct
import subprocess
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from oracle import (INT_MIN, INT_MAX, arg_parser, binary, cast, cast_defined, div_defined, ended_cleanly,  # noqa: E402
                    keep_case, literal, round_to, same, unary, work_dir)

NPY_CODE = {"f32": ("<f4", "<f"), "f16": ("<f2", "<e"), "i32": ("<i4", "<i"), "bool": ("|b1", "<?")}
DTYPES = ["f32", "f32", "i32", "i32", "f16", "bool"]


class Undefined(Exception):
    pass


class OutOfBounds(Exception):
    pass


def save_npy(path, dt, vals):
    descr, fmt = NPY_CODE[dt]
    hdr = "{'descr': '%s', 'fortran_order': False, 'shape': (%d,), }" % (descr, len(vals))
    hdr += " " * (64 - (10 + len(hdr) + 1) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(hdr)) + hdr.encode())
        f.write(b"".join(struct.pack(fmt, v) for v in vals))


def load_npy(path, dt, n):
    b = open(path, "rb").read()
    hl = struct.unpack("<H", b[8:10])[0]
    data = b[10 + hl:]
    _, fmt = NPY_CODE[dt]
    size = struct.calcsize(fmt)
    if len(data) != n * size:
        raise ValueError("%s: %d bytes of data, expected %d" % (path, len(data), n * size))
    return [struct.unpack(fmt, data[i * size:(i + 1) * size])[0] for i in range(n)]


# ---------------------------------------------------------------- expressions
# A node is a tuple: ("const", dt, v), ("range", k), ("load", slot, idx),
# ("alu", op, dt, a, b[, operand dt of a comparison]), ("un", op, dt, a),
# ("cast", dt, src_dt, a), ("where", dt, c, a, b).

class KGen:
    def __init__(self, rng):
        self.r = rng
        self.bufs = []  # (dt, length, initial values)
        self.plain = False  # generating a value that must not read the output

    def values(self, dt, n):
        g = self.r
        out = []
        for _ in range(n):
            if dt == "bool":
                out.append(g.random() < 0.5)
            elif dt == "i32":
                out.append(g.choice([g.randint(-6, 12), g.randint(-6, 12), g.randint(-1000, 1000),
                                     g.choice([0, 1, -1, INT_MAX, INT_MIN]), g.randint(INT_MIN, INT_MAX)]))
            else:
                sp = [0.0, -0.0, 1.0, -1.5, math.inf, -math.inf, math.nan, 1e-3]
                sp += [3.4e38, 1e-40] if dt == "f32" else [65504.0, 6e-8]
                x = g.choice(sp) if g.random() < 0.2 else g.uniform(-10, 10)
                out.append(round_to(dt, x))
        return out

    def const(self, dt):
        return ("const", dt, self.values(dt, 1)[0])

    def index(self, slot, ranges, depth):
        """An i32 address into buffer slot: usually provably in range."""
        g, n = self.r, self.bufs[slot][1]
        terms = None
        for k in ranges:
            if g.random() < 0.7:
                t = ("range", k)
                c = g.choice([1, 1, 2, 3, 5, 7, 8, -1, -3])
                if c != 1:
                    t = ("alu", "mul", "i32", t, ("const", "i32", c))
                if g.random() < 0.2:  # an unravel-like digit of the term: t // d or t % d
                    t = ("alu", g.choice(["floordiv", "floormod"]), "i32", t, ("const", "i32", g.choice([2, 3, 4, 8, 16])))
                terms = t if terms is None else ("alu", "add", "i32", terms, t)
        if terms is None or g.random() < 0.3:
            c = ("const", "i32", g.randint(0, max(0, n - 1)))
            terms = c if terms is None else ("alu", "add", "i32", terms, c)
        x = g.random()
        if depth < 2 and x < 0.1:  # a gather: an address loaded from an i32 buffer
            src = self.buffer("i32")
            terms = ("alu", "add", "i32", terms, ("load", src, self.index(src, ranges, depth + 1)))
        if x < 0.75:
            return ("alu", "floormod", "i32", terms, ("const", "i32", n))  # in range, provably
        if x < 0.85:
            return ("alu", "floordiv", "i32", terms, ("const", "i32", g.choice([2, 3, 4])))
        return terms  # in range or not, as the counters fall

    def length(self):
        """A buffer's length: small, larger, or a power of two (an address % 2^k: LLVM reads it as
        a truncation, where its vectorizer once read a gather as a strided load: lib/codegen/emit.c,
        unsafe_address)."""
        g = self.r
        x = g.random()
        return g.randint(1, 24) if x < 0.45 else g.randint(25, 300) if x < 0.75 else 2 ** g.randint(1, 8)

    def buffer(self, dt):
        """A buffer slot of dt (an existing one, or a new one) other than the output."""
        have = [s for s, b in enumerate(self.bufs) if b[0] == dt and s != self.out]
        if have and self.r.random() < 0.6:
            return self.r.choice(have)
        n = self.length()
        self.bufs.append((dt, n, self.values(dt, n)))
        return len(self.bufs) - 1

    def expr(self, dt, ranges, depth):
        g = self.r
        if depth >= 3 or g.random() < 0.25:
            x = g.random()
            if dt == "i32" and ranges and x < 0.25:
                return ("range", g.choice(ranges))
            if x < 0.5:
                return self.const(dt)
            slot = self.out if self.bufs[self.out][0] == dt and not self.plain and g.random() < 0.3 else self.buffer(dt)
            return ("load", slot, self.index(slot, ranges, 0))
        x = g.random()
        if x < 0.45:
            if dt == "bool" and g.random() < 0.5:
                sdt = g.choice(DTYPES)
                return ("alu", g.choice(["cmplt", "cmpne"]), "bool", self.expr(sdt, ranges, depth + 1),
                        self.expr(sdt, ranges, depth + 1), sdt)
            ops = ["add", "mul", "max"] + (["floordiv", "floormod"] * 2 if dt == "i32" else [])
            return ("alu", g.choice(ops), dt, self.expr(dt, ranges, depth + 1), self.expr(dt, ranges, depth + 1))
        if x < 0.6 and dt in ("f32", "f16"):
            return ("un", g.choice(["recip", "sqrt", "exp2", "log2", "sin"]), dt, self.expr(dt, ranges, depth + 1))
        if x < 0.8:
            sdt = g.choice(DTYPES)
            return ("cast", dt, sdt, self.expr(sdt, ranges, depth + 1))
        return ("where", dt, self.expr("bool", ranges, depth + 1), self.expr(dt, ranges, depth + 1),
                self.expr(dt, ranges, depth + 1))

    def kernel(self):
        g = self.r
        odt = g.choice(DTYPES)
        on = self.length()
        self.bufs = [(odt, on, self.values(odt, on))]
        self.out = 0
        nests = []
        nr = 0
        # one kernel in four is shaped to stream (lib/codegen/stream.c: constant ends, the
        # output never read): every nest a plain store of a value that does not read it
        stream = g.random() < 0.25
        for _ in range(g.randint(1, 3)):
            ranges, ends = [], []
            big = stream or g.random() < 0.3  # loops long enough to vectorize and unroll
            for _ in range(g.randint(1 if stream else 0, 2 if big else 3)):
                if big:
                    ends.append(g.choice([g.randint(6, 40), 16, 32, 64, g.randint(33, 90)]))
                elif g.random() < 0.1:  # an end known only at run time (a new buffer: small ends, some <= 0)
                    n = g.randint(1, 4)
                    self.bufs.append(("i32", n, [g.randint(-2, 5) for _ in range(n)]))
                    ends.append(("load", len(self.bufs) - 1, ("const", "i32", g.randint(0, n - 1))))
                else:
                    ends.append(g.randint(1, 5))
                ranges.append(nr)
                nr += 1
            if stream and ends and g.random() < 0.5:
                # a long innermost row (at least PEEL_MIN_BYTES = 2048 bytes of f32 or i32): the
                # streaming copy splits it where its stores reach a 64-byte boundary (emit.c)
                ends = [min(e, 3) for e in ends[:-1]] + [g.randint(2048, 2600)]
            plain = stream or (big and ranges and all(isinstance(e, int) for e in ends) and g.random() < 0.5)
            self.plain = plain
            val = self.expr(odt, ranges, 0)
            self.plain = False
            if plain:
                # a plain store: out[ravel of the counters], unit stride innermost, the output
                # never read in this nest (what may stream: lib/codegen/stream.c)
                addr, stride = None, 1
                for k, e in reversed(list(zip(ranges, ends))):
                    t = ("range", k) if stride == 1 else ("alu", "mul", "i32", ("range", k), ("const", "i32", stride))
                    addr = t if addr is None else ("alu", "add", "i32", addr, t)
                    stride *= e
                if stride > self.bufs[0][1]:  # grow the output (earlier nests' addresses stay in range)
                    self.bufs[0] = (odt, stride, self.bufs[0][2] + self.values(odt, stride - self.bufs[0][1]))
            else:
                addr = self.index(0, ranges, 0)
                if g.random() < 0.35:  # an accumulation: out[addr] = out[addr] OP value
                    op = g.choice(["add", "mul", "max"])
                    old = ("load", 0, addr)
                    val = ("alu", op, odt, old, val) if g.random() < 0.7 else ("alu", op, odt, val, old)
            nests.append((ranges, ends, addr, val))
        return nests


def reads(n, slot):
    """Whether expression n loads buffer slot."""
    if n[0] == "load":
        return n[1] == slot or reads(n[2], slot)
    return any(isinstance(x, tuple) and reads(x, slot) for x in n[1:])


def may_stream(nests):
    """lib/codegen/stream.c's condition (with UOPC_STREAM_MIN_BYTES=1): every loop end a
    positive constant and the output (slot 0) never loaded; 512-bit vectors then make the
    kernel's streaming copy."""
    return all(isinstance(e, int) and e > 0 for _, ends, _, _ in nests for e in ends) and \
        not any(reads(x, 0) for _, ends, addr, val in nests for x in [addr, val] + list(ends) if isinstance(x, tuple))


# ---------------------------------------------------------------- Python run

def evaluate(n, env, mem, bufs):
    k = n[0]
    if k == "const":
        return n[2]
    if k == "range":
        return env[n[1]]
    if k == "load":
        i = evaluate(n[2], env, mem, bufs)
        if not 0 <= i < bufs[n[1]][1]:
            raise OutOfBounds()
        return mem[n[1]][i]
    if k == "alu":
        op, dt = n[1], n[2]
        a, b = evaluate(n[3], env, mem, bufs), evaluate(n[4], env, mem, bufs)
        if op in ("floordiv", "floormod") and not div_defined(a, b):
            raise Undefined()
        return binary(op, n[5] if len(n) > 5 else dt, a, b)
    if k == "un":
        return unary(n[1], n[2], evaluate(n[3], env, mem, bufs))
    if k == "cast":
        a = evaluate(n[3], env, mem, bufs)
        if n[1] == "i32" and n[2] in ("f32", "f16") and not cast_defined(a):
            raise Undefined()
        return cast(n[2], n[1], a)
    if k == "where":
        c, a, b = (evaluate(x, env, mem, bufs) for x in n[2:5])
        return a if c else b
    raise ValueError(k)


def run_python(nests, bufs):
    """The output buffer after the kernel, or raises OutOfBounds / Undefined."""
    mem = [list(b[2]) for b in bufs]
    for ranges, ends, addr, val in nests:
        env = {}

        def loop(d):
            if d == len(ranges):
                v = evaluate(val, env, mem, bufs)
                i = evaluate(addr, env, mem, bufs)
                if not 0 <= i < bufs[0][1]:
                    raise OutOfBounds()
                mem[0][i] = v
                return
            e = ends[d] if isinstance(ends[d], int) else evaluate(ends[d], env, mem, bufs)
            for x in range(e):
                env[ranges[d]] = x
                loop(d + 1)

        loop(0)
    return mem[0]


# ---------------------------------------------------------------- .uir text

class Writer:
    def __init__(self, bufs):
        self.lines, self.n, self.memo = [], 0, {}
        for s, (dt, ln, _) in enumerate(bufs):
            self.lines.append("%%b%d = buffer : slot=%d dtype=%s shape=(%d,)" % (s, s, dt, ln))

    def line(self, text):
        name = "%%t%d" % self.n
        self.n += 1
        self.lines.append("%s = %s" % (name, text))
        return name

    def node(self, n, bufs):
        key = repr(n)
        if key in self.memo:
            return self.memo[key]
        k = n[0]
        if k == "const":
            t = self.line("const %s : dtype=%s" % (literal(n[1], n[2]), n[1]))
        elif k == "range":
            t = "%%r%d" % n[1]
        elif k == "load":
            t = self.line("load " + self.line("index %%b%d, %s" % (n[1], self.node(n[2], bufs))))
        elif k == "alu":
            t = self.line("%s %s, %s" % (n[1], self.node(n[3], bufs), self.node(n[4], bufs)))
        elif k == "un":
            t = self.line("%s %s" % (n[1], self.node(n[3], bufs)))
        elif k == "cast":
            t = self.line("cast %s : dtype=%s" % (self.node(n[3], bufs), n[1]))
        else:
            t = self.line("where %s, %s, %s" % tuple(self.node(x, bufs) for x in n[2:5]))
        self.memo[key] = t
        return t


def kernel_text(nests, bufs):
    w = Writer(bufs)
    effects = []
    for ranges, ends, addr, val in nests:
        for k, e in zip(ranges, ends):
            end = str(e) if isinstance(e, int) else w.node(e, bufs)
            w.lines.append("%%r%d = range %s : idx=%d" % (k, end, k))
        v = w.node(val, bufs)
        st = w.line("store %s, %s" % (w.line("index %%b0, %s" % w.node(addr, bufs)), v))
        if ranges:
            st = w.line("end %s, %s" % (st, ", ".join("%%r%d" % k for k in ranges)))
        effects.append(st)
    w.lines.append("%%k = sink %s" % ", ".join(effects))
    return "\n".join(w.lines) + "\n"


def main():
    a = arg_parser(__doc__, 100).parse_args()
    rng = random.Random(a.seed)
    stats = {"values": 0, "out of bounds": 0, "undefined": 0, "stream": 0, "peel": 0}
    bad = 0
    with work_dir("uopc_oracle_k_") as tmp:
        k = 0
        while k < a.count:
            g = KGen(rng)
            nests = g.kernel()
            want, kind = None, "values"
            try:
                want = run_python(nests, g.bufs)
            except Undefined:
                kind = "undefined"  # no value to compare: uopc must only not crash
            except OutOfBounds:
                kind = "out of bounds"
            text = kernel_text(nests, g.bufs)
            path = os.path.join(tmp, "k.uir")
            with open(path, "w") as f:
                f.write(text)
            msgs = []
            files = [os.path.join(tmp, "b%d.npy" % s) for s in range(len(g.bufs))]
            for p, (dt, n, vals) in zip(files[1:], g.bufs[1:]):  # the inputs, once
                save_npy(p, dt, vals)
            # the fast and strong runs with every buffer between PROT_NONE pages: a read or write past
            # a buffer's end is a SIGSEGV there, even where its value would go unused
            # (the streaming run too: a buffer then starts where its size puts it, at any offset from a
            # 64-byte boundary, which is what the streaming copy's peel aligns, lib/codegen/emit.c)
            for tier in ("fast --guard-pages", "strong --guard-pages", "fast --stream --hot --guard-pages"):
                args = [a.uopc, "exec", path] + ("--tier=" + tier).split() + ["--out", "0=" + files[0]]
                args += [x for s, p in enumerate(files) for x in ("--arg", "%d=%s" % (s, p))]
                env = dict(os.environ, UOPC_STREAM_MIN_BYTES="1") if "--stream" in tier else None
                save_npy(files[0], g.bufs[0][0], g.bufs[0][2])  # the output: read and written by each run
                res = subprocess.run(args, capture_output=True, text=True, timeout=120, env=env)
                if kind == "undefined":
                    if not ended_cleanly(res.returncode, res.stderr):
                        msgs.append("%s: an undefined operation: expected a value or an error, got exit %d: %s"
                                    % (tier, res.returncode, res.stderr.strip()[:300]))
                    continue
                if kind == "out of bounds":
                    if res.returncode != 1 or "out of bounds" not in res.stderr:
                        msgs.append("%s: expected an out-of-bounds error, got exit %d: %s"
                                    % (tier, res.returncode, res.stderr.strip()[:300]))
                    continue
                if res.returncode != 0:
                    msgs.append("%s: exit %d: %s" % (tier, res.returncode, res.stderr.strip()[:300]))
                    continue
                dt, n, _ = g.bufs[0]
                got = load_npy(files[0], dt, n)
                for i, (w, x) in enumerate(zip(want, got)):
                    if not same(dt, w, x):
                        msgs.append("%s: element %d: got %r, expected %r" % (tier, i, x, w))
                        break
            if msgs:
                bad += 1
                inputs = "\n".join("# slot %d: %s" % (s, [literal(b[0], v) for v in b[2]]) for s, b in enumerate(g.bufs))
                print("kernel %d (seed %d) disagrees:\n  %s\n%s\n%s" % (k, a.seed, "\n  ".join(msgs), inputs, text))
                keep_case(a.keep, "kernel_%d_%d.uir" % (a.seed, k), inputs + "\n" + text)
            else:
                stats[kind] += 1
                if kind == "values" and may_stream(nests):  # did it stream? (its assembly's vmovnt*)
                    asm = subprocess.run([a.uopc, "compile", "--emit=asm", "--tier=fast", "--stream", "--hot", path],
                                         capture_output=True, text=True, timeout=120,
                                         env=dict(os.environ, UOPC_STREAM_MIN_BYTES="1"))
                    stats["stream"] += "vmovnt" in asm.stdout
                    if "vmovnt" in asm.stdout:  # through the peel? (its loop in the IR)
                        ir = subprocess.run([a.uopc, "compile", "--emit=llvm", "--tier=fast", "--stream", "--hot", path],
                                            capture_output=True, text=True, timeout=120,
                                            env=dict(os.environ, UOPC_STREAM_MIN_BYTES="1"))
                        stats["peel"] += "peel.loop" in ir.stdout
                if a.v:
                    print("kernel %d: %s" % (k, kind))
            k += kind != "undefined"  # those come on top of the count
    print("%d kernels (seed %d): %d with every value the oracle's (%d of them with streaming stores, %d through "
          "the peel), "
          "%d refused out of bounds as expected, %d disagree; and %d with an undefined operation ran "
          "without a crash" % (a.count, a.seed, stats["values"], stats["stream"], stats["peel"], stats["out of bounds"], bad,
                               stats["undefined"]))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
