#!/usr/bin/env python3
"""Fast mode's error on attention against exact arithmetic, beside strict mode's.

    scripts/attention-error.py [UOPC]

Runs bench/data/attention512.uir (softmax(Q K^T / 8) V, N = 512, d = 64) with
`uopc exec` in strict mode and in fast mode, 1 and 2 threads, on inputs drawn
uniformly from [-s, s] for s = 1, 4 and 16 (fixed seeds), evaluates the same
formula in Python's double precision, and prints each mode's largest absolute
error against it beside the tolerance docs/fast-math.md ("Whole programs")
documents: for output row i,

    |out - exact| <= 1.1 * max|V| * u * (2 * (2d + 8) * S_i + 2N + 8),

u = 2^-24, S_i = max_j 0.125 * sum_k |Q_ik K_jk| (the derivation is in the
doc; it holds for any order of the sums, so for both modes).  Exit 1 when an
output is outside it, when strict mode differs between 1 and 2 threads, or
fast mode does.  UOPC defaults to build/uopc.  Standard library only (the
.npy files are written by hand); about 20 s.
"""
import math
import os
import random
import sys
import tempfile

from npy_exec import load_npy, run_modes, save_npy, threads_agree

N, D = 512, 64
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROGRAM = os.path.join(ROOT, "bench", "data", "attention512.uir")


def exact(q, k, v):
    """softmax(Q K^T * 0.125) V in double precision from the f32 inputs, and
    each row's S_i = max_j 0.125 * sum_k |Q_ik K_jk|."""
    out, big = [], []
    for i in range(N):
        qi = q[i * D:(i + 1) * D]
        s = [sum(a * b for a, b in zip(qi, k[j * D:(j + 1) * D])) * 0.125 for j in range(N)]
        big.append(max(sum(abs(a * b) for a, b in zip(qi, k[j * D:(j + 1) * D])) * 0.125 for j in range(N)))
        m = max(s)
        e = [math.exp(x - m) for x in s]
        z = sum(e)
        out += [sum(e[j] * v[j * D + c] for j in range(N)) / z for c in range(D)]
    return out, big


def main():
    uopc = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build", "uopc")
    u = 2.0 ** -24
    ok = True
    print("attention512: largest |error| against float64; tol: the largest bound of an output row")
    print("scale seed  strict       fast 1T      fast/strict  tol          worst error/tol")
    with tempfile.TemporaryDirectory() as tmp:
        for seed, scale in ((1, 1.0), (2, 4.0), (3, 16.0)):
            rng = random.Random(seed)
            ins = []
            for s in range(3):
                p = os.path.join(tmp, f"in{s}.npy")
                save_npy(p, [rng.uniform(-scale, scale) for _ in range(N * D)], (N, D))
                ins.append(p)
            q, k, v = (list(load_npy(p, (N, D))) for p in ins)  # the f32 values uopc reads
            ref, big = exact(q, k, v)
            vmax = max(abs(x) for x in v)
            tol = [1.1 * vmax * u * (2 * (2 * D + 8) * big[i // D] + 2 * N + 8) for i in range(N * D)]
            outs = {k: list(o) for k, o in run_modes(uopc, PROGRAM, tmp, ins, (N, D)).items()}
            err = lambda o: max(abs(a - b) for a, b in zip(o, ref))
            worst = lambda o: max(abs(a - b) / t for a, b, t in zip(o, ref, tol))
            es, ef = err(outs["strict"]), err(outs["fast"])
            w = max(worst(outs["strict"]), worst(outs["fast"]))
            print(f"{scale:5g} {seed:4d}  {es:.3e}    {ef:.3e}    {ef / es:.3f}        {max(tol):.3e}    {w:.2e}")
            if not threads_agree(outs):
                ok = False
            if w > 1:
                print("  an output is outside the tolerance")
                ok = False
    print("attention-error: " + ("every output within the tolerance" if ok else "FAILED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
