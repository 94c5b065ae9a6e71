/* cost_analysis.c — XLA's HloCostAnalysis rules over hlo's IR (see
 * cost_analysis.h for the contract). Each rule names the XLA handler it
 * follows (xla/service/hlo_cost_analysis.cc); "XLA:CPU" marks where the CPU
 * compiler rewrites an op before the analysis sees it.
 *
 * Dead ops (side-effect free, results unused) are skipped: XLA's DCE removes
 * them before the analysis runs. */
#include "passes/cost_analysis.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "support/arena.h"

/* XLA: an FMA counts as two flops (kFmaFlops). */
#define FMA_FLOPS 2.0
/* XLA:CPU's shape size: a tuple's top-level buffer is a table of pointers. */
#define POINTER_BYTES 8.0
#define MAX_CALL_DEPTH 256

typedef struct ctx {
  const hlo_module_ir *m;
  arena scratch;          /* attribute decoding */
  cost_row *rows;
  uint32_t n, cap;
  uint32_t num_unknown;
  const hlo_func *stack[MAX_CALL_DEPTH];
  uint32_t depth;
} ctx;

static hlo_status oom(void) { return status_new(HLO_RESOURCE_EXHAUSTED, "out of memory"); }

/* ------------------------------------------------------------ shapes */

static double elems(const hlo_type *t) {
  if (!t || t->kind != TYPE_TENSOR) return 0;
  double n = 1;
  for (uint32_t i = 0; i < t->rank; i++) n *= (double)t->dims[i];
  return n;
}

/* XLA's ShapeSize for XLA:CPU: array bytes; a tuple's pointer table; 0 for
 * a token. */
static double type_bytes(const hlo_type *t) {
  if (!t) return 0;
  if (t->kind == TYPE_TUPLE) return POINTER_BYTES * t->num_elems;
  if (t->kind == TYPE_TOKEN) return 0;
  return elems(t) * (double)hlo_dtype_size(t->dtype);
}

static double value_bytes(const hlo_value *v) { return v ? type_bytes(v->type) : 0; }

/* The bytes of an op's output: one result's bytes, or (several results, a
 * tuple in XLA) the tuple's pointer table. */
static double output_bytes(const hlo_op *op) {
  if (op->num_results == 1) return value_bytes(&op->results[0]);
  return POINTER_BYTES * op->num_results;
}

/* XLA's Preprocess default: every operand's bytes plus the output's. */
static double default_bytes(const hlo_op *op) {
  double b = output_bytes(op);
  for (uint32_t i = 0; i < op->num_operands; i++) b += value_bytes(op->operands[i]);
  return b;
}

static double log2_floor(double x) { return x < 1 ? 0 : floor(log2(x)); }
static double log2_ceil(double x) { return x <= 1 ? 0 : ceil(log2(x)); }

static hlo_status bad_attr(const hlo_op *op, const char *what) {
  return status_at(HLO_INVALID_ARGUMENT, &op->loc, "cost analysis: %s: missing or malformed %s",
                   op_name(op->opcode), what);
}

/* Integer list attribute `name` of `op` into *out (*n entries, scratch arena);
 * absent: *n = 0 and true. */
static bool ints_attr(ctx *c, const hlo_op *op, const char *name, int64_t **out, uint32_t *n) {
  const hlo_attr *a = op_attr(op, name);
  *out = NULL;
  *n = 0;
  if (!a) return true;
  return attr_as_ints(&c->scratch, a, out, n);
}

static bool ints_field(ctx *c, const hlo_attr *st, const char *name, int64_t **out, uint32_t *n) {
  const hlo_attr *a = st ? attr_field(st, name) : NULL;
  *out = NULL;
  *n = 0;
  if (!a) return true;
  return attr_as_ints(&c->scratch, a, out, n);
}

static int64_t int_field(const hlo_attr *st, const char *name, int64_t dflt) {
  const hlo_attr *a = st ? attr_field(st, name) : NULL;
  return a && a->kind == ATTR_INT ? a->u.i.v : dflt;
}

/* --------------------------------------------------------- liveness */

/* A set of value pointers (open addressing). */
typedef struct vset {
  const hlo_value **slots;
  size_t cap, n;
} vset;

static size_t vhash(const hlo_value *v, size_t cap) {
  uintptr_t x = (uintptr_t)v;
  x ^= x >> 17;
  x *= 0x9E3779B97F4A7C15ull;
  return (size_t)(x >> 7) & (cap - 1);
}

static bool vset_has(const vset *s, const hlo_value *v) {
  if (!s->cap) return false;
  for (size_t i = vhash(v, s->cap);; i = (i + 1) & (s->cap - 1)) {
    if (!s->slots[i]) return false;
    if (s->slots[i] == v) return true;
  }
}

static bool vset_add(vset *s, const hlo_value *v) {
  if (!v || vset_has(s, v)) return true;
  if ((s->n + 1) * 2 > s->cap) {
    size_t nc = s->cap ? s->cap * 2 : 64;
    const hlo_value **ns = xcalloc(nc, sizeof *ns);
    if (!ns) return false;
    for (size_t i = 0; i < s->cap; i++) {
      if (!s->slots[i]) continue;
      size_t j = vhash(s->slots[i], nc);
      while (ns[j]) j = (j + 1) & (nc - 1);
      ns[j] = s->slots[i];
    }
    free(s->slots);
    s->slots = ns;
    s->cap = nc;
  }
  size_t j = vhash(v, s->cap);
  while (s->slots[j]) j = (j + 1) & (s->cap - 1);
  s->slots[j] = v;
  s->n++;
  return true;
}

/* Adds every operand of `op` and of the ops of its regions to `s`. */
static bool add_uses(vset *s, const hlo_op *op) {
  for (uint32_t i = 0; i < op->num_operands; i++)
    if (!vset_add(s, op->operands[i])) return false;
  for (uint32_t r = 0; r < op->num_regions; r++)
    for (const hlo_op *o = op->regions[r].block.first; o; o = o->next)
      if (!add_uses(s, o)) return false;
  return true;
}

/* Whether XLA would keep `op` even with its results unused. */
static bool has_effect(const hlo_op *op) {
  if (op_flags(op->opcode) & OPF_TERMINATOR) return true;
  if (op->opcode == OP_FUNC_CALL) return false; /* inlined, then DCE'd */
  if (op->opcode == OP_CUSTOM_CALL) return op_attr_bool(op, "has_side_effect", false);
  return (op_flags(op->opcode) & OPF_SIDE_EFFECT) != 0;
}

/* Marks the live ops of `b`: live[i] for its i-th op. Walks backwards: an op
 * is live when it has an effect or one of its results is used by a live op
 * after it (directly or inside that op's regions). */
static hlo_status block_liveness(const hlo_block *b, bool **out_live, uint32_t *out_n) {
  uint32_t n = 0;
  for (const hlo_op *o = b->first; o; o = o->next) n++;
  bool *live = xcalloc(n ? n : 1, sizeof *live);
  vset used = {0};
  if (!live) return oom();
  uint32_t i = n;
  for (const hlo_op *o = b->last; o; o = o->prev) {
    i--;
    bool l = has_effect(o);
    for (uint32_t r = 0; !l && r < o->num_results; r++) l = vset_has(&used, &o->results[r]);
    live[i] = l;
    if (l && !add_uses(&used, o)) {
      free(used.slots);
      free(live);
      return oom();
    }
  }
  free(used.slots);
  *out_live = live;
  *out_n = n;
  return NULL;
}

/* ------------------------------------------------------------- rows */

static hlo_status add_row(ctx *c, const hlo_op *op, uint32_t depth, int32_t parent, int32_t *out) {
  if (c->n == c->cap) {
    uint32_t nc = c->cap ? c->cap * 2 : 64;
    cost_row *nr = xrealloc(c->rows, (size_t)nc * sizeof *nr);
    if (!nr) return oom();
    c->rows = nr;
    c->cap = nc;
  }
  c->rows[c->n] = (cost_row){op, depth, parent, {0, 0, 0}};
  *out = (int32_t)c->n++;
  return NULL;
}

static void counts_add(cost_counts *a, const cost_counts *b) {
  a->flops += b->flops;
  a->transcendentals += b->transcendentals;
  a->bytes_accessed += b->bytes_accessed;
}

static void counts_max(cost_counts *a, const cost_counts *b) {
  a->flops = fmax(a->flops, b->flops);
  a->transcendentals = fmax(a->transcendentals, b->transcendentals);
  a->bytes_accessed = fmax(a->bytes_accessed, b->bytes_accessed);
}

/* How a block's terminator is counted: XLA makes the results of a while
 * body (always) and of the entry function / a branch (unless there is
 * exactly one) into a `tuple` instruction, which costs its pointer table. */
typedef enum ret_kind { RET_FREE, RET_TUPLE, RET_TUPLE_UNLESS_ONE } ret_kind;

static hlo_status cost_block(ctx *c, const hlo_block *b, uint32_t depth, int32_t parent,
                             bool record, ret_kind rk, cost_counts *sum);

/* The flops and transcendentals of one application of region `r` of `op`
 * (a reduction/comparison/update body): XLA copies only those two counts
 * from a sub-computation (KeyToCopyFromSubcomputation). */
static hlo_status region_cost(ctx *c, const hlo_op *op, uint32_t r, cost_counts *out) {
  *out = (cost_counts){0, 0, 0};
  if (r >= op->num_regions) return bad_attr(op, "region");
  HLO_TRY(cost_block(c, &op->regions[r].block, 0, -1, false, RET_FREE, out));
  out->bytes_accessed = 0;
  return NULL;
}

static void scale_into(cost_counts *out, const cost_counts *body, double times) {
  out->flops += body->flops * times;
  out->transcendentals += body->transcendentals * times;
}

/* ------------------------------------------------------ op families */

static bool is_transcendental(hlo_opcode c) {
  switch (c) {
  case OP_EXPONENTIAL: case OP_EXPONENTIAL_MINUS_ONE: case OP_LOG: case OP_LOG_PLUS_ONE:
  case OP_POWER: case OP_SQRT: case OP_RSQRT: case OP_CBRT: case OP_TANH: case OP_SINE:
  case OP_COSINE: case OP_TAN: case OP_ATAN2: case OP_CHLO_ERF:
    return true;
  default:
    return false;
  }
}

/* XLA GetDotFlops: 2 * result elements * product of lhs contracting dims. */
static hlo_status dot_cost(ctx *c, const hlo_op *op, cost_counts *out) {
  const hlo_type *lt = op->operands[0]->type;
  double width = 1;
  if (op->opcode == OP_DOT) {
    if (lt->rank >= 1) width = (double)lt->dims[lt->rank - 1];
  } else {
    int64_t *cd;
    uint32_t n;
    if (!ints_field(c, op_attr(op, "dot_dimension_numbers"), "lhs_contracting_dimensions", &cd, &n))
      return bad_attr(op, "dot_dimension_numbers");
    for (uint32_t i = 0; i < n; i++) {
      if (cd[i] < 0 || cd[i] >= lt->rank) return bad_attr(op, "lhs_contracting_dimensions");
      width *= (double)lt->dims[cd[i]];
    }
  }
  out->flops = FMA_FLOPS * elems(op->results[0].type) * width;
  return NULL;
}

/* One window value of a spatial dimension (absent list: `dflt`). */
static int64_t win(const int64_t *v, uint32_t n, uint32_t i, int64_t dflt) {
  return v && i < n ? v[i] : dflt;
}

/* XLA GetConvolutionFlops: for each spatial dimension, count the (output,
 * kernel) position pairs whose input index is real (inside the input and not
 * a base-dilation hole); flops = 2 * (input features / feature groups) *
 * output features * (batch / batch groups) * product of those counts. */
static hlo_status conv_cost(ctx *c, const hlo_op *op, cost_counts *out) {
  const hlo_type *lt = op->operands[0]->type, *kt = op->operands[1]->type,
                 *rt = op->results[0].type;
  const hlo_attr *dn = op_attr(op, "dimension_numbers");
  if (!dn || dn->kind != ATTR_STRUCT) return bad_attr(op, "dimension_numbers");
  int64_t ib = int_field(dn, "input_batch_dimension", -1);
  int64_t ifd = int_field(dn, "input_feature_dimension", -1);
  int64_t ofd = int_field(dn, "output_feature_dimension", -1);
  int64_t *isp, *ksp, *osp, *strides, *pad, *ldil, *rdil;
  uint32_t nis, nks, nos, nst, npad, nld, nrd;
  if (!ints_field(c, dn, "input_spatial_dimensions", &isp, &nis) ||
      !ints_field(c, dn, "kernel_spatial_dimensions", &ksp, &nks) ||
      !ints_field(c, dn, "output_spatial_dimensions", &osp, &nos) || nis != nks || nis != nos ||
      ib < 0 || ib >= lt->rank || ifd < 0 || ifd >= lt->rank || ofd < 0 || ofd >= rt->rank)
    return bad_attr(op, "dimension_numbers");
  if (!ints_attr(c, op, "window_strides", &strides, &nst) ||
      !ints_attr(c, op, "padding", &pad, &npad) || (npad && npad != 2 * nis) ||
      !ints_attr(c, op, "lhs_dilation", &ldil, &nld) ||
      !ints_attr(c, op, "rhs_dilation", &rdil, &nrd))
    return bad_attr(op, "window attributes");
  double positions = 1;
  for (uint32_t s = 0; s < nis; s++) {
    if (isp[s] < 0 || isp[s] >= lt->rank || ksp[s] < 0 || ksp[s] >= kt->rank || osp[s] < 0 ||
        osp[s] >= rt->rank)
      return bad_attr(op, "spatial dimensions");
    int64_t in = lt->dims[isp[s]], k = kt->dims[ksp[s]], o = rt->dims[osp[s]];
    int64_t st = win(strides, nst, s, 1), bd = win(ldil, nld, s, 1), wd = win(rdil, nrd, s, 1);
    int64_t plo = pad ? pad[2 * s] : 0, phi = pad ? pad[2 * s + 1] : 0;
    if (st < 1 || bd < 1 || wd < 1) return bad_attr(op, "window attributes");
    /* XLA's two shortcuts for N^2 patterns with N valid pairs */
    if (in == o && k == o && in == bd && wd == 1 && (in - 1 > 1 ? in - 1 : 1) == st && plo == 0 &&
        phi == 0) {
      positions *= (double)in;
      continue;
    }
    if (in == 1 && k == o && wd == 1 && bd == 1 && st == 1 && phi == o - 1 && plo == o - 1) {
      positions *= (double)o;
      continue;
    }
    double valid = 0;
    for (int64_t ki = 0; ki < k; ki++) {
      if (st == 1 && bd == 1) {
        int64_t base = plo - ki * wd;
        int64_t hi = in + base < o ? in + base : o;
        int64_t lo = base > 0 ? base : 0;
        if (hi > lo) valid += (double)(hi - lo);
        continue;
      }
      for (int64_t oi = 0; oi < o; oi++) {
        int64_t u = oi * st - plo + ki * wd;
        int64_t li = bd > 1 ? u / bd : u;
        if (u != li * bd) continue;
        if (li < 0 || li >= in) continue;
        valid += 1;
      }
    }
    positions *= valid;
  }
  int64_t fgc = op_attr_int(op, "feature_group_count", 1);
  int64_t bgc = op_attr_int(op, "batch_group_count", 1);
  if (fgc < 1 || bgc < 1) return bad_attr(op, "group counts");
  double fma = floor((double)lt->dims[ifd] / (double)fgc) * (double)rt->dims[ofd] *
               floor((double)lt->dims[ib] / (double)bgc) * positions;
  out->flops = FMA_FLOPS * fma;
  return NULL;
}

/* XLA HandleReduceWindow, including its special case of a reduce_window
 * that is a reduction broadcast back along one padded dimension (a cumulative
 * sum): that costs (outputs / size) + (size - 1) applications. */
static hlo_status reduce_window_cost(ctx *c, const hlo_op *op, cost_counts *out) {
  int64_t *wd, *pad;
  uint32_t nwd, npad;
  if (!ints_attr(c, op, "window_dimensions", &wd, &nwd) || !ints_attr(c, op, "padding", &pad, &npad) ||
      (npad && npad != 2 * nwd))
    return bad_attr(op, "window attributes");
  double wsize = 1;
  for (uint32_t i = 0; i < nwd; i++) wsize *= (double)wd[i];
  const hlo_type *rt = op->results[0].type;
  double outputs = elems(rt);
  double count = (wsize - 1) * outputs;
  uint32_t reduced = 0, padded = 0;
  for (uint32_t i = 0; i < nwd; i++) {
    if (wd[i] != 1) reduced++;
    if (pad && (pad[2 * i] || pad[2 * i + 1])) padded++;
  }
  if (reduced == 1 && padded == 1 && op->num_results == 1 && rt->rank == nwd) {
    for (uint32_t i = 0; i < nwd; i++) {
      int64_t lo = pad[2 * i], hi = pad[2 * i + 1];
      if (wd[i] != 1 && lo && hi && lo == hi && wd[i] == 2 * lo + 1) {
        if (lo == rt->dims[i] - 1) {
          double size = (double)rt->dims[i];
          count = floor(outputs / size) + (size - 1);
        }
        break;
      }
    }
  }
  cost_counts body;
  HLO_TRY(region_cost(c, op, 0, &body));
  scale_into(out, &body, count);
  return NULL;
}

/* XLA:CPU's YNNPACK offload test for a reduce (the TreeReductionRewriter
 * leaves these alone): an f32/f64 reduce with a body `add|max|min(arg0,
 * arg1)` over an input of at least 4096 elements. (Measured on jaxlib
 * 0.10.2: the thresholds are what its XLA:CPU does, not what its source
 * at HEAD says.) */
static bool reduce_offloaded(const hlo_op *op, double input_elems) {
  if (op->num_results != 1 || op->num_regions != 1 || input_elems < 4096) return false;
  hlo_dtype dt = op->results[0].type->dtype;
  if (dt != HLO_F32 && dt != HLO_F64) return false;
  const hlo_block *b = &op->regions[0].block;
  const hlo_op *root = b->first;
  if (!root || b->num_args != 2 || !root->next || root->next->next) return false;
  if (root->opcode != OP_ADD && root->opcode != OP_MAXIMUM && root->opcode != OP_MINIMUM)
    return false;
  const hlo_value *x = root->operands[0], *y = root->operands[1];
  bool args = (x == &b->args[0] && y == &b->args[1]) || (x == &b->args[1] && y == &b->args[0]);
  const hlo_op *ret = root->next;
  return args && ret->num_operands == 1 && ret->operands[0] == &root->results[0];
}

#define TREE_WINDOW 32

/* How many times XLA:CPU applies a reduce's body. Its TreeReductionRewriter
 * (xla/hlo/transforms/simplifiers/tree_reduction_rewriter.cc, window 32)
 * turns a single-result reduce with a reduced dimension over 32 into a
 * reduce_window (window min(d, 32), stride the same, SAME padding) and a
 * reduce of that, repeated until no reduced dimension is over 32 or the
 * reduce is offloaded; each reduce_window costs (window size - 1) per output
 * element — more than the plain reduce's (inputs - outputs) when padded. */
static hlo_status reduce_applications(ctx *c, const hlo_op *op, double *out) {
  const hlo_type *in = op->operands[0]->type;
  double outputs = elems(op->results[0].type);
  *out = elems(in) - outputs;
  if (op->num_results != 1 || in->rank > 64) return NULL;
  int64_t *rd;
  uint32_t nrd;
  if (!ints_attr(c, op, "dimensions", &rd, &nrd)) return bad_attr(op, "dimensions");
  int64_t dims[64];
  bool reduced[64] = {false};
  for (uint32_t i = 0; i < in->rank; i++) dims[i] = in->dims[i];
  for (uint32_t i = 0; i < nrd; i++) {
    if (rd[i] < 0 || rd[i] >= in->rank) return bad_attr(op, "dimensions");
    reduced[rd[i]] = true;
  }
  double total = 0, cur = elems(in);
  for (;;) {
    bool big = false;
    for (uint32_t i = 0; i < in->rank; i++) big |= reduced[i] && dims[i] > TREE_WINDOW;
    if (!big || reduce_offloaded(op, cur)) break;
    double wsize = 1, next = 1;
    for (uint32_t i = 0; i < in->rank; i++) {
      if (reduced[i]) {
        int64_t w = dims[i] < TREE_WINDOW ? dims[i] : TREE_WINDOW;
        wsize *= (double)w;
        dims[i] = (dims[i] + w - 1) / w;
      }
      next *= (double)dims[i];
    }
    total += (wsize - 1) * next;
    cur = next;
  }
  *out = total + cur - outputs;
  return NULL;
}

/* XLA HandleSelectAndScatter: (window size - 1) selects and one scatter per
 * source element. */
static hlo_status select_and_scatter_cost(ctx *c, const hlo_op *op, cost_counts *out) {
  int64_t *wd;
  uint32_t nwd;
  if (!ints_attr(c, op, "window_dimensions", &wd, &nwd)) return bad_attr(op, "window_dimensions");
  double wsize = 1;
  for (uint32_t i = 0; i < nwd; i++) wsize *= (double)wd[i];
  double source = elems(op->operands[1]->type);
  cost_counts sel, sca;
  HLO_TRY(region_cost(c, op, 0, &sel));
  HLO_TRY(region_cost(c, op, 1, &sca));
  scale_into(out, &sel, source * (wsize - 1));
  scale_into(out, &sca, source);
  return NULL;
}

/* Custom-call targets that are annotations XLA removes before the analysis
 * (sharding, host-offload markers): they cost nothing. */
static bool is_annotation_target(const char *s) {
  static const char *const k[] = {"Sharding", "SPMDFullToShardShape", "SPMDShardToFullShape",
                                  "MoveToHost", "MoveToDevice", "shape_assertion",
                                  "annotate_device_placement", "LayoutConstraint", NULL};
  for (int i = 0; k[i]; i++)
    if (strcmp(s, k[i]) == 0) return true;
  return strncmp(s, "xla.sdy.", 8) == 0;
}

static const char *custom_call_target(const hlo_op *op) {
  const hlo_attr *a = op_attr(op, "call_target_name");
  return a && a->kind == ATTR_STRING ? a->u.str.s : "";
}

/* The function a func.call / composite names, or an error. */
static hlo_status callee(ctx *c, const hlo_op *op, const char *attr, const hlo_func **out) {
  const hlo_attr *a = op_attr(op, attr);
  if (!a || (a->kind != ATTR_SYMBOL && a->kind != ATTR_STRING)) return bad_attr(op, attr);
  const hlo_func *f = module_find_func(c->m, a->u.str.s);
  if (!f)
    return status_at(HLO_NOT_FOUND, &op->loc, "cost analysis: %s: no function @%s",
                     op_name(op->opcode), a->u.str.s);
  *out = f;
  return NULL;
}

/* The cost of calling `f` (XLA HandleCall: the callee's whole cost). */
static hlo_status call_cost(ctx *c, const hlo_op *op, const hlo_func *f, uint32_t depth,
                            int32_t row, bool record, cost_counts *out) {
  for (uint32_t i = 0; i < c->depth; i++)
    if (c->stack[i] == f)
      return status_at(HLO_INVALID_ARGUMENT, &op->loc, "cost analysis: @%s calls itself", f->name);
  if (c->depth == MAX_CALL_DEPTH)
    return status_at(HLO_RESOURCE_EXHAUSTED, &op->loc, "cost analysis: calls nested over %d deep",
                     MAX_CALL_DEPTH);
  c->stack[c->depth++] = f;
  hlo_status st = cost_block(c, &f->body.block, depth + 1, row, record, RET_FREE, out);
  c->depth--;
  return st;
}

/* ---------------------------------------------------------- the switch */

/* The cost of `op` into *out (zeroed by the caller). `row` is op's row when
 * recording (the parent of rows of its bodies). */
static hlo_status op_cost(ctx *c, const hlo_op *op, uint32_t depth, int32_t row, bool record,
                          cost_counts *out) {
  hlo_opcode oc = op->opcode;
  for (uint32_t i = 0; i < op->num_operands; i++)
    if (!type_is_static(op->operands[i]->type)) goto dynamic;
  for (uint32_t i = 0; i < op->num_results; i++)
    if (!type_is_static(op->results[i].type)) goto dynamic;

  double res_elems = op->num_results ? elems(op->results[0].type) : 0;
  if ((op_flags(oc) & OPF_ELEMENTWISE) || oc == OP_CHLO_SQUARE) {
    /* XLA HandleElementwiseOp */
    out->bytes_accessed = default_bytes(op);
    if (oc == OP_LOGISTIC) {
      /* XLA:CPU's LogisticExpander: 1 / (1 + exp(-x)) */
      out->flops = 3 * res_elems;
      out->transcendentals = res_elems;
    } else if (is_transcendental(oc)) {
      out->transcendentals = res_elems;
    } else if ((op_flags(oc) & OPF_CHLO) && oc != OP_CHLO_SQUARE) {
      goto chlo;
    } else {
      out->flops = res_elems;
    }
    return NULL;
  }
  switch (oc) {
  /* nothing: XLA's parameter/constant/gte/after_all/bitcast handlers, and
   * ops XLA never sees (annotations, the conformance corpus's check ops) */
  case OP_CONSTANT: case OP_GET_TUPLE_ELEMENT: case OP_AFTER_ALL: case OP_CREATE_TOKEN:
  case OP_SDY_SHARDING_CONSTRAINT: case OP_SDY_RESHARD: case OP_SDY_SHARDING_GROUP:
  case OP_SDY_PROPAGATION_BARRIER: case OP_RESHAPE: case OP_DYNAMIC_RESHAPE:
  case OP_CHECK_EXPECT_EQ: case OP_CHECK_EXPECT_EQ_CONST: case OP_CHECK_EXPECT_ALMOST_EQ:
  case OP_CHECK_EXPECT_ALMOST_EQ_CONST: case OP_CHECK_EXPECT_CLOSE:
  case OP_CHECK_EXPECT_SERIALIZED_EQ: case OP_INTERP_PROBE: case OP_INTERP_PRINT:
    /* reshape: on XLA:CPU's row-major layouts every reshape is a bitcast
     * (the layout-sensitive simplifier rewrites it so): no bytes */
    return NULL;
  case OP_TRANSPOSE: {
    /* XLA HandleTranspose: a transpose that only moves size-1 dims is a
     * bitcast (no bytes); others move their bytes */
    int64_t *perm;
    uint32_t n;
    if (!ints_attr(c, op, "permutation", &perm, &n)) return bad_attr(op, "permutation");
    const hlo_type *t = op->operands[0]->type;
    int64_t last = -1;
    bool bitcast = true;
    for (uint32_t i = 0; i < n; i++) {
      if (perm[i] < 0 || perm[i] >= t->rank) return bad_attr(op, "permutation");
      if (t->dims[perm[i]] == 1) continue;
      if (perm[i] < last) bitcast = false;
      last = perm[i];
    }
    if (!bitcast) out->bytes_accessed = default_bytes(op);
    return NULL;
  }
  case OP_TUPLE: /* XLA HandleTuple: the pointer table only */
    out->bytes_accessed = output_bytes(op);
    return NULL;
  case OP_BROADCAST: case OP_BROADCAST_IN_DIM: case OP_IOTA: case OP_PAD:
  case OP_CONCATENATE: case OP_REVERSE: case OP_OPTIMIZATION_BARRIER:
  case OP_GET_DIMENSION_SIZE: case OP_SET_DIMENSION_SIZE: case OP_BATCH_NORM_GRAD:
  case OP_BATCH_NORM_INFERENCE: case OP_BATCH_NORM_TRAINING: case OP_PARTITION_ID:
  case OP_REPLICA_ID: case OP_ALL_GATHER: case OP_ALL_TO_ALL: case OP_COLLECTIVE_BROADCAST:
  case OP_COLLECTIVE_PERMUTE: case OP_REDUCE_SCATTER: case OP_INFEED: case OP_OUTFEED:
  case OP_SEND: case OP_RECV: case OP_ASYNC_START: case OP_ASYNC_DONE: case OP_CHLO_TOP_K:
  case OP_UNIFORM_QUANTIZE: case OP_UNIFORM_DEQUANTIZE: case OP_DYNAMIC_BROADCAST_IN_DIM:
  case OP_DYNAMIC_IOTA: case OP_DYNAMIC_PAD:
    /* data movement, and XLA's handlers that count no flops (batch norm:
     * "TODO" in XLA; top_k: HandleTopK) */
    out->bytes_accessed = default_bytes(op);
    return NULL;
  case OP_DOT: case OP_DOT_GENERAL:
    out->bytes_accessed = default_bytes(op);
    return dot_cost(c, op, out);
  case OP_CONVOLUTION:
    out->bytes_accessed = default_bytes(op);
    return conv_cost(c, op, out);
  case OP_REDUCE: {
    /* XLA HandleReduce: (input elements - output elements) applications,
     * after XLA:CPU's tree-reduction rewrite (reduce_applications) */
    cost_counts body;
    double times;
    HLO_TRY(region_cost(c, op, 0, &body));
    HLO_TRY(reduce_applications(c, op, &times));
    out->bytes_accessed = default_bytes(op);
    scale_into(out, &body, times);
    return NULL;
  }
  case OP_REDUCE_WINDOW:
    out->bytes_accessed = default_bytes(op);
    return reduce_window_cost(c, op, out);
  case OP_SELECT_AND_SCATTER:
    out->bytes_accessed = default_bytes(op);
    return select_and_scatter_cost(c, op, out);
  case OP_MAP: {
    cost_counts body;
    HLO_TRY(region_cost(c, op, 0, &body));
    out->bytes_accessed = default_bytes(op);
    scale_into(out, &body, res_elems);
    return NULL;
  }
  case OP_SORT: {
    /* XLA HandleSort: n * ceil(log2 n) of operand 0; the comparator is not
     * counted */
    double n = elems(op->operands[0]->type);
    out->bytes_accessed = default_bytes(op);
    out->flops = n * log2_ceil(n);
    return NULL;
  }
  case OP_FFT: {
    int64_t *len;
    uint32_t n;
    if (!ints_attr(c, op, "fft_length", &len, &n)) return bad_attr(op, "fft_length");
    double lf = 1;
    for (uint32_t i = 0; i < n; i++) lf *= log2_floor((double)len[i]);
    out->bytes_accessed = default_bytes(op);
    out->flops = FMA_FLOPS * 4 * lf * elems(op->operands[0]->type);
    return NULL;
  }
  case OP_TRIANGULAR_SOLVE: {
    /* XLA: half of `a` is read; batch * m * n^2 fmas */
    const hlo_type *a = op->operands[0]->type;
    out->bytes_accessed = output_bytes(op) + type_bytes(a) / 2 + value_bytes(op->operands[1]);
    out->flops = FMA_FLOPS * (a->rank ? (double)a->dims[a->rank - 1] : 1) *
                 elems(op->operands[1]->type);
    return NULL;
  }
  case OP_CHOLESKY: {
    /* XLA: half of `a` read, half of the result written; n^3 / 3 flops */
    const hlo_type *a = op->operands[0]->type;
    out->bytes_accessed = type_bytes(a);
    out->flops = floor((a->rank ? (double)a->dims[a->rank - 1] : 1) * elems(a) / 3);
    return NULL;
  }
  case OP_SLICE: case OP_REAL_DYNAMIC_SLICE: /* XLA HandleSlice: the result read and written */
    out->bytes_accessed = 2 * output_bytes(op);
    return NULL;
  case OP_DYNAMIC_SLICE: /* XLA counts the first start index only */
    out->bytes_accessed =
        2 * output_bytes(op) + (op->num_operands > 1 ? value_bytes(op->operands[1]) : 0);
    return NULL;
  case OP_DYNAMIC_UPDATE_SLICE: /* the operand aliases the result */
    out->bytes_accessed = op->num_operands > 2
                              ? 2 * value_bytes(op->operands[1]) + value_bytes(op->operands[2])
                              : 0;
    return NULL;
  case OP_GATHER: case OP_DYNAMIC_GATHER: case OP_TORCH_INDEX_SELECT:
    /* XLA HandleGather: the result read and written, plus the indices */
    out->bytes_accessed =
        2 * output_bytes(op) + (op->num_operands > 1 ? value_bytes(op->operands[1]) : 0);
    return NULL;
  case OP_SCATTER: {
    /* XLA HandleScatter: 3 x the updates + the indices; the body once per
     * update element */
    uint32_t n = (op->num_operands - 1) / 2;
    if (op->num_operands < 3 || op->num_operands % 2 == 0) return bad_attr(op, "operands");
    double upd = 0;
    for (uint32_t i = 0; i < n; i++) upd += value_bytes(op->operands[n + 1 + i]);
    out->bytes_accessed = 3 * upd + value_bytes(op->operands[n]);
    cost_counts body;
    HLO_TRY(region_cost(c, op, 0, &body));
    scale_into(out, &body, elems(op->operands[n + 1]->type));
    return NULL;
  }
  case OP_RNG: /* XLA: an RNG element costs one transcendental */
    out->bytes_accessed = default_bytes(op);
    out->transcendentals = res_elems;
    return NULL;
  case OP_RNG_BIT_GENERATOR: {
    double e = 0;
    for (uint32_t i = 0; i < op->num_results; i++) e += elems(op->results[i].type);
    out->bytes_accessed = default_bytes(op);
    out->transcendentals = e;
    return NULL;
  }
  case OP_ALL_REDUCE: case OP_CROSS_REPLICA_SUM: case OP_COLLECTIVE_REDUCE: {
    /* XLA HandleAllReduce: one flop per result element (two replicas) */
    for (uint32_t i = 0; i < op->num_results; i++) out->flops += elems(op->results[i].type);
    out->bytes_accessed = default_bytes(op);
    return NULL;
  }
  case OP_CUSTOM_CALL: {
    if (is_annotation_target(custom_call_target(op))) return NULL;
    /* XLA HandleCustomCall: unknown, reported as -1 flops and -1 bytes */
    out->flops = -1;
    out->bytes_accessed = -1;
    c->num_unknown++;
    return NULL;
  }
  case OP_FUNC_CALL: {
    const hlo_func *f;
    HLO_TRY(callee(c, op, "callee", &f));
    return call_cost(c, op, f, depth, row, record, out);
  }
  case OP_COMPOSITE: { /* XLA inlines the decomposition */
    const hlo_func *f;
    HLO_TRY(callee(c, op, "decomposition", &f));
    return call_cost(c, op, f, depth, row, record, out);
  }
  case OP_FUSION: {
    /* XLA HandleFusion: the fused ops' flops and transcendentals; bytes are the
     * fusion's own operands and results (what the kernel reads and writes; XLA
     * refines reads of sliced or broadcast parameters, not modelled yet) */
    if (op->num_regions != 1) return bad_attr(op, "region");
    cost_counts body = {0, 0, 0};
    HLO_TRY(cost_block(c, &op->regions[0].block, depth + 1, row, record, RET_FREE, &body));
    out->flops = body.flops;
    out->transcendentals = body.transcendentals;
    out->bytes_accessed = default_bytes(op);
    return NULL;
  }
  case OP_SDY_MANUAL_COMPUTATION: case OP_SDY_NAMED_COMPUTATION:
    if (op->num_regions != 1) return bad_attr(op, "region");
    return cost_block(c, &op->regions[0].block, depth + 1, row, record, RET_FREE, out);
  case OP_WHILE: {
    /* XLA HandleWhile: the body and the condition once each (the trip count
     * is unknown to it) */
    if (op->num_regions != 2) return bad_attr(op, "regions");
    cost_counts cond = {0, 0, 0}, body = {0, 0, 0};
    HLO_TRY(cost_block(c, &op->regions[0].block, depth + 1, row, record, RET_FREE, &cond));
    HLO_TRY(cost_block(c, &op->regions[1].block, depth + 1, row, record, RET_TUPLE, &body));
    counts_add(out, &cond);
    counts_add(out, &body);
    return NULL;
  }
  case OP_IF: case OP_CASE: {
    /* XLA HandleConditional: each count's maximum over the branches */
    for (uint32_t r = 0; r < op->num_regions; r++) {
      cost_counts br = {0, 0, 0};
      HLO_TRY(cost_block(c, &op->regions[r].block, depth + 1, row, record, RET_TUPLE_UNLESS_ONE,
                         &br));
      if (r == 0) *out = br;
      else counts_max(out, &br);
    }
    return NULL;
  }
  case OP_RETURN: case OP_FUNC_RETURN: case OP_SDY_RETURN: case OP_CHLO_YIELD:
    return NULL; /* costed by cost_block (ret_kind) */
  default:
    break;
  }
  if (op_flags(oc) & OPF_CHLO) goto chlo;
  if (oc == OP_DYNAMIC_CONV)
    return status_at(HLO_UNIMPLEMENTED, &op->loc,
                     "cost analysis: %s: refine shapes first (it becomes a convolution)",
                     op_name(oc));
  return status_at(HLO_UNIMPLEMENTED, &op->loc, "cost analysis: no cost rule for %s",
                   op_name(oc));
chlo:
  return status_at(HLO_UNIMPLEMENTED, &op->loc,
                   "cost analysis: %s: run chlo legalization first (XLA decomposes it into "
                   "StableHLO ops, which are what it counts)",
                   op_name(oc));
dynamic:
  return status_at(HLO_UNIMPLEMENTED, &op->loc,
                   "cost analysis: %s has dynamic dimensions: refine shapes first",
                   op_name(oc));
}

static hlo_status cost_block(ctx *c, const hlo_block *b, uint32_t depth, int32_t parent,
                             bool record, ret_kind rk, cost_counts *sum) {
  bool *live = NULL;
  uint32_t n;
  HLO_TRY(block_liveness(b, &live, &n));
  hlo_status st = NULL;
  uint32_t i = 0;
  for (const hlo_op *op = b->first; op && !st; op = op->next, i++) {
    if (!live[i]) continue;
    cost_counts oc = {0, 0, 0};
    bool is_ret = (op_flags(op->opcode) & OPF_TERMINATOR) != 0;
    if (is_ret) {
      if (rk == RET_TUPLE || (rk == RET_TUPLE_UNLESS_ONE && op->num_operands != 1))
        oc.bytes_accessed = POINTER_BYTES * op->num_operands;
      if (oc.bytes_accessed == 0) continue;
    }
    int32_t row = -1;
    if (record && (st = add_row(c, op, depth, parent, &row))) break;
    if (!is_ret) st = op_cost(c, op, depth, row, record, &oc);
    if (st) break;
    if (record) c->rows[row].cost = oc;
    counts_add(sum, &oc);
  }
  free(live);
  return st;
}

/* ------------------------------------------------------------ public */

hlo_status cost_analysis(const hlo_module_ir *m, const char *entry, cost_report *out) {
  memset(out, 0, sizeof *out);
  if (!m) return status_new(HLO_INVALID_ARGUMENT, "cost analysis: no module");
  hlo_func *f = module_entry(m, entry);
  if (!f)
    return status_new(HLO_NOT_FOUND, "cost analysis: no entry function @%s",
                      entry ? entry : "main");
  ctx *c = xcalloc(1, sizeof *c);
  if (!c) return oom();
  c->m = m;
  arena_init(&c->scratch);
  c->stack[c->depth++] = f;
  cost_counts total = {0, 0, 0};
  hlo_status st = cost_block(c, &f->body.block, 0, -1, true, RET_TUPLE_UNLESS_ONE, &total);
  arena_deinit(&c->scratch);
  if (st) {
    free(c->rows);
    free(c);
    return status_note(st, "while analysing the cost of @%s", f->name);
  }
  out->entry = f->name;
  out->total = total;
  out->rows = c->rows;
  out->num_rows = c->n;
  out->num_unknown = c->num_unknown;
  free(c);
  return NULL;
}

void cost_report_free(cost_report *r) {
  if (!r) return;
  free(r->rows);
  memset(r, 0, sizeof *r);
}

const char *cost_op_label(const hlo_op *op, char *buf, size_t cap) {
  if (!cap) return buf;
  const char *name = op_name(op->opcode);
  if (!name) name = "?";
  if (strncmp(name, "stablehlo.", 10) == 0) name += 10;
  const char *extra = NULL;
  if (op->opcode == OP_CUSTOM_CALL) extra = custom_call_target(op);
  else if (op->opcode == OP_FUNC_CALL || op->opcode == OP_COMPOSITE) {
    const hlo_attr *a = op_attr(op, op->opcode == OP_FUNC_CALL ? "callee" : "name");
    if (a && (a->kind == ATTR_SYMBOL || a->kind == ATTR_STRING)) extra = a->u.str.s;
  }
  if (extra && *extra) snprintf(buf, cap, "%s @%s", name, extra);
  else snprintf(buf, cap, "%s", name);
  return buf;
}

static void json_str(FILE *f, const char *s) {
  fputc('"', f);
  for (; *s; s++) {
    unsigned char ch = (unsigned char)*s;
    if (ch == '"' || ch == '\\') fprintf(f, "\\%c", ch);
    else if (ch < 0x20) fprintf(f, "\\u%04x", ch);
    else fputc(ch, f);
  }
  fputc('"', f);
}

static void json_counts(FILE *f, const cost_counts *k) {
  fprintf(f, "\"flops\": %.17g, \"transcendentals\": %.17g, \"bytes accessed\": %.17g", k->flops,
          k->transcendentals, k->bytes_accessed);
}

hlo_status cost_report_write_json(const cost_report *r, bool skip_zero, FILE *f) {
  fputs("{\"entry\": ", f);
  json_str(f, r->entry ? r->entry : "");
  fputs(", ", f);
  json_counts(f, &r->total);
  fprintf(f, ", \"unknown\": %u, \"ops\": [", r->num_unknown);
  bool first = true;
  for (uint32_t i = 0; i < r->num_rows; i++) {
    const cost_row *w = &r->rows[i];
    if (skip_zero && !w->cost.flops && !w->cost.transcendentals && !w->cost.bytes_accessed)
      continue;
    char label[256], loc[512];
    const hlo_loc *l = &w->op->loc;
    snprintf(loc, sizeof loc, "%s:%u:%u", l->src && l->src->name ? l->src->name : "?", l->line,
             l->col);
    fputs(first ? "\n  {\"op\": " : ",\n  {\"op\": ", f);
    first = false;
    json_str(f, cost_op_label(w->op, label, sizeof label));
    fputs(", \"loc\": ", f);
    json_str(f, loc);
    fprintf(f, ", \"depth\": %u, ", w->depth);
    json_counts(f, &w->cost);
    fputc('}', f);
  }
  fputs(first ? "]}\n" : "\n]}\n", f);
  if (ferror(f)) return status_new(HLO_UNAVAILABLE, "cost analysis: writing the JSON failed");
  return NULL;
}
