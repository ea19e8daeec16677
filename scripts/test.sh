#!/usr/bin/env bash
# The whole test suite: the codegen id's coverage of lib/, a plain build, an
# AddressSanitizer+UBSan build, and bounded libFuzzer runs of the .uir
# parser, the .npy reader and the kernel cache's entry loader.  Exits
# non-zero on any failure.
#   FUZZ_SECONDS  how long each fuzzer runs (default 60)
#   JOBS          build parallelism (default: number of cores)
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS=${JOBS:-$(nproc)}
FUZZ_SECONDS=${FUZZ_SECONDS:-60}
status=0

run_suite() {  # name, cmake args...
  local dir=build-test-$1; shift
  echo "=== $dir: configure and build"
  cmake -S . -B "$dir" -DUOPC_BENCH=OFF "$@" >"$dir.log" 2>&1 || { cat "$dir.log"; return 1; }
  cmake --build "$dir" -j"$JOBS" >>"$dir.log" 2>&1 || { tail -50 "$dir.log"; return 1; }
  echo "=== $dir: ctest"
  (cd "$dir" && ctest --output-on-failure -j"$JOBS" --timeout 600)
}

echo "=== the kernel cache's codegen id covers lib/"
bash scripts/check_codegen_id.sh || status=1

run_suite plain -DCMAKE_BUILD_TYPE=RelWithDebInfo || status=1
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
  run_suite asan -DCMAKE_BUILD_TYPE=Debug -DUOPC_SANITIZE=ON || status=1

if command -v clang-19 >/dev/null; then
  dir=build-test-fuzz
  if cmake -S . -B $dir -DCMAKE_C_COMPILER=clang-19 -DCMAKE_CXX_COMPILER=clang++-19 -DUOPC_FUZZ=ON \
       -DUOPC_TESTS=ON -DUOPC_BENCH=OFF >$dir.log 2>&1 && cmake --build $dir -j"$JOBS" --target fuzz_uir fuzz_npy fuzz_cache >>$dir.log 2>&1; then
    # the .uir parser and printer, the .npy reader and writer, the kernel cache entry loader
    for target in uir npy cache; do
      echo "=== fuzz: $target, ${FUZZ_SECONDS}s"
      mkdir -p $dir/corpus_$target && cp test/corpus_$target/* $dir/corpus_$target/ 2>/dev/null || true
      if $dir/test/fuzz_$target -max_total_time="$FUZZ_SECONDS" -rss_limit_mb=4096 -print_final_stats=1 \
           $dir/corpus_$target >$dir/fuzz_$target.log 2>&1; then
        grep -E "stat::number_of_executed_units|Done" $dir/fuzz_$target.log | tail -2 || true
        echo "fuzz $target: passed"
      else
        tail -60 $dir/fuzz_$target.log; echo "fuzz $target: FAILED"; status=1
      fi
    done
  else
    tail -50 $dir.log; echo "fuzz: build FAILED"; status=1
  fi
else
  echo "fuzz: clang-19 not installed"; status=1
fi

if [ $status = 0 ]; then echo "uopc: all test stages passed"; else echo "uopc: SOME TEST STAGE FAILED"; fi
exit $status
