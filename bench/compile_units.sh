#!/bin/bash
# compile_units.sh DIR [CORES] — the C compiler's part of a cold compile, without hlo: for each
# DIR/MODEL/VARIANT/*.c (the units `hlo compile FILE --dump-to D` writes as D/kN.c), the wall
# time (ms, 7 runs) of compiling all units of the variant at once, as the JIT does (one `cc`
# per unit, concurrently), pinned to CORES (default 0,1: this 2-core machine's shape). Variant
# "before" is linked as the JIT did before bench/COMPILE.md's changes (`-o X.so U.c -lm`); any
# other as it does now (`-x c - -nostdlib -lgcc`, the source on stdin). VARIANTS picks them
# (default "before after"). Used for COMPILE.md's quiet A/B; needs gcc and taskset.
F="-O2 -fvect-cost-model=dynamic -march=native -fPIC -shared -pipe -fno-math-errno -fno-trapping-math -ffp-contract=off -std=gnu11"
CORES=${2:-0,1}
cd "$1" || exit 1
T=$(mktemp -d)
ms() { date +%s%N; }
for m in */; do m=${m%/}
  for v in ${VARIANTS:-before after}; do
    [ -d "$m/$v" ] || continue
    res=""
    for r in 1 2 3 4 5 6 7; do
      t0=$(ms)
      i=0
      for u in "$m/$v"/*.c; do
        if [ "$v" = before ]; then taskset -c "$CORES" gcc $F -o "$T/$m.$v.$i.so" "$u" -lm &
        else taskset -c "$CORES" gcc $F -o "$T/$m.$v.$i.so" -x c - -nostdlib -lgcc < "$u" & fi
        i=$((i+1))
      done
      wait
      res="$res $(( ($(ms) - t0) / 1000000 ))"
    done
    echo "$m $v units=$(ls "$m/$v" | wc -l) ms:$res"
  done
done
rm -rf "$T"
