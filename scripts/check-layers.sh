#!/usr/bin/env bash
# Checks the include layering of lib/: the README's layout table ("Where
# things are") lists the lib/ folders lowest layer first, and a folder may
# include only itself and the folders listed before it.  Also fails when two
# folders include each other, or when a lib/ folder is missing from the table.
# Files directly in lib/ (internal.h, compile.c) are outside the layers:
# internal.h may be included by everyone, the .c files there may include
# anything.  Usage: scripts/check-layers.sh [REPO]
set -euo pipefail
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$root"
# the layer order, from the README's table rows "| `lib/NAME/` | ..."
mapfile -t order < <(grep -oE '^\| `lib/[a-z_]+/`' README.md | sed -E 's/^\| `lib\/([a-z_]+)\/`/\1/')
if [ ${#order[@]} -eq 0 ]; then echo "check-layers: no lib/ folders in README.md's layout table"; exit 1; fi
declare -A rank
for i in "${!order[@]}"; do rank[${order[$i]}]=$i; done
status=0
for d in lib/*/; do
  f=$(basename "$d")
  if [ -z "${rank[$f]+x}" ]; then echo "check-layers: lib/$f/ is not in README.md's layout table"; status=1; fi
done
declare -A edge
while IFS=: read -r file _ inc; do
  from=$(echo "$file" | cut -d/ -f2)
  to=$(echo "$inc" | sed -E 's/.*#include "([a-z_]+)\/.*/\1/')
  [ "$from" = "$to" ] && continue
  [ -d "lib/$to" ] || continue
  edge[$from:$to]=1
  if [ -n "${rank[$from]+x}" ] && [ -n "${rank[$to]+x}" ] && [ "${rank[$to]}" -gt "${rank[$from]}" ]; then
    echo "check-layers: $file includes $to/ (lib/$to/ is listed after lib/$from/ in README.md): $inc"
    status=1
  fi
done < <(grep -HnE '^#include "[a-z_]+/' lib/*/*.[ch] lib/*/*.cpp 2>/dev/null || true)
for e in "${!edge[@]}"; do
  a=${e%%:*} b=${e##*:}
  if [ -n "${edge[$b:$a]+x}" ] && [[ "$a" < "$b" ]]; then echo "check-layers: lib/$a/ and lib/$b/ include each other"; status=1; fi
done
# the library's own files include the public headers they use, never the umbrella
if grep -rln '#include "uopc/uopc.h"' lib >/dev/null 2>&1; then
  grep -rln '#include "uopc/uopc.h"' lib | sed 's/^/check-layers: includes the whole public API (uopc\/uopc.h): /'
  status=1
fi
if [ $status = 0 ]; then echo "check-layers: ok (${order[*]})"; fi
exit $status
