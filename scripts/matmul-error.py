#!/usr/bin/env python3
"""Fast mode's error on matmul 1024 against exact arithmetic, beside strict mode's.

    scripts/matmul-error.py [UOPC]

Runs bench/data/matmul1024.uir (C = A @ B, 1024 x 1024 f32, written as
reshape/expand/mul/reduce) with `uopc exec` in strict mode and in fast mode,
1 and 2 threads, on inputs drawn uniformly from [0, 1], [-1, 1] and
[-16, 16] (fixed seeds), and checks, on 4096 outputs chosen at random:

  * strict mode is bit for bit the f32 sum of f32 products in k order,
    without FMA (what `run` computes), emulated here with struct's f32
    rounding;
  * both modes are within the forward error bound docs/fast-math.md
    ("Matmul's tolerance") documents, which holds for any order of the sum, with or
    without FMA:  |c - exact| <= gamma_K * sum_k |a_ik b_kj|,
    gamma_K = K u / (1 - K u), K = 1024, u = 2^-24;
  * each mode gives the same bits at 1 and 2 threads (all outputs).

Prints each mode's largest error against float64, fast/strict, and the
largest error/bound.  Exit 1 when a check fails.  UOPC defaults to
build/uopc.  Standard library only; about 10 s.
"""
import os
import random
import struct
import sys
import tempfile

from npy_exec import load_npy, run_modes, save_npy, threads_agree

N = 1024
SAMPLES = 4096
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROGRAM = os.path.join(ROOT, "bench", "data", "matmul1024.uir")
F32 = struct.Struct("<f")


def f32(x):
    """x rounded to the nearest f32 (ties to even), as a Python float."""
    return F32.unpack(F32.pack(x))[0]


def main():
    uopc = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build", "uopc")
    u = 2.0 ** -24
    gamma = N * u / (1 - N * u)
    ok = True
    print(f"matmul1024: {SAMPLES} outputs against float64; bound gamma_K * sum|a b|, gamma_K = {gamma:.4e}")
    print("inputs        strict       fast 1T      fast/strict  worst error/bound  strict == f32 k-order")
    with tempfile.TemporaryDirectory() as tmp:
        for seed, lo, hi in ((1, 0.0, 1.0), (2, -1.0, 1.0), (3, -16.0, 16.0)):
            rng = random.Random(seed)
            ins = []
            for s in range(2):
                p = os.path.join(tmp, f"in{s}.npy")
                save_npy(p, [rng.uniform(lo, hi) for _ in range(N * N)], (N, N))
                ins.append(p)
            a, b = (load_npy(p, (N, N)) for p in ins)  # the f32 values uopc reads
            outs = run_modes(uopc, PROGRAM, tmp, ins, (N, N))
            es = ef = worst = 0.0
            seq_ok = True
            for _ in range(SAMPLES):
                i, j = rng.randrange(N), rng.randrange(N)
                row = a[i * N:(i + 1) * N]
                col = b[j::N]
                prods = [x * y for x, y in zip(row, col)]  # exact in double (24-bit operands)
                exact = sum(prods)  # float64: its own error is far below the bound's
                bound = gamma * sum(abs(p) for p in prods)
                acc = 0.0
                for p in prods:
                    acc = f32(acc + f32(p))
                cs, cf = outs["strict"][i * N + j], outs["fast"][i * N + j]
                if cs != acc:
                    if seq_ok:
                        print(f"  strict C[{i}][{j}] = {cs!r}, the f32 sum in k order is {acc!r}")
                    seq_ok = False
                es, ef = max(es, abs(cs - exact)), max(ef, abs(cf - exact))
                if bound > 0:
                    worst = max(worst, abs(cs - exact) / bound, abs(cf - exact) / bound)
                elif cs != exact or cf != exact:
                    worst = float("inf")
            ratio = ef / es if es else float("nan")
            print(f"[{lo:g}, {hi:g}]".ljust(13) + f" {es:.3e}    {ef:.3e}    {ratio:.3f}        {worst:.2e}"
                  f"           {'yes' if seq_ok else 'NO'}")
            if not seq_ok:
                ok = False
            if not threads_agree(outs):
                ok = False
            if worst > 1:
                print("  an output is outside the bound")
                ok = False
    print("matmul-error: " + ("every output checked within the bound" if ok else "FAILED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
