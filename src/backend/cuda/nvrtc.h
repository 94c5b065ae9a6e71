/* nvrtc.h — CUDA C to cubin with NVRTC, loaded at run time (dlopen of
 * libnvrtc.so.13, .so.12, .so), so hlo links and runs where there is none.
 * NVRTC needs no GPU and no driver: a machine with the CUDA toolkit and no
 * GPU compiles (the tests do). */
#ifndef HLO_BACKEND_CUDA_NVRTC_H
#define HLO_BACKEND_CUDA_NVRTC_H
#include <stddef.h>
#include "hlo/hlo.h"

/* The fixed-width integer types a unit compiled by NVRTC declares itself
 * (NVRTC has no <stdint.h>): text for the start of a unit's prelude, as C
 * string literals to concatenate. */
#define NVRTC_INT_TYPEDEFS \
  "typedef signed char int8_t;\n" \
  "typedef short int16_t;\n" \
  "typedef int int32_t;\n" \
  "typedef long long int64_t;\n" \
  "typedef unsigned char uint8_t;\n" \
  "typedef unsigned short uint16_t;\n" \
  "typedef unsigned int uint32_t;\n" \
  "typedef unsigned long long uint64_t;\n"

/* Loads libnvrtc once per process (thread-safe): libnvrtc.so.13, .so.12,
 * .so, then /usr/local/cuda/lib64/libnvrtc.so.13; the environment variable
 * HLO_NVRTC_LIB, when set and non-empty, replaces that list (paths or
 * names separated by ':'; HLO_NVRTC_LIB=/nonexistent simulates a machine
 * without NVRTC). Errors: HLO_UNAVAILABLE naming the libraries tried and
 * dlerror's message for each. */
HLO_MUST_USE hlo_status nvrtc_load(void);

/* "nvrtc MAJOR.MINOR" after a successful nvrtc_load (static), else NULL. */
const char *nvrtc_version_text(void);

/* Compiles `source` (one translation unit, named `name` in messages) for
 * the real architecture sm_<arch> (90 for the H200) with NVRTC's optimising
 * defaults and --use_fast_math OFF: --ftz=false --prec-div=true
 * --prec-sqrt=true --fmad=false (IEEE divides and square roots, no flush
 * to zero, no contraction into FMA), -default-device --std=c++17
 * -lineinfo; *cubin (malloc'd, yours) and *len receive the cubin (NULL and
 * 0 on error). Thread-safe. Errors: HLO_UNAVAILABLE (no NVRTC),
 * HLO_INTERNAL with the compiler's log (the first 4 KB) when the source
 * does not compile, HLO_INVALID_ARGUMENT for an arch outside 50..999,
 * HLO_RESOURCE_EXHAUSTED. */
HLO_MUST_USE hlo_status nvrtc_compile(const char *source, const char *name, int arch,
                                      void **cubin, size_t *len);

/* nvrtc_compile through the on-disk kernel cache (backend/cpu/kernel_cache.h,
 * ROOT/kernels under the cache root the environment names: $HLO_CACHE_DIR,
 * ...; none when it is off): the key is the NVRTC version, the arch and the
 * source (each hashed with its length), so a library's kernels (the CUDA
 * backend's conv, window and copy units, compiled once per process) are
 * compiled once per machine rather than in every process; a hit hands back
 * the stored cubin (malloc'd, yours). Storing is best effort (a read-only
 * or full cache compiles and goes on). Errors: nvrtc_compile's. */
HLO_MUST_USE hlo_status nvrtc_compile_cached(const char *source, const char *name, int arch,
                                             void **cubin, size_t *len);

#endif
