/* cpu.h — what the CPU backend's files share: the C dialect's emitter
 * (emit_c.c) and the JIT that compiles and loads its output (jit.c). The
 * backend table itself is in cpu_backend.c (backend_cpu in backend.h). */
#ifndef HLO_BACKEND_CPU_CPU_H
#define HLO_BACKEND_CPU_CPU_H
#include "backend/backend.h"
#include "codegen/cstyle.h"
#include "support/strbuf.h"

/* The C dialect of the C-style printer (lent, static). */
const cstyle_dialect *cpu_c_dialect(void);

/* One C translation unit: the dialect's preamble, then kernels ks[0..n),
 * each an exported function named by its kernel (appended to `out`).
 * Errors: cstyle_emit_kernel's. */
HLO_MUST_USE hlo_status cpu_emit_source(const kernel *const *ks, uint32_t n, strbuf *out);

/* A kernel function as the C dialect prints it. */
typedef void (*cpu_kernel_fn)(void *const *bufs, int64_t tile_begin, int64_t tile_end);

/* A loaded shared object. */
typedef struct cpu_jit cpu_jit;

/* One translation unit of a module: its C source and the kernels it
 * defines (names[0..n)); fns[0..n) receives their functions. Optional, for
 * errors (NULL when not known): locs[i], the op kernel i was lowered from
 * (an error about kernel i is located there); lines[i], the 1-based line of
 * `source` where kernel i's text begins (ascending), which maps the
 * compiler's first message to its kernel. Lent. */
typedef struct cpu_jit_unit {
  const char *source;
  const char *const *names;
  uint32_t n;
  cpu_kernel_fn *fns;
  const hlo_loc *const *locs;
  const uint32_t *lines;
} cpu_jit_unit;

/* Compiles units[0..nunits) with `cc` (NULL: $HLO_CC, else "cc"; split into
 * words at spaces: "gcc -m64") and the flags `-O2 -fvect-cost-model=dynamic
 * -march=native -fPIC -shared -pipe -fno-math-errno -fno-trapping-math
 * -ffp-contract=off -std=gnu11` and $HLO_CC_FLAGS (appended, split at spaces), the source on
 * the compiler's standard input, linked `-nostdlib -lgcc` (jit.c says why),
 * each unit to its own shared object, the compilers run concurrently (at
 * most HLO_NUM_THREADS at once); units found in the kernel cache
 * (kernel_cache.h) are loaded from it without compiling, and compiled ones
 * are added to it. The compiler writes into a private folder
 * "hlo-jit-PID-XXXXXX" in $TMPDIR (else /tmp), never into the cache folder;
 * every object is loaded from its bytes through a memory file (so a noexec
 * $TMPDIR or cache folder does not matter) and stored in the kernel cache
 * afterwards, best effort (a cache folder that is full, read-only or
 * cleared meanwhile costs one warning per process, never the compile). Loads them all and looks up each unit's kernels. *out is
 * yours (cpu_jit_destroy). When `dump_dir` is set each unit's source is
 * also written there as NAME.c, NAME its first kernel's name. fp-contract
 * is off so a*b+c rounds twice, as the spec and the interpreter do. The
 * first call of a process that compiles anything also sweeps stale
 * temporaries (cpu_jit_sweep_temporaries, kernel_cache_sweep).
 * Errors: HLO_UNAVAILABLE when the compiler cannot be started ("no C
 * compiler: cc not found; set HLO_CC"); HLO_INTERNAL when it fails (its
 * first messages are quoted, the error names the kernel they point into and
 * is located at its op when the unit has locs/lines) or an object does not
 * load or lacks a symbol (named likewise); HLO_INVALID_ARGUMENT for an
 * empty or overlong compiler command; HLO_RESOURCE_EXHAUSTED. */
HLO_MUST_USE hlo_status cpu_jit_compile_units(const cpu_jit_unit *units, uint32_t nunits,
                                              const char *cc, const char *dump_dir,
                                              cpu_jit **out);
/* cpu_jit_compile_units with the backend's options: opts->cc and
 * opts->dump_dir as above (opts NULL: all defaults); opts->cache_root the
 * cache root whose kernels/ folder is the kernel cache (kernel_cache_dir:
 * NULL from the environment, "off" none); opts->objects[0..num_objects)
 * objects to load instead of compiling, opts->stats filled on success
 * (all but emit_ms, set to 0: the caller's part).
 *
 * Objects: each unit's object key (backend_object.key) is a hash of the
 * compiler's identity (as in cpu_jit_target_with), the host CPU's
 * identity, the flags and the source. A unit with a matching object is
 * loaded from its bytes (cpu_jit_load_bytes: a memory file, no compiler, no
 * kernel cache lookup) when they load and define all of its kernels;
 * otherwise (no match, corrupt bytes, a missing symbol) the object is
 * ignored and the unit looked up and compiled as usual. The loaded module
 * keeps every unit's
 * object (cpu_jit_objects). Errors: as cpu_jit_compile_units. */
HLO_MUST_USE hlo_status cpu_jit_compile_with(const cpu_jit_unit *units, uint32_t nunits,
                                             const backend_compile_options *opts,
                                             cpu_jit **out);
/* What the JIT's code depends on besides its source (backend.target), on
 * one line: the host CPU (its model name and a hash of its /proc/cpuinfo
 * identity), the C compiler (the command's words — o->cc, else $HLO_CC,
 * else cc —, its resolved path and the first line of its --version, read
 * from a note in the kernel cache of o->cache_root so that a warm run starts
 * no process) and the compile and link flags, $HLO_CC_FLAGS included.
 * Another compiler, another version or other flags make another target (the
 * compilation cache keys executables on it: HLO_CC="gcc -ffast-math" never
 * hits an entry made by plain gcc). Made once per compiler command and
 * $HLO_CC_FLAGS value in a process; the text is lent for the process's life.
 * o may be NULL (the defaults). */
const char *cpu_jit_target_with(const backend_compile_options *o);
/* Checks, without starting it, that the C compiler command `cc` (NULL or
 * "": $HLO_CC, else "cc"; its first word resolved through PATH as
 * posix_spawnp resolves it) names an executable file: what a compile needs
 * to start it. Errors: HLO_UNAVAILABLE ("no C compiler: cannot run `X`
 * (No such file or directory); install one (gcc or clang) or set HLO_CC",
 * the words of a compile that cannot start it), HLO_INVALID_ARGUMENT for
 * an empty or over-long command. A compiler that starts may still fail:
 * only a compile tells. */
HLO_MUST_USE hlo_status cpu_jit_check_compiler(const char *cc);
/* cpu_jit_target_with(NULL). */
const char *cpu_jit_target(void);
/* The objects of j, one per unit in unit order (*out set to the array,
 * lent while j lives; the count returned): each unit's object key and the
 * bytes of the shared object it loaded (as given, from the kernel cache or
 * as compiled). 0 for NULL. */
uint32_t cpu_jit_objects(const cpu_jit *j, const backend_object **out);
/* cpu_jit_compile_units of one unit: `source` defining names[0..n). */
HLO_MUST_USE hlo_status cpu_jit_compile(const char *source, const char *cc,
                                        const char *dump_dir, const char *const *names,
                                        uint32_t n, cpu_kernel_fn *fns, cpu_jit **out);

/* A temporary the JIT left in folder `dir` ($TMPDIR) is stale when older
 * than CPU_JIT_STALE_S seconds, or older than CPU_JIT_DEAD_GRACE_S when the
 * process named in it is gone (an interrupted run). */
#define CPU_JIT_STALE_S 3600
#define CPU_JIT_DEAD_GRACE_S 60
/* Removes the stale temporaries of the JIT in `dir`, this user's only:
 * "hlo-jit-PID-*" objects (and the folders of older builds, "hlo-jit-*"
 * with files inside) and "hlo-ccver-*" files. Never fails. */
void cpu_jit_sweep_temporaries(const char *dir);
/* Unloads (NULL is fine). */
void cpu_jit_destroy(cpu_jit *j);

/* backend.gemm of the CPU backend (gemm.c; gemm.h says which library). */
HLO_MUST_USE hlo_status cpu_gemm(const backend_gemm *g, const void *a, const void *b, void *c);
/* backend.gemm_epilogue of the CPU backend (gemm.c). */
HLO_MUST_USE hlo_status cpu_gemm_epilogue(const backend_gemm *g, const void *a, const void *b,
                                          void *c, const backend_gemm_epilogue *ep);

#endif /* HLO_BACKEND_CPU_CPU_H */
