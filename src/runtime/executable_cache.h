/* executable_cache.h — the compilation cache as a compile uses it (issue 8):
 * the key of a compile, loading an entry instead of compiling, storing the
 * entry after a compile, the compile log and the miss explanation. The
 * entries themselves are runtime/compile_cache.h's.
 *
 * Key: XXH3-128 of the entry format version, hlo's build id (a hash of its
 * sources, made by the Makefile), the backend and its target
 * (backend.target: compiler, flags, CPU), the pass pipeline, the entry
 * function's name, the module printed canonically (module_print_canonical:
 * no locations, the printer's own value names) and, for a dynamic-shaped
 * entry, the argument types it was specialised to.
 *
 * Entry sections: "meta" (the fields compile_cache.h names, plus backend,
 * passes, target, hlo_version, module_hash, units), "module" (the optimised
 * module's text, as module_print prints it, which the parser reads back),
 * "locs" (for each op of that module in pre-order, 1 + the pre-order index
 * of the op of the user's module it came from, 0 for none: on a hit the
 * ops take the locations of the user's own module, so runtime errors point
 * into the user's file, not into the entry), one "object.KEY" per kernel
 * unit (backend_object: the shared object's bytes; CUDA: the cubin) and,
 * for a backend that times its convolutions' algorithms (CUDA: cuDNN),
 * "conv_tuning": the choices for the module's convolutions
 * (backend.conv_tuning_export; given back by exec_cache_load through
 * conv_tuning_import before the lowering, so a hit times no algorithm; a
 * malformed one rejects the entry; choices tuned for another device,
 * library version or setting are tuned again and exec_cache_end rewrites
 * the entry with the new ones).
 *
 * Not cached: the interpreter backend (nothing is compiled), `check` and
 * `dump_dir` compiles (they exist to show and check each stage). */
#ifndef HLO_RUNTIME_EXECUTABLE_CACHE_H
#define HLO_RUNTIME_EXECUTABLE_CACHE_H
#include <stdbool.h>
#include "backend/backend.h"
#include "ir/ir.h"
#include "runtime/executable_cpu.h"

typedef struct exec_cache exec_cache;

/* One compile, as the cache sees it (all lent for exec_cache_begin only,
 * except `user`, which must outlive the exec_cache). */
typedef struct exec_cache_request {
  const hlo_compile_options *co; /* cache_dir, no_cache, cache_max_bytes,
                                    log_compiles, explain_cache_misses */
  const hlo_module_ir *user;     /* the caller's module, as parsed */
  const char *entry;             /* the entry function's name */
  const char *passes;            /* the pipeline, expanded (NULL: none) */
  hlo_type *const *arg_types;    /* a dynamic entry's specialisation (NULL: static) */
  uint32_t num_args;
} exec_cache_request;

/* Starts a compile's bookkeeping: *out is NULL when neither the cache nor
 * the log is used (the interpreter backend; cache off, no_cache, check or
 * dump_dir, and no log). With the cache on, computes the key (the canonical
 * print of r->user: about a millisecond for a large model). Reads
 * HLO_LOG_COMPILES and HLO_EXPLAIN_CACHE_MISSES (1/true/yes/on).
 * Errors: HLO_RESOURCE_EXHAUSTED. */
HLO_MUST_USE hlo_status exec_cache_begin(const exec_cache_request *r, exec_cache **out);

/* Looks the key up. True on a hit: *out_ir (yours, module_free) is the
 * optimised module, its values numbered and its ops at the locations of
 * the user's module; exec_cache_objects then gives the entry's kernels. A
 * bad entry (truncated, corrupt, another format, a module that does not
 * parse back) is reported on stderr as a warning ("hlo: warning: cache
 * entry PATH: WHY; removed, recompiling"), removed, and is a miss. On a
 * miss with explain_cache_misses, prints which entry for the same function
 * is closest and what differs. False when c is NULL or the cache is off. */
bool exec_cache_load(exec_cache *c, hlo_module_ir **out_ir);
/* The objects of the entry loaded by exec_cache_load (lent, valid until
 * exec_cache_end). */
uint32_t exec_cache_objects(const exec_cache *c, const backend_object **out);
/* A hit that could not be used (cpu_exec_create failed on it: `why`): the
 * entry is removed and the compile goes on as a miss (with a warning). */
void exec_cache_reject(exec_cache *c, const char *why);

/* Adds `ms` to the stage `name` of the log line ("passes", "lower", ...). */
void exec_cache_stage(exec_cache *c, const char *name, double ms);

/* After a miss compiled `optimised` (entry function `entry`, numbered) into
 * `cpu`: writes the entry. A failure is a warning on stderr (the compile
 * still succeeds). No-op when c is NULL, the cache is off or it was a hit. */
void exec_cache_store(exec_cache *c, const hlo_module_ir *optimised, const cpu_exec *cpu);

/* Ends the compile: prints the log line when asked ("hlo: compile @F
 * (module M): hit|miss KEY12|cache off in T ms [stage ms, ...]") and frees
 * c (NULL is fine). `ok`: whether the compile succeeded (a failed one is
 * logged as "failed"). */
void exec_cache_end(exec_cache *c, bool ok);
/* What the cache did in c's compile: "hit", "miss", or "off" (also for
 * NULL); *out_ms gets the time of the cache's own stages (key, lookup,
 * load, store) so far. */
const char *exec_cache_result(const exec_cache *c, double *out_ms);

#endif /* HLO_RUNTIME_EXECUTABLE_CACHE_H */
