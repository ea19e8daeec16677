#!/usr/bin/env bash
# The googletest suite under valgrind memcheck, and the uopc processes a
# chosen set of CLI tests start: 0 errors and 0 bytes definitely lost, or
# the stage fails.  LLVM's reachable allocations (its static registries,
# still referenced at exit) are not errors.
#
#   scripts/valgrind.sh [BUILD_DIR]   (default build-test-valgrind)
#
# Configures and builds BUILD_DIR as the plain RelWithDebInfo build (no
# sanitizers; scripts/test.sh passes its build-test-plain, already built),
# then runs, JOBS at a time (default: the core count), each under
#   valgrind --leak-check=full --errors-for-leak-kinds=definite --error-exitcode=99
# with one log per process in BUILD_DIR/valgrind/:
#   pass "all": uopc_tests in SHARDS googletest shards (default 6), the
#     processes the tests start left untraced;
#   pass "cli": the CLI_TESTS below in CLI_SHARDS shards (default 2) with
#     --trace-children=yes, every uopc they start under memcheck too.
# and prints each shard's verdict, the summed ERROR SUMMARY / definitely
# lost lines and the slowest tests.  Why two passes: a process that loads
# libLLVM takes about 3 s of CPU under valgrind before main, and the suite
# starts about 950 uopc processes: traced, they were 45 of the stage's 56
# CPU minutes (33 min of the CI's 48, stop 34).  The CLI_TESTS run every verb
# (print, simplify, run, exec, jit-run, compile, fuzz, check-rules, viz,
# dot, cache, version) through its main paths and errors; the ASan+UBSan
# stage runs every CLI test's processes instrumented (docs/hardening.md).
# VALGRIND_TESTS=PATTERN (a gtest filter) runs only those tests, in one pass
# with the processes they start traced.
#
# The JIT targets UOPC_JIT_CPU=x86-64-v3 (AVX2, no AVX-512: valgrind 3.19
# decodes no EVEX instruction; lib/jit/engine.c, docs/cli.md "Environment").
# Tests that need the real host CPU or native timing skip under valgrind
# themselves (GTEST_SKIP, test/support/valgrind.h).  Left out here because
# they take too long under valgrind (30-50x slower; docs/hardening.md):
LONG_TESTS=(
  Uir.MillionLineChainOnA256KiBStack             # 1M-line parse+print: 5 s native, minutes here, 1.5 GB
  GraphRewrite.MillionDeepChainOnSmallStack      # 1M-node rewrite: 2 s native
  MillionNodes.*                                  # the 1M-node kernel: 8 s native, and 14 s and 2 GB compiling it
  KernelFuzz.BoundedFuzzHasNoMismatch             # thousands of JIT compiles: 3 s native
  PlanDiff.RandomProgramsMatchRun                 # hundreds of plan compiles: 2 s native
  JitEngine.LongBlocksAreSplitBeforeCodegen       # large blocks through LLVM codegen: 2 s native
  JitEngine.FreeReleasesTheCode                   # 550 compiles and an RSS bound valgrind's allocator breaks
  KernelCost.SmallKernelInAHugeContextAllocatesLittle  # a 1M-node context
  KernelFloorDiv.ModuloGatherIsNotAStridedLoad    # 720 JIT compiles: 4 s native
)
# The tests whose uopc processes run under memcheck (pass "cli").
CLI_TESTS=(
  Cli.*                                           # print (and from stdin), usage, errors, --trace, version, --
  CliExec.CopyKernelCopies CliExec.PrintShowsTheOutputs CliExec.InPlaceAndZeroedOutputs CliExec.BoolAndF*
  CliExec.ErrorsWriteNothing CliExec.RuntimeErrorWritesNothing CliExec.UsageErrors
  CliExec.OutWritesThroughSymlinksFifosAndDevices  # exec
  CliCompile.EmitsLlvmAndAsm CliFuzz.SmallRunsAndTable Exact.SimplifyKeepsTheValue
  PlanAccept.SeedChapter2RunExamplesThroughJitRun # run, jit-run
  Viz.CompileAndFailures Dot.NullForeignAndDeep CheckRules.UsageErrors Cache.CliStatsAndClear
)
# Programs the tests start that are not ours (not traced; /bin/sh is, so that
# the uopc it starts is): valgrind's time goes to our code.
SKIP_CHILDREN='*/rm,*/mkdir,*/cp,*/cmp,*/dot,*/chromium*,*/chromedriver,*/python3*,*/readelf,*/nm'
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build-test-valgrind}
JOBS=${JOBS:-$(nproc)}
SHARDS=${SHARDS:-6}
command -v valgrind >/dev/null || { echo "valgrind: not installed (apt-get install valgrind)"; exit 1; }
echo "=== valgrind: configure and build $dir (RelWithDebInfo, no sanitizers)"
cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DUOPC_BENCH=OFF -DUOPC_WERROR=ON >"$dir.valgrind.log" 2>&1 ||
  { cat "$dir.valgrind.log"; exit 1; }
cmake --build "$dir" -j"$JOBS" >>"$dir.valgrind.log" 2>&1 || { tail -50 "$dir.valgrind.log"; exit 1; }
logs=${VALGRIND_LOGS:-$dir/valgrind}  # VALGRIND_LOGS: another log directory
rm -rf "$logs" && mkdir -p "$logs"
logs=$(cd "$logs" && pwd)  # absolute: some CLI tests cd elsewhere before starting uopc
long=$(IFS=:; echo "${LONG_TESTS[*]}")
filter="${VALGRIND_TESTS:-}-$long"
cli_filter="$(IFS=:; echo "${CLI_TESTS[*]}")-$long"
CLI_SHARDS=${CLI_SHARDS:-2}
if [ -n "${VALGRIND_TESTS:-}" ]; then  # a pattern of one's own: one pass, those tests and their processes
  cli_filter=$filter CLI_SHARDS=$SHARDS SHARDS=0
fi
echo "=== valgrind: uopc_tests in $SHARDS shards without the processes they start, and the CLI tests of CLI_TESTS in" \
  "$CLI_SHARDS shards with them, $JOBS at a time; left out (too long here): ${LONG_TESTS[*]}"
export UOPC_JIT_CPU=x86-64-v3 UOPC_DEBUG=check
start=$(date +%s)
run_shard() {  # pass (all or cli) and shard index, as "all.3"
  local pass=${1%.*} i=${1#*.} n=$SHARDS f=$filter trace=no
  if [ "$pass" = cli ]; then n=$CLI_SHARDS f=$cli_filter trace=yes; fi
  GTEST_TOTAL_SHARDS=$n GTEST_SHARD_INDEX=$i \
    valgrind --tool=memcheck --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite \
      --show-leak-kinds=definite --num-callers=40 --trace-children=$trace --trace-children-skip="$SKIP_CHILDREN" \
      --child-silent-after-fork=yes --log-file="$logs/vg.$pass$i.%p.log" \
      "$dir/test/uopc_tests" --gtest_filter="$f" >"$logs/$pass$i.out" 2>&1
  local st=$?
  echo "valgrind $pass shard $i/$n: exit $st, $(grep -E '^\[==========\] [0-9]|^\[  PASSED  \]|^\[  FAILED  \]|^\[  SKIPPED \]' "$logs/$pass$i.out" | tr '\n' ' ')"
  return $st
}
export -f run_shard
export dir logs SHARDS CLI_SHARDS SKIP_CHILDREN filter cli_filter
status=0
{ seq 0 $((CLI_SHARDS - 1)) | sed 's/^/cli./'; [ "$SHARDS" = 0 ] || seq 0 $((SHARDS - 1)) | sed 's/^/all./'; } |
  xargs -P "$JOBS" -I{} bash -c 'run_shard {}' || status=1
mins=$(( ($(date +%s) - start + 30) / 60 ))
# the summary of every process valgrind saw (the test shards and each uopc pass "cli" ran)
nlogs=$(ls "$logs"/vg.*.log | wc -l)
errors=$(grep -h "ERROR SUMMARY:" "$logs"/vg.*.log | awk '{s += $4} END {print s + 0}')
lost=$(grep -h "definitely lost:" "$logs"/vg.*.log | awk '{gsub(",", "", $4); s += $4} END {print s + 0}')
times >"$logs/times"  # this shell's, then its children's: user and system CPU
echo "valgrind: $nlogs processes, ERROR SUMMARY: $errors errors, definitely lost: $lost bytes, $mins min" \
  "(CPU of all of them, user and system: $(tail -1 "$logs/times"))"
if [ "$errors" != 0 ] || [ "$lost" != 0 ]; then
  status=1
  for f in $(grep -l -E "ERROR SUMMARY: [1-9]|definitely lost: [1-9]" "$logs"/vg.*.log | head -5); do
    echo "--- $f"; head -120 "$f"
  done
fi
# the slowest tests here (what to shorten or leave out when the stage grows)
echo "valgrind: slowest tests: $(cat "$logs"/*.out | sed -n 's/^\[       OK \] \(.*\) (\([0-9]*\) ms)$/\2 \1/p' |
  sort -rn | head -12 | awk '{printf "%s %.0f s; ", $2, $1 / 1000}')"
for f in "$logs"/*.out; do
  grep -q '^\[  FAILED  \]' "$f" && { echo "--- $(basename "$f" .out) failures"; grep -E 'FAILED|Failure' "$f" | head -30; }
done
if [ $status = 0 ]; then echo "valgrind: passed"; else echo "valgrind: FAILED (logs in $logs)"; fi
exit $status
