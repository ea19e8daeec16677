#!/usr/bin/env bash
# Fails when the kernel cache's codegen id may not cover every source that
# decides generated code: every folder of lib/ must be listed in
# cmake/CodegenDirs.cmake, either in UOPC_CODEGEN_DIRS (hashed into the id)
# or in UOPC_CODEGEN_EXCLUDED with a reason on a "#   NAME  reason" line;
# and every listed folder must exist.  Run by scripts/test.sh and by ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
list=cmake/CodegenDirs.cmake
dirs=$(sed -n 's/^set(UOPC_CODEGEN_DIRS \(.*\))$/\1/p' "$list")
excluded=$(sed -n 's/^set(UOPC_CODEGEN_EXCLUDED \(.*\))$/\1/p' "$list")
status=0
for d in lib/*/; do
  d=${d#lib/}; d=${d%/}
  in_dirs=0; in_excl=0
  for x in $dirs; do [ "$x" = "$d" ] && in_dirs=1; done
  for x in $excluded; do [ "$x" = "$d" ] && in_excl=1; done
  if [ $((in_dirs + in_excl)) -ne 1 ]; then
    echo "check_codegen_id: lib/$d is in $([ $in_dirs = 1 ] && echo both lists || echo neither list) of $list" \
         "(UOPC_CODEGEN_DIRS: hashed into the kernel cache key; UOPC_CODEGEN_EXCLUDED: with a reason)"
    status=1
  fi
  if [ $in_excl = 1 ] && ! grep -Eq "^#[[:space:]]+$d[[:space:]]+[^[:space:]]" "$list"; then
    echo "check_codegen_id: lib/$d is excluded from the codegen id without a reason line '#   $d  why' in $list"
    status=1
  fi
done
for x in $dirs $excluded; do
  [ -d "lib/$x" ] || { echo "check_codegen_id: $list lists lib/$x, which does not exist"; status=1; }
done
[ $status = 0 ] && echo "check_codegen_id: every lib/ folder is covered by the codegen id or excluded with a reason"
exit $status
