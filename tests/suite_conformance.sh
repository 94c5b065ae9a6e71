#!/bin/sh
# Suite wrapper for tests/run_all.sh: the conformance runner over
# ${HLO_SHARED:-../shared}/conformance with BUILD_DIR/hlo.
exec bash tests/conformance.sh "${HLO_SHARED:-../shared}/conformance" "${1:-build}"
