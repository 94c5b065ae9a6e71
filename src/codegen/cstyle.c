/* cstyle.c — the C-style kernel printer (see cstyle.h).
 *
 * Shape of the printed function (an elementwise kernel of dims [N0, N1],
 * thread dim 0 in tiles of 1, dim 1 whole):
 *
 *   void NAME(void *const *bufs, int64_t tile_begin, int64_t tile_end) {
 *     const float *restrict in0 = (const float *)bufs[0];
 *     float *restrict out0 = (float *)bufs[1];
 *     for (int64_t t = tile_begin; t < tile_end; t++) {     <- dialect tile_open
 *       int64_t r = t;
 *       const int64_t t0 = r;                                <- tile coordinates
 *       const int64_t l0 = t0 * 1, h0 = l0 + 1;
 *       for (int64_t x0 = l0; x0 < h0; x0++) {
 *         for (int64_t x1 = 0; x1 < N1; x1++) {              <- contiguous, vectorisable
 *           const float v0 = in0[x0 * N1 + x1];
 *           ...
 *           out0[x0 * N1 + x1] = v7;
 *         }}}}
 *
 * Inside the parallel loops, the kernel's stages (kernel.h) run one after
 * the other over the row of the current point: a stage's instructions that
 * do not vary along the row first (kernel_row_varying: once per row), then
 * its row loops. A REDUCE stage sets `accS` to the init value, runs the row
 * loops with the body and the combiner inside, and makes the row value
 * `rS` (the accumulator rounded once to the reduce's type); with reduction
 * lanes (kernel.h) the accumulator is `acclS[L]` (lane 0 from init, the
 * others from the combiner's identity), the innermost row loop runs in
 * blocks of L with an inner `for (xl = 0; xl < L; xl++)` loop folding
 * element xb + xl into acclS[xl] (the loop gcc vectorises), the tail into
 * acclS[0], and a tree over the lanes makes `accS`. When the folded value
 * is kept in a temporary, the points run first as a plain loop nest and
 * the lanes then fold the temporary (a mixed loop of masks, divides and
 * the fold vectorised poorly: 2x on llama's masked softmax). A MAP stage
 * stores per-row outputs before its loops and the others inside them.
 * Temporaries are arrays `tmpT[row]` of the function (the thread's stack).
 * `acc` and the combiner are of the stage's acc_dtype (wider than the
 * output for bf16/f16 and f32 sums). Each kernel is preceded
 * by a one-line comment: its index space, tile count, buffers, lanes. */
#include "codegen/cstyle.h"
#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include "ir/element.h"

const char *cstyle_compute_type(hlo_dtype dt) {
  switch (dt) {
  case HLO_I1: return "bool";
  case HLO_I8: return "int8_t";
  case HLO_I16: return "int16_t";
  case HLO_I32: return "int32_t";
  case HLO_I64: return "int64_t";
  case HLO_UI8: return "uint8_t";
  case HLO_UI16: return "uint16_t";
  case HLO_UI32: return "uint32_t";
  case HLO_UI64: return "uint64_t";
  case HLO_BF16: case HLO_F16: case HLO_F32: return "float";
  case HLO_F64: return "double";
  default: return NULL;
  }
}

const char *cstyle_storage_type(hlo_dtype dt) {
  switch (dt) {
  case HLO_I1: return "uint8_t";
  case HLO_BF16: case HLO_F16: return "uint16_t";
  default: return cstyle_compute_type(dt);
  }
}

static const char *int_type_of_width(int bits, bool is_unsigned) {
  switch (bits) {
  case 8: return is_unsigned ? "uint8_t" : "int8_t";
  case 16: return is_unsigned ? "uint16_t" : "int16_t";
  case 32: return is_unsigned ? "uint32_t" : "int32_t";
  default: return is_unsigned ? "uint64_t" : "int64_t";
  }
}

/* Expands template `tm` (see cstyle.h) for a result of type `dt`. */
static void expand(strbuf *o, const char *tm, const char *const *args, hlo_dtype dt) {
  hlo_dtype ct = kernel_compute_dtype(dt);
  for (const char *p = tm; *p; p++) {
    if (*p != '$' || !p[1]) {
      sb_putc(o, *p);
      continue;
    }
    char c = *++p;
    if (c >= '0' && c <= '2') sb_puts(o, args[c - '0']);
    else if (c == 'T') sb_puts(o, cstyle_compute_type(dt));
    else if (c == 'U') sb_puts(o, int_type_of_width(dtype_bits(dt), true));
    else if (c == 'S') sb_puts(o, int_type_of_width(dtype_bits(dt), false));
    else if (c == 'B') sb_printf(o, "%d", dtype_bits(dt));
    else if (c == 'f') sb_puts(o, ct == HLO_F64 ? "" : "f");
    else sb_putc(o, c);
  }
}

static void print_affine(strbuf *o, const kernel_affine *a, uint32_t rank) {
  bool any = false;
  for (uint32_t i = 0; i < rank; i++) {
    int64_t c = a->coeff[i];
    if (!c) continue;
    if (any) sb_puts(o, " + ");
    if (c == 1) sb_printf(o, "x%u", i);
    else sb_printf(o, "x%u * %lld", i, (long long)c);
    any = true;
  }
  if (!any) sb_printf(o, "%lld", (long long)a->offset);
  else if (a->offset > 0) sb_printf(o, " + %lld", (long long)a->offset);
  else if (a->offset < 0) sb_printf(o, " - %lld", -(long long)a->offset);
}

static void print_const(const cstyle_dialect *d, strbuf *o, hlo_dtype dt, int64_t i, double f) {
  const char *no[3] = {"", "", ""};
  if (dtype_class(dt) == HLO_CLASS_BOOL) {
    sb_puts(o, i ? "true" : "false");
  } else if (!dtype_is_float(dt)) {
    sb_printf(o, "((%s)(uint64_t)0x%llxULL)", cstyle_compute_type(dt), (unsigned long long)i);
  } else if (isnan(f)) {
    sb_puts(o, signbit(f) ? "(-" : "(");
    expand(o, d->nan, no, dt);
    sb_putc(o, ')');
  } else if (isinf(f)) {
    sb_puts(o, f < 0 ? "(-" : "(");
    expand(o, d->inf, no, dt);
    sb_putc(o, ')');
  } else {
    sb_printf(o, "%a%s", f, kernel_compute_dtype(dt) == HLO_F64 ? "" : "f");
  }
}

/* Limits of integer type `dt`: as bit patterns and as doubles (the
 * saturation points of float -> integer converts). */
static void int_limits(hlo_dtype dt, uint64_t *lo, uint64_t *hi, double *flo, double *fhi) {
  int bits = dtype_bits(dt);
  if (dtype_class(dt) == HLO_CLASS_UINT) {
    *lo = 0;
    *hi = bits >= 64 ? UINT64_MAX : ((uint64_t)1 << bits) - 1;
    *flo = 0;
    *fhi = ldexp(1.0, bits); /* in float: 2^bits - 1 rounds up to this for 32/64 */
  } else {
    *lo = (uint64_t)0 - ((uint64_t)1 << (bits - 1));
    *hi = ((uint64_t)1 << (bits - 1)) - 1;
    *flo = -ldexp(1.0, bits - 1);
    *fhi = ldexp(1.0, bits - 1);
  }
}

/* convert from `from` to `to` (computation types) of the value named `a`. */
static void print_convert(strbuf *o, hlo_dtype from, hlo_dtype to, const char *a) {
  hlo_dtype_class fc = dtype_class(from), tc = dtype_class(to);
  const char *tt = cstyle_compute_type(to);
  if (tc == HLO_CLASS_BOOL) {
    sb_printf(o, "(%s != 0)", a);
  } else if (fc == HLO_CLASS_FLOAT && tc != HLO_CLASS_FLOAT) {
    /* truncate toward zero, saturate, NaN -> 0 (the interpreter's and XLA's
     * rule): x <= min gives min; x >= max + 1 gives max; else (T)x is exact
     * after truncation. 2^k is exact in float and double. */
    uint64_t lo, hi;
    double flo, fhi;
    int_limits(to, &lo, &hi, &flo, &fhi);
    const char *sfx = from == HLO_F64 ? "" : "f";
    sb_printf(o, "(%s != %s ? (%s)0 : %s <= %a%s ? (%s)(uint64_t)0x%llxULL : %s >= %a%s ? "
                 "(%s)(uint64_t)0x%llxULL : (%s)%s)",
              a, a, tt, a, flo, sfx, tt, (unsigned long long)lo, a, fhi, sfx, tt,
              (unsigned long long)hi, tt, a);
  } else {
    sb_printf(o, "(%s)%s", tt, a);
  }
}

static const char *const cmp_ops[] = {"==", "!=", "<", "<=", ">", ">="};

static const char *op_template(const cstyle_dialect *d, hlo_opcode op, hlo_dtype at) {
  switch (dtype_class(at)) {
  case HLO_CLASS_BOOL: return d->bool_ops[op];
  case HLO_CLASS_FLOAT: return d->float_ops[op];
  case HLO_CLASS_UINT: return d->uint_ops[op] ? d->uint_ops[op] : d->int_ops[op];
  default: return d->int_ops[op];
  }
}

/* The linear position in the row (the row dims, row-major) of the current
 * point: a temporary's index. */
static void print_row_linear(strbuf *o, const kernel *k) {
  kernel_affine a;
  memset(&a, 0, sizeof a);
  int64_t stride = 1;
  for (uint32_t d = k->rank; d-- > k->rank - k->num_reduce_dims;) {
    a.coeff[d] = stride;
    stride *= k->dims[d];
  }
  print_affine(o, &a, k->rank);
}

/* Prints instruction `i` of `l` as `const T pfxI = EXPR;`. `param0/1` name
 * the combiner's parameters. */
static hlo_status print_inst(const cstyle_dialect *d, const kernel *k, strbuf *o,
                             const kinst *l, uint32_t i, const char *pfx, const char *param0,
                             const char *param1, const char *indent) {
  const kinst *in = &l[i];
  char names[KINST_MAX_ARGS][24];
  const char *args[KINST_MAX_ARGS] = {"", "", ""};
  for (uint32_t a = 0; a < in->num_args; a++) {
    snprintf(names[a], sizeof names[a], "%s%u", pfx, in->args[a]);
    args[a] = names[a];
  }
  const char *ct = cstyle_compute_type(in->dtype);
  if (!ct)
    return status_at(HLO_UNIMPLEMENTED, &k->loc, "kernel %s: element type %s", k->name,
                     hlo_dtype_name(in->dtype));
  sb_printf(o, "%sconst %s %s%u = ", indent, ct, pfx, i);
  switch (in->kind) {
  case KI_PARAM:
    sb_puts(o, in->input == 0 ? param0 : param1);
    break;
  case KI_ROW:
    sb_printf(o, "r%u", in->input);
    break;
  case KI_TEMP:
    sb_printf(o, "tmp%u[", in->input);
    print_row_linear(o, k);
    sb_putc(o, ']');
    break;
  case KI_CONST:
    print_const(d, o, in->dtype, in->cval.i, in->cval.f);
    break;
  case KI_INDEX:
    sb_puts(o, "(int64_t)(");
    print_affine(o, &in->index, k->rank);
    sb_putc(o, ')');
    break;
  case KI_LOAD: {
    const kernel_buffer *b = &k->inputs[in->input];
    kernel_affine lin = kernel_map_linear(&in->map, b->dims);
    if (in->guard >= 0) sb_printf(o, "%s%d ? ", pfx, in->guard);
    const char *conv = b->dtype == HLO_BF16 ? "hlo_bf16_to_f32" : b->dtype == HLO_F16 ? "hlo_f16_to_f32" : "";
    sb_printf(o, "%s(in%u[", conv, in->input);
    print_affine(o, &lin, k->rank);
    sb_puts(o, b->dtype == HLO_I1 ? "] != 0)" : "])");
    if (in->guard >= 0) sb_printf(o, " : (%s)0", ct);
    break;
  }
  case KI_OP: {
    hlo_dtype at = in->num_args ? l[in->args[in->op == OP_SELECT && in->num_args > 1 ? 1 : 0]].dtype : in->dtype;
    if (in->op == OP_CONVERT && at == HLO_F64 && in->dtype == HLO_F16) {
      /* f64 -> f16 rounds once (numpy's rule, the interpreter's); through
       * f32 it would round twice. f64 -> bf16 does go through f32
       * (ml_dtypes' rule): the general path below. */
      sb_printf(o, "hlo_round_f16_from_f64(%s);\n", args[0]);
      return NULL;
    }
    bool narrow = in->dtype == HLO_BF16 || in->dtype == HLO_F16;
    if (narrow) sb_puts(o, in->dtype == HLO_BF16 ? "hlo_round_bf16(" : "hlo_round_f16(");
    if (in->op == OP_COMPARE) {
      sb_printf(o, "(%s %s %s)", args[0], cmp_ops[in->cmp], args[1]);
    } else if (in->op == OP_CONVERT) {
      print_convert(o, kernel_compute_dtype(at), in->dtype == HLO_BF16 || in->dtype == HLO_F16 ? HLO_F32 : in->dtype, args[0]);
    } else {
      const char *tm = op_template(d, in->op, at);
      if (!tm)
        return status_at(HLO_UNIMPLEMENTED, &k->loc, "kernel %s: %s on %s has no %s text yet",
                         k->name, op_name(in->op), hlo_dtype_name(at), d->name);
      /* templates are expanded for the operands' type (compare/is_finite differ) */
      expand(o, tm, args, in->op == OP_IS_FINITE ? at : in->dtype);
    }
    if (narrow) sb_putc(o, ')');
    break;
  }
  }
  sb_puts(o, ";\n");
  return NULL;
}

static void store(strbuf *o, const kernel *k, uint32_t oi, const char *val, const char *indent) {
  const kernel_output *out = &k->outputs[oi];
  kernel_affine lin = kernel_map_linear(&out->map, out->buf.dims);
  sb_printf(o, "%sout%u[", indent, oi);
  print_affine(o, &lin, k->rank);
  hlo_dtype dt = out->buf.dtype;
  const char *conv = dt == HLO_BF16 ? "hlo_f32_to_bf16" : dt == HLO_F16 ? "hlo_f32_to_f16"
                     : dt == HLO_I1 ? "(uint8_t)" : "";
  sb_printf(o, "] = %s(%s);\n", conv, val);
}

static void put_indent(char *buf, size_t cap, uint32_t level) {
  size_t n = 2 * (size_t)level < cap - 1 ? 2 * (size_t)level : cap - 1;
  memset(buf, ' ', n);
  buf[n] = 0;
}

/* Declares the accumulator of REDUCE stage `s`: `accS` = init, or with
 * lanes `acclS[L]`, lane 0 = init and the others the combiner's identity. */
static hlo_status open_accumulator(const cstyle_dialect *d, const kernel *k, strbuf *o,
                                   uint32_t s, uint32_t lanes, const char *ind) {
  const kernel_stage *st = &k->stages[s];
  hlo_dtype adt = st->acc_dtype;
  const char *at = cstyle_compute_type(adt);
  if (!at)
    return status_at(HLO_UNIMPLEMENTED, &k->loc, "kernel %s: accumulator type %s", k->name,
                     hlo_dtype_name(adt));
  if (!lanes) {
    sb_printf(o, "%s%s acc%u = ", ind, at, s);
    print_const(d, o, adt, st->init.i, st->init.f);
    sb_puts(o, ";\n");
    return NULL;
  }
  sb_printf(o, "%s%s accl%u[%u];\n%saccl%u[0] = ", ind, at, s, lanes, ind, s);
  print_const(d, o, adt, st->init.i, st->init.f);
  sb_printf(o, ";\n%sfor (int64_t xl = 1; xl < %u; xl++) accl%u[xl] = ", ind, lanes, s);
  print_const(d, o, adt, st->identity.i, st->identity.f);
  sb_puts(o, ";\n");
  return NULL;
}

/* Stage s's instructions that vary along the row, the temporaries it
 * writes, and (REDUCE) the combiner folding its value into `acc` (a C
 * lvalue, NULL for a MAP stage), then (MAP) the outputs it stores along
 * the row. */
static hlo_status print_point(const cstyle_dialect *d, const kernel *k, strbuf *o, uint32_t s,
                              const bool *vary, const char *acc, const char *ind) {
  const kernel_stage *st = &k->stages[s];
  for (uint32_t i = st->body_begin; i < st->body_end; i++)
    if (vary[i]) HLO_TRY(print_inst(d, k, o, k->body, i, "v", "", "", ind));
  for (uint32_t t = 0; t < k->num_temps; t++) {
    if (k->temps[t].stage != s) continue;
    sb_printf(o, "%stmp%u[", ind, t);
    print_row_linear(o, k);
    sb_printf(o, "] = v%u;\n", k->temps[t].value);
  }
  if (acc) {
    char v[24];
    snprintf(v, sizeof v, "v%u", st->value);
    for (uint32_t i = st->comb_begin; i < st->comb_end; i++)
      HLO_TRY(print_inst(d, k, o, k->comb, i, "c", acc, v, ind));
    sb_printf(o, "%s%s = c%u;\n", ind, acc, st->comb_result);
  }
  return NULL;
}

/* Whether output o's map ignores the row variables. */
static bool output_per_row(const kernel *k, const kernel_output *out) {
  if (!k->num_reduce_dims) return true;
  if (out->map.flat) return false;
  for (uint32_t j = 0; j < out->map.rank; j++)
    for (uint32_t dd = k->rank - k->num_reduce_dims; dd < k->rank; dd++)
      if (out->map.dim[j].coeff[dd]) return false;
  return true;
}

/* Opens the loops over the row dims [np, last) at level *level. */
static void open_row_loops(const kernel *k, strbuf *o, uint32_t last, uint32_t *level, char *ind,
                           size_t cap) {
  for (uint32_t dd = k->rank - k->num_reduce_dims; dd < last; dd++) {
    sb_printf(o, "%sfor (int64_t x%u = 0; x%u < %lld; x%u++) {\n", ind, dd, dd,
              (long long)k->dims[dd], dd);
    put_indent(ind, cap, ++*level);
  }
}

static void close_row_loops(const kernel *k, strbuf *o, uint32_t last, uint32_t *level, char *ind,
                            size_t cap) {
  for (uint32_t dd = k->rank - k->num_reduce_dims; dd < last; dd++) {
    put_indent(ind, cap, --*level);
    sb_printf(o, "%s}\n", ind);
  }
}

/* One stage over the row of the current parallel point (see kernel.h):
 * instructions that do not vary along the row first, then the row loops. */
static hlo_status print_stage(const cstyle_dialect *d, const kernel *k, strbuf *o, uint32_t s,
                              const bool *vary, uint32_t level) {
  const kernel_stage *st = &k->stages[s];
  char ind[64];
  put_indent(ind, sizeof ind, level);
  for (uint32_t i = st->body_begin; i < st->body_end; i++)
    if (!vary[i]) HLO_TRY(print_inst(d, k, o, k->body, i, "v", "", "", ind));
  if (st->kind == KSTAGE_MAP) {
    bool loop = false;
    for (uint32_t i = st->body_begin; i < st->body_end; i++) loop |= vary[i];
    for (uint32_t t = 0; t < k->num_temps; t++) loop |= k->temps[t].stage == s;
    for (uint32_t oi = 0; oi < k->num_outputs; oi++) {
      const kernel_output *out = &k->outputs[oi];
      if (out->stage != s) continue;
      if (!output_per_row(k, out) || vary[out->value]) {
        loop = true;
        continue;
      }
      char v[24];
      snprintf(v, sizeof v, "v%u", out->value);
      store(o, k, oi, v, ind);
    }
    if (!loop) return NULL;
    open_row_loops(k, o, k->rank, &level, ind, sizeof ind);
    HLO_TRY(print_point(d, k, o, s, vary, NULL, ind));
    for (uint32_t oi = 0; oi < k->num_outputs; oi++) {
      const kernel_output *out = &k->outputs[oi];
      if (out->stage != s || (output_per_row(k, out) && !vary[out->value])) continue;
      char v[24];
      snprintf(v, sizeof v, "v%u", out->value);
      store(o, k, oi, v, ind);
    }
    close_row_loops(k, o, k->rank, &level, ind, sizeof ind);
    return NULL;
  }
  /* REDUCE: with lanes (kernel.h) lane xl folds the elements xb + xl of the
   * innermost row dim; the tail (past the last multiple of L) goes to lane 0 */
  uint32_t lanes = k->sched.reduce_lanes[s] > 1 ? k->sched.reduce_lanes[s] : 0;
  HLO_TRY(open_accumulator(d, k, o, s, lanes, ind));
  char acc[32];
  uint32_t r = k->rank - 1;
  int32_t vt = -1; /* the temporary holding the folded value, if any */
  for (uint32_t t = 0; t < k->num_temps; t++)
    if (k->temps[t].stage == s && k->temps[t].value == st->value) vt = (int32_t)t;
  if (lanes && vt >= 0) {
    /* the folded value is kept in a temporary: the points in one plain
     * loop nest (which vectorises like an elementwise kernel), then the
     * lanes fold the temporary (2x on a masked softmax's first stage, bench/KERNELS.md) */
    open_row_loops(k, o, k->rank, &level, ind, sizeof ind);
    HLO_TRY(print_point(d, k, o, s, vary, NULL, ind));
    close_row_loops(k, o, k->rank, &level, ind, sizeof ind);
    long long n = 1;
    for (uint32_t dd = k->rank - k->num_reduce_dims; dd < k->rank; dd++) n *= (long long)k->dims[dd];
    long long nm = n - n % (long long)lanes;
    char ind2[80], ind3[96], a0[32], a1[32];
    snprintf(ind2, sizeof ind2, "%s  ", ind);
    snprintf(ind3, sizeof ind3, "%s    ", ind);
    sb_printf(o, "%sfor (int64_t xb = 0; xb < %lld; xb += %u) {\n", ind, nm, lanes);
    sb_printf(o, "%sfor (int64_t xl = 0; xl < %u; xl++) {\n", ind2, lanes);
    snprintf(a0, sizeof a0, "accl%u[xl]", s);
    snprintf(a1, sizeof a1, "tmp%d[xb + xl]", vt);
    for (uint32_t i = st->comb_begin; i < st->comb_end; i++)
      HLO_TRY(print_inst(d, k, o, k->comb, i, "c", a0, a1, ind3));
    sb_printf(o, "%saccl%u[xl] = c%u;\n%s}\n%s}\n", ind3, s, st->comb_result, ind2, ind);
    if (nm < n) {
      sb_printf(o, "%sfor (int64_t xr = %lld; xr < %lld; xr++) {\n", ind, nm, n);
      snprintf(a0, sizeof a0, "accl%u[0]", s);
      snprintf(a1, sizeof a1, "tmp%d[xr]", vt);
      for (uint32_t i = st->comb_begin; i < st->comb_end; i++)
        HLO_TRY(print_inst(d, k, o, k->comb, i, "c", a0, a1, ind2));
      sb_printf(o, "%saccl%u[0] = c%u;\n%s}\n", ind2, s, st->comb_result, ind);
    }
  } else {
  open_row_loops(k, o, lanes ? r : k->rank, &level, ind, sizeof ind);
  if (!lanes) {
    snprintf(acc, sizeof acc, "acc%u", s);
    HLO_TRY(print_point(d, k, o, s, vary, acc, ind));
  } else {
    long long n = (long long)k->dims[r], nm = n - n % (long long)lanes;
    char ind2[64], ind3[64];
    put_indent(ind2, sizeof ind2, level + 1);
    put_indent(ind3, sizeof ind3, level + 2);
    sb_printf(o, "%sfor (int64_t xb = 0; xb < %lld; xb += %u) {\n", ind, nm, lanes);
    sb_printf(o, "%sfor (int64_t xl = 0; xl < %u; xl++) {\n", ind2, lanes);
    sb_printf(o, "%sconst int64_t x%u = xb + xl;\n", ind3, r);
    snprintf(acc, sizeof acc, "accl%u[xl]", s);
    HLO_TRY(print_point(d, k, o, s, vary, acc, ind3));
    sb_printf(o, "%s}\n%s}\n", ind2, ind);
    if (nm < n) {
      sb_printf(o, "%sfor (int64_t x%u = %lld; x%u < %lld; x%u++) {\n", ind, r, nm, r, n, r);
      snprintf(acc, sizeof acc, "accl%u[0]", s);
      HLO_TRY(print_point(d, k, o, s, vary, acc, ind2));
      sb_printf(o, "%s}\n", ind);
    }
  }
  close_row_loops(k, o, lanes ? r : k->rank, &level, ind, sizeof ind);
  }
  const char *at = cstyle_compute_type(st->acc_dtype);
  if (lanes) {
    /* the lanes combined as a tree */
    sb_printf(o, "%sfor (int64_t w = %u; w >= 1; w /= 2) {\n", ind, lanes / 2);
    sb_printf(o, "%s  for (int64_t xl = 0; xl < w; xl++) {\n", ind);
    char ind2[80], a0[32], a1[32];
    snprintf(ind2, sizeof ind2, "%s    ", ind);
    snprintf(a0, sizeof a0, "accl%u[xl]", s);
    snprintf(a1, sizeof a1, "accl%u[xl + w]", s);
    for (uint32_t i = st->comb_begin; i < st->comb_end; i++)
      HLO_TRY(print_inst(d, k, o, k->comb, i, "c", a0, a1, ind2));
    sb_printf(o, "%saccl%u[xl] = c%u;\n%s  }\n%s}\n", ind2, s, st->comb_result, ind, ind);
    sb_printf(o, "%sconst %s acc%u = accl%u[0];\n", ind, at, s, s);
  }
  /* the row value: the accumulator rounded once to the reduce's type */
  hlo_dtype ct = kernel_compute_dtype(st->dtype);
  const char *rt = cstyle_compute_type(st->dtype);
  const char *rnd = st->dtype == HLO_BF16 ? "hlo_round_bf16" : st->dtype == HLO_F16 ? "hlo_round_f16" : "";
  if (ct != st->acc_dtype || *rnd)
    sb_printf(o, "%sconst %s r%u = %s((%s)acc%u);\n", ind, rt, s, rnd, rt, s);
  else
    sb_printf(o, "%sconst %s r%u = acc%u;\n", ind, rt, s, s);
  return NULL;
}

hlo_status cstyle_emit_kernel(const cstyle_dialect *d, const kernel *k, strbuf *o) {
  HLO_TRY(kernel_check_schedule(k));
  const kernel_schedule *s = &k->sched;
  uint32_t np = k->rank - k->num_reduce_dims, level = 1;
  char ind[64];
  /* a one-line summary for readers of --dump-to (and tools that time one
   * kernel: the tile count is the launch range) */
  sb_printf(o, "/* %s: index space [", k->name);
  for (uint32_t dd = 0; dd < k->rank; dd++)
    sb_printf(o, "%s%lld%s", dd ? ", " : "", (long long)k->dims[dd], dd >= np ? " red" : "");
  sb_printf(o, "], %lld tiles, %u inputs, %u outputs", (long long)kernel_num_tiles(k), k->num_inputs,
            k->num_outputs);
  if (k->num_stages > 1) sb_printf(o, ", %u stages", k->num_stages);
  if (k->num_temps) sb_printf(o, ", %u temporaries", k->num_temps);
  uint32_t maxl = 0;
  for (uint32_t st = 0; st < k->num_stages; st++)
    if (s->reduce_lanes[st] > maxl) maxl = s->reduce_lanes[st];
  if (k->num_reduce_dims && maxl > 1) sb_printf(o, ", %u reduction lanes", maxl);
  sb_puts(o, " */\n");
  sb_printf(o, "%s %s(void *const *bufs, int64_t tile_begin, int64_t tile_end) {\n",
            d->kernel_prefix, k->name);
  for (uint32_t i = 0; i < k->num_inputs; i++) {
    const char *st = cstyle_storage_type(k->inputs[i].dtype);
    if (!st)
      return status_at(HLO_UNIMPLEMENTED, &k->loc, "kernel %s: element type %s", k->name,
                       hlo_dtype_name(k->inputs[i].dtype));
    sb_printf(o, "  const %s *%s in%u = (const %s *)bufs[%u];\n", st,
              k->inputs[i].may_alias ? "" : d->restrict_kw, i, st, i);
  }
  for (uint32_t i = 0; i < k->num_outputs; i++) {
    const char *st = cstyle_storage_type(k->outputs[i].buf.dtype);
    if (!st)
      return status_at(HLO_UNIMPLEMENTED, &k->loc, "kernel %s: element type %s", k->name,
                       hlo_dtype_name(k->outputs[i].buf.dtype));
    sb_printf(o, "  %s *%s out%u = (%s *)bufs[%u];\n", st,
              k->outputs[i].buf.may_alias ? "" : d->restrict_kw, i, st, k->num_inputs + i);
  }
  int64_t row = 1;
  for (uint32_t dd = np; dd < k->rank; dd++) row *= k->dims[dd];
  for (uint32_t t = 0; t < k->num_temps; t++) {
    const char *ct = cstyle_compute_type(k->temps[t].dtype);
    if (!ct)
      return status_at(HLO_UNIMPLEMENTED, &k->loc, "kernel %s: element type %s", k->name,
                       hlo_dtype_name(k->temps[t].dtype));
    sb_printf(o, "  %s tmp%u[%lld];\n", ct, t, (long long)(row > 0 ? row : 1));
  }
  bool *vary = malloc((k->num_body ? k->num_body : 1) * sizeof *vary);
  if (!vary) return status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
  kernel_row_varying(k, vary);
  sb_printf(o, "  %s\n", d->tile_open);
  level++;
  put_indent(ind, sizeof ind, level);
  /* tile coordinates of the split thread dims, innermost fastest */
  int32_t first_split = -1;
  for (uint32_t dd = 0; dd < s->num_thread_dims; dd++)
    if (s->tile[dd] < k->dims[dd]) {
      first_split = (int32_t)dd;
      break;
    }
  if (first_split < 0) sb_printf(o, "%s(void)t;\n", ind);
  else sb_printf(o, "%sint64_t r = t;\n", ind);
  for (uint32_t dd = s->num_thread_dims; first_split >= 0 && dd-- > (uint32_t)first_split;) {
    if (s->tile[dd] >= k->dims[dd]) continue;
    long long nt = (long long)((k->dims[dd] + s->tile[dd] - 1) / s->tile[dd]);
    if ((int32_t)dd > first_split) sb_printf(o, "%sconst int64_t t%u = r %% %lld; r /= %lld;\n", ind, dd, nt, nt);
    else sb_printf(o, "%sconst int64_t t%u = r;\n", ind, dd);
  }
  /* loops over the tiles of split non-thread dims (cache blocking) */
  uint32_t opened = 0;
  for (uint32_t dd = s->num_thread_dims; dd < np; dd++) {
    if (s->tile[dd] >= k->dims[dd]) continue;
    sb_printf(o, "%sfor (int64_t t%u = 0; t%u < %lld; t%u++) {\n", ind, dd, dd,
              (long long)((k->dims[dd] + s->tile[dd] - 1) / s->tile[dd]), dd);
    put_indent(ind, sizeof ind, ++level);
    opened++;
  }
  /* the parallel element loops; inside, the stages over the row */
  for (uint32_t dd = 0; dd < np; dd++) {
    int64_t n = k->dims[dd], tile = s->tile[dd];
    if (tile >= n) {
      sb_printf(o, "%sfor (int64_t x%u = 0; x%u < %lld; x%u++) {\n", ind, dd, dd, (long long)n, dd);
    } else {
      if (n % tile == 0)
        sb_printf(o, "%sconst int64_t l%u = t%u * %lld, h%u = l%u + %lld;\n", ind, dd, dd,
                  (long long)tile, dd, dd, (long long)tile);
      else
        sb_printf(o, "%sconst int64_t l%u = t%u * %lld, h%u = l%u + %lld < %lld ? l%u + %lld : %lld;\n",
                  ind, dd, dd, (long long)tile, dd, dd, (long long)tile, (long long)n, dd,
                  (long long)tile, (long long)n);
      sb_printf(o, "%sfor (int64_t x%u = l%u; x%u < h%u; x%u++) {\n", ind, dd, dd, dd, dd, dd);
    }
    put_indent(ind, sizeof ind, ++level);
    opened++;
  }
  hlo_status err = NULL;
  for (uint32_t st = 0; st < k->num_stages && !err; st++) err = print_stage(d, k, o, st, vary, level);
  free(vary);
  HLO_TRY(err);
  while (opened--) {
    put_indent(ind, sizeof ind, --level);
    sb_printf(o, "%s}\n", ind);
  }
  sb_printf(o, "  %s\n}\n", d->tile_close);
  return NULL;
}
