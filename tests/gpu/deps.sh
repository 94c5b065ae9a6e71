# tests/gpu/deps.sh — sourced (from the repository root) by tests/gpu/run.sh
# and bench/gpu.sh: where the GPU machine has no Debian package for the
# build (no registry there), the packages tools/gpu-debs.sh fetched into
# .debs/ are unpacked under /tmp/hlo-debs (never over /) and the compiler's
# and loader's paths pointed at them; sets MAKEVARS for make.
if [ ! -f /usr/include/oneapi/dnnl/dnnl.h ] && [ -d .debs ]; then
  D=/tmp/hlo-debs
  for f in .debs/*.deb; do dpkg -x "$f" "$D"; done
  MA=x86_64-linux-gnu
  export CPATH="$D/usr/include${CPATH:+:$CPATH}"
  export LIBRARY_PATH="$D/usr/lib/$MA${LIBRARY_PATH:+:$LIBRARY_PATH}"
  export LD_LIBRARY_PATH="$D/usr/lib/$MA:$D/usr/lib/$MA/openblas-openmp${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  MAKEVARS="OPENBLAS_DIR=$D/usr/lib/$MA/openblas-openmp"
  echo "gpu: build dependencies unpacked from .debs/ into $D"
else
  MAKEVARS=""
fi
