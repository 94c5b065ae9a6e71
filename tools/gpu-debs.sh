#!/bin/sh
# Fetches into .debs/ the Debian packages hlo's build needs (oneDNN, OpenBLAS,
# xxhash), for a GPU machine that has no package registry: tests/gpu/run.sh
# unpacks them under /tmp there (never over /). Run here, on a Debian machine
# with apt; then carry .debs (git-ignored through .git/info/exclude) and a
# copy of ../shared/{models,conformance,perf,tools} in ./shared to the GPU
# machine.
set -e
cd "$(dirname "$0")/.."
mkdir -p .debs
cd .debs
apt-get download libdnnl-dev libdnnl2 libopenblas0-openmp libxxhash-dev libgfortran5
grep -qx '/.debs/' ../.git/info/exclude 2>/dev/null || echo '/.debs/' >> ../.git/info/exclude
grep -qx '/shared/' ../.git/info/exclude 2>/dev/null || echo '/shared/' >> ../.git/info/exclude
ls -la
