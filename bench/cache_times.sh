#!/bin/sh
# The compilation cache's cold and warm compile times (issue 8): for every
# program of ../shared/models (NAME.mlir and NAME.cpu.mlir), `hlo run --log-compiles` twice in new processes
# on one empty cache root: the first compiles everything (no kernel cache
# either: "cold"), the second must load the entry ("hit", "warm"). Prints
# one row per model: the cold compile, the warm one, the speed-up, the
# entry's size; and checks that the two runs wrote the same bytes. Each
# figure is what the compile log line says (key, lookup, load or passes,
# lower, cc, prepare: everything between the parsed module and a runnable
# executable; reading and parsing the file are not in it).
# usage: bench/cache_times.sh [BUILD_DIR]   (HLO_SHARED overrides ../shared)
B=${1:-build}
SHARED=${HLO_SHARED:-../shared}
HLO=$B/hlo
[ -x "$HLO" ] || { echo "no $HLO (make)"; exit 1; }
root=$(mktemp -d); trap 'rm -rf "$root"' EXIT
ms() { sed -n 's/.* in \([0-9.]*\) ms.*/\1/p' "$1" | head -n 1; }
printf '%-24s %10s %10s %8s %10s  %s\n' model "cold ms" "warm ms" speedup "entry KB" "outputs"
worst=0
for prog in "$SHARED"/models/*/*.mlir; do
  dir=$(dirname "$prog"); name=$(basename "$prog" .mlir)
  n=$(ls "$dir/inputs" | wc -l); args=""; i=0
  while [ $i -lt $n ]; do args="$args --input $dir/inputs/arg$i.npy"; i=$((i + 1)); done
  c="$root/$name"; mkdir -p "$c/o1" "$c/o2"
  "$HLO" run --quiet "$prog" $args --cache-dir "$c/cache" --log-compiles --output-dir "$c/o1" >"$c/l1" 2>&1
  "$HLO" run --quiet "$prog" $args --cache-dir "$c/cache" --log-compiles --output-dir "$c/o2" >"$c/l2" 2>&1
  cold=$(ms "$c/l1"); warm=$(ms "$c/l2")
  grep -q ': hit ' "$c/l2" || warm="MISS"
  same=same; for f in "$c"/o1/*.npy; do cmp -s "$f" "$c/o2/$(basename "$f")" || same=DIFFER; done
  kb=$(du -k "$c/cache/executables" | tail -n 1 | cut -f1)
  sp=$(awk -v c="$cold" -v w="$warm" 'BEGIN { w += 0; printf "%.0fx", (w > 0 ? (c + 0) / w : 0) }')
  printf '%-24s %10s %10s %8s %10s  %s\n' "$name" "$cold" "$warm" "$sp" "$kb" "$same"
  worst=$(awk -v w="$warm" -v m="$worst" 'BEGIN { w += 0; print ((w > m) ? w : m) }')
done
echo "slowest warm compile: $worst ms"
