#!/usr/bin/env bash
# The concurrency tests under ThreadSanitizer: 0 reports, or the stage fails.
#
#   scripts/tsan.sh [BUILD_DIR]   (default build-test-tsan)
#
# Builds BUILD_DIR with -DUOPC_SANITIZE_THREAD=ON (the library, the CLI and
# the tests instrumented; RelWithDebInfo) and runs, each test in its own
# process, the tests that compile and call from several threads or start
# several processes (the uopc processes they start are TSan builds too, and
# report into the same log directory):
TESTS=(
  Threads.KernelsAndPlansThroughOneSharedCache      # kernels and plans, 4 threads, one cache in memory and on disk
  Threads.TwoProcessesFillOneCacheDirectory         # two uopc processes warming one directory at once
  JitEngine.ThreadsCompileAndCallConcurrently       # the JIT engine: 4 threads compiling and calling
  KernelThreads.CompileAndCallConcurrently          # uopc_compile from several threads, every kernel called from all
  Cache.ThreadsCompilingTheSameKernelShareOneEntry  # the pending-entry protocol: 6 threads, one key
  Cache.ThreadsCompilingUnderEvictionPressure       # eviction and disk reload while others hold entries
  Cache.TwoProcessesCompilingAtOnceLeaveOneValidEntry  # two processes, one entry, one rename
  PlanThreads.TwoHostThreadsCallOneThreadedPlan     # two host threads calling one split plan: the pool's queue
  PlanThreads.PoisonErrorIsTheSameAtAnyThreadCount  # chunks at once, their status words, the recording rerun
  PlanThreads.PoolRunsEveryJobOnceFromSeveralThreads  # the pool: 3 host threads' batches, shutdown, restart
  PlanThreads.PoolSpinSeesEveryJobsResult         # the pool's spin: a worker's plain stores seen by the caller
  PlanThreads.CompileBatchEqualKernelsAndAFailure  # a plan's kernels compiled on 2 threads: equal kernels, a failure
  PlanThreads.HostThreadsCompileOnePlanAtOnce     # 4 host threads compiling the same plans at once, kernels on the pool
  Stream.PlansGiveTheBitsOfPlansWithout           # split result kernels streaming on the pool's threads (their sfence)
)
# libLLVM is not instrumented: test/tsan.supp suppresses reports whose
# frames are all inside it (each entry says why).
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build-test-tsan}
JOBS=${JOBS:-$(nproc)}
echo "=== tsan: configure and build $dir (-DUOPC_SANITIZE_THREAD=ON)"
cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DUOPC_BENCH=OFF -DUOPC_WERROR=ON -DUOPC_SANITIZE_THREAD=ON \
  >"$dir.log" 2>&1 || { cat "$dir.log"; exit 1; }
cmake --build "$dir" -j"$JOBS" >>"$dir.log" 2>&1 || { tail -50 "$dir.log"; exit 1; }
case $dir in /*) logs=$dir/tsan ;; *) logs=$PWD/$dir/tsan ;; esac  # an absolute build directory too
rm -rf "$logs" && mkdir -p "$logs"
# halt_on_error=0: every report of a run is logged; exitcode=66 fails the test
export TSAN_OPTIONS="suppressions=$PWD/test/tsan.supp log_path=$logs/tsan exitcode=66 halt_on_error=0 second_deadlock_stack=1 history_size=4"
export UOPC_DEBUG=check
start=$(date +%s)
status=0
for t in "${TESTS[@]}"; do
  if "$dir/test/uopc_tests" --gtest_filter="$t" --gtest_brief=1 >"$logs/$t.out" 2>&1; then
    echo "tsan: $t: passed"
  else
    echo "tsan: $t: FAILED (exit $?)"; tail -30 "$logs/$t.out"; status=1
  fi
done
reports=$(cat "$logs"/tsan.* 2>/dev/null | grep -c "^WARNING: ThreadSanitizer" || true)
secs=$(( $(date +%s) - start ))
echo "tsan: ${#TESTS[@]} tests, $reports ThreadSanitizer reports, $((secs / 60)) min $((secs % 60)) s"
if [ "$reports" != 0 ]; then
  status=1
  for f in $(ls "$logs"/tsan.* | head -3); do echo "--- $f"; head -80 "$f"; done
fi
if [ $status = 0 ]; then echo "tsan: passed"; else echo "tsan: FAILED (logs in $logs)"; fi
exit $status
