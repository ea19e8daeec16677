#!/usr/bin/env bash
# Installs uopc's build and test dependencies from Debian 12's packages.
# (pkg-config: scripts/test.sh builds examples/host against the installed uopc.pc.)
set -euo pipefail
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends \
  cmake make g++ pkg-config llvm-19-dev zlib1g-dev libgtest-dev libbenchmark-dev clang-19 libclang-rt-19-dev >/dev/null
