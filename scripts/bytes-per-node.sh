#!/usr/bin/env bash
# Bytes per node: the peak RSS of `uopc print` and `uopc simplify` of a
# 1,000,000-node chain kernel (scripts/gen_chain.py), less the peak RSS of
# the same command on a 10-node chain (the process, libLLVM, the rule
# tables), divided by the difference in nodes.  The input text is counted
# too: `print` holds the file, the graph and the printed text at its peak.
#
#   scripts/bytes-per-node.sh [UOPC] [N] [--compile]
#
# UOPC: the CLI (default build/uopc), N: the chain length (default 1000000).
# --compile also runs `uopc exec` on the chain (the whole kernel through
# linearize, the LLVM IR emitter and the JIT) and reports its time and RSS;
# this takes minutes, which is why the suite's MillionNodes test stops after
# the linearize stage.
set -euo pipefail
cd "$(dirname "$0")/.."
uopc=${1:-build/uopc}
n=${2:-1000000}
compile=0
for a in "$@"; do [ "$a" = --compile ] && compile=1; done
work=$(mktemp -d "${TMPDIR:-/tmp}/uopc-bpn.XXXXXX")
trap 'rm -rf "$work"' EXIT
python3 scripts/gen_chain.py "$n" "$work/big.uir" "$work/in.npy"
python3 scripts/gen_chain.py 10 "$work/small.uir"
# peak RSS in KiB and wall seconds of one command (its stdout discarded)
measure() {
  python3 - "$@" <<'PY'
import resource, subprocess, sys, time
t = time.time()
r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
if r.returncode != 0:
    sys.exit("failed: %s: %s" % (" ".join(sys.argv[1:]), r.stderr.decode()[-400:]))
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, "%.2f" % (time.time() - t))
PY
}
nodes=$((n + 12))  # the chain and 12 more: 2 buffers, range and its 1024, 0.5, 0.999, load, 2 index, store, end, sink
echo "bytes-per-node: $uopc, a chain of $n add/mul nodes (scripts/gen_chain.py), $(wc -c <"$work/big.uir") bytes of .uir"
for verb in print simplify; do
  read -r big secs < <(UOPC_CACHE=0 measure "$uopc" $verb "$work/big.uir")
  read -r small _ < <(UOPC_CACHE=0 measure "$uopc" $verb "$work/small.uir")
  echo "bytes-per-node: uopc $verb: peak RSS $((big / 1024)) MiB ($((small / 1024)) MiB for 10 nodes), $secs s:" \
       "$(( (big - small) * 1024 / (nodes - 22) )) bytes per node"
done
if [ $compile = 1 ]; then
  read -r big secs < <(UOPC_CACHE=0 measure "$uopc" exec "$work/big.uir" --arg 0="$work/in.npy" --out 1="$work/out.npy")
  echo "bytes-per-node: uopc exec (compile through LLVM and run): peak RSS $((big / 1024)) MiB, $secs s"
fi
