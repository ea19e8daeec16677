"""What the scripts share: f32 .npy files written and read by hand (standard
library only; gen_chain.py, attention-error.py, matmul-error.py) and `uopc
exec` of a program on them in each mode, with the kernel cache off (the two
error scripts)."""
import array
import ast
import os
import struct
import subprocess
import sys


def save_npy(path, vals, shape):
    """Writes vals (a sequence of floats) as a C-order <f4 array of shape."""
    hdr = "{'descr': '<f4', 'fortran_order': False, 'shape': %s, }" % (tuple(shape),)
    hdr += " " * (64 - (10 + len(hdr) + 1) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(hdr)) + hdr.encode())
        array.array("f", vals).tofile(f)


def load_npy(path, shape):
    """The values of a <f4 .npy file of the given shape (exit otherwise), as an array('f')."""
    b = open(path, "rb").read()
    n = struct.unpack("<H", b[8:10])[0]
    h = ast.literal_eval(b[10:10 + n].decode())
    if h["descr"] != "<f4" or tuple(h["shape"]) != tuple(shape):
        sys.exit(f"{path}: expected <f4 {tuple(shape)}, got {h}")
    a = array.array("f")
    a.frombytes(b[10 + n:])
    return a


def run(uopc, program, tmp, ins, name, shape, *flags):
    """`uopc exec program` with ins as slots 0, 1, ... and flags; the output,
    written to tmp/name.npy, read back (exit with uopc's message on failure)."""
    out = os.path.join(tmp, name + ".npy")
    args = [uopc, "exec", program]
    for s, p in enumerate(ins):
        args += ["--arg", f"{s}={p}"]
    args += list(flags) + ["--out", out]
    r = subprocess.run(args, capture_output=True, text=True, env=dict(os.environ, UOPC_CACHE="off"))
    if r.returncode != 0:
        sys.exit(f"{' '.join(args)}: {r.stderr.strip()}")
    return load_npy(out, shape)


MODES = (("strict", ()), ("strict2", ("--threads", "2")),
         ("fast", ("--fast-math",)), ("fast2", ("--fast-math", "--threads", "2")))


def run_modes(uopc, program, tmp, ins, shape):
    """The program's output in strict and fast mode, at 1 and 2 threads:
    {"strict", "strict2", "fast", "fast2"} -> array('f')."""
    return {name: run(uopc, program, tmp, ins, name, shape, *flags) for name, flags in MODES}


def threads_agree(outs):
    """True when each mode gave the same bits at 1 and 2 threads; else says which did not."""
    ok = True
    for mode in ("strict", "fast"):
        if outs[mode] != outs[mode + "2"]:
            print(f"  {mode} mode differs between 1 and 2 threads")
            ok = False
    return ok
