/* executable_cpu.c — the CPU backend's executable, v0 (executable_cpu.h):
 * compile = walk the entry function's top-level ops in order and make one
 * thunk per op (per `hlo.fusion` op once fusion lands); run = the thunks in
 * order on interpreter tensors (one per SSA value, released after its last
 * reader). Correctness first: buffer assignment, threads over tiles and
 * fusion of several top-level ops come later (issue 7). */
#include "runtime/executable_cpu.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "backend/backend.h"
#include "ir/element.h"
#include "runtime/buffer_assignment.h"
#include "codegen/lower_fusion.h"
#include "ir/print.h"
#include "support/arena.h"
#include "support/strbuf.h"

typedef enum step_kind { STEP_KERNEL, STEP_GEMM, STEP_INTERP } step_kind;

typedef struct step {
  step_kind kind;
  const hlo_op *op;
  uint32_t kernel;             /* STEP_KERNEL: its index in the backend module */
  uint32_t nin, nout;
  const hlo_value **in;        /* values read (kernel inputs in order; gemm: lhs, rhs;
                                  interp: operands, then captured values) */
  const hlo_value **out;       /* values written (kernel outputs in order; op results) */
  backend_gemm g;              /* STEP_GEMM */
  uint32_t nfree;
  uint32_t *free_ids;          /* values whose last reader this step is */
  double prof_ms;              /* profiling: time spent in this step, summed over runs */
  uint64_t prof_runs;
} step;

struct cpu_exec {
  const backend *be;
  interp *it;
  const hlo_func *f;
  uint32_t nvals;
  tensor **consts;             /* by value id: constants made at compile time */
  tensor **vals;               /* by value id: the run's values */
  step *steps;
  uint32_t nsteps;
  backend_module *mod;
  runtime_cpu_stats stats;
  bool profile;                /* time each step (cpu_exec_profile) */
  bool check;                  /* run the interpreter beside each compiled step (cpu_exec_check) */
  /* buffer assignment (plan_buffers) */
  uint8_t *home;               /* by value id: where its data lives (value_home) */
  int64_t *offset;             /* by value id: its offset in the arena (HOME_ARENA) */
  uint32_t *def_step, *last_step; /* by value id: the step writing it, the last reading it */
  uint8_t *arena;              /* the temporaries (stats.temp_bytes), made at the first run */
};

/* Where a value's data lives during a run. */
typedef enum value_home {
  HOME_NONE,   /* not materialised (inside a fusion), or not a top-level value */
  HOME_ARG,    /* the run's argument */
  HOME_CONST,  /* a constant made at compile time */
  HOME_ARENA,  /* a slot of the arena: kernel and library-call results that are temporaries */
  HOME_HEAP,   /* its own allocation: interpreter thunks' results and the function's results */
} value_home;

static hlo_status oom(void) { return status_new(HLO_RESOURCE_EXHAUSTED, "out of memory"); }

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + 1e-6 * (double)ts.tv_nsec;
}

static bool static_tensor(const hlo_type *t) {
  return t && t->kind == TYPE_TENSOR && type_is_static(t) && !t->quant;
}

/* ------------------------------------------------------------ op choice */

/* Whether `op` is worth trying as a single-op kernel: what lower_fusion.h
 * lists, on non-empty static tensors. Converts from f64 to bf16/f16 stay on
 * the interpreter (the kernel rounds twice, through f32: kernel.h). */
static bool kernel_candidate(const hlo_op *op) {
  if (op->num_results != 1 || !static_tensor(op->results[0].type)) return false;
  if (type_num_elements(op->results[0].type) <= 0) return false;
  for (uint32_t i = 0; i < op->num_operands; i++) {
    const hlo_type *t = op->operands[i]->type;
    if (!static_tensor(t) || type_num_elements(t) <= 0) return false;
  }
  switch (op->opcode) {
  case OP_BROADCAST_IN_DIM: case OP_RESHAPE: case OP_TRANSPOSE: case OP_SLICE:
  case OP_CONCATENATE: case OP_IOTA:
    return true;
  case OP_REDUCE:
    return op->num_operands == 2 && op->num_regions == 1;
  case OP_CONVERT: {
    hlo_dtype from = op->operands[0]->type->dtype, to = op->results[0].type->dtype;
    return !(from == HLO_F64 && (to == HLO_BF16 || to == HLO_F16));
  }
  default:
    return (op_flags(op->opcode) & OPF_ELEMENTWISE) && op->num_regions == 0;
  }
}

/* A splat (or one-element) dense constant: lowered into a kernel as an
 * immediate rather than read from a buffer. */
static bool splat_constant(const hlo_value *v) {
  const hlo_op *d = v->def;
  if (!d || d->opcode != OP_CONSTANT) return false;
  const hlo_attr *a = op_attr(d, "value");
  return a && a->kind == ATTR_DENSE && !a->u.dense.resource &&
         (a->u.dense.splat || a->u.dense.num_elems == 1) && static_tensor(v->type);
}

/* The integer list field `name` of dot_dimension_numbers (absent: empty). */
static bool dot_field(arena *a, const hlo_attr *dn, const char *name, int64_t **out,
                      uint32_t *n) {
  *out = NULL;
  *n = 0;
  const hlo_attr *f = dn ? attr_field(dn, name) : NULL;
  return !f || attr_as_ints(a, f, out, n);
}

/* Whether `op` is a dot_general / dot that a gemm computes: f32 or f64
 * operands and result of one type, no algorithm, batch dims leading and in
 * order on both sides, one contracting dim, at most one free dim per side.
 * Fills *g. */
static bool gemm_form(const hlo_op *op, backend_gemm *g) {
  if ((op->opcode != OP_DOT_GENERAL && op->opcode != OP_DOT) || op->num_operands != 2 ||
      op->num_results != 1)
    return false;
  const hlo_type *lt = op->operands[0]->type, *rt = op->operands[1]->type,
                 *ot = op->results[0].type;
  if (!static_tensor(lt) || !static_tensor(rt) || !static_tensor(ot)) return false;
  if (lt->dtype != ot->dtype || rt->dtype != ot->dtype ||
      (ot->dtype != HLO_F32 && ot->dtype != HLO_F64))
    return false;
  if (op_attr(op, "algorithm")) return false;
  int64_t *lb = NULL, *rb = NULL, *lc = NULL, *rc = NULL;
  uint32_t nlb = 0, nrb = 0, nlc = 0, nrc = 0;
  int64_t dot_lc, dot_rc = 0;
  arena a;
  arena_init(&a);
  bool ok = true;
  if (op->opcode == OP_DOT) {
    dot_lc = (int64_t)lt->rank - 1;
    lc = &dot_lc, rc = &dot_rc, nlc = nrc = 1;
    ok = lt->rank >= 1 && lt->rank <= 2 && rt->rank >= 1 && rt->rank <= 2;
  } else {
    const hlo_attr *dn = op_attr(op, "dot_dimension_numbers");
    ok = dn && dn->kind == ATTR_STRUCT && dot_field(&a, dn, "lhs_batching_dimensions", &lb, &nlb) &&
         dot_field(&a, dn, "rhs_batching_dimensions", &rb, &nrb) &&
         dot_field(&a, dn, "lhs_contracting_dimensions", &lc, &nlc) &&
         dot_field(&a, dn, "rhs_contracting_dimensions", &rc, &nrc);
  }
  uint32_t nb = nlb;
  ok = ok && nlb == nrb && nlc == 1 && nrc == 1;
  for (uint32_t i = 0; ok && i < nb; i++) ok = lb[i] == (int64_t)i && rb[i] == (int64_t)i;
  ok = ok && lt->rank > nb && rt->rank > nb;
  memset(g, 0, sizeof *g);
  if (ok) {
    /* the free dims of a side are contiguous in memory (before or after
     * the contracting dim), so they flatten into one matrix dim */
    g->dtype = ot->dtype;
    g->batch = 1;
    for (uint32_t i = 0; i < nb; i++) g->batch *= lt->dims[i];
    int64_t l = lc[0], r = rc[0];
    ok = (l == (int64_t)lt->rank - 1 || l == nb) && (r == nb || r == (int64_t)rt->rank - 1);
    g->trans_a = l == nb && lt->rank > nb + 1;
    g->trans_b = r != nb;
    g->m = g->n = 1;
    for (uint32_t i = nb; ok && i < lt->rank; i++)
      if (i != l) g->m *= lt->dims[i];
    for (uint32_t i = nb; ok && i < rt->rank; i++)
      if (i != r) g->n *= rt->dims[i];
    if (ok) {
      g->k = lt->dims[l];
      ok = rt->dims[r] == g->k && type_num_elements(ot) == g->batch * g->m * g->n;
    }
  }
  arena_deinit(&a);
  return ok;
}

/* ------------------------------------------------------------ compiling */

typedef struct builder {
  cpu_exec *x;
  kernel **ks;
  uint32_t nks, cap_ks;
  uint32_t cap_steps;
} builder;

static hlo_status push_step(builder *b, const step *s) {
  cpu_exec *x = b->x;
  if (x->nsteps == b->cap_steps) {
    uint32_t nc = b->cap_steps ? b->cap_steps * 2 : 32;
    step *n = realloc(x->steps, nc * sizeof *n);
    if (!n) return oom();
    x->steps = n;
    b->cap_steps = nc;
  }
  x->steps[x->nsteps++] = *s;
  return NULL;
}

/* Whether `v` is defined in the function's body block itself (an argument
 * or a top-level op's result). */
static bool top_level(const cpu_exec *x, const hlo_value *v) {
  const hlo_block *body = &x->f->body.block;
  return v->def ? v->def->parent == body : v->block == body;
}

static bool has_value(const hlo_value *const *vs, uint32_t n, const hlo_value *v) {
  for (uint32_t i = 0; i < n; i++)
    if (vs[i] == v) return true;
  return false;
}

/* Adds to vs the top-level values the nested regions of `op` read. */
static hlo_status captured(const cpu_exec *x, const hlo_op *op, const hlo_value ***vs,
                           uint32_t *n, uint32_t *cap) {
  for (uint32_t r = 0; r < op->num_regions; r++)
    for (const hlo_op *o = op->regions[r].block.first; o; o = o->next) {
      for (uint32_t i = 0; i < o->num_operands; i++) {
        const hlo_value *v = o->operands[i];
        if (!top_level(x, v) || has_value(*vs, *n, v)) continue;
        if (*n == *cap) {
          uint32_t nc = *cap * 2 + 4;
          const hlo_value **nv = realloc(*vs, nc * sizeof *nv);
          if (!nv) return oom();
          *vs = nv;
          *cap = nc;
        }
        (*vs)[(*n)++] = v;
      }
      HLO_TRY(captured(x, o, vs, n, cap));
    }
  return NULL;
}

static hlo_status interp_step(builder *b, const hlo_op *op) {
  step s;
  memset(&s, 0, sizeof s);
  s.kind = STEP_INTERP;
  s.op = op;
  uint32_t cap = op->num_operands + 4;
  s.in = malloc(cap * sizeof *s.in);
  s.out = malloc((op->num_results ? op->num_results : 1) * sizeof *s.out);
  hlo_status st = s.in && s.out ? NULL : oom();
  for (uint32_t i = 0; i < op->num_operands && !st; i++) s.in[s.nin++] = op->operands[i];
  if (!st) st = captured(b->x, op, &s.in, &s.nin, &cap);
  for (uint32_t i = 0; i < op->num_results && !st; i++) s.out[s.nout++] = &op->results[i];
  if (!st) st = push_step(b, &s);
  if (st) {
    free(s.in);
    free(s.out);
    return st;
  }
  b->x->stats.interp++;
  return NULL;
}

static hlo_status gemm_step(builder *b, const hlo_op *op, const backend_gemm *g) {
  step s;
  memset(&s, 0, sizeof s);
  s.kind = STEP_GEMM;
  s.op = op;
  s.g = *g;
  s.in = malloc(2 * sizeof *s.in);
  s.out = malloc(sizeof *s.out);
  if (!s.in || !s.out) {
    free(s.in);
    free(s.out);
    return oom();
  }
  s.in[0] = op->operands[0];
  s.in[1] = op->operands[1];
  s.out[0] = &op->results[0];
  s.nin = 2;
  s.nout = 1;
  hlo_status st = push_step(b, &s);
  if (st) {
    free(s.in);
    free(s.out);
    return st;
  }
  b->x->stats.blas++;
  return NULL;
}

/* Makes constant `v` (its op run by the interpreter) once, into consts. */
static hlo_status make_constant(cpu_exec *x, const hlo_value *v) {
  if (v->id >= x->nvals) return status_at(HLO_INTERNAL, &v->loc, "value id out of range");
  if (x->consts[v->id]) return NULL;
  tensor *t = NULL;
  HLO_TRY(interp_run_op(x->it, v->def, NULL, NULL, 0, &t));
  x->consts[v->id] = t;
  return NULL;
}

/* `hlo.fusion` (the fusion pass's op; matched by name so this file builds
 * before the opcode exists): a region of fused ops whose terminator returns
 * the op's results. */
static bool is_fusion(const hlo_op *op) {
  const char *n = op_name(op->opcode);
  return n && !strcmp(n, "hlo.fusion") && op->num_regions == 1;
}

/* The top-level value a kernel buffer's value stands for: a fusion region's
 * block argument is the fusion op's operand; a result of the region's
 * terminator is the op's result. NULL when none. */
static const hlo_value *outer_value(const hlo_op *fusion, const hlo_value *v, bool output) {
  if (!fusion) return v;
  const hlo_block *rb = &fusion->regions[0].block;
  if (!output) {
    if (!v->def && v->block == rb)
      return v->index < fusion->num_operands ? fusion->operands[v->index] : NULL;
    return v; /* a captured top-level value, or a constant of the region */
  }
  const hlo_op *term = rb->last;
  for (uint32_t i = 0; term && i < term->num_operands && i < fusion->num_results; i++)
    if (term->operands[i] == v) return &fusion->results[i];
  return NULL;
}

/* Tries to lower ops[0..n) (computing outs[0..no)) into one kernel; on
 * success adds a kernel step and returns true in *done. A lowering that
 * fails for any reason but memory leaves *done false (the caller falls back
 * to the interpreter, which reports real errors at run time). */
static hlo_status try_kernel(builder *b, const hlo_op *where, const hlo_op *fusion,
                             const hlo_op *const *ops, uint32_t n, const hlo_value *const *outs,
                             uint32_t no, bool *done) {
  *done = false;
  char name[32];
  snprintf(name, sizeof name, "k%u", b->nks);
  kernel *k = NULL;
  hlo_status st = lower_fusion(ops, n, outs, no, name, &k);
  if (st) {
    bool fatal = hlo_status_code_of(st) == HLO_RESOURCE_EXHAUSTED;
    if (!fatal) hlo_status_free(st);
    return fatal ? st : NULL;
  }
  step s;
  memset(&s, 0, sizeof s);
  s.kind = STEP_KERNEL;
  s.op = where;
  s.kernel = b->nks;
  s.in = calloc(k->num_inputs ? k->num_inputs : 1, sizeof *s.in);
  s.out = calloc(k->num_outputs ? k->num_outputs : 1, sizeof *s.out);
  if (!s.in || !s.out) st = oom();
  for (uint32_t i = 0; i < k->num_inputs && !st; i++) {
    const hlo_value *v = k->inputs[i].value;
    const hlo_value *ov = v ? outer_value(fusion, v, false) : NULL;
    if (!ov) {
      st = status_at(HLO_INTERNAL, &where->loc, "kernel input %u stands for no value", i);
      break;
    }
    if (ov->def && ov->def->opcode == OP_CONSTANT) st = make_constant(b->x, ov);
    s.in[s.nin++] = ov;
  }
  for (uint32_t i = 0; i < k->num_outputs && !st; i++) {
    const hlo_value *ov = k->outputs[i].buf.value ? outer_value(fusion, k->outputs[i].buf.value, true) : NULL;
    if (!ov) st = status_at(HLO_INTERNAL, &where->loc, "kernel output %u stands for no result", i);
    else s.out[s.nout++] = ov;
  }
  if (!st && b->nks == b->cap_ks) {
    uint32_t nc = b->cap_ks ? b->cap_ks * 2 : 32;
    kernel **nk = realloc(b->ks, nc * sizeof *nk);
    if (!nk) st = oom();
    else b->ks = nk, b->cap_ks = nc;
  }
  if (!st) st = push_step(b, &s);
  if (st) {
    free(s.in);
    free(s.out);
    kernel_destroy(k);
    return st;
  }
  b->ks[b->nks++] = k;
  b->x->stats.kernels++;
  *done = true;
  return NULL;
}

static hlo_status compile_op(builder *b, const hlo_op *op) {
  bool done = false;
  backend_gemm g;
  if (is_fusion(op)) {
    const hlo_block *rb = &op->regions[0].block;
    uint32_t n = 0;
    for (const hlo_op *o = rb->first; o; o = o->next) n++;
    const hlo_op **ops = calloc(n ? n : 1, sizeof *ops);
    if (!ops) return oom();
    uint32_t k = 0;
    const hlo_op *term = NULL;
    for (const hlo_op *o = rb->first; o; o = o->next) {
      if (o == rb->last && (op_flags(o->opcode) & OPF_TERMINATOR || o->opcode == OP_RETURN))
        term = o;
      else
        ops[k++] = o;
    }
    hlo_status st = NULL;
    if (term && term->num_operands == op->num_results)
      st = try_kernel(b, op, op, ops, k, (const hlo_value *const *)term->operands,
                      term->num_operands, &done);
    free(ops);
    HLO_TRY(st);
  } else if (kernel_candidate(op)) {
    /* the op and the splat constants it reads (immediates in the kernel) */
    const hlo_op *ops[1 + 8];
    uint32_t n = 0;
    ops[n++] = op;
    for (uint32_t i = 0; i < op->num_operands && n < 9; i++) {
      const hlo_value *v = op->operands[i];
      bool seen = false;
      for (uint32_t j = 1; j < n; j++) seen |= ops[j] == v->def;
      if (!seen && splat_constant(v)) ops[n++] = v->def;
    }
    const hlo_value *out = &op->results[0];
    HLO_TRY(try_kernel(b, op, NULL, ops, n, &out, 1, &done));
  } else if (b->x->be->gemm && gemm_form(op, &g)) {
    HLO_TRY(gemm_step(b, op, &g));
    done = true;
  }
  if (!done) HLO_TRY(interp_step(b, op));
  return NULL;
}

static int64_t value_bytes(const hlo_value *v) {
  const hlo_type *t = v->type;
  if (!static_tensor(t)) return 0;
  return type_num_elements(t) * (int64_t)hlo_dtype_size(t->dtype);
}

/* Buffer assignment: where each top-level value lives (value_home), each
 * arena value's offset (ba_pack over its live range in the step order),
 * and the memory figures of stats. The function's results get their own
 * allocations (they are handed to the caller); so do the interpreter
 * thunks' results (the interpreter allocates them). */
static hlo_status plan_buffers(cpu_exec *x) {
  uint32_t nv = x->nvals ? x->nvals : 1;
  x->home = calloc(nv, sizeof *x->home);
  x->offset = calloc(nv, sizeof *x->offset);
  x->def_step = calloc(nv, sizeof *x->def_step);
  x->last_step = calloc(nv, sizeof *x->last_step);
  bool *is_result = calloc(nv, sizeof *is_result);
  ba_buffer *bufs = malloc(nv * sizeof *bufs), *heap = malloc(nv * sizeof *heap);
  uint32_t *buf_vid = malloc(nv * sizeof *buf_vid);
  if (!x->home || !x->offset || !x->def_step || !x->last_step || !is_result || !bufs || !heap ||
      !buf_vid) {
    free(is_result), free(bufs), free(heap), free(buf_vid);
    return oom();
  }
  runtime_cpu_stats *ms = &x->stats;
  const hlo_func *f = x->f;
  for (uint32_t i = 0; i < f->num_args; i++) {
    const hlo_value *a = &f->body.block.args[i];
    if (a->id < x->nvals) x->home[a->id] = HOME_ARG;
    ms->arg_bytes += value_bytes(a);
  }
  for (uint32_t i = 0; i < x->nvals; i++)
    if (x->consts[i]) {
      x->home[i] = HOME_CONST;
      ms->const_bytes += (int64_t)x->consts[i]->nbytes;
    }
  const hlo_op *term = f->body.block.last;
  for (uint32_t i = 0; term && i < term->num_operands; i++) {
    const hlo_value *v = term->operands[i];
    if (v->id < x->nvals && !is_result[v->id]) {
      is_result[v->id] = true;
      ms->out_bytes += value_bytes(v);
    }
  }
  for (uint32_t s = 0; s < x->nsteps; s++) {
    const step *p = &x->steps[s];
    for (uint32_t i = 0; i < p->nin; i++) x->last_step[p->in[i]->id] = s;
    for (uint32_t i = 0; i < p->nout; i++) {
      uint32_t id = p->out[i]->id;
      x->def_step[id] = s;
      x->last_step[id] = s;
      x->home[id] = is_result[id] || p->kind == STEP_INTERP ? HOME_HEAP : HOME_ARENA;
    }
  }
  uint32_t nb = 0, nh = 0;
  for (uint32_t id = 0; id < x->nvals; id++) {
    if (x->home[id] != HOME_ARENA && (x->home[id] != HOME_HEAP || is_result[id])) continue;
    ba_buffer b = {0, x->def_step[id], x->last_step[id], 0};
    const step *p = &x->steps[b.start];
    for (uint32_t i = 0; i < p->nout; i++)
      if (p->out[i]->id == id) b.bytes = value_bytes(p->out[i]);
    if (x->home[id] == HOME_ARENA) {
      buf_vid[nb] = id;
      bufs[nb++] = b;
    } else {
      heap[nh++] = b;
    }
  }
  hlo_status st = ba_pack(bufs, nb, 64, &ms->temp_bytes);
  for (uint32_t i = 0; !st && i < nb; i++) x->offset[buf_vid[i]] = bufs[i].offset;
  ms->arena_buffers = nb;
  ms->heap_peak_bytes = ba_peak_live(heap, nh);
  ms->peak_bytes = ms->arg_bytes + ms->out_bytes + ms->temp_bytes + ms->heap_peak_bytes;
  free(is_result), free(bufs), free(heap), free(buf_vid);
  return st;
}

/* Writes the buffer assignment to DIR/buffer_assignment.txt: each arena
 * buffer (value, type, bytes, offset, live steps, defining op's line) by
 * offset, so that what shares bytes stands together; then the totals. */
static hlo_status dump_buffers(const cpu_exec *x, const char *dir) {
  char path[4096];
  snprintf(path, sizeof path, "%s/buffer_assignment.txt", dir);
  FILE *fp = fopen(path, "w");
  if (!fp) return status_new(HLO_UNAVAILABLE, "cannot write '%s'", path);
  const runtime_cpu_stats *ms = &x->stats;
  fprintf(fp, "# buffer assignment of @%s: %u arena buffers in %lld bytes; arguments %lld, "
          "results %lld, constants %lld, interpreter temporaries at most %lld live; peak %lld\n",
          x->f->name, ms->arena_buffers, (long long)ms->temp_bytes, (long long)ms->arg_bytes,
          (long long)ms->out_bytes, (long long)ms->const_bytes, (long long)ms->heap_peak_bytes,
          (long long)ms->peak_bytes);
  fprintf(fp, "# %-12s %12s %12s  %-11s %-6s %s\n", "offset", "bytes", "end", "live steps", "line",
          "value : type");
  /* by offset: a simple selection over the arena values */
  int64_t last_off = -1;
  uint32_t last_id = 0;
  for (;;) {
    int64_t best = INT64_MAX;
    uint32_t best_id = 0;
    for (uint32_t id = 0; id < x->nvals; id++) {
      if (x->home[id] != HOME_ARENA) continue;
      bool after = x->offset[id] > last_off || (x->offset[id] == last_off && id > last_id);
      if (after && (x->offset[id] < best || (x->offset[id] == best && id < best_id))) {
        best = x->offset[id];
        best_id = id;
      }
    }
    if (best == INT64_MAX) break;
    last_off = best;
    last_id = best_id;
    const step *p = &x->steps[x->def_step[best_id]];
    const hlo_value *v = NULL;
    for (uint32_t i = 0; i < p->nout; i++)
      if (p->out[i]->id == best_id) v = p->out[i];
    if (!v) continue;
    strbuf tb;
    sb_init(&tb);
    print_type(&tb, v->type);
    int64_t bytes = value_bytes(v);
    char live[32];
    snprintf(live, sizeof live, "%u-%u", x->def_step[best_id], x->last_step[best_id]);
    fprintf(fp, "  %-12lld %12lld %12lld  %-11s %-6u %%%s : %s\n", (long long)best,
            (long long)bytes, (long long)(best + bytes), live, v->loc.line,
            v->name ? v->name : "?", sb_cstr(&tb));
    sb_free(&tb);
  }
  int err = ferror(fp);
  if (fclose(fp) != 0 || err) return status_new(HLO_UNAVAILABLE, "cannot write '%s'", path);
  return NULL;
}

/* Per step, the values whose last reader it is (never constants, nor what
 * the function returns: those live to the end of the run). */
static hlo_status plan_frees(cpu_exec *x) {
  uint32_t nv = x->nvals;
  int64_t *last = malloc((nv ? nv : 1) * sizeof *last);
  if (!last) return oom();
  for (uint32_t i = 0; i < nv; i++) last[i] = -1;
  for (uint32_t s = 0; s < x->nsteps; s++) {
    const step *p = &x->steps[s];
    for (uint32_t i = 0; i < p->nout + p->nin; i++) {
      const hlo_value *v = i < p->nout ? p->out[i] : p->in[i - p->nout];
      if (v->id >= nv) {
        free(last);
        return status_at(HLO_INTERNAL, &p->op->loc, "value %%%s is not numbered (id %u of %u)",
                         v->name ? v->name : "?", v->id, nv);
      }
      last[v->id] = s;
    }
  }
  const hlo_op *term = x->f->body.block.last;
  for (uint32_t i = 0; term && i < term->num_operands; i++)
    if (term->operands[i]->id < nv) last[term->operands[i]->id] = -1;
  for (uint32_t i = 0; i < nv; i++)
    if (x->consts[i]) last[i] = -1;
  hlo_status st = NULL;
  for (uint32_t s = 0; s < x->nsteps && !st; s++) {
    step *p = &x->steps[s];
    uint32_t cnt = 0;
    for (uint32_t i = 0; i < nv; i++) cnt += last[i] == (int64_t)s;
    if (!cnt) continue;
    p->free_ids = malloc(cnt * sizeof *p->free_ids);
    if (!p->free_ids) {
      st = oom();
      break;
    }
    for (uint32_t i = 0; i < nv; i++)
      if (last[i] == (int64_t)s) p->free_ids[p->nfree++] = i;
  }
  free(last);
  return st;
}

/* stats.interp_ops: the interpreter thunks' op names, counted, in order of
 * first appearance (cut at the buffer's size). */
static void name_interp_ops(cpu_exec *x) {
  char *buf = x->stats.interp_ops;
  size_t cap = sizeof x->stats.interp_ops, len = 0;
  buf[0] = 0;
  for (uint32_t s = 0; s < x->nsteps; s++) {
    const step *p = &x->steps[s];
    if (p->kind != STEP_INTERP) continue;
    bool seen = false;
    for (uint32_t t = 0; t < s && !seen; t++)
      seen = x->steps[t].kind == STEP_INTERP && x->steps[t].op->opcode == p->op->opcode;
    if (seen) continue;
    uint32_t cnt = 0;
    for (uint32_t t = s; t < x->nsteps; t++)
      cnt += x->steps[t].kind == STEP_INTERP && x->steps[t].op->opcode == p->op->opcode;
    const char *n = op_name(p->op->opcode);
    if (n && !strncmp(n, "stablehlo.", 10)) n += 10;
    int w = cnt > 1 ? snprintf(buf + len, cap - len, "%s%s x%u", len ? ", " : "", n ? n : "?", cnt)
                    : snprintf(buf + len, cap - len, "%s%s", len ? ", " : "", n ? n : "?");
    if (w < 0 || (size_t)w >= cap - len) break;
    len += (size_t)w;
  }
}

hlo_status cpu_exec_create(interp *it, const hlo_func *f, const char *dump_dir, cpu_exec **out) {
  *out = NULL;
  double t0 = now_ms();
  cpu_exec *x = calloc(1, sizeof *x);
  if (!x) return oom();
  x->be = backend_cpu();
  x->it = it;
  x->f = f;
  x->nvals = f->num_values;
  x->consts = calloc(x->nvals ? x->nvals : 1, sizeof *x->consts);
  x->vals = calloc(x->nvals ? x->nvals : 1, sizeof *x->vals);
  builder b;
  memset(&b, 0, sizeof b);
  b.x = x;
  hlo_status st = x->consts && x->vals ? NULL : oom();
  for (const hlo_op *op = f->body.block.first; op && !st; op = op->next) {
    x->stats.ops++;
    if (op == f->body.block.last &&
        (op->opcode == OP_FUNC_RETURN || op->opcode == OP_RETURN))
      continue;
    if (op->opcode == OP_CONSTANT && op->num_results == 1) {
      x->stats.constants++;
      st = make_constant(x, &op->results[0]);
      continue;
    }
    st = compile_op(&b, op);
  }
  if (!st) st = plan_frees(x);
  if (!st) st = plan_buffers(x);
  if (!st && dump_dir) st = dump_buffers(x, dump_dir);
  double t1 = now_ms();
  if (!st && b.nks) {
    backend_compile_options o = {.dump_dir = dump_dir, .cc = NULL};
    st = x->be->compile((const kernel *const *)b.ks, b.nks, &o, &x->mod);
    if (st) status_note(st, "while compiling %u kernels of @%s for the CPU", b.nks, f->name);
  }
  for (uint32_t i = 0; i < b.nks; i++) kernel_destroy(b.ks[i]);
  free(b.ks);
  if (st) {
    cpu_exec_destroy(x);
    return st;
  }
  name_interp_ops(x);
  x->stats.compile_ms = now_ms() - t0;
  x->stats.cc_ms = now_ms() - t1;
  x->stats.lower_ms = x->stats.compile_ms - x->stats.cc_ms;
  *out = x;
  return NULL;
}

/* -------------------------------------------------------------- running */

/* The data of value v during a run: its tensor (argument, constant,
 * heap value) or its arena slot; NULL when it has none (an internal
 * error, reported by the caller). */
static void *value_data(const cpu_exec *x, const hlo_value *v) {
  if (v->id >= x->nvals) return NULL;
  if (x->vals[v->id]) return x->vals[v->id]->data;
  if (x->consts[v->id]) return x->consts[v->id]->data;
  if (x->home[v->id] == HOME_ARENA) return x->arena + x->offset[v->id];
  return NULL;
}

static hlo_status no_buffer(const step *s, const hlo_value *v) {
  return status_at(HLO_INTERNAL, &s->op->loc, "cpu executable: value %%%s has no buffer",
                   v->name ? v->name : "?");
}

/* v as an interpreter tensor: its own, or (arena values) a new wrapper
 * over its slot, which *wrapped says to release after the step. */
static hlo_status get(cpu_exec *x, const step *s, const hlo_value *v, tensor **out,
                      bool *wrapped) {
  *wrapped = false;
  tensor *t = v->id < x->nvals ? (x->vals[v->id] ? x->vals[v->id] : x->consts[v->id]) : NULL;
  if (!t && v->id < x->nvals && x->home[v->id] == HOME_ARENA) {
    t = tensor_wrap(v->type, x->arena + x->offset[v->id]);
    if (!t) return oom();
    *wrapped = true;
  }
  if (!t) return no_buffer(s, v);
  *out = t;
  return NULL;
}

/* A copy of t in memory of its own (an interpreter kernel may hand back
 * its input: an arena slot must not escape the step that wrapped it). */
static hlo_status own_copy(tensor *t, const hlo_loc *loc, tensor **out) {
  tensor *c;
  HLO_TRY(tensor_create(t->type, loc, &c));
  if (t->nbytes) memcpy(c->data, t->data, t->nbytes);
  *out = c;
  return NULL;
}

static hlo_status run_interp_step(cpu_exec *x, const step *s, tensor **in, bool *wrapped,
                                  tensor **out) {
  hlo_status st = NULL;
  for (uint32_t i = 0; i < s->nin && !st; i++) st = get(x, s, s->in[i], &in[i], &wrapped[i]);
  if (!st) st = interp_run_op(x->it, s->op, s->in, in, s->nin, out);
  for (uint32_t i = 0; i < s->nout && !st; i++) {
    if (out[i] && out[i]->borrowed) {
      tensor *c = NULL;
      st = own_copy(out[i], &s->op->loc, &c);
      tensor_release(out[i]);
      out[i] = c;
    }
  }
  for (uint32_t i = 0; i < s->nin; i++)
    if (wrapped[i]) tensor_release(in[i]);
  return st;
}

/* A kernel or library call: inputs and arena outputs by pointer; heap
 * outputs (the function's results) made here. */
static hlo_status run_native_step(cpu_exec *x, const step *s, void **bufs, tensor **out) {
  hlo_status st = NULL;
  for (uint32_t i = 0; i < s->nin && !st; i++) {
    bufs[i] = value_data(x, s->in[i]);
    if (!bufs[i]) st = no_buffer(s, s->in[i]);
  }
  for (uint32_t i = 0; i < s->nout && !st; i++) {
    const hlo_value *v = s->out[i];
    if (x->home[v->id] == HOME_ARENA) {
      bufs[s->nin + i] = x->arena + x->offset[v->id];
    } else {
      st = tensor_create(v->type, &s->op->loc, &out[i]);
      if (!st) bufs[s->nin + i] = out[i]->data;
    }
  }
  if (!st && s->kind == STEP_KERNEL) st = x->be->launch(x->mod, s->kernel, bufs);
  if (!st && s->kind == STEP_GEMM) st = x->be->gemm(&s->g, bufs[0], bufs[1], bufs[2]);
  if (st && !status_loc(st)) st = status_note(st, "in the thunk of %s", op_name(s->op->opcode));
  return st;
}

static hlo_status run_step(cpu_exec *x, const step *s) {
  enum { SMALL = 16 };
  tensor *in_small[SMALL], *out_small[SMALL] = {0};
  bool wrapped_small[SMALL] = {0};
  void *buf_small[2 * SMALL];
  tensor **in = s->nin <= SMALL ? in_small : calloc(s->nin, sizeof *in);
  bool *wrapped = s->nin <= SMALL ? wrapped_small : calloc(s->nin, sizeof *wrapped);
  tensor **out = s->nout <= SMALL ? out_small : calloc(s->nout, sizeof *out);
  void **bufs = s->nin + s->nout <= 2 * SMALL ? buf_small : calloc(s->nin + s->nout, sizeof *bufs);
  hlo_status st = in && out && bufs && wrapped ? NULL : oom();
  if (!st)
    st = s->kind == STEP_INTERP ? run_interp_step(x, s, in, wrapped, out)
                                : run_native_step(x, s, bufs, out);
  for (uint32_t i = 0; out && i < s->nout; i++) {
    uint32_t id = s->out[i]->id;
    if (!st && id < x->nvals && out[i]) {
      tensor_release(x->vals[id]);
      x->vals[id] = out[i];
    } else {
      tensor_release(out[i]);
    }
  }
  if (in != in_small) free(in);
  if (wrapped != wrapped_small) free(wrapped);
  if (out != out_small) free(out);
  if (bufs != buf_small) free(bufs);
  return st;
}

/* ------------------------------------------------------------- --check */

/* The tolerance of element type dt for --check: relative to the element,
 * or to 1e-3 of the tensor's largest magnitude for elements near zero (a
 * sum whose terms cancel). Integers and predicates: exact. */
static double check_rtol(hlo_dtype dt) {
  switch (dt) {
  case HLO_F64: case HLO_C128: return 1e-10;
  case HLO_F32: case HLO_C64: return 1e-4;
  case HLO_BF16: case HLO_F16: return 2e-2;
  default: return dtype_class(dt) == HLO_CLASS_FLOAT ? 0.25 : 0;
  }
}

/* Compares the compiled value (data) with the interpreter's (want); on a
 * difference beyond check_rtol, a message naming the element. */
static bool check_close(const hlo_type *t, const void *data, const tensor *want, char *why,
                        size_t nwhy) {
  hlo_dtype dt = t->dtype;
  int64_t n = want->num_elems;
  bool fl = dtype_class(dt) == HLO_CLASS_FLOAT;
  double rtol = check_rtol(dt), scale = 0;
  if (dt == HLO_C64 || dt == HLO_C128) {
    fl = true;
    dt = dt == HLO_C64 ? HLO_F32 : HLO_F64;
    n *= 2;
  }
  for (int64_t i = 0; fl && i < n; i++) {
    double b = fabs(elem_get_f64(dt, want->data, i));
    if (b > scale && !isinf(b)) scale = b;
  }
  for (int64_t i = 0; i < n; i++) {
    if (!fl || rtol == 0) {
      if (elem_get_bits(dt, data, i) != elem_get_bits(dt, want->data, i)) {
        snprintf(why, nwhy, "element %lld: bits 0x%llx, the interpreter's 0x%llx", (long long)i,
                 (unsigned long long)elem_get_bits(dt, data, i),
                 (unsigned long long)elem_get_bits(dt, want->data, i));
        return false;
      }
      continue;
    }
    double a = elem_get_f64(dt, data, i), b = elem_get_f64(dt, want->data, i);
    if (a == b || (isnan(a) && isnan(b))) continue;
    double tol = rtol * fmax(fabs(b), 1e-3 * scale);
    if (!(fabs(a - b) <= tol)) {
      snprintf(why, nwhy, "element %lld: %.9g, the interpreter's %.9g (tolerance %.3g)",
               (long long)i, a, b, tol);
      return false;
    }
  }
  return true;
}

/* The ops inside a fusion, named: "add, exponential, reduce" (cut). */
static void fusion_ops(const hlo_op *op, char *buf, size_t n) {
  size_t len = 0;
  buf[0] = 0;
  if (op->num_regions != 1) return;
  for (const hlo_op *o = op->regions[0].block.first; o && o != op->regions[0].block.last;
       o = o->next) {
    const char *nm = op_name(o->opcode);
    if (nm && !strncmp(nm, "stablehlo.", 10)) nm += 10;
    int w = snprintf(buf + len, n - len, "%s%s", len ? ", " : "", nm ? nm : "?");
    if (w < 0 || (size_t)w >= n - len) break;
    len += (size_t)w;
  }
}

/* Runs step s's op on the interpreter with the same inputs and compares
 * its results with what the compiled step wrote. Errors: HLO_FAILED_CHECK
 * located at the op, naming the step, the kernel and the fused ops. */
static hlo_status check_step(cpu_exec *x, const step *s, uint32_t index) {
  uint32_t cap = s->op->num_operands + 4, n = 0;
  const hlo_value **vs = malloc(cap * sizeof *vs);
  if (!vs) return oom();
  for (uint32_t i = 0; i < s->op->num_operands; i++) vs[n++] = s->op->operands[i];
  hlo_status st = captured(x, s->op, &vs, &n, &cap);
  tensor **in = st ? NULL : calloc(n ? n : 1, sizeof *in);
  bool *wrapped = st ? NULL : calloc(n ? n : 1, sizeof *wrapped);
  tensor **out = st ? NULL : calloc(s->op->num_results ? s->op->num_results : 1, sizeof *out);
  if (!st && (!in || !wrapped || !out)) st = oom();
  for (uint32_t i = 0; i < n && !st; i++) st = get(x, s, vs[i], &in[i], &wrapped[i]);
  if (!st) st = interp_run_op(x->it, s->op, vs, in, n, out);
  for (uint32_t r = 0; r < s->op->num_results && !st; r++) {
    const hlo_value *v = &s->op->results[r];
    void *data = value_data(x, v);
    char why[256];
    if (!data || !out[r] || out[r]->type->kind != TYPE_TENSOR) continue;
    if (check_close(v->type, data, out[r], why, sizeof why)) continue;
    char ops[160];
    fusion_ops(s->op, ops, sizeof ops);
    const hlo_attr *kind = op_attr(s->op, "kind");
    const char *nm = op_name(s->op->opcode);
    st = status_at(HLO_FAILED_CHECK, &s->op->loc,
                   "--check: step %u (%s%s%s%s) differs from the interpreter: result %u %s", index,
                   s->kind == STEP_GEMM ? "BLAS gemm, " : "", nm ? nm : "?",
                   kind && kind->kind == ATTR_STRING ? " kind=" : "",
                   kind && kind->kind == ATTR_STRING ? kind->u.str.s : "", r, why);
    if (s->kind == STEP_KERNEL)
      status_note(st, "compiled as kernel k%u (its C: the kernels file of --dump-to)", s->kernel);
    if (ops[0]) status_note(st, "the fused ops: %s", ops);
  }
  for (uint32_t i = 0; in && i < n; i++)
    if (wrapped[i]) tensor_release(in[i]);
  for (uint32_t r = 0; out && r < s->op->num_results; r++) tensor_release(out[r]);
  free(vs);
  free(in);
  free(wrapped);
  free(out);
  return st;
}

void cpu_exec_check(cpu_exec *x, bool on) { x->check = on; }

static void clear_vals(cpu_exec *x) {
  for (uint32_t i = 0; i < x->nvals; i++) {
    tensor_release(x->vals[i]);
    x->vals[i] = NULL;
  }
}

hlo_status cpu_exec_run(cpu_exec *x, tensor *const *args, uint32_t n, tensor ***out) {
  *out = NULL;
  const hlo_func *f = x->f;
  if (n != f->num_args)
    return status_at(HLO_INVALID_ARGUMENT, &f->loc, "@%s takes %u arguments, got %u", f->name,
                     f->num_args, n);
  if (!x->arena && x->stats.temp_bytes > 0) {
    x->arena = aligned_alloc(64, (size_t)x->stats.temp_bytes);
    if (!x->arena)
      return status_at(HLO_RESOURCE_EXHAUSTED, &f->loc, "out of memory for the %lld bytes of "
                       "temporaries of @%s", (long long)x->stats.temp_bytes, f->name);
  }
  for (uint32_t i = 0; i < n; i++)
    if (f->body.block.args[i].id < x->nvals) x->vals[f->body.block.args[i].id] = tensor_retain(args[i]);
  hlo_status st = NULL;
  for (uint32_t s = 0; s < x->nsteps && !st; s++) {
    step *p = &x->steps[s];
    double t0 = x->profile ? now_ms() : 0;
    st = run_step(x, p);
    if (!st && x->check && p->kind != STEP_INTERP) st = check_step(x, p, s);
    if (x->profile) {
      p->prof_ms += now_ms() - t0;
      p->prof_runs++;
    }
    for (uint32_t i = 0; i < p->nfree && !st; i++) {
      tensor_release(x->vals[p->free_ids[i]]);
      x->vals[p->free_ids[i]] = NULL;
    }
  }
  const hlo_op *term = f->body.block.last;
  tensor **res = NULL;
  if (!st && (!term || term->num_operands != f->num_results))
    st = status_at(HLO_INTERNAL, &f->loc, "@%s: no return of %u values", f->name, f->num_results);
  if (!st) {
    res = calloc(f->num_results ? f->num_results : 1, sizeof *res);
    if (!res) st = oom();
  }
  for (uint32_t i = 0; i < f->num_results && !st; i++) {
    tensor *t = NULL;
    step where = {.op = term};
    bool wrapped = false;
    st = get(x, &where, term->operands[i], &t, &wrapped);
    if (!st && wrapped) {
      /* not planned (results are heap values), but safe: copy out */
      st = own_copy(t, &term->loc, &res[i]);
      tensor_release(t);
    } else if (!st) {
      res[i] = tensor_retain(t);
    }
  }
  clear_vals(x);
  if (st) {
    for (uint32_t i = 0; res && i < f->num_results; i++) tensor_release(res[i]);
    free(res);
    return st;
  }
  *out = res;
  return NULL;
}

const runtime_cpu_stats *cpu_exec_stats(const cpu_exec *x) { return x ? &x->stats : NULL; }

void cpu_exec_profile(cpu_exec *x, bool on) {
  x->profile = on;
  for (uint32_t s = 0; s < x->nsteps; s++) {
    x->steps[s].prof_ms = 0;
    x->steps[s].prof_runs = 0;
  }
}

/* The kind of a step, for the profile. */
static const char *step_kind_name(const step *p) {
  return p->kind == STEP_KERNEL ? "kernel" : p->kind == STEP_GEMM ? "gemm" : "interp";
}

static int by_time_desc(const void *a, const void *b) {
  const step *x = *(const step *const *)a, *y = *(const step *const *)b;
  return x->prof_ms < y->prof_ms ? 1 : x->prof_ms > y->prof_ms ? -1 : 0;
}

void cpu_exec_profile_print(const cpu_exec *x, FILE *out, uint32_t max_rows) {
  double total = 0;
  uint64_t runs = 0;
  for (uint32_t s = 0; s < x->nsteps; s++) {
    total += x->steps[s].prof_ms;
    if (x->steps[s].prof_runs > runs) runs = x->steps[s].prof_runs;
  }
  if (!runs) {
    fprintf(out, "profile: no profiled runs\n");
    return;
  }
  const step **order = malloc((x->nsteps ? x->nsteps : 1) * sizeof *order);
  if (!order) return;
  for (uint32_t s = 0; s < x->nsteps; s++) order[s] = &x->steps[s];
  qsort(order, x->nsteps, sizeof *order, by_time_desc);
  fprintf(out, "profile: %u thunks, %.3f ms per run over %llu runs (by time spent)\n",
          x->nsteps, total / (double)runs, (unsigned long long)runs);
  fprintf(out, "  %5s %-7s %10s %6s  %-28s %s\n", "step", "kind", "ms/run", "%", "op", "where");
  for (uint32_t i = 0; i < x->nsteps && i < max_rows; i++) {
    const step *p = order[i];
    const char *n = op_name(p->op->opcode);
    if (n && !strncmp(n, "stablehlo.", 10)) n += 10;
    char what[64];
    if (p->kind == STEP_KERNEL) snprintf(what, sizeof what, "%s (k%u)", n ? n : "?", p->kernel);
    else if (p->kind == STEP_GEMM)
      snprintf(what, sizeof what, "%s %lldx%lldx%lld%s", n ? n : "?", (long long)p->g.m,
               (long long)p->g.n, (long long)p->g.k, p->g.batch > 1 ? " batched" : "");
    else snprintf(what, sizeof what, "%s", n ? n : "?");
    fprintf(out, "  %5u %-7s %10.4f %6.1f  %-28s line %u\n", (unsigned)(p - x->steps),
            step_kind_name(p), p->prof_ms / (double)p->prof_runs,
            total > 0 ? 100.0 * p->prof_ms / total : 0.0, what, p->op->loc.line);
  }
  free(order);
}

void cpu_exec_destroy(cpu_exec *x) {
  if (!x) return;
  if (x->mod) x->be->module_destroy(x->mod);
  for (uint32_t s = 0; s < x->nsteps; s++) {
    free(x->steps[s].in);
    free(x->steps[s].out);
    free(x->steps[s].free_ids);
  }
  free(x->steps);
  if (x->vals) clear_vals(x);
  for (uint32_t i = 0; x->consts && i < x->nvals; i++) tensor_release(x->consts[i]);
  free(x->consts);
  free(x->vals);
  free(x->home);
  free(x->offset);
  free(x->def_step);
  free(x->last_step);
  free(x->arena);
  free(x);
}
