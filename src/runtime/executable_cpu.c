/* executable_cpu.c — compiling a function for the CPU backend
 * (executable_cpu.h, executable_cpu_internal.h): one program per block —
 * the function body, and the regions of each while/case/if — each a list of
 * thunks: every `hlo.fusion` (or single fusible op) one generated kernel,
 * all kernels of all programs compiled in one backend compile; matmuls a
 * gemm call; while/case/if a control step running its regions' programs;
 * every other op an interpreter thunk. Constants are made once, here.
 * Buffer assignment: executable_cpu_buffers.c; running:
 * executable_cpu_run.c. */
#include "runtime/executable_cpu.h"
#include "runtime/executable_cpu_internal.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "backend/backend.h"
#include "backend/conv_describe.h"
#include "backend/window_describe.h"
#include "ir/element.h"
#include "codegen/lower_fusion.h"
#include "codegen/lower_while.h"
#include "passes/dot_decomposer.h"
#include "support/arena.h"

hlo_status cpu_oom(void) { return status_new(HLO_RESOURCE_EXHAUSTED, "out of memory"); }

double cpu_now_ms(void) {
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

/* A dot_general that dot-decomposer left alone because the GEMM reads its
 * operands in place (passes/dot_decomposer.h: batch, free and contracting
 * dims each a chain in memory, e.g. attention's q [B, S, H, D] with
 * batching dims (0, 2): a head's rows S apart by H*D, heads D apart): *g
 * with leading dimensions and batch strides (0 where dense). The result
 * is written densely, [batch][m][n]. */
static bool gemm_form_strided(const hlo_op *op, backend_gemm *g) {
  dot_strided_form f;
  if (!dot_strided_form_of(op, &f)) return false;
  memset(g, 0, sizeof *g);
  g->dtype = op->operands[0]->type->dtype;
  g->c_dtype = op->results[0].type->dtype;
  g->batch = f.batch, g->m = f.m, g->n = f.n, g->k = f.k;
  g->trans_a = f.trans_a, g->trans_b = f.trans_b;
  g->lda = f.lda == (f.trans_a ? f.m : f.k) ? 0 : f.lda;
  g->ldb = f.ldb == (f.trans_b ? f.k : f.n) ? 0 : f.ldb;
  g->batch_stride_a = f.batch_stride_a == f.m * f.k ? 0 : f.batch_stride_a;
  g->batch_stride_b = f.batch_stride_b == f.k * f.n ? 0 : f.batch_stride_b;
  return true;
}

/* Whether `op` is a dot_general / dot that a gemm computes: f32, f64 or
 * bf16 operands and result of one type (or bf16 operands, f32 result), no
 * algorithm but a plain one (dot_algorithm_is_plain), batch dims leading and in order on both sides, one
 * contracting dim at either end of each side's matrix dims (the free dims
 * of a side then flatten into one); or a strided form
 * (gemm_form_strided). Fills *g. */
static bool gemm_form(const hlo_op *op, backend_gemm *g) {
  if ((op->opcode != OP_DOT_GENERAL && op->opcode != OP_DOT) || op->num_operands != 2 ||
      op->num_results != 1)
    return false;
  const hlo_type *lt = op->operands[0]->type, *rt = op->operands[1]->type,
                 *ot = op->results[0].type;
  if (!static_tensor(lt) || !static_tensor(rt) || !static_tensor(ot)) return false;
  /* f32, f64 or bf16 throughout, or bf16 operands with an f32 result
   * (preferred_element_type) */
  bool same = lt->dtype == ot->dtype && rt->dtype == ot->dtype &&
              (ot->dtype == HLO_F32 || ot->dtype == HLO_F64 || ot->dtype == HLO_BF16);
  bool widen = lt->dtype == HLO_BF16 && rt->dtype == HLO_BF16 && ot->dtype == HLO_F32;
  if (!same && !widen) return false;
  if (!dot_algorithm_is_plain(op)) return false;
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
    g->dtype = lt->dtype;
    g->c_dtype = ot->dtype;
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
  return ok || gemm_form_strided(op, g);
}

/* Whether dot `op` lets an f32 product run in TF32 (backend_gemm.allow_tf32):
 * f32 operands, no `algorithm`, and a precision_config of DEFAULT on both
 * sides (absent or empty: DEFAULT), as XLA's GPU compiler reads it. */
static bool dot_allows_tf32(const hlo_op *op) {
  if (op->operands[0]->type->dtype != HLO_F32 || op->operands[1]->type->dtype != HLO_F32 ||
      op_attr(op, "algorithm"))
    return false;
  const hlo_attr *pc = op_attr(op, "precision_config");
  if (!pc) return true;
  if (pc->kind != ATTR_ARRAY) return false;
  for (uint32_t i = 0; i < pc->u.arr.n; i++) {
    const hlo_attr *e = pc->u.arr.items[i];
    if (!e || e->kind != ATTR_ENUM || !e->u.en.value || strcmp(e->u.en.value, "DEFAULT"))
      return false;
  }
  return true;
}

/* ------------------------------------------------------------ compiling */

typedef struct builder {
  cpu_exec *x;
  uint32_t prog;               /* the program steps go to */
  kernel **ks;                 /* the kernels of every program */
  uint32_t nks, cap_ks;
  bool *filled;                /* by value id: a STEP_FILL writes this constant */
} builder;

static hlo_status push_step(builder *b, const step *s) {
  program *p = &b->x->progs[b->prog];
  if (p->nsteps == p->cap_steps) {
    uint32_t nc = p->cap_steps ? p->cap_steps * 2 : 32;
    step *n = realloc(p->steps, nc * sizeof *n);
    if (!n) return cpu_oom();
    p->steps = n;
    p->cap_steps = nc;
  }
  p->steps[p->nsteps++] = *s;
  return NULL;
}

/* Whether `v` is defined inside `op` (by an op of its regions, at any
 * depth, or as an argument of one of their blocks). */
static bool defined_inside(const hlo_value *v, const hlo_op *op) {
  const hlo_block *blk = v->def ? v->def->parent : v->block;
  while (blk) {
    const hlo_op *owner = blk->parent ? blk->parent->parent : NULL;
    if (!owner) return false;
    if (owner == op) return true;
    blk = owner->parent;
  }
  return false;
}

static bool has_value(const hlo_value *const *vs, uint32_t n, const hlo_value *v) {
  for (uint32_t i = 0; i < n; i++)
    if (vs[i] == v) return true;
  return false;
}

/* Adds to vs[first..) the values defined outside `top` that the regions
 * of `op` (top itself or an op nested in it) read, each once. */
static hlo_status captured_of(const hlo_op *top, const hlo_op *op, uint32_t first,
                              const hlo_value ***vs, uint32_t *n, uint32_t *cap) {
  for (uint32_t r = 0; r < op->num_regions; r++)
    for (const hlo_op *o = op->regions[r].block.first; o; o = o->next) {
      for (uint32_t i = 0; i < o->num_operands; i++) {
        const hlo_value *v = o->operands[i];
        if (defined_inside(v, top) || has_value(*vs + first, *n - first, v)) continue;
        if (*n == *cap) {
          uint32_t nc = *cap * 2 + 4;
          const hlo_value **nv = realloc(*vs, nc * sizeof *nv);
          if (!nv) return cpu_oom();
          *vs = nv;
          *cap = nc;
        }
        (*vs)[(*n)++] = v;
      }
      HLO_TRY(captured_of(top, o, first, vs, n, cap));
    }
  return NULL;
}

hlo_status cpu_captured(const hlo_op *op, const hlo_value ***vs, uint32_t *n, uint32_t *cap) {
  /* a value that is also an operand is listed again: a while's init value
   * the body reads directly must not become (or be taken over as) the
   * loop's state buffer (merge_while_state, run_while's steals) */
  return captured_of(op, op, *n, vs, n, cap);
}

hlo_status cpu_make_constant(cpu_exec *x, const hlo_value *v) {
  if (v->id >= x->nvals) return status_at(HLO_INTERNAL, &v->loc, "value id out of range");
  if (x->consts[v->id]) return NULL;
  tensor *t = NULL;
  HLO_TRY(interp_run_op(x->it, v->def, NULL, NULL, 0, &t));
  x->consts[v->id] = t;
  return NULL;
}

/* Splat constants of at least this many bytes that a step reads as a
 * buffer are filled at run time (STEP_FILL) rather than made at compile
 * time: 64 KiB, where a fill costs about what a lookup of a compile-time
 * tensor does and memory stops being negligible. */
#define FILL_MIN_BYTES ((int64_t)64 << 10)

static hlo_status push_step(builder *b, const step *s);

/* Whether constant `v`, read as a buffer by a step of the current
 * program, is filled at run time (need_constant): a large splat defined in
 * this program's block, or (`fusion` not NULL) in the body of that fusion
 * of the block (the operand of a dynamic-update-slice fusion, copied in
 * by the fusion pass: rule 6). */
static bool filled_at_run_time(const builder *b, const hlo_value *v, const hlo_op *fusion) {
  const hlo_block *pb = b->x->progs[b->prog].block;
  if (!v->def || v->def->opcode != OP_CONSTANT || v->def->num_results != 1) return false;
  if (!splat_constant(v) || cpu_value_bytes(v) < FILL_MIN_BYTES ||
      hlo_dtype_size(v->type->dtype) > 16)
    return false;
  return v->def->parent == pb || (fusion && fusion->parent == pb && fusion->num_regions == 1 &&
                                  v->def->parent == &fusion->regions[0].block);
}

/* Constant `v` for a step of the current program that reads it as a
 * buffer: a large splat defined in this program's block (or in `fusion`'s
 * body: filled_at_run_time) becomes a STEP_FILL placed before that step
 * (once), so its memory is an arena slot live only while it is read, and
 * a while loop that carries it (or a dynamic_update_slice, plain or fused)
 * writes over it instead of copying it each run; any other constant is
 * made now (cpu_make_constant). */
static hlo_status need_constant_in(builder *b, const hlo_value *v, const hlo_op *fusion) {
  cpu_exec *x = b->x;
  if (!v->def || v->def->opcode != OP_CONSTANT || v->def->num_results != 1) return NULL;
  if (v->id < x->nvals && b->filled[v->id]) return NULL;
  if (!filled_at_run_time(b, v, fusion)) return cpu_make_constant(x, v);
  step s;
  memset(&s, 0, sizeof s);
  s.kind = STEP_FILL;
  s.op = v->def;
  s.out = malloc(sizeof *s.out);
  if (!s.out) return cpu_oom();
  s.out[0] = v;
  s.nout = 1;
  hlo_status st = push_step(b, &s);
  if (st) {
    free(s.out);
    return st;
  }
  b->filled[v->id] = true;
  x->stats.fills++;
  return NULL;
}

static hlo_status need_constant(builder *b, const hlo_value *v) {
  return need_constant_in(b, v, NULL);
}

/* need_constant for each of vs[0..n) (the inputs of a step that reads
 * them as tensors or through pointers). Constants are made only when a
 * step reads them so: a splat constant that only kernels read is an
 * immediate in their code and never materialised (a broadcast zero of
 * hundreds of MB folded into a constant costs nothing). */
static hlo_status make_constants(builder *b, const hlo_value *const *vs, uint32_t n) {
  for (uint32_t i = 0; i < n; i++) HLO_TRY(need_constant(b, vs[i]));
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
  hlo_status st = s.in && s.out ? NULL : cpu_oom();
  for (uint32_t i = 0; i < op->num_operands && !st; i++) s.in[s.nin++] = op->operands[i];
  if (!st) st = cpu_captured(op, &s.in, &s.nin, &cap);
  if (!st) st = make_constants(b, s.in, s.nin);
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
    return cpu_oom();
  }
  s.in[0] = op->operands[0];
  s.in[1] = op->operands[1];
  s.out[0] = &op->results[0];
  s.nin = 2;
  s.nout = 1;
  hlo_status st = make_constants(b, s.in, s.nin);
  if (!st) st = push_step(b, &s);
  if (st) {
    free(s.in);
    free(s.out);
    return st;
  }
  b->x->stats.blas++;
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

/* The row-major linear element offset of `m` over a buffer of dims[0..rank),
 * as an affine form of the index variables (a flat map is one already). */
static kernel_affine linear_of(const kernel_map *m, const int64_t *dims, uint32_t rank) {
  if (m->flat) return m->dim[0];
  kernel_affine a;
  memset(&a, 0, sizeof a);
  int64_t stride = 1;
  for (uint32_t d = m->rank; d-- > 0;) {
    a.offset += stride * m->dim[d].offset;
    for (uint32_t j = 0; j < KERNEL_MAX_RANK; j++) a.coeff[j] += stride * m->dim[d].coeff[j];
    stride *= d < rank ? dims[d] : 1;
  }
  return a;
}

/* The input of kernel k whose buffer its single output may be written over,
 * or -1: same element size and count, and
 *   - an elementwise kernel: every load of that input reads exactly the
 *     element it writes (the same linear offset as the store, no guard);
 *   - a row kernel (stages, kernel.h): the loads of the storing (last) MAP
 *     stage read exactly the element written, and the earlier stages, which
 *     finish a row before the last one writes it, read only the rows of the
 *     tile they run in (kernel_tiles_rows, as the output's, or
 *     kernel_tiles_flat_rows for both): softmax and LayerNorm over their
 *     input, row by row. */
static int32_t inplace_input(const kernel *k) {
  if (k->num_outputs != 1) return -1;
  const kernel_output *o = &k->outputs[0];
  bool rows = k->num_reduce_dims > 0;
  uint32_t last = k->num_stages ? k->num_stages - 1 : 0;
  int64_t out_rows = 0;
  /* the output's rows: tile t writes rows [t*r, (t+1)*r) of its leading
   * dim, or row t of it seen as a matrix of its last dim (flat: a
   * [1, S, D] product's rows) */
  bool flat = false;
  if (rows && (o->stage != last || k->stages[last].kind != KSTAGE_MAP))
    return -1;
  if (rows && !kernel_tiles_rows(k, k->num_inputs, &out_rows)) {
    flat = kernel_tiles_flat_rows(k, k->num_inputs);
    if (!flat) return -1;
  }
  kernel_affine at = linear_of(&o->map, o->buf.dims, o->buf.rank);
  int64_t n = 1;
  for (uint32_t d = 0; d < o->buf.rank; d++) n *= o->buf.dims[d];
  uint32_t store_begin = rows ? k->stages[last].body_begin : 0;
  for (uint32_t i = 0; i < k->num_inputs; i++) {
    const kernel_buffer *in = &k->inputs[i];
    int64_t m = 1;
    for (uint32_t d = 0; d < in->rank; d++) m *= in->dims[d];
    if (in->literal || hlo_dtype_size(in->dtype) != hlo_dtype_size(o->buf.dtype) || m != n)
      continue;
    bool ok = true, loaded = false, earlier = false;
    for (uint32_t j = 0; j < k->num_body && ok; j++) {
      const kinst *q = &k->body[j];
      if (q->kind != KI_LOAD || q->input != i) continue;
      loaded = true;
      if (j < store_begin) {
        earlier = true;
        continue;
      }
      kernel_affine la = linear_of(&q->map, in->dims, in->rank);
      ok = q->guard < 0 && !memcmp(&la, &at, sizeof la);
    }
    int64_t in_rows = 0;
    if (ok && earlier)
      ok = flat ? kernel_tiles_flat_rows(k, i)
                : kernel_tiles_rows(k, i, &in_rows) && in_rows == out_rows;
    if (ok && loaded) return (int32_t)i;
  }
  return -1;
}

/* A lowering's failure as the builder sees it: out of memory is an error,
 * anything else only means "not this way" (freed; NULL). */
static hlo_status only_oom(hlo_status st) {
  if (!st || hlo_status_code_of(st) == HLO_RESOURCE_EXHAUSTED) return st;
  hlo_status_free(st);
  return NULL;
}

/* Adds kernel step s (kind, op, inplace and its in/out lists made) running
 * k, which becomes the builder's kernel number s->kernel (b->nks). `st` is
 * an error met while making s: then, or on an error here, s's lists and k
 * are freed and the error returned. */
static hlo_status push_kernel_step(builder *b, step *s, kernel *k, hlo_status st) {
  if (!st && b->nks == b->cap_ks) {
    uint32_t nc = b->cap_ks ? b->cap_ks * 2 : 32;
    kernel **nk = realloc(b->ks, nc * sizeof *nk);
    if (!nk) st = cpu_oom();
    else b->ks = nk, b->cap_ks = nc;
  }
  if (!st) st = push_step(b, s);
  if (st) {
    free(s->in);
    free(s->out);
    kernel_destroy(k);
    return st;
  }
  b->ks[b->nks++] = k;
  b->x->stats.kernels++;
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
  if (st) return only_oom(st);
  step s;
  memset(&s, 0, sizeof s);
  s.kind = STEP_KERNEL;
  s.op = where;
  s.kernel = b->nks;
  s.inplace = inplace_input(k);
  /* an in-place dynamic_update_slice fusion (kernel.h, Dynamic-update
   * outputs): its output may share the operand's buffer exactly where a
   * dynamic_update_slice's would (buffer assignment applies the one rule
   * of STEP_DUS through `inplace`: merge_buffers, plan_carried); elsewhere
   * the kernel copies the operand in first. Never over another input (the
   * stores land at run-time offsets), nor over an operand the kernel also
   * loads (the fusion pass keeps such readers out: rule 6). An operand
   * that is a splat constant (copied into the fusion) is filled at run
   * time into an arena slot, as a plain dynamic_update_slice's is
   * (need_constant: STEP_FILL), and updated there in place; any other
   * constant is made at compile time, never written: the kernel copies it. */
  int32_t fill_base = -1;
  if (kernel_has_dus(k)) {
    uint32_t base = k->outputs[0].dus_operand - 1;
    bool loaded = false;
    for (uint32_t i = 0; i < k->num_body; i++)
      loaded |= k->body[i].kind == KI_LOAD && k->body[i].input == base;
    const hlo_value *bv = k->inputs[base].value;
    const hlo_value *ov = bv ? outer_value(fusion, bv, false) : NULL;
    bool fill = ov && k->inputs[base].literal && filled_at_run_time(b, ov, fusion);
    s.inplace = loaded || (k->inputs[base].literal && !fill) ? -1 : (int32_t)base;
    if (fill && !loaded) fill_base = (int32_t)base;
  }
  s.in = calloc(k->num_inputs ? k->num_inputs : 1, sizeof *s.in);
  s.out = calloc(k->num_outputs ? k->num_outputs : 1, sizeof *s.out);
  if (!s.in || !s.out) st = cpu_oom();
  for (uint32_t i = 0; i < k->num_inputs && !st; i++) {
    const hlo_value *v = k->inputs[i].value;
    const hlo_value *ov = v ? outer_value(fusion, v, false) : NULL;
    if (!ov) {
      st = status_at(HLO_INTERNAL, &where->loc, "kernel input %u stands for no value", i);
      break;
    }
    st = need_constant_in(b, ov, (int32_t)i == fill_base ? fusion : NULL);
    s.in[s.nin++] = ov;
  }
  for (uint32_t i = 0; i < k->num_outputs && !st; i++) {
    const hlo_value *ov = k->outputs[i].buf.value ? outer_value(fusion, k->outputs[i].buf.value, true) : NULL;
    if (!ov) st = status_at(HLO_INTERNAL, &where->loc, "kernel output %u stands for no result", i);
    else s.out[s.nout++] = ov;
  }
  HLO_TRY(push_kernel_step(b, &s, k, st));
  *done = true;
  return NULL;
}

static hlo_status compile_block(builder *b, const hlo_block *blk, uint32_t *out_prog);

/* Tries to run while op w as one LOOP kernel (codegen/lower_while.h: a
 * loop over 0-d values whose regions are elementwise); on success adds the
 * kernel step and returns true in *done. HLO_LOOP_KERNELS=0 turns it off.
 * Only memory errors are errors: a while of another form leaves *done
 * false (a control step runs it). */
static hlo_status try_loop_kernel(builder *b, const hlo_op *w, bool *done) {
  *done = false;
  const char *env = getenv("HLO_LOOP_KERNELS");
  if (env && !strcmp(env, "0")) return NULL;
  char name[32];
  snprintf(name, sizeof name, "k%u", b->nks);
  kernel *k = NULL;
  hlo_status st = lower_scalar_while(w, name, &k);
  if (st) return only_oom(st);
  step s;
  memset(&s, 0, sizeof s);
  s.kind = STEP_KERNEL;
  s.op = w;
  s.kernel = b->nks;
  s.inplace = -1; /* its outputs get buffers of their own (a loop's result is not its input's) */
  s.in = calloc(k->num_inputs ? k->num_inputs : 1, sizeof *s.in);
  s.out = calloc(k->num_outputs ? k->num_outputs : 1, sizeof *s.out);
  if (!s.in || !s.out) st = cpu_oom();
  for (uint32_t i = 0; i < k->num_inputs && !st; i++) {
    st = need_constant(b, k->inputs[i].value);
    s.in[s.nin++] = k->inputs[i].value;
  }
  for (uint32_t i = 0; i < k->num_outputs && !st; i++) s.out[s.nout++] = k->outputs[i].buf.value;
  HLO_TRY(push_kernel_step(b, &s, k, st));
  b->x->stats.loop_kernels++;
  *done = true;
  return NULL;
}

/* Whether `op` (while, case, if) is run by a control step: its regions
 * become programs. The checks the interpreter's kernels make are repeated
 * at run time; here only the shape: region counts and (while) as many
 * carried values as results. */
static bool control_form(const hlo_op *op) {
  switch (op->opcode) {
  case OP_WHILE:
    return op->num_regions == 2 && op->num_operands == op->num_results &&
           op->regions[0].block.num_args == op->num_operands &&
           op->regions[1].block.num_args == op->num_operands;
  case OP_IF:
    return op->num_regions == 2 && op->num_operands == 1;
  case OP_CASE:
    return op->num_regions >= 1 && op->num_operands == 1;
  default:
    return false;
  }
}

/* A while/case/if step: its operands and captured values in, its results
 * out, a program per region. */
static hlo_status control_step(builder *b, const hlo_op *op) {
  step s;
  memset(&s, 0, sizeof s);
  s.kind = op->opcode == OP_WHILE ? STEP_WHILE : STEP_CASE;
  s.op = op;
  uint32_t cap = op->num_operands + 4;
  s.in = malloc(cap * sizeof *s.in);
  s.out = malloc((op->num_results ? op->num_results : 1) * sizeof *s.out);
  s.sub = malloc(op->num_regions * sizeof *s.sub);
  hlo_status st = s.in && s.out && s.sub ? NULL : cpu_oom();
  for (uint32_t i = 0; i < op->num_operands && !st; i++) s.in[s.nin++] = op->operands[i];
  if (!st) st = cpu_captured(op, &s.in, &s.nin, &cap);
  if (!st) st = make_constants(b, s.in, s.nin);
  for (uint32_t i = 0; i < op->num_results && !st; i++) s.out[s.nout++] = &op->results[i];
  uint32_t saved = b->prog;
  for (uint32_t r = 0; r < op->num_regions && !st; r++) {
    st = compile_block(b, &op->regions[r].block, &s.sub[s.nsub]);
    if (!st) s.nsub++;
  }
  b->prog = saved;
  if (!st) st = push_step(b, &s);
  if (st) {
    free(s.in);
    free(s.out);
    free(s.sub);
    return st;
  }
  if (op->opcode == OP_WHILE && s.nsub == 2) b->x->progs[s.sub[1]].while_body = true;
  b->x->stats.control++;
  return NULL;
}

/* A step of `kind` reading the op's operands and writing its results. */
static hlo_status operand_step_with(builder *b, const hlo_op *op, step *proto);
static hlo_status operand_step(builder *b, const hlo_op *op, step_kind kind) {
  step s;
  memset(&s, 0, sizeof s);
  s.kind = kind;
  return operand_step_with(b, op, &s);
}

/* operand_step for a prepared step (kind and the kind's fields set): its
 * conv / win descriptions are the new step's (freed here on error). */
static hlo_status operand_step_with(builder *b, const hlo_op *op, step *proto) {
  step s = *proto;
  s.op = op;
  s.in = malloc((op->num_operands ? op->num_operands : 1) * sizeof *s.in);
  s.out = malloc((op->num_results ? op->num_results : 1) * sizeof *s.out);
  hlo_status st = s.in && s.out ? NULL : cpu_oom();
  for (uint32_t i = 0; i < op->num_operands && !st; i++) {
    const hlo_value *v = op->operands[i];
    st = need_constant(b, v);
    s.in[s.nin++] = v;
  }
  for (uint32_t i = 0; i < op->num_results && !st; i++) s.out[s.nout++] = &op->results[i];
  if (!st) st = push_step(b, &s);
  if (st) {
    free(s.in);
    free(s.out);
    free(s.conv);
    free(s.win);
    free(s.sort);
  }
  return st;
}

/* Whether `op` only reinterprets its operand's bytes: a reshape, or a
 * bitcast_convert between element types of one storage size and one shape
 * (static, non-quantized tensors). */
static bool alias_form(const hlo_op *op) {
  if ((op->opcode != OP_RESHAPE && op->opcode != OP_BITCAST_CONVERT) || op->num_operands != 1 ||
      op->num_results != 1)
    return false;
  const hlo_type *it = op->operands[0]->type, *ot = op->results[0].type;
  if (!static_tensor(it) || !static_tensor(ot)) return false;
  if (op->opcode == OP_RESHAPE) return it->dtype == ot->dtype;
  return it->rank == ot->rank &&
         (it->rank == 0 || !memcmp(it->dims, ot->dims, it->rank * sizeof *it->dims)) &&
         hlo_dtype_size(it->dtype) == hlo_dtype_size(ot->dtype) &&
         dtype_bits(it->dtype) == dtype_bits(ot->dtype);
}

/* Whether fusion `op` only reshapes its one operand (a chain of alias-form
 * ops from the block argument to the terminator): the fusion pass leaves
 * such a group when the reshape has several consumers. */
static bool alias_fusion(const hlo_op *op) {
  if (!is_fusion(op) || op->num_operands != 1 || op->num_results != 1) return false;
  const hlo_block *rb = &op->regions[0].block;
  const hlo_value *cur = rb->num_args == 1 ? &rb->args[0] : NULL;
  for (const hlo_op *o = rb->first; o && cur; o = o->next) {
    if (o == rb->last) return o->num_operands == 1 && o->operands[0] == cur;
    if (!alias_form(o) || o->operands[0] != cur) return false;
    cur = &o->results[0];
  }
  return false;
}

/* A convolution step when the backend takes `op` (conv_describe, then the
 * backend's conv_takes); *done says whether it did. */
static hlo_status conv_step(builder *b, const hlo_op *op, bool *done) {
  *done = false;
  const backend *be = b->x->be;
  if (op->opcode != OP_CONVOLUTION || !be->conv || !be->conv_takes) return NULL;
  backend_conv c;
  if (!conv_describe(op, &c) || !be->conv_takes(&c)) return NULL;
  step s;
  memset(&s, 0, sizeof s);
  s.kind = STEP_CONV;
  s.conv = malloc(sizeof *s.conv);
  if (!s.conv) return cpu_oom();
  *s.conv = c;
  s.scratch_bytes = be->conv_scratch_bytes ? (int64_t)be->conv_scratch_bytes(&c) : 0;
  HLO_TRY(operand_step_with(b, op, &s));
  b->x->stats.convs++;
  *done = true;
  return NULL;
}

/* A reduce_window / select_and_scatter step when the backend takes `op`
 * (window_describe, then the backend's window_takes); *done says whether
 * it did. */
static hlo_status window_step(builder *b, const hlo_op *op, bool *done) {
  *done = false;
  const backend *be = b->x->be;
  if ((op->opcode != OP_REDUCE_WINDOW && op->opcode != OP_SELECT_AND_SCATTER) ||
      !be->window_takes || !be->reduce_window || !be->select_and_scatter)
    return NULL;
  backend_window w;
  if (!window_describe(op, &w) || !be->window_takes(&w) || op->num_results != 1) return NULL;
  step s;
  memset(&s, 0, sizeof s);
  s.kind = STEP_WINDOW;
  s.win = malloc(sizeof *s.win);
  if (!s.win) return cpu_oom();
  *s.win = w;
  HLO_TRY(operand_step_with(b, op, &s));
  b->x->stats.windows++;
  *done = true;
  return NULL;
}

/* A sort step when the backend takes `op` (sort_describe: a recognised
 * comparator, then the backend's sort_takes); *done says whether it did. */
static hlo_status sort_step(builder *b, const hlo_op *op, bool *done) {
  *done = false;
  const backend *be = b->x->be;
  backend_sort d;
  if (op->opcode != OP_SORT || !be->sort_takes || !be->sort || !sort_describe(op, &d) ||
      !be->sort_takes(&d))
    return NULL;
  step s;
  memset(&s, 0, sizeof s);
  s.kind = STEP_SORT;
  s.sort = malloc(sizeof *s.sort);
  if (!s.sort) return cpu_oom();
  *s.sort = d;
  HLO_TRY(operand_step_with(b, op, &s));
  b->x->stats.sorts++;
  *done = true;
  return NULL;
}

static hlo_status compile_op(builder *b, const hlo_op *op) {
  bool done = false;
  backend_gemm g;
  HLO_TRY(conv_step(b, op, &done));
  if (!done) HLO_TRY(window_step(b, op, &done));
  if (!done) HLO_TRY(sort_step(b, op, &done));
  if (done) return NULL;
  step_kind ck = cpu_copy_form(op);
  if (alias_form(op) || alias_fusion(op)) {
    HLO_TRY(operand_step(b, op, STEP_ALIAS));
    b->x->stats.aliases++;
    done = true;
  } else if (ck != STEP_INTERP) {
    HLO_TRY(operand_step(b, op, ck));
    b->x->stats.copies++;
    done = true;
  } else if (control_form(op)) {
    if (op->opcode == OP_WHILE) HLO_TRY(try_loop_kernel(b, op, &done));
    if (!done) HLO_TRY(control_step(b, op));
    done = true;
  } else if (is_fusion(op)) {
    const hlo_block *rb = &op->regions[0].block;
    uint32_t n = 0;
    for (const hlo_op *o = rb->first; o; o = o->next) n++;
    const hlo_op **ops = calloc(n ? n : 1, sizeof *ops);
    if (!ops) return cpu_oom();
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
    g.allow_tf32 = dot_allows_tf32(op);
    HLO_TRY(gemm_step(b, op, &g));
    done = true;
  }
  if (!done) HLO_TRY(interp_step(b, op));
  return NULL;
}

int64_t cpu_value_bytes(const hlo_value *v) {
  const hlo_type *t = v->type;
  if (!static_tensor(t)) return 0;
  return type_num_elements(t) * (int64_t)hlo_dtype_size(t->dtype);
}

/* A new program for block `blk`: its steps from the block's ops (the
 * terminator excepted; constants made now), in *out_prog. */
static hlo_status compile_block(builder *b, const hlo_block *blk, uint32_t *out_prog) {
  cpu_exec *x = b->x;
  if (x->nprogs == x->cap_progs) {
    uint32_t nc = x->cap_progs ? x->cap_progs * 2 : 4;
    program *np = realloc(x->progs, nc * sizeof *np);
    if (!np) return cpu_oom();
    x->progs = np;
    x->cap_progs = nc;
  }
  uint32_t pi = x->nprogs++;
  memset(&x->progs[pi], 0, sizeof x->progs[pi]);
  x->progs[pi].block = blk;
  *out_prog = pi;
  for (const hlo_op *op = blk->first; op; op = op->next) {
    if (op == blk->last && (op_flags(op->opcode) & OPF_TERMINATOR || op->opcode == OP_RETURN ||
                            op->opcode == OP_FUNC_RETURN))
      continue;
    x->stats.ops++;
    if (op->opcode == OP_CONSTANT && op->num_results == 1) {
      x->stats.constants++; /* made when a step reads it (make_constants) */
      continue;
    }
    b->prog = pi;
    HLO_TRY(compile_op(b, op));
  }
  /* the block's results are read as tensors */
  const hlo_op *term = blk->last;
  if (term && (op_flags(term->opcode) & OPF_TERMINATOR || term->opcode == OP_RETURN ||
               term->opcode == OP_FUNC_RETURN))
    HLO_TRY(make_constants(b, (const hlo_value *const *)term->operands, term->num_operands));
  return NULL;
}

/* Appends "name" or "name xN" for each distinct op of the interpreter
 * thunks of every program, in order of first appearance. */
static void name_interp_ops(cpu_exec *x) {
  char *buf = x->stats.interp_ops;
  size_t cap = sizeof x->stats.interp_ops, len = 0;
  buf[0] = 0;
  hlo_opcode seen[64];
  uint32_t count[64], nseen = 0;
  for (uint32_t pi = 0; pi < x->nprogs; pi++)
    for (uint32_t s = 0; s < x->progs[pi].nsteps; s++) {
      const step *p = &x->progs[pi].steps[s];
      if (p->kind != STEP_INTERP) continue;
      uint32_t k = 0;
      while (k < nseen && seen[k] != p->op->opcode) k++;
      if (k == nseen && nseen < 64) seen[nseen] = p->op->opcode, count[nseen++] = 0;
      if (k < nseen) count[k]++;
    }
  for (uint32_t k = 0; k < nseen; k++) {
    const char *n = op_name(seen[k]);
    if (n && !strncmp(n, "stablehlo.", 10)) n += 10;
    int w = count[k] > 1
                ? snprintf(buf + len, cap - len, "%s%s x%u", len ? ", " : "", n ? n : "?", count[k])
                : snprintf(buf + len, cap - len, "%s%s", len ? ", " : "", n ? n : "?");
    if (w < 0 || (size_t)w >= cap - len) break;
    len += (size_t)w;
  }
}

uint32_t cpu_exec_objects(const cpu_exec *x, const backend_object **out) {
  *out = NULL;
  if (!x || !x->mod || !x->be->module_objects) return 0;
  return x->be->module_objects(x->mod, out);
}

hlo_status cpu_exec_create(interp *it, const hlo_func *f, const cpu_exec_options *o,
                           cpu_exec **out) {
  *out = NULL;
  cpu_exec_options none = {0};
  if (!o) o = &none;
  const char *dump_dir = o->dump_dir;
  bool check = o->check;
  double t0 = cpu_now_ms();
  cpu_exec *x = calloc(1, sizeof *x);
  if (!x) return cpu_oom();
  x->be = o->backend ? o->backend : backend_cpu();
  x->it = it;
  x->f = f;
  x->nvals = f->num_values;
  x->dump_dir = dump_dir ? strdup(dump_dir) : NULL;
  x->consts = calloc(x->nvals ? x->nvals : 1, sizeof *x->consts);
  x->vals = calloc(x->nvals ? x->nvals : 1, sizeof *x->vals);
  if (!x->be->device_memory) x->spare = calloc(x->nvals ? x->nvals : 1, sizeof *x->spare);
  builder b;
  memset(&b, 0, sizeof b);
  b.x = x;
  b.filled = calloc(x->nvals ? x->nvals : 1, sizeof *b.filled);
  uint32_t p0 = 0;
  hlo_status st = x->consts && x->vals && b.filled && (x->dump_dir || !dump_dir) &&
                   (x->spare || x->be->device_memory) ? NULL : cpu_oom();
  if (!st) st = compile_block(&b, &f->body.block, &p0);
  if (!st && !check) st = cpu_fuse_epilogues(x, b.ks, b.nks);
  if (!st) st = cpu_plan_buffers(x, dump_dir);
  x->check = check;
  /* a kernel writing over its input reads and writes one memory: no restrict */
  for (uint32_t pi = 0; !st && pi < x->nprogs; pi++)
    for (uint32_t si = 0; si < x->progs[pi].nsteps; si++) {
      const step *q = &x->progs[pi].steps[si];
      if (q->kind == STEP_GEMM && q->epilogue && q->aliased && q->epi_kernel < b.nks) {
        b.ks[q->epi_kernel]->inputs[q->epi_inplace].may_alias = true;
        b.ks[q->epi_kernel]->outputs[0].buf.may_alias = true;
      }
      if (q->kind != STEP_KERNEL || !q->aliased || q->kernel >= b.nks) continue;
      b.ks[q->kernel]->inputs[q->inplace].may_alias = true;
      b.ks[q->kernel]->outputs[0].buf.may_alias = true;
    }
  double t1 = cpu_now_ms();
  if (!st && b.nks) {
    backend_compile_stats bs = {0};
    backend_compile_options bo = {.dump_dir = dump_dir, .cc = NULL, .cache_root = o->cache_root,
                                  .objects = o->objects, .num_objects = o->num_objects,
                                  .stats = &bs};
    st = x->be->compile((const kernel *const *)b.ks, b.nks, &bo, &x->mod);
    x->stats.units = bs.units;
    x->stats.units_from_entry = bs.from_objects;
    x->stats.units_from_kernel_cache = bs.from_kernel_cache;
    x->stats.units_compiled = bs.compiled;
    if (st) status_note(st, "while compiling %u kernels of @%s for %s", b.nks, f->name,
                        x->be->device_memory ? x->be->name : "the CPU");
  }
  for (uint32_t i = 0; i < b.nks; i++) kernel_destroy(b.ks[i]);
  free(b.ks);
  free(b.filled);
  if (st) {
    cpu_exec_destroy(x);
    return st;
  }
  if (x->be->device_memory) st = cpu_dev_create(x); /* constants uploaded once, here */
  if (st) {
    cpu_exec_destroy(x);
    return st;
  }
  name_interp_ops(x);
  x->stats.compile_ms = cpu_now_ms() - t0;
  x->stats.cc_ms = cpu_now_ms() - t1;
  x->stats.lower_ms = x->stats.compile_ms - x->stats.cc_ms;
  *out = x;
  return NULL;
}

const runtime_cpu_stats *cpu_exec_stats(const cpu_exec *x) { return x ? &x->stats : NULL; }

void cpu_exec_destroy(cpu_exec *x) {
  if (!x) return;
  cpu_dev_destroy(x);
  if (x->mod) x->be->module_destroy(x->mod);
  for (uint32_t pi = 0; pi < x->nprogs; pi++) {
    program *p = &x->progs[pi];
    for (uint32_t s = 0; s < p->nsteps; s++) {
      free(p->steps[s].in);
      free(p->steps[s].out);
      free(p->steps[s].sub);
      free(p->steps[s].conv);
      free(p->steps[s].win);
      free(p->steps[s].sort);
      free(p->steps[s].chain);
      free(p->steps[s].free_ids);
    }
    free(p->steps);
    free(p->owned);
    if (pi == 0) free(p->arena); /* the others are slices of it */
  }
  free(x->progs);
  free(x->dump_dir);
  cpu_clear_vals(x);
  for (uint32_t i = 0; x->consts && i < x->nvals; i++) tensor_release(x->consts[i]);
  free(x->consts);
  for (uint32_t i = 0; x->spare && i < x->nvals; i++) tensor_release(x->spare[i]);
  free(x->spare);
  free(x->vals);
  free(x->home);
  free(x->prog_of);
  free(x->offset);
  free(x->def_step);
  free(x->last_step);
  free(x->in_result_of);
  free(x->result_homes);
  free(x);
}
