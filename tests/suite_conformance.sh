#!/bin/sh
# Suite wrapper for tests/run_all.sh: the conformance runner over
# ${HLO_SHARED:-../shared}/conformance with BUILD_DIR/hlo, twice: on the
# default backend (the CPU backend with its pass pipeline) and on the
# reference interpreter (`--backend interp`, the oracle). Ends with the
# summed "N passed, N failed".
B=${1:-build}
CONF=${HLO_SHARED:-../shared}/conformance
HLO=$B/hlo
[ -x "$HLO" ] || { echo "conformance: $HLO not built"; echo "0 passed, 1 failed"; exit 1; }
ABS=$(cd "$B" && pwd)
mkdir -p "$B/conformance_interp"
{
  echo '#!/bin/sh'
  echo "if [ \"\$1\" = run ]; then shift; exec \"$ABS/hlo\" run --backend interp \"\$@\"; fi"
  echo "exec \"$ABS/hlo\" \"\$@\""
} >"$B/conformance_interp/hlo"
chmod +x "$B/conformance_interp/hlo"
total_p=0; total_f=0
for backend in cpu interp; do
  echo "== conformance on $backend"
  if [ $backend = cpu ]; then out=$(bash tests/conformance.sh "$CONF" "$B" 2>&1)
  else out=$(bash tests/conformance.sh "$CONF" "$B/conformance_interp" 2>&1); fi
  printf '%s\n' "$out" | tail -n 25
  line=$(printf '%s\n' "$out" | grep '^conformance: ' | tail -n 1)
  p=$(echo "$line" | sed -n 's/^conformance: \([0-9]*\) passed, \([0-9]*\) failed.*/\1/p')
  f=$(echo "$line" | sed -n 's/^conformance: \([0-9]*\) passed, \([0-9]*\) failed.*/\2/p')
  [ -n "$p" ] || { p=0; f=1; echo "conformance on $backend: no summary line"; }
  total_p=$((total_p + p)); total_f=$((total_f + f))
done
echo "$total_p passed, $total_f failed"
[ $total_f -eq 0 ]
