#!/usr/bin/env bash
# Strict f32 exp2, log2 and sin (lib/codegen/exp2.c, log2.c, sin.c) against libm on ALL 2^32 inputs, and
# the inline doubles' error bounds on all inputs of their ranges: the
# StrictExp2.*, StrictLog2.* and StrictSin.* tests with UOPC_LONG_TESTS set (the suite runs a bounded
# version).  Usage: scripts/exp2-exhaustive.sh [BUILD_DIR]  (default build;
# a few minutes on 2 cores; the kernels at both tiers).
set -euo pipefail
build=${1:-build}
cmake --build "$build" -j"$(nproc)" --target uopc_tests >/dev/null
UOPC_LONG_TESTS=1 "$build/test/uopc_tests" --gtest_filter='StrictExp2.*:StrictLog2.*:StrictSin.*'
