#!/usr/bin/env bash
# Runs every libFuzzer target for a long time (the test command runs each for
# 40 s).  Usage: scripts/fuzz-long.sh [SECONDS_EACH] (default 600).
# Builds with clang-19 into build-fuzz/, keeps each target's corpus in
# build-fuzz/corpus_TARGET (seeded from test/corpus_TARGET), and prints per
# target: runs, executions per second, corpus size, and passed/FAILED.
# FUZZ_JOBS=N runs N targets at a time (default 1).
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_EACH=${1:-600}
JOBS=${JOBS:-$(nproc)}
dir=build-fuzz
cmake -S . -B $dir -DCMAKE_C_COMPILER=clang-19 -DCMAKE_CXX_COMPILER=clang++-19 -DUOPC_FUZZ=ON -DUOPC_TESTS=ON \
  -DUOPC_BENCH=OFF >$dir.log 2>&1
targets=$(cd test && ls fuzz_*.c | sed 's/^fuzz_//; s/\.c$//')
cmake --build $dir -j"$JOBS" --target $(for t in $targets; do printf 'fuzz_%s ' "$t"; done) >>$dir.log 2>&1
fuzz_one() {  # target
  local t=$1 log=$dir/fuzz_$1.log res
  mkdir -p $dir/corpus_$t
  cp test/corpus_$t/* $dir/corpus_$t/ 2>/dev/null || true
  if UOPC_CACHE_DIR=$dir/cache_$t $dir/test/fuzz_$t -max_total_time="$SECONDS_EACH" -rss_limit_mb=4096 \
       -print_final_stats=1 $dir/corpus_$t >"$log" 2>&1; then
    res=passed
  else
    res=FAILED; tail -40 "$log"
  fi
  local runs speed files
  runs=$(grep -oE 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -oE '[0-9]+$' || echo 0)
  speed=$(grep -oE 'stat::average_exec_per_sec: *[0-9]+' "$log" | grep -oE '[0-9]+$' || echo 0)
  files=$(ls $dir/corpus_$t | wc -l)
  echo "fuzz $t: $res, ${SECONDS_EACH} s, $runs runs, $speed exec/s, corpus $files files"
  [ $res = passed ]
}
export -f fuzz_one
export dir SECONDS_EACH
status=0
printf '%s\n' $targets | xargs -P "${FUZZ_JOBS:-1}" -I{} bash -c 'fuzz_one {}' || status=1
exit $status
