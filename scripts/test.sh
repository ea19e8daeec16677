#!/usr/bin/env bash
# The whole test suite: the layering and the codegen id's coverage of lib/,
# a plain build, the installed package (cmake --install from the plain build,
# then examples/host built against it four ways and run), an
# AddressSanitizer+UBSan build, and bounded libFuzzer runs of the .uir parser,
# the .npy reader, the kernel cache's entry loader and the graph builders.
# Exits non-zero on any failure.
# The viz browser test (a ctest, viz_browser) runs when headless Chromium,
# chromedriver, python3-selenium and Graphviz are installed (.ci/run installs
# them) and is skipped, saying so, when not.
#   FUZZ_SECONDS  how long each fuzzer runs (default 40; four fuzzers: under 3 minutes)
#   JOBS          build parallelism (default: number of cores)
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS=${JOBS:-$(nproc)}
FUZZ_SECONDS=${FUZZ_SECONDS:-40}
status=0

run_suite() {  # name, cmake args...
  local dir=build-test-$1; shift
  echo "=== $dir: configure and build"
  cmake -S . -B "$dir" -DUOPC_BENCH=OFF -DUOPC_WERROR=ON "$@" >"$dir.log" 2>&1 || { cat "$dir.log"; return 1; }
  cmake --build "$dir" -j"$JOBS" >>"$dir.log" 2>&1 || { tail -50 "$dir.log"; return 1; }
  echo "=== $dir: ctest"
  # the tests' temporary files go to a directory of their own, which must be
  # empty when they are done (each test process removes what it made)
  local tmp left st=0
  tmp=$(mktemp -d "${TMPDIR:-/tmp}/uopc-ctest.XXXXXX")
  (cd "$dir" && TEST_TMPDIR=$tmp ctest --output-on-failure -j"$JOBS" --timeout 600) || st=$?
  left=$(ls -A "$tmp")
  rm -rf "$tmp"
  [ "$st" = 0 ] || return "$st"
  if [ -n "$left" ]; then echo "=== $dir: the tests left temporary files behind:" $left; return 1; fi
}

# cmake --install the plain build into a temporary prefix, then build
# examples/host against the installed package four ways (find_package
# shared and static, pkg-config shared and static), run each, and check that
# the shared builds load libuopc.so.0.3 and the static ones do not.
install_stage() {
  local build=build-test-plain work prefix pcdir host want="host example: matmul 64x64 ok, a*b+a ok, plan matmul 48x40x32 ok"
  work=$(mktemp -d "${TMPDIR:-/tmp}/uopc-install.XXXXXX")
  prefix=$work/prefix
  echo "=== install: cmake --install $build --prefix $prefix"
  cmake --install $build --prefix "$prefix" >"$work/install.log" 2>&1 || { cat "$work/install.log"; return 1; }
  (cd "$prefix" && find . -type f -o -type l | sort | sed 's/^/  /')
  pcdir=$(dirname "$(find "$prefix" -name uopc.pc | head -1)")
  local ok=1 how
  # the installed files search no current directory for libraries either
  cmake "-DFILES=$(find "$prefix" -type f \( -name uopc -o -name 'libuopc.so*' \) | paste -sd';')" \
    -P cmake/CheckRunpath.cmake >"$work/runpath.log" 2>&1 || { cat "$work/runpath.log"; echo "install: RUNPATH FAILED"; ok=0; }
  for how in find_package-shared find_package-static pkg-config-shared pkg-config-static; do
    case $how in
      find_package-*)
        local static=OFF; [ "$how" = find_package-static ] && static=ON
        host=$work/$how/host
        { cmake -S examples/host -B "$work/$how" -DCMAKE_PREFIX_PATH="$prefix" -DUOPC_HOST_STATIC=$static &&
          cmake --build "$work/$how"; } >"$work/$how.log" 2>&1 ;;
      pkg-config-*)
        mkdir -p "$work/pc"; host=$work/pc/host-${how#pkg-config-}
        make -C examples/host PKG_CONFIG_PATH="$pcdir" OUT="$work/pc" "$host" >"$work/$how.log" 2>&1 ;;
    esac || { cat "$work/$how.log"; echo "install: $how: build FAILED"; ok=0; continue; }
    local out linked=static
    # UOPC_CACHE_DIR: the example's kernels stay out of ~/.cache
    out=$(UOPC_CACHE_DIR=$work/cache "$host" 2>&1) || { echo "$out"; echo "install: $how: run FAILED"; ok=0; continue; }
    readelf -d "$host" | grep -q 'NEEDED.*libuopc\.so' && linked=shared
    if [ "$out" != "$want" ] || [ "$linked" != "${how##*-}" ]; then
      echo "$out"; echo "install: $how: FAILED (output above, linked $linked)"; ok=0; continue
    fi
    echo "install: $how: $out (libuopc $linked)"
  done
  # uopc.pc: what linking libuopc.a needs, for pkg-config --static
  local private
  private=$(PKG_CONFIG_PATH="$pcdir" pkg-config --static --libs uopc)
  echo "install: pkg-config --static --libs uopc: $private"
  case "$private" in *LLVM*-lz*) ;; *) echo "install: uopc.pc lacks LLVM or zlib for --static"; ok=0 ;; esac
  if [ $ok = 1 ]; then rm -rf "$work"; echo "install: passed"; else echo "install: FAILED (kept $work)"; return 1; fi
}

# Whether the viz browser test can run here: said at the start and the end.
browser_status() {
  local missing="" py=/usr/bin/python3
  [ -x "$py" ] || py=$(command -v python3 || true)
  command -v dot >/dev/null || missing+=" graphviz"
  command -v chromium >/dev/null || command -v chromium-browser >/dev/null || missing+=" chromium"
  command -v chromedriver >/dev/null || missing+=" chromium-driver"
  { [ -n "$py" ] && "$py" -c 'import selenium' 2>/dev/null; } || missing+=" python3-selenium"
  if [ -z "$missing" ]; then
    echo "viz browser test: runs (headless chromium through chromedriver; screenshots in build-test-*/viz/)"
  else
    echo "viz browser test: SKIPPED: not installed:$missing (apt-get install$missing; .ci/run installs them)"
  fi
}
echo "=== $(browser_status)"

echo "=== layering"
bash scripts/check-layers.sh || status=1
echo "=== the kernel cache's codegen id covers lib/"
bash scripts/check_codegen_id.sh || status=1

run_suite plain -DCMAKE_BUILD_TYPE=RelWithDebInfo || status=1
if [ $status = 0 ]; then install_stage || status=1; else echo "install: skipped (the plain build failed)"; fi
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
  run_suite asan -DCMAKE_BUILD_TYPE=Debug -DUOPC_SANITIZE=ON || status=1

# valgrind memcheck over the plain build's suite (its CLI runs included):
# 0 errors, 0 bytes definitely lost.
if ! command -v valgrind >/dev/null; then
  echo "=== valgrind: SKIPPED: valgrind is not installed (apt-get install valgrind; .ci/run installs it)"
elif [ -x build-test-plain/test/uopc_tests ]; then
  echo "=== valgrind: the plain build's suite under memcheck (scripts/valgrind.sh build-test-plain)"
  JOBS=$JOBS bash scripts/valgrind.sh build-test-plain || status=1
else
  echo "=== valgrind: skipped (the plain build failed)"
fi

# ThreadSanitizer: its own build, the concurrency tests (threads and processes), 0 reports.
if echo 'int main(void) { return 0; }' | ${CC:-cc} -fsanitize=thread -x c - -o /dev/null 2>/dev/null; then
  echo "=== tsan: the concurrency tests under ThreadSanitizer (scripts/tsan.sh build-test-tsan)"
  JOBS=$JOBS bash scripts/tsan.sh build-test-tsan || status=1
else
  echo "=== tsan: SKIPPED: the C compiler cannot link -fsanitize=thread (Debian: libtsan2, part of gcc)"
fi

if command -v clang-19 >/dev/null; then
  dir=build-test-fuzz
  if cmake -S . -B $dir -DCMAKE_C_COMPILER=clang-19 -DCMAKE_CXX_COMPILER=clang++-19 -DUOPC_FUZZ=ON \
       -DUOPC_TESTS=ON -DUOPC_BENCH=OFF -DUOPC_WERROR=ON >$dir.log 2>&1 && cmake --build $dir -j"$JOBS" --target fuzz_uir fuzz_npy fuzz_cache fuzz_build >>$dir.log 2>&1; then
    # the .uir parser and printer, the .npy reader and writer, the kernel cache entry loader
    for target in uir npy cache build; do
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

echo "=== $(browser_status)"
if [ $status = 0 ]; then echo "uopc: all test stages passed"; else echo "uopc: SOME TEST STAGE FAILED"; fi
exit $status
