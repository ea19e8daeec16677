#!/usr/bin/env python3
"""An independent oracle for `uopc simplify` on index arithmetic (exactness).

Generates random i32/bool expressions over loop variables (RANGEs) and
unbounded inputs (PARAMs): ravel/unravel index sums, (x + c1) * c2,
(x * c) // c, (x + c) % m, comparisons against offsets, WHERE, MAX and CASTs
between bool and i32, with small and huge constants (near INT_MIN and
INT_MAX, where the seed's rules would assume that nothing wraps), and f32
expressions over f32 inputs (NaN, infinities, -0.0, denormals).  Runs
`uopc simplify` on each, parses the printed graph, and evaluates input and
output here, in Python (i32 wraps, floor division as Python's), at every
value of the loop variables (or a sample when there are too many) and at edge
and random values of the inputs: wherever the input has a value, the
simplified graph must have the same one (docs/uir.md, "Exactness").  Where
the input is undefined (division by zero, INT_MIN // -1) anything goes.

Usage: scripts/oracle_simplify.py [--uopc PATH] [--count N] [--seed S] [--seed-rules] [--keep DIR] [-v]
(--seed-rules checks the oracle itself: the seed's mode assumes that i32 never
wraps, and some expressions must disagree.)
Standard library only; exit status 1 when any expression disagrees.
"""
import itertools
import math
import os
import random
import re
import subprocess
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from oracle import (INT_MIN, INT_MAX, arg_parser, binary, cast, cast_defined, div_defined, keep_case,  # noqa: E402
                    literal, round_to, same, unary, work_dir, wrap)

BIG = [INT_MAX, INT_MIN, INT_MAX - 1, INT_MIN + 1, 1 << 30, -(1 << 30), 715827883, 46341, -46341, 65536]


class Undefined(Exception):
    pass


FVALS = [round_to("f32", x) for x in (0.0, -0.0, 1.0, -1.0, 2.0, 0.5, 3.0, math.inf, -math.inf, math.nan, 1e-45,
                                      3.4e38, 1e-3)]


def dtype_of(v):
    return "bool" if isinstance(v, bool) else "f32" if isinstance(v, float) else "i32"


def apply(op, dt, args):
    if op == "where":
        return args[1] if args[0] else args[2]
    if op == "cast":
        (a,) = args
        if dt == "i32" and isinstance(a, float) and not cast_defined(a):
            raise Undefined()
        return cast(dtype_of(a), dt, a)
    if len(args) == 1:
        return unary(op, "f32", args[0])
    a, b = args
    if op in ("floordiv", "floormod") and not div_defined(a, b):
        raise Undefined()
    return binary(op, dtype_of(a), a, b)


# ---------------------------------------------------------------- generator
# An expression node: (name, dtype); the text and a Python evaluator are kept
# side by side: self.nodes[name] = (op, dtype, operand names or values).

class EGen:
    def __init__(self, rng):
        self.r = rng
        self.lines, self.nodes, self.n = [], {}, 0
        self.ranges, self.params, self.fparams, self.nslots = [], [], [], 0

    def emit(self, text, op, dt, args):
        name = "%%e%d" % self.n
        self.n += 1
        self.lines.append("%s = %s" % (name, text))
        self.nodes[name] = (op, dt, args)
        return name

    def const(self):
        r = self.r
        return r.choice([r.randint(-9, 9), r.randint(-9, 9), r.randint(-100, 100), r.choice(BIG)])

    def var(self):
        r = self.r
        if not self.ranges or (len(self.ranges) < 3 and r.random() < 0.3):
            k = len(self.ranges)
            end = r.choice([1, 2, 3, 4, 5, 6, 7, 8, 10, 16, r.randint(2, 40)])
            self.ranges.append(self.emit("range %d : idx=%d" % (end, k), "range", "i32", (k, end)))
        if r.random() < 0.2:
            if not self.params or (len(self.params) < 2 and r.random() < 0.3):
                s = self.nslots
                self.nslots += 1
                self.params.append(self.emit("param : slot=%d dtype=i32" % s, "param", "i32", (s,)))
            return r.choice(self.params)
        return r.choice(self.ranges)

    def binop(self, op, a, b):
        dt = "bool" if op in ("cmplt", "cmpne") else self.nodes[a][1] if isinstance(a, str) else "i32"
        return self.emit("%s %s, %s" % (op, a, b), op, dt, (a, b))

    def index_sum(self):
        """A ravel: sum of loop variables times strides, plus an offset."""
        r = self.r
        e = None
        for _ in range(r.randint(1, 3)):
            t = self.var()
            s = r.choice([1, 2, 3, 4, 8, 10, 16, r.randint(-5, 40), r.choice(BIG)])
            if s != 1:
                t = self.binop("mul", t, s)
            e = t if e is None else self.binop("add", e, t)
        if r.random() < 0.6:
            e = self.binop("add", e, self.const())
        return e

    def expr(self, depth):
        r = self.r
        if depth >= 4 or r.random() < 0.2:
            return self.index_sum() if r.random() < 0.7 else self.var()
        x = r.random()
        a = self.expr(depth + 1)
        if x < 0.2:  # unravel: (e // d) % m
            d = r.choice([2, 3, 4, 5, 6, 7, 8, 16, -3, r.choice(BIG)])
            e = self.binop("floordiv", a, d)
            return self.binop("floormod", e, r.choice([2, 3, 4, 5, 6, 7, -4])) if r.random() < 0.6 else e
        if x < 0.35:
            return self.binop("floormod", a, r.choice([2, 3, 4, 5, 6, 7, 8, 10, -5, r.choice(BIG)]))
        if x < 0.55:
            b = self.const() if r.random() < 0.6 else self.expr(depth + 1)
            return self.binop(r.choice(["add", "mul", "add", "max"]), a, b)
        if x < 0.65:  # (x * c) // c and (x + c1) * c2
            c = r.choice([2, 3, 4, 7, 1 << 16, r.choice(BIG)])
            return self.binop("floordiv", self.binop("mul", a, c), c)
        if x < 0.8:  # a comparison, used as a WHERE's condition or cast back
            c = self.binop(r.choice(["cmplt", "cmplt", "cmpne"]), a, self.const() if r.random() < 0.7 else self.expr(depth + 1))
            if r.random() < 0.5:
                return self.emit("cast %s : dtype=i32" % c, "cast", "i32", (c,))
            b = self.expr(depth + 1) if r.random() < 0.5 else self.const()
            return self.emit("where %s, %s, %s" % (c, a, b), "where", "i32", (c, a, b))
        if x < 0.9:
            return self.binop("floordiv", a, self.expr(depth + 1))  # a divisor that may be 0
        return self.binop(r.choice(["add", "mul", "max"]), a, self.expr(depth + 1))

    def fparam(self):
        if not self.fparams or (len(self.fparams) < 2 and self.r.random() < 0.3):
            s = self.nslots
            self.nslots += 1
            self.fparams.append(self.emit("param : slot=%d dtype=f32" % s, "param", "f32", (s,)))
        return self.r.choice(self.fparams)

    def fconst(self):
        r = self.r
        return round_to("f32", r.choice(FVALS) if r.random() < 0.6 else r.uniform(-4, 4))

    def fbin(self, op, a, b):
        text_b = b if isinstance(b, str) else literal("f32", b)
        return self.emit("%s %s, %s" % (op, a, text_b), op, "bool" if op in ("cmplt", "cmpne") else "f32", (a, b))

    def fexpr(self, depth):
        """An f32 expression over f32 inputs: the float rules must keep NaN, infinities and -0.0."""
        r = self.r
        if depth >= 3 or r.random() < 0.25:
            if r.random() < 0.2:
                v = self.var()
                return self.emit("cast %s : dtype=f32" % v, "cast", "f32", (v,))
            return self.fparam()
        a = self.fexpr(depth + 1)
        x = r.random()
        if x < 0.45:
            b = self.fconst() if r.random() < 0.5 else self.fexpr(depth + 1)
            if r.random() < 0.3 and isinstance(b, str):
                a, b = b, a
            return self.fbin(r.choice(["add", "mul", "max", "add", "mul"]), a, b)
        if x < 0.6:
            op = r.choice(["recip", "sqrt", "exp2", "log2", "sin"])
            return self.emit("%s %s" % (op, a), op, "f32", (a,))
        if x < 0.8:
            c = self.fbin(r.choice(["cmplt", "cmpne"]), a, self.fconst() if r.random() < 0.5 else self.fexpr(depth + 1))
            b = self.fexpr(depth + 1)
            return self.emit("where %s, %s, %s" % (c, a, b), "where", "f32", (c, a, b))
        return self.fbin("mul", self.fbin("add", a, self.fconst()), self.fconst())

    def program(self):
        if self.r.random() < 0.3:
            root = self.fexpr(0)
            if self.lines[-1].split(" = ")[0] != root:
                root = self.fbin("max", root, root)
            return "\n".join(self.lines) + "\n", root
        root = self.expr(0)
        if self.r.random() < 0.3:
            root = self.binop(self.r.choice(["cmplt", "cmpne"]), root, self.const())
        if self.lines[-1].split(" = ")[0] != root:
            root = self.binop("add", root, 0) if self.nodes[root][1] == "i32" else self.binop("cmpne", root, False)
        return "\n".join(self.lines) + "\n", root


# ---------------------------------------------------------------- the printed graph

LINE = re.compile(r"^(%\S+) = (\w+)\s*(.*?)\s*(?::\s*(.*))?$")


def parse_uir(text):
    """uopc's printed graph (i32/bool ops) as {name: (op, dtype, args)} and the root's name."""
    nodes, root = {}, None
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        m = LINE.match(line)
        if not m:
            raise ValueError("unparsable line %r" % raw)
        name, op, operands, attrs = m.group(1), m.group(2), m.group(3), m.group(4) or ""
        at = dict(kv.split("=", 1) for kv in attrs.split()) if attrs else {}
        args = []
        for tok in [t.strip() for t in operands.split(",")] if operands else []:
            if tok.startswith("%"):
                args.append(tok)
            elif tok in ("True", "False"):
                args.append(tok == "True")
            elif re.fullmatch(r"-?[0-9]+", tok):
                args.append(int(tok))
            else:
                args.append(round_to("f32", float(tok)))  # float literals here are f32 (no f16 is generated)
        if op == "range":
            v = (int(at["idx"]), args[0])
        elif op == "param":
            v = (int(at["slot"]),)
        elif op == "const":
            v = (wrap(args[0]) if dtype_of(args[0]) == "i32" else args[0],)
        else:
            v = tuple(args)
        dt = at.get("dtype")
        if dt is None:
            dt = "bool" if op in ("cmplt", "cmpne") else None
        nodes[name] = (op, dt, v)
        root = name
    return nodes, root


def evaluate(nodes, name, env, memo):
    if not isinstance(name, str):
        return name
    if name in memo:
        return memo[name]
    op, dt, args = nodes[name]
    if op == "range":
        v = env[("range", args[0])]
    elif op == "param":
        v = env[("param", args[0])]
    elif op == "const":
        v = args[0]
    else:
        vals = [evaluate(nodes, a, env, memo) for a in args]
        v = apply(op, dt, vals)
    memo[name] = v
    return v


def points(rng, ranges, params, limit=600):
    """Assignments of the loop variables (all, or a sample) and the inputs (edges and random)."""
    spans = [range(end) for _, end in ranges]  # constant ends, 1 or more
    total = 1
    for s in spans:
        total *= len(s)
    pvals = [0, 1, -1, 2, INT_MAX, INT_MIN, INT_MAX - 1, INT_MIN + 1, 7, -7]
    if total <= limit:
        combos = list(itertools.product(*spans))
    else:
        combos = [tuple(rng.randrange(len(s)) for s in spans) for _ in range(limit)]
    out = []
    for combo in combos:
        for _ in range(3 if params else 1):
            env = {("range", k): x for (k, _), x in zip(ranges, combo)}
            for s, dt in params:
                if dt == "f32":
                    env[("param", s)] = rng.choice(FVALS) if rng.random() < 0.6 else round_to("f32", rng.uniform(-8, 8))
                else:
                    env[("param", s)] = rng.choice(pvals) if rng.random() < 0.5 else rng.randint(INT_MIN, INT_MAX)
            out.append(env)
    return out


def main():
    ap = arg_parser(__doc__, 300)
    ap.add_argument("--seed-rules", action="store_true",
                    help="simplify with the seed's rules, which assume no i32 wraps: expect disagreements")
    a = ap.parse_args()
    rng = random.Random(a.seed)
    bad = changed = checked = 0
    with work_dir("uopc_oracle_s_") as tmp:
        path = os.path.join(tmp, "e.uir")
        for k in range(a.count):
            g = EGen(rng)
            text, root = g.program()
            with open(path, "w") as f:
                f.write(text)
            res = subprocess.run([a.uopc, "simplify"] + (["--seed-rules"] if a.seed_rules else []) + [path], capture_output=True, text=True, timeout=120)
            why = None
            if res.returncode != 0:
                why = "exit %d: %s" % (res.returncode, res.stderr.strip()[:300])
            else:
                try:
                    snodes, sroot = parse_uir(res.stdout)
                except (ValueError, KeyError, IndexError) as e:
                    snodes, why = None, "cannot read the output: %s" % e
                if snodes is not None:
                    changed += res.stdout.count("\n") < text.count("\n")
                    ranges = [(args[0], args[1]) for op, _, args in g.nodes.values() if op == "range"]
                    params = [(args[0], dt) for op, dt, args in g.nodes.values() if op == "param"]
                    for env in points(rng, ranges, params):
                        try:
                            want = evaluate(g.nodes, root, env, {})
                        except Undefined:
                            continue
                        checked += 1
                        try:
                            got = evaluate(snodes, sroot, env, {})
                        except Undefined:
                            got = "undefined"
                        except KeyError as e:
                            got = "a variable the input does not have: %s" % e
                        if type(got) is not type(want) or not same(dtype_of(want), want, got):
                            pt = ", ".join("%s %d = %r" % (kind, i, v) for (kind, i), v in sorted(env.items()))
                            why = "at %s: simplified %r, input %r" % (pt, got, want)
                            break
            if why:
                bad += 1
                print("expression %d (seed %d) disagrees: %s\n%s--- simplified:\n%s" % (k, a.seed, why, text, res.stdout))
                keep_case(a.keep, "expr_%d_%d.uir" % (a.seed, k), text)
            elif a.v:
                print("expression %d agrees" % k)
    print("%d expressions (seed %d), %d made smaller: %d points compared, %d expressions disagree"
          % (a.count, a.seed, changed, checked, bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
