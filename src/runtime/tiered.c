/* tiered.c — tiered execution's policy and background thread (tiered.h;
 * docs/tiered.md): which programs may tier, the estimates a pending run
 * decides on, and the thread that makes the native code. api.c holds the
 * executable's side (the job's work, the switch, the cancel). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "backend/cpu/cpu.h"
#include "passes/cost_analysis.h"
#include "runtime/tiered.h"
#include "support/arena.h"

static bool env_is(const char *name, const char *const *words) {
  const char *v = getenv(name);
  if (!v) return false;
  for (const char *const *w = words; *w; w++)
    if (!strcasecmp(v, *w)) return true;
  return false;
}

/* Warns once about an $HLO_TIERING that is neither on nor off. */
static void warn_tiering_value(void) {
  fprintf(stderr, "hlo: warning: HLO_TIERING=\"%s\" is not understood (0, false, no, off turn "
          "tiering off; 1, true, yes, on keep it on); tiering stays on\n", getenv("HLO_TIERING"));
}

bool tier_enabled(const hlo_compile_options *co) {
  static const char *const off[] = {"0", "false", "no", "off", NULL};
  static const char *const on[] = {"1", "true", "yes", "on", "", NULL};
  static pthread_once_t warned = PTHREAD_ONCE_INIT;
  if (getenv("HLO_TIERING") && !env_is("HLO_TIERING", off) && !env_is("HLO_TIERING", on))
    pthread_once(&warned, warn_tiering_value);
  return !co->no_tiering && !env_is("HLO_TIERING", off);
}

bool tier_log_compiles(const hlo_compile_options *co) {
  static const char *const on[] = {"1", "true", "yes", "on", NULL};
  return co->log_compiles || env_is("HLO_LOG_COMPILES", on);
}

/* Ops whose effect reaches outside their results: an interpreted run of
 * them cancelled and run again natively would do it twice. */
static bool effectful(hlo_opcode c) {
  switch (c) {
  case OP_CUSTOM_CALL:
  case OP_INFEED:
  case OP_OUTFEED:
  case OP_SEND:
  case OP_RECV:
  case OP_TRACE:
  case OP_INTERP_PRINT:
  case OP_INTERP_PROBE:
  case OP_INTERP_RUN_PARALLEL:
    return true;
  default:
    return false;
  }
}

static bool block_ok(const hlo_block *b) {
  for (const hlo_op *op = b->first; op; op = op->next) {
    if (effectful(op->opcode)) return false;
    for (uint32_t r = 0; r < op->num_regions; r++)
      if (!block_ok(&op->regions[r].block)) return false;
  }
  return true;
}

bool tier_program_ok(const hlo_module_ir *m) {
  for (const hlo_func *f = m->funcs; f; f = f->next)
    if (!block_ok(&f->body.block)) return false;
  return true;
}

hlo_status tier_check_compiler(void) { return cpu_jit_check_compiler(NULL); }

/* The interpreter's rates (build/hlo bench --backend interp, -O2, one core
 * of a Xeon, the fused modules of shared/models): a fused elementwise or
 * matmul flop about 4-10 ns (mlp_block 3.8, naive_attention 9.3,
 * llama_block 7.7), a convolution's 40-60 (cnn_sgd_step, group_norm_convT),
 * a sort's comparisons about 1 us each (sort_topk), every op some
 * microseconds of its own (allocation, the walk). Taken on the slow side:
 * an estimate that is too low costs a cancelled run, one too high a wait. */
enum {
  NS_PER_FLOP = 15,
  NS_PER_CONV_FLOP = 60,
  NS_PER_SORT_FLOP = 1000,
  NS_PER_TRANSCENDENTAL = 60,
  NS_PER_BYTE = 2,
  NS_PER_OP = 5000,
};

double tier_estimate_interp_ms(const hlo_module_ir *m, const char *entry) {
  cost_report r;
  hlo_status st = cost_analysis(m, entry, &r);
  if (st) {
    hlo_status_free(st);
    return -1;
  }
  double ns = 0;
  for (uint32_t i = 0; i < r.num_rows; i++) {
    const cost_row *row = &r.rows[i];
    hlo_opcode c = row->op->opcode;
    double flops = row->cost.flops > 0 ? row->cost.flops : 0;
    double per = c == OP_CONVOLUTION ? NS_PER_CONV_FLOP : c == OP_SORT ? NS_PER_SORT_FLOP
                                                                      : NS_PER_FLOP;
    ns += NS_PER_OP;
    if (row->depth > 0) continue; /* counted in its enclosing op's row */
    ns += per * flops + NS_PER_TRANSCENDENTAL * (row->cost.transcendentals > 0
                                                      ? row->cost.transcendentals : 0) +
          NS_PER_BYTE * (row->cost.bytes_accessed > 0 ? row->cost.bytes_accessed : 0);
  }
  bool unknown = r.num_unknown > 0;
  cost_report_free(&r);
  return unknown ? -1 : ns * 1e-6;
}

/* The compile model (bench/COMPILE.md; cpu_backend.c's CPU_UNIT_COST and
 * compile_cost, in ms): a unit's fixed cost (the compiler's start, the
 * preamble, assembling, linking: 30 ms), a kernel's 4 ms and about half a
 * millisecond per statement, 10 ms per inlined exp or tanh; the module's
 * kernels split over the cores' units. Ops outside fusions that become
 * kernels of their own are counted as fusions of one op. */
static void count_kernels(const hlo_block *b, double *cost, uint32_t *kernels) {
  for (const hlo_op *op = b->first; op; op = op->next) {
    if (op->opcode == OP_FUSION && op->num_regions == 1) {
      double k = 4;
      for (const hlo_op *o = op->regions[0].block.first; o; o = o->next) {
        k += 0.45;
        if (o->opcode == OP_EXPONENTIAL || o->opcode == OP_TANH || o->opcode == OP_LOGISTIC ||
            o->opcode == OP_EXPONENTIAL_MINUS_ONE)
          k += 10;
      }
      *cost += k;
      (*kernels)++;
      continue;
    }
    for (uint32_t r = 0; r < op->num_regions; r++) count_kernels(&op->regions[r].block, cost, kernels);
  }
}

double tier_estimate_compile_ms(const hlo_func *f) {
  double cost = 0;
  uint32_t kernels = 0;
  count_kernels(&f->body.block, &cost, &kernels);
  if (!kernels) return 5; /* no compiler to wait for: lowering and loading only */
  uint32_t units = kernels < 2 ? 1 : 2;  /* the default pool of a small machine */
  return 30 * units + cost / units;
}

bool tier_should_interpret(double interp_ms, double compile_ms, double elapsed_ms) {
  if (interp_ms < 0) return true;
  double left = compile_ms - elapsed_ms;
  if (left < compile_ms / 4) left = compile_ms / 4;
  return interp_ms < left;
}

/* ------------------------------------------------ the background thread */

struct tier_job {
  pthread_t thread;
  hlo_status (*fn)(void *ctx);
  void *ctx;
  hlo_status st;
  bool *done;
};

static void *tier_main(void *p) {
  tier_job *j = p;
  j->st = j->fn(j->ctx);
  __atomic_store_n(j->done, true, __ATOMIC_RELEASE);
  return NULL;
}

hlo_status tier_job_start(hlo_status (*fn)(void *ctx), void *ctx, bool *done, tier_job **out) {
  *out = NULL;
  tier_job *j = xcalloc(1, sizeof *j);
  if (!j) return status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
  j->fn = fn;
  j->ctx = ctx;
  j->done = done;
  int rc = pthread_create(&j->thread, NULL, tier_main, j);
  if (rc) {
    free(j);
    return status_new(HLO_RESOURCE_EXHAUSTED, "cannot start the background compile's thread: %s",
                      strerror(rc));
  }
  *out = j;
  return NULL;
}

hlo_status tier_job_join(tier_job *j) {
  pthread_join(j->thread, NULL);
  hlo_status st = j->st;
  free(j);
  return st;
}

hlo_status tier_status_copy(hlo_status s, const hlo_source *src) {
  if (!s) return NULL;
  const hlo_loc *l = status_loc(s);
  const char *file = status_file(s);
  hlo_source named = {file, NULL, 0, 1};
  hlo_loc loc = {NULL, 0, 0};
  if (l) {
    loc.line = l->line;
    loc.col = l->col;
    if (file && src && src->name && !strcmp(file, src->name)) loc.src = src;
    else if (file) loc.src = &named;
  }
  hlo_status c = status_at(hlo_status_code_of(s), l ? &loc : NULL, "%s", hlo_status_message(s));
  /* the notes: the lines of the printed diagnostic that start with "note: " */
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  if (f) {
    hlo_status_print(s, f);
    fclose(f);
  }
  for (char *line = text, *next; line && *line; line = next) {
    next = strchr(line, '\n');
    if (next) *next++ = 0;
    if (!strncmp(line, "note: ", 6)) status_note(c, "%s", line + 6);
  }
  free(text);
  return c;
}
