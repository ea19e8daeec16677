#!/usr/bin/env bash
# The throughput benchmark of issue 12 in one command (docs/bench.md): builds
# bench_throughput if needed, runs it (every workload through uopc and
# through its reference, side by side), and draws the ratios.
#
#   scripts/bench.sh [--build-dir DIR] [--no-build] [--out DIR] [bench_throughput options]
#
#   --build-dir DIR  the CMake build to use (default build/; configured as
#                    Release when it does not exist yet)
#   --no-build       run what DIR holds, do not build (the ctest bench_smoke)
#   --out DIR        where the results go (default bench-results/, git-ignored):
#                    bench.txt (the printed table), bench.tsv (the same rows,
#                    tab-separated), ratios.svg (the plot)
#   other options go to bench_throughput: --smoke, --reps N, --only NAME,...,
#   --tier fast|strong (bench_throughput --help lists them)
#
# Exit status: bench_throughput's (1 when a strict output differs from its C
# reference), else the plot's.  The benchmark needs Google Benchmark and
# clang-19 to be built (scripts/deps.sh); OpenBLAS (libopenblas-dev) only
# for its rows.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build
out=$root/bench-results
nobuild=0
args=()
while [ $# -gt 0 ]; do
  case $1 in
    --build-dir) build=$2; shift 2 ;;
    --no-build) nobuild=1; shift ;;
    --out) out=$2; shift 2 ;;
    *) args+=("$1"); shift ;;
  esac
done
if [ $nobuild = 0 ]; then
  if [ ! -f "$build/CMakeCache.txt" ]; then
    echo "bench.sh: configuring $build (Release)"
    cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
  fi
  type=$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$build/CMakeCache.txt")
  case $type in
    Release|RelWithDebInfo) ;;
    *) echo "bench.sh: warning: $build is a '${type:-no type}' build: uopc's figures are not its release speed" ;;
  esac
  echo "bench.sh: building bench_throughput in $build"
  mkdir -p "$build"
  if ! cmake --build "$build" --target bench_throughput -j"$(nproc)" >"$build/bench-build.log" 2>&1; then
    tail -30 "$build/bench-build.log"
    echo "bench.sh: the build failed (log: $build/bench-build.log); the benchmarks need -DUOPC_BENCH=ON,"
    echo "  Google Benchmark (libbenchmark-dev) and clang-19: scripts/deps.sh installs them"
    exit 1
  fi
fi
exe=$build/bench/bench_throughput
if [ ! -x "$exe" ]; then
  echo "bench.sh: $exe is not built (configure with -DUOPC_BENCH=ON; it needs libbenchmark-dev and clang-19)"
  exit 1
fi
mkdir -p "$out"
rm -f "$out/bench.tsv" "$out/ratios.svg"  # never plot an earlier run's rows
status=0
"$exe" --out "$out" "${args[@]}" | tee "$out/bench.txt" || status=$?
if [ -f "$out/bench.tsv" ]; then
  if python3 "$root/bench/plot_ratios.py" "$out/bench.tsv" "$out/ratios.svg"; then
    echo "bench.sh: table $out/bench.txt, rows $out/bench.tsv, plot $out/ratios.svg"
  else
    echo "bench.sh: the plot failed"
    [ $status != 0 ] || status=1
  fi
fi
exit $status
