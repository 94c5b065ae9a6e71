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
# cuDNN 9 for the convolutions (src/backend/cuda/cuda_cudnn.h): where Python
# has the nvidia-cudnn wheel (nvidia.cudnn, e.g. beside jax[cuda13]), its lib
# folder is where hlo's dlopen looks after the loader's search (HLO_CUDNN_DIR;
# libcudnn.so.9 loads its sublibraries from its own folder). Kept if set.
if [ -z "${HLO_CUDNN_DIR:-}" ] && command -v python3 >/dev/null 2>&1; then
  CUDNN_LIB_DIR=$(python3 -c 'import os, nvidia.cudnn as m; p = list(m.__path__)[0]; print(os.path.join(p, "lib"))' 2>/dev/null || true)
  if [ -n "$CUDNN_LIB_DIR" ] && [ -d "$CUDNN_LIB_DIR" ]; then
    export HLO_CUDNN_DIR="$CUDNN_LIB_DIR"
    echo "gpu: cuDNN from $HLO_CUDNN_DIR"
  else
    echo "gpu: no nvidia.cudnn in python3: convolutions on hlo's own kernels"
  fi
fi
