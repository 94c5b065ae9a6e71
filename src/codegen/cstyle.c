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
 * acclS[0], and a tree over the lanes (one loop per level) makes `accS`;
 * a max or min fold first runs with plain compares and folds again with
 * the exact combiner only when it must (fast_minmax). When the folded value
 * is kept in a temporary, the points run first as a plain loop nest and
 * the lanes then fold the temporary (a mixed loop of masks, divides and
 * the fold vectorised poorly: 2x on llama's masked softmax). A MAP stage
 * stores per-row outputs before its loops and the others inside them.
 * A divide by a value that does not vary along the row goes through its
 * reciprocal in double where that is exact (is_row_div, "Divides by a row
 * value"): the stage's loops are printed twice, chosen per row.
 * With threads per row (kernel.h, row_threads: the CUDA dialect), a tile
 * is a row computed by a block (the dialect's block_tile_open): the
 * innermost row loop of every stage is strided over the threads (`x =
 * hlo_tid; x < n; x += T`), a REDUCE stage folds each thread's part and
 * combines the threads' accumulators as a tree (print_spread_reduce),
 * outputs stored once per row are stored by thread 0, the temporaries are
 * in the block's dynamic shared memory (cstyle_shared_bytes), and the
 * block meets at a barrier after each row.
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
  case KI_PARAM: /* a combiner's accumulator or element; a loop's carried value */
    if (k->loop.num_carried && l == k->body) sb_printf(o, "c%u", in->input);
    else sb_puts(o, in->input == 0 ? param0 : param1);
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
    if (in->dtype == HLO_BF16 && at == HLO_BF16 && d->bf16_ops[in->op]) {
      expand(o, d->bf16_ops[in->op], args, HLO_F32);
      break;
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
  /* a dynamic-update output: the clamped starts (cstyle_print_dus_starts) */
  int64_t stride = 1;
  for (uint32_t j = out->buf.rank; kernel_output_dus(out) && j-- > 0;) {
    if (out->dus_start[j]) sb_printf(o, " + o%us%u * %lld", oi, j, (long long)stride);
    stride *= out->buf.dims[j];
  }
  hlo_dtype dt = out->buf.dtype;
  const char *conv = dt == HLO_BF16 ? "hlo_f32_to_bf16" : dt == HLO_F16 ? "hlo_f32_to_f16"
                     : dt == HLO_I1 ? "(uint8_t)" : "";
  sb_printf(o, "] = %s(%s);\n", conv, val);
}

void cstyle_print_dus_starts(strbuf *o, const kernel *k, uint32_t oi) {
  const kernel_output *out = &k->outputs[oi];
  for (uint32_t j = 0; kernel_output_dus(out) && j < out->buf.rank; j++) {
    if (!out->dus_start[j]) continue;
    long long hi = (long long)(out->buf.dims[j] - k->dims[j]);
    sb_printf(o, "  int64_t o%us%u = (int64_t)in%u[0];\n", oi, j, out->dus_start[j] - 1);
    sb_printf(o, "  o%us%u = o%us%u < 0 ? 0 : o%us%u > %lld ? %lld : o%us%u;\n", oi, j, oi, j, oi,
              j, hi, hi, oi, j);
  }
}

/* The copy of a dynamic-update output's operand when the output is not its
 * buffer (kernel.h): tile t copies its share of the operand's rows (of its
 * last dim), leaving out the update box; printed at the top of the tile
 * scope, where `t` is the tile. */
static void print_dus_copy(strbuf *o, const kernel *k, uint32_t oi, const char *ind) {
  const kernel_output *out = &k->outputs[oi];
  if (!kernel_output_dus(out) || out->buf.rank < 1) return;
  uint32_t r = out->buf.rank, base = out->dus_operand - 1;
  const char *st = cstyle_storage_type(out->buf.dtype);
  long long W = (long long)out->buf.dims[r - 1], rows = 1;
  for (uint32_t j = 0; j + 1 < r; j++) rows *= (long long)out->buf.dims[j];
  long long T = (long long)kernel_num_tiles(k);
  char s0[32];
  sb_printf(o, "%sif ((const void *)out%u != (const void *)in%u) {\n", ind, oi, base);
  sb_printf(o, "%s  const %s *hlo_src = in%u;\n", ind, st, base);
  sb_printf(o, "%s  const int64_t hlo_r1 = %lldLL * (t + 1) / %lldLL;\n", ind, rows, T);
  sb_printf(o, "%s  for (int64_t hlo_r = %lldLL * t / %lldLL; hlo_r < hlo_r1; hlo_r++) {\n", ind,
            rows, T);
  sb_printf(o, "%s    int64_t hlo_q = hlo_r;\n%s    int hlo_in = 1;\n", ind, ind);
  for (uint32_t j = r - 1; j-- > 0;) {
    if (out->dus_start[j]) snprintf(s0, sizeof s0, "o%us%u", oi, j);
    else snprintf(s0, sizeof s0, "0");
    long long D = (long long)out->buf.dims[j];
    sb_printf(o, "%s    { const int64_t c = hlo_q %% %lldLL; hlo_q /= %lldLL; "
                 "hlo_in &= c >= %s && c < %s + %lldLL; }\n",
              ind, D, D, s0, s0, (long long)k->dims[j]);
  }
  if (out->dus_start[r - 1]) snprintf(s0, sizeof s0, "o%us%u", oi, r - 1);
  else snprintf(s0, sizeof s0, "0");
  sb_printf(o, "%s    const int64_t hlo_lo = hlo_in ? %s : %lldLL, hlo_hi = hlo_in ? %s + %lldLL "
               ": %lldLL;\n",
            ind, s0, W, s0, (long long)k->dims[r - 1], W);
  sb_printf(o, "%s    for (int64_t e = 0; e < hlo_lo; e++) out%u[hlo_r * %lldLL + e] = "
               "hlo_src[hlo_r * %lldLL + e];\n", ind, oi, W, W);
  sb_printf(o, "%s    for (int64_t e = hlo_hi; e < %lldLL; e++) out%u[hlo_r * %lldLL + e] = "
               "hlo_src[hlo_r * %lldLL + e];\n", ind, W, oi, W, W);
  sb_printf(o, "%s  }\n%s}\n", ind, ind);
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

/* Divides by a row value (the dialect's rcp_div). A divide a / b whose
 * divisor does not vary along the row (softmax's normalisation by the
 * row sum, attention's 1/sqrt(d) scale emitted as a divide by a constant)
 * costs a divide instruction per element, the slowest vector instruction
 * there is (vdivps: about 10 cycles per 16 floats on this Xeon, a sixth
 * of a softmax row kernel). With y = 1 / b computed once per row in
 * double, a / b is computed as (float)((double)a * y): one rounding to
 * double of the reciprocal and one of the product leave a relative error
 * below 2^-52 + 2^-106, and a quotient of two floats is never that close
 * to a midpoint between two floats but when it is one:
 *   - result normal (|a/b| >= 2^-126): a - b m, for a midpoint m =
 *     (2M+1) 2^(e-24) of the binade [2^e, 2^(e+1)) of a/b, is a multiple
 *     of 2^(e+eb-24) (b = B 2^eb, B < 2^24 an integer) and not 0 (a = b m
 *     would make a's odd part B_odd (2M+1) >= 2^24 + 1: 25 bits), so
 *     |a/b - m| / |a/b| > 2^(e+eb-24) / 2^(e+eb+25) = 2^-49;
 *   - result subnormal: a - b m (m an odd multiple of 2^-150) is a
 *     multiple of 2^(eb-150) when eb <= 0, i.e. |b| < 2^24; when not 0,
 *     |a/b - m| > 2^(eb-150) / 2^(eb+24) = 2^-174 while the error is
 *     below 2^-52 2^-126 = 2^-178; it is 0 (a/b IS a midpoint, a tie
 *     that must go to even) only when b's odd part times an odd number
 *     is a float's multiple of 2^-149, i.e. when b is an even integer:
 *     then only a power of two is allowed (y and the product are exact);
 * so rounding the double to float gives the IEEE quotient, correctly
 * rounded, for every a (zeros, subnormals, infinities and NaN follow as
 * a / b does) when b is normal, |b| < 2^24 and b is not an even integer
 * other than a power of two: the preamble's hlo_rcp_ok(b), checked once
 * per row; a row whose divisor fails runs the divide itself (the same
 * loops printed twice). Checked by bench/div_rcp_check.c on 2^23
 * dividends in each of 9 binades (subnormal ones too) times 48 divisors:
 * no difference; b = 98 (refused) does differ on subnormal ties.
 * (An f32 FMA sequence, a correction step then Markstein's final step,
 * is 4% faster but needs |a| >= 2^-100: the softmax of llama_block has
 * exp values below that in 99.5% of its rows, bench/ATTENTION.md.)
 *
 * Whether body instruction i is such a divide (f32 computation). */
static bool is_row_div(const cstyle_dialect *d, const kernel *k, const bool *vary, uint32_t i) {
  const kinst *in = &k->body[i];
  if (!d->rcp_div || !k->num_reduce_dims || in->kind != KI_OP || in->op != OP_DIVIDE ||
      in->num_args != 2 || !vary[i] || vary[in->args[1]])
    return false;
  return kernel_compute_dtype(in->dtype) == HLO_F32 &&
         kernel_compute_dtype(k->body[in->args[0]].dtype) == HLO_F32 &&
         kernel_compute_dtype(k->body[in->args[1]].dtype) == HLO_F32;
}

/* Marks in fast[0..num_body) the row divides of stage s (is_row_div)
 * but those whose value reaches a select's chosen operand within the
 * stage (llama's scale before its causal mask): gcc sinks the conversions
 * into the select's branch and then does not vectorise the loop ("control
 * flow in loop"), and if-converted by hand the loop was still 5% slower
 * than with the divide (bench/ATTENTION.md). Returns how many it marks. */
static uint32_t find_row_divs(const cstyle_dialect *d, const kernel *k, uint32_t s,
                              const bool *vary, bool *fast) {
  const kernel_stage *st = &k->stages[s];
  /* fast[] first holds "reaches a select" (propagated backwards) */
  memset(fast, 0, k->num_body * sizeof *fast);
  for (uint32_t j = st->body_end; j-- > st->body_begin;) {
    const kinst *q = &k->body[j];
    if (q->kind != KI_OP) continue;
    for (uint32_t a = 0; a < q->num_args; a++)
      if (fast[j] || (q->op == OP_SELECT && a > 0)) fast[q->args[a]] = true;
  }
  uint32_t n = 0;
  for (uint32_t i = 0; i < k->num_body; i++) {
    fast[i] = !fast[i] && i >= st->body_begin && i < st->body_end && is_row_div(d, k, vary, i);
    n += fast[i];
  }
  return n;
}

/* Prints row divide i (is_row_div) through its reciprocal hlo_rcpI. */
static void print_fast_div(const cstyle_dialect *d, const kernel *k, strbuf *o, uint32_t i,
                           const char *ind) {
  const kinst *in = &k->body[i];
  char a[24], b[24], y[24];
  snprintf(a, sizeof a, "v%u", in->args[0]);
  snprintf(b, sizeof b, "v%u", in->args[1]);
  snprintf(y, sizeof y, "hlo_rcp%u", i);
  const char *args[3] = {a, b, y};
  sb_printf(o, "%sconst float v%u = ", ind, i);
  const char *rnd = in->dtype == HLO_BF16 ? "hlo_round_bf16" : in->dtype == HLO_F16 ? "hlo_round_f16" : "";
  sb_printf(o, "%s(", rnd);
  expand(o, d->rcp_div, args, HLO_F32);
  sb_puts(o, ");\n");
}

/* Stage s's instructions that vary along the row, the temporaries it
 * writes, and (REDUCE) the combiner folding its value into `acc` (a C
 * lvalue, NULL for a MAP stage), then (MAP) the outputs it stores along
 * the row. */
static hlo_status print_point(const cstyle_dialect *d, const kernel *k, strbuf *o, uint32_t s,
                              const bool *vary, const char *acc, const char *ind,
                              const bool *fast) {
  const kernel_stage *st = &k->stages[s];
  for (uint32_t i = st->body_begin; i < st->body_end; i++) {
    if (!vary[i]) continue;
    if (fast && fast[i]) print_fast_div(d, k, o, i, ind);
    else HLO_TRY(print_inst(d, k, o, k->body, i, "v", "", "", ind));
  }
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

/* Whether k's rows are spread over the threads of a block (kernel.h,
 * row_threads). */
static bool row_spread(const kernel *k) { return k->sched.row_threads > 1; }

/* Opens the loops over the row dims [np, last) at level *level. With
 * `spread` (row_spread; last is k->rank), the row's points are shared by
 * the block's threads: thread i takes i, i + T, ... of the innermost row
 * dim, or with several row dims, of the row's row-major linear positions
 * (one loop `xr`, the coordinates computed from it). */
static void open_row_loops_of(const kernel *k, strbuf *o, uint32_t last, uint32_t *level,
                              char *ind, size_t cap, bool spread) {
  uint32_t np = k->rank - k->num_reduce_dims;
  if (spread && k->num_reduce_dims > 1) {
    long long n = 1;
    for (uint32_t dd = np; dd < k->rank; dd++) n *= (long long)k->dims[dd];
    sb_printf(o, "%sfor (int64_t xr = hlo_tid; xr < %lld; xr += %u) {\n", ind, n,
              k->sched.row_threads);
    put_indent(ind, cap, ++*level);
    long long stride = n;
    for (uint32_t dd = np; dd < k->rank; dd++) {
      stride /= (long long)(k->dims[dd] > 0 ? k->dims[dd] : 1);
      sb_printf(o, "%sconst int64_t x%u = xr", ind, dd);
      if (stride > 1) sb_printf(o, " / %lld", stride);
      if (dd > np) sb_printf(o, " %% %lld", (long long)k->dims[dd]);
      sb_puts(o, ";\n");
    }
    return;
  }
  for (uint32_t dd = np; dd < last; dd++) {
    if (spread && dd == k->rank - 1)
      sb_printf(o, "%sfor (int64_t x%u = hlo_tid; x%u < %lld; x%u += %u) {\n", ind, dd, dd,
                (long long)k->dims[dd], dd, k->sched.row_threads);
    else
      sb_printf(o, "%sfor (int64_t x%u = 0; x%u < %lld; x%u++) {\n", ind, dd, dd,
                (long long)k->dims[dd], dd);
    put_indent(ind, cap, ++*level);
  }
}

static void open_row_loops(const kernel *k, strbuf *o, uint32_t last, uint32_t *level, char *ind,
                           size_t cap) {
  open_row_loops_of(k, o, last, level, ind, cap, false);
}

static void close_row_loops_of(const kernel *k, strbuf *o, uint32_t last, uint32_t *level,
                               char *ind, size_t cap, bool spread) {
  if (spread && k->num_reduce_dims > 1) {
    put_indent(ind, cap, --*level);
    sb_printf(o, "%s}\n", ind);
    return;
  }
  for (uint32_t dd = k->rank - k->num_reduce_dims; dd < last; dd++) {
    put_indent(ind, cap, --*level);
    sb_printf(o, "%s}\n", ind);
  }
}

static void close_row_loops(const kernel *k, strbuf *o, uint32_t last, uint32_t *level, char *ind,
                            size_t cap) {
  close_row_loops_of(k, o, last, level, ind, cap, false);
}

/* The row loops of stage s at every point of the row (a MAP stage, or a
 * REDUCE stage's points loop writing its temporaries), with the outputs
 * the stage stores along the row when `stores`. With row divides
 * (find_row_divs), printed twice: through the reciprocals when every
 * divisor passes hlo_rcp_ok, else with the divides themselves. */
static hlo_status print_points(const cstyle_dialect *d, const kernel *k, strbuf *o, uint32_t s,
                               const bool *vary, uint32_t level, bool stores) {
  char ind[64];
  put_indent(ind, sizeof ind, level);
  bool *fast = malloc((k->num_body ? k->num_body : 1) * sizeof *fast);
  if (!fast) return status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
  uint32_t nfast = find_row_divs(d, k, s, vary, fast);
  if (nfast) {
    sb_printf(o, "%sif (", ind);
    const char *sep = "";
    for (uint32_t i = 0; i < k->num_body; i++) {
      if (!fast[i]) continue;
      sb_printf(o, "%shlo_rcp_ok(v%u)", sep, k->body[i].args[1]);
      sep = " && ";
    }
    sb_puts(o, ") {\n");
    put_indent(ind, sizeof ind, ++level);
    for (uint32_t i = 0; i < k->num_body; i++) {
      if (!fast[i]) continue;
      char b[24], y[24];
      snprintf(b, sizeof b, "v%u", k->body[i].args[1]);
      snprintf(y, sizeof y, "hlo_rcp%u", i);
      const char *args[3] = {y, b, ""};
      sb_puts(o, ind);
      expand(o, d->rcp_decl, args, HLO_F32);
      sb_puts(o, "\n");
    }
  }
  hlo_status err = NULL;
  for (int pass = nfast ? 0 : 1; pass < 2 && !err; pass++) {
    if (pass == 1 && nfast) {
      put_indent(ind, sizeof ind, --level);
      sb_printf(o, "%s} else {\n", ind);
      put_indent(ind, sizeof ind, ++level);
    }
    open_row_loops_of(k, o, k->rank, &level, ind, sizeof ind, row_spread(k));
    err = print_point(d, k, o, s, vary, NULL, ind, pass == 0 ? fast : NULL);
    for (uint32_t oi = 0; stores && !err && oi < k->num_outputs; oi++) {
      const kernel_output *out = &k->outputs[oi];
      if (out->stage != s || (output_per_row(k, out) && !vary[out->value])) continue;
      char v[24];
      snprintf(v, sizeof v, "v%u", out->value);
      store(o, k, oi, v, ind);
    }
    close_row_loops_of(k, o, k->rank, &level, ind, sizeof ind, row_spread(k));
  }
  if (nfast) {
    put_indent(ind, sizeof ind, --level);
    sb_printf(o, "%s}\n", ind);
  }
  free(fast);
  return err;
}

/* Max and min folds (softmax's row max): hlo_maxf and hlo_minf keep
 * IEEE's NaN and signed-zero rules with compares and selects that cost
 * four times a plain one (15% of llama's softmax row kernel). A REDUCE
 * stage with lanes whose combiner is one maximum (minimum) of its two
 * parameters in floating point first folds with (e > a ? e : a) (e < a),
 * noting any NaN element: without NaN each step keeps the same VALUE as
 * the exact combiner, so every lane and the tree hold the exact values,
 * which differ from the exact bits only where a value is a zero (+0 and
 * -0 compare equal); the row's result, when it is neither 0 nor NaN, is
 * then the exact one bit for bit. A row with a NaN element or a 0 or NaN
 * result folds again with the exact combiner. Returns OP_MAXIMUM or
 * OP_MINIMUM for such a stage, else OP_COUNT. */
static hlo_opcode fast_minmax(const kernel *k, uint32_t s) {
  const kernel_stage *st = &k->stages[s];
  if (st->kind != KSTAGE_REDUCE || k->sched.reduce_lanes[s] <= 1 ||
      !dtype_is_float(st->acc_dtype) || st->comb_end - st->comb_begin != 3)
    return OP_COUNT;
  const kinst *q = &k->comb[st->comb_result];
  if (q->kind != KI_OP || (q->op != OP_MAXIMUM && q->op != OP_MINIMUM) || q->num_args != 2)
    return OP_COUNT;
  const kinst *p0 = &k->comb[q->args[0]], *p1 = &k->comb[q->args[1]];
  if (p0->kind != KI_PARAM || p1->kind != KI_PARAM || p0->input == p1->input) return OP_COUNT;
  return q->op;
}

/* Prints stage s's combiner folding a1 into a0 (lvalue) and the
 * assignment a0 = result; fast: the plain compare of fast_minmax, and
 * with `nan` the NaN check of the element a1. */
static hlo_status print_comb(const cstyle_dialect *d, const kernel *k, strbuf *o, uint32_t s,
                             const char *a0, const char *a1, const char *ind, bool fast,
                             bool nan) {
  const kernel_stage *st = &k->stages[s];
  for (uint32_t i = st->comb_begin; i < st->comb_end; i++) {
    const kinst *q = &k->comb[i];
    if (!fast || i != st->comb_result) {
      HLO_TRY(print_inst(d, k, o, k->comb, i, "c", a0, a1, ind));
      continue;
    }
    sb_printf(o, "%sconst %s c%u = (c%u %s c%u ? c%u : c%u);\n", ind,
              cstyle_compute_type(q->dtype), i, q->args[1], q->op == OP_MAXIMUM ? ">" : "<",
              q->args[0], q->args[1], q->args[0]);
  }
  sb_printf(o, "%s%s = c%u;\n", ind, a0, st->comb_result);
  if (fast && nan) sb_printf(o, "%shlo_nan%u |= %s != %s;\n", ind, s, a1, a1);
  return NULL;
}

/* Prints a loop nest at `level` over every element of REDUCE stage s's
 * row in row-major order — over its temporary vt (>= 0), else over the row
 * dims with the stage's body at each point (print_point) — running the
 * one-line statement `stmt` on each, which names the element as
 * refold_element does. */
static hlo_status print_row_visit(const cstyle_dialect *d, const kernel *k, strbuf *o,
                                  uint32_t s, const bool *vary, uint32_t level, int32_t vt,
                                  const char *stmt) {
  char ind[64];
  put_indent(ind, sizeof ind, level);
  if (vt >= 0) {
    long long n = 1;
    for (uint32_t dd = k->rank - k->num_reduce_dims; dd < k->rank; dd++)
      n *= (long long)k->dims[dd];
    sb_printf(o, "%sfor (int64_t xr = 0; xr < %lld; xr++) %s\n", ind, n, stmt);
    return NULL;
  }
  open_row_loops(k, o, k->rank, &level, ind, sizeof ind);
  HLO_TRY(print_point(d, k, o, s, vary, NULL, ind, NULL));
  sb_printf(o, "%s%s\n", ind, stmt);
  close_row_loops(k, o, k->rank, &level, ind, sizeof ind);
  return NULL;
}

/* The name of the current element of stage s's row inside print_row_visit:
 * its temporary's `tmpT[xr]`, else the stage's value `vN`. */
static void refold_element(const kernel *k, uint32_t s, int32_t vt, char *out, size_t cap) {
  if (vt >= 0) snprintf(out, cap, "tmp%d[xr]", vt);
  else snprintf(out, cap, "v%u", k->stages[s].value);
}

/* The exact fold of fast_minmax stage s (mm: OP_MAXIMUM or OP_MINIMUM)
 * into accl<s>[0], for a row whose fast fold met a NaN element or made a
 * 0 or NaN value. Not the lanes and their tree again with the exact
 * combiner (8 more loops: a third of gcc's time on a softmax row kernel,
 * bench/COMPILE.md), but one plain loop over the row, the same result:
 *   - no NaN element and a zero result: every element and the init are
 *     <= 0 (max; >= 0 for min), so the exact result is the zero whose sign
 *     bit is the AND (max; OR for min) of their sign bits (IEEE: +0 > -0,
 *     order-free): a fold of the bits, which vectorises;
 *   - else a NaN is among the init and the elements, and the exact
 *     combiner (hlo_max, hlo_min: their first NaN operand, else their
 *     second's) folded from the init over the elements in row-major order
 *     gives a NaN: with the accumulator its first operand, the init when
 *     it is a NaN, else the first NaN element; with the element first, the
 *     last NaN element, else the init. The loop finds that element. The
 *     spec leaves the fold's order to the implementation: the lanes' tree
 *     (the fast fold's, and this fold's before) may pick another of a
 *     row's NaNs, as may the interpreter's pairwise tree (payloads are
 *     never compared).
 * vt: the temporary holding the folded values, or -1 (the stage's body
 * computed again at each point, as print_lanes_fold does). */
static hlo_status print_exact_refold(const cstyle_dialect *d, const kernel *k, strbuf *o,
                                     uint32_t s, const bool *vary, uint32_t level, int32_t vt,
                                     hlo_opcode mm) {
  const kernel_stage *st = &k->stages[s];
  const char *at = cstyle_compute_type(st->acc_dtype);
  bool dbl = !strcmp(at, "double");
  const kinst *q = &k->comb[st->comb_result];
  bool acc_first = k->comb[q->args[0]].input == 0; /* fast_minmax: two distinct params */
  bool init_nan = st->init.f != st->init.f; /* then the fast fold is a NaN: no zero case */
  char ind[64], ind2[80], e[48], stmt[256];
  put_indent(ind, sizeof ind, level);
  put_indent(ind2, sizeof ind2, level + 1);
  refold_element(k, s, vt, e, sizeof e);
  if (!init_nan) { /* no NaN, a zero: the AND (OR) of the sign bits */
    const char *bt = dbl ? "uint64_t" : "uint32_t", *bits = dbl ? "hlo_dbits" : "hlo_fbits";
    sb_printf(o, "%sif (!hlo_nan%u && accl%u[0] == 0) {\n%s%s hlo_z%u = %s((%s)", ind, s, s, ind2,
              bt, s, bits, at);
    print_const(d, o, st->acc_dtype, st->init.i, st->init.f);
    sb_puts(o, ");\n");
    snprintf(stmt, sizeof stmt, "hlo_z%u %s= %s((%s)%s);", s, mm == OP_MAXIMUM ? "&" : "|", bits,
             at, e);
    HLO_TRY(print_row_visit(d, k, o, s, vary, level + 1, vt, stmt));
    sb_printf(o, "%saccl%u[0] = hlo_z%u >> %d ? -0.0%s : 0.0%s;\n%s} else {\n", ind2, s, s,
              dbl ? 63 : 31, dbl ? "" : "f", dbl ? "" : "f", ind);
  } else {
    sb_printf(o, "%s{\n", ind);
  }
  /* a NaN: the one the exact fold from init keeps */
  sb_printf(o, "%s%s hlo_x%u = ", ind2, at, s);
  print_const(d, o, st->acc_dtype, st->init.i, st->init.f);
  sb_puts(o, ";\n");
  if (acc_first && !init_nan) {
    snprintf(stmt, sizeof stmt, "if (%s != %s) { hlo_x%u = (%s)%s; goto hlo_found%u; }", e, e, s,
             at, e, s);
    HLO_TRY(print_row_visit(d, k, o, s, vary, level + 1, vt, stmt));
    sb_printf(o, "%shlo_found%u:\n", ind2, s);
  } else if (!acc_first) {
    snprintf(stmt, sizeof stmt, "if (%s != %s) hlo_x%u = (%s)%s;", e, e, s, at, e);
    HLO_TRY(print_row_visit(d, k, o, s, vary, level + 1, vt, stmt));
  }
  sb_printf(o, "%saccl%u[0] = hlo_x%u;\n%s}\n", ind2, s, s, ind);
  return NULL;
}

/* REDUCE stage s with `lanes` lanes (kernel.h): lane xl folds the elements
 * xb + xl of the innermost row dim, the tail (past the last multiple of L)
 * goes to lane 0; from temporary vt (>= 0) or from the stage's body at
 * each point; then the lanes combined as a tree, one loop per level with
 * a constant width: gcc vectorises the wide levels (a loop over a
 * variable width ran as scalar code with branches: 10% of llama's
 * 256-long softmax rows, bench/ATTENTION.md); same tree, same order.
 * fast: fast_minmax's plain compares. */
static hlo_status print_lanes_fold(const cstyle_dialect *d, const kernel *k, strbuf *o,
                                   uint32_t s, const bool *vary, uint32_t level, uint32_t lanes,
                                   int32_t vt, bool fast) {
  char ind[64], ind2[80], ind3[96], a0[32], a1[48];
  put_indent(ind, sizeof ind, level);
  uint32_t r = k->rank - 1;
  if (vt >= 0) {
    long long n = 1;
    for (uint32_t dd = k->rank - k->num_reduce_dims; dd < k->rank; dd++) n *= (long long)k->dims[dd];
    long long nm = n - n % (long long)lanes;
    snprintf(ind2, sizeof ind2, "%s  ", ind);
    snprintf(ind3, sizeof ind3, "%s    ", ind);
    sb_printf(o, "%sfor (int64_t xb = 0; xb < %lld; xb += %u) {\n", ind, nm, lanes);
    sb_printf(o, "%sfor (int64_t xl = 0; xl < %u; xl++) {\n", ind2, lanes);
    snprintf(a0, sizeof a0, "accl%u[xl]", s);
    snprintf(a1, sizeof a1, "tmp%d[xb + xl]", vt);
    HLO_TRY(print_comb(d, k, o, s, a0, a1, ind3, fast, true));
    sb_printf(o, "%s}\n%s}\n", ind2, ind);
    if (nm < n) {
      sb_printf(o, "%sfor (int64_t xr = %lld; xr < %lld; xr++) {\n", ind, nm, n);
      snprintf(a0, sizeof a0, "accl%u[0]", s);
      snprintf(a1, sizeof a1, "tmp%d[xr]", vt);
      HLO_TRY(print_comb(d, k, o, s, a0, a1, ind2, fast, true));
      sb_printf(o, "%s}\n", ind);
    }
  } else {
    open_row_loops(k, o, r, &level, ind, sizeof ind);
    long long n = (long long)k->dims[r], nm = n - n % (long long)lanes;
    put_indent(ind2, sizeof ind2, level + 1);
    put_indent(ind3, sizeof ind3, level + 2);
    char v[24];
    snprintf(v, sizeof v, "v%u", k->stages[s].value);
    sb_printf(o, "%sfor (int64_t xb = 0; xb < %lld; xb += %u) {\n", ind, nm, lanes);
    sb_printf(o, "%sfor (int64_t xl = 0; xl < %u; xl++) {\n", ind2, lanes);
    sb_printf(o, "%sconst int64_t x%u = xb + xl;\n", ind3, r);
    snprintf(a0, sizeof a0, "accl%u[xl]", s);
    HLO_TRY(print_point(d, k, o, s, vary, NULL, ind3, NULL));
    HLO_TRY(print_comb(d, k, o, s, a0, v, ind3, fast, true));
    sb_printf(o, "%s}\n%s}\n", ind2, ind);
    if (nm < n) {
      sb_printf(o, "%sfor (int64_t x%u = %lld; x%u < %lld; x%u++) {\n", ind, r, nm, r, n, r);
      snprintf(a0, sizeof a0, "accl%u[0]", s);
      HLO_TRY(print_point(d, k, o, s, vary, NULL, ind2, NULL));
      HLO_TRY(print_comb(d, k, o, s, a0, v, ind2, fast, true));
      sb_printf(o, "%s}\n", ind);
    }
    close_row_loops(k, o, r, &level, ind, sizeof ind);
  }
  snprintf(a0, sizeof a0, "accl%u[xl]", s);
  for (uint32_t w = lanes / 2; w >= 1; w /= 2) {
    sb_printf(o, "%sfor (int64_t xl = 0; xl < %u; xl++) {\n", ind, w);
    snprintf(ind2, sizeof ind2, "%s  ", ind);
    snprintf(a1, sizeof a1, "accl%u[xl + %u]", s, w);
    HLO_TRY(print_comb(d, k, o, s, a0, a1, ind2, fast, false));
    sb_printf(o, "%s}\n", ind);
  }
  return NULL;
}

/* REDUCE stage s of a kernel whose rows are spread over a block's threads
 * (kernel.h, row_threads; `accS` is declared, from the init value). With a
 * combiner identity, each thread folds its elements (thread i: i, i + T,
 * ... of the innermost row dim) into its accumulator, thread 0 from the
 * init value and the others from the identity; the T accumulators are then
 * combined by a butterfly over each warp's lanes (shfl_xor: lane l with
 * lane l ^ w, w = 16, ..., 1), warp w's result to hlo_redS[w], and the
 * same butterfly over those in warp 0. Without an identity, thread 0
 * folds the whole row in order. Either way thread 0's accumulator is then
 * passed to every thread through hlo_redS[0]. */
static hlo_status print_spread_reduce(const cstyle_dialect *d, const kernel *k, strbuf *o,
                                      uint32_t s, const bool *vary, uint32_t level) {
  const kernel_stage *st = &k->stages[s];
  uint32_t T = k->sched.row_threads;
  char ind[64], ind2[80], ind3[96], acc[32];
  put_indent(ind, sizeof ind, level);
  snprintf(ind2, sizeof ind2, "%s  ", ind);
  snprintf(ind3, sizeof ind3, "%s    ", ind);
  snprintf(acc, sizeof acc, "acc%u", s);
  const char *at = cstyle_compute_type(st->acc_dtype);
  int64_t id_i;
  double id_f;
  bool has_id = kernel_stage_identity(k, s, &id_i, &id_f);
  if (has_id) {
    /* threads but 0 start from the identity (when the init value is not) */
    bool same = dtype_is_float(st->acc_dtype)
                    ? memcmp(&st->init.f, &id_f, sizeof id_f) == 0
                    : st->init.i == id_i;
    if (!same) {
      sb_printf(o, "%sif (hlo_tid != 0) acc%u = ", ind, s);
      print_const(d, o, st->acc_dtype, id_i, id_f);
      sb_puts(o, ";\n");
    }
    uint32_t lv = level;
    char lind[64];
    memcpy(lind, ind, sizeof lind);
    open_row_loops_of(k, o, k->rank, &lv, lind, sizeof lind, true);
    HLO_TRY(print_point(d, k, o, s, vary, acc, lind, NULL));
    close_row_loops_of(k, o, k->rank, &lv, lind, sizeof lind, true);
    /* the butterfly over a warp's lanes, then over the warps' results */
    sb_printf(o, "%sfor (int hlo_w = 16; hlo_w >= 1; hlo_w >>= 1) {\n", ind);
    sb_printf(o, "%sconst %s hlo_o = %s(acc%u, hlo_w);\n", ind2, at, d->shfl_xor, s);
    HLO_TRY(print_comb(d, k, o, s, acc, "hlo_o", ind2, false, false));
    sb_printf(o, "%s}\n", ind);
    if (T > 32) {
      sb_printf(o, "%sif ((hlo_tid & 31) == 0) hlo_red%u[hlo_tid >> 5] = acc%u;\n", ind, s, s);
      sb_printf(o, "%s%s\n", ind, d->barrier);
      sb_printf(o, "%sif (hlo_tid < 32) {\n", ind);
      sb_printf(o, "%sacc%u = hlo_tid < %u ? hlo_red%u[hlo_tid] : ", ind2, s, T / 32, s);
      print_const(d, o, st->acc_dtype, id_i, id_f);
      sb_puts(o, ";\n");
      sb_printf(o, "%sfor (int hlo_w = %u; hlo_w >= 1; hlo_w >>= 1) {\n", ind2, T / 64);
      sb_printf(o, "%sconst %s hlo_o = %s(acc%u, hlo_w);\n", ind3, at, d->shfl_xor, s);
      HLO_TRY(print_comb(d, k, o, s, acc, "hlo_o", ind3, false, false));
      /* lane 0 alone reads and writes hlo_redS[0] in this step */
      sb_printf(o, "%s}\n%s}\n", ind2, ind);
    }
  } else {
    uint32_t lv = level + 1;
    char lind[64];
    put_indent(lind, sizeof lind, lv);
    sb_printf(o, "%sif (hlo_tid == 0) {\n", ind);
    open_row_loops(k, o, k->rank, &lv, lind, sizeof lind);
    HLO_TRY(print_point(d, k, o, s, vary, acc, lind, NULL));
    close_row_loops(k, o, k->rank, &lv, lind, sizeof lind);
    sb_printf(o, "%s}\n", ind);
  }
  sb_printf(o, "%sif (hlo_tid == 0) hlo_red%u[0] = acc%u;\n", ind, s, s);
  sb_printf(o, "%s%s\n", ind, d->barrier);
  /* hlo_redS is this stage's: written again after the row's last barrier */
  sb_printf(o, "%sacc%u = hlo_red%u[0];\n", ind, s, s);
  return NULL;
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
      if (row_spread(k)) sb_printf(o, "%sif (hlo_tid == 0)\n  ", ind);
      store(o, k, oi, v, ind);
    }
    if (!loop) return NULL;
    return print_points(d, k, o, s, vary, level, true);
  }
  /* REDUCE: with lanes, print_lanes_fold; else one accumulator in order */
  uint32_t lanes = k->sched.reduce_lanes[s] > 1 ? k->sched.reduce_lanes[s] : 0;
  HLO_TRY(open_accumulator(d, k, o, s, lanes, ind));
  char acc[32];
  int32_t vt = -1; /* the temporary holding the folded value, if any */
  for (uint32_t t = 0; t < k->num_temps; t++)
    if (k->temps[t].stage == s && k->temps[t].value == st->value) vt = (int32_t)t;
  if (lanes) {
    /* the folded value kept in a temporary: the points in one plain loop
     * nest (which vectorises like an elementwise kernel), then the lanes
     * fold the temporary (2x on a masked softmax's first stage,
     * bench/KERNELS.md) */
    if (vt >= 0) HLO_TRY(print_points(d, k, o, s, vary, level, false));
    hlo_opcode mm = fast_minmax(k, s);
    if (mm != OP_COUNT) {
      sb_printf(o, "%suint32_t hlo_nan%u = 0;\n", ind, s);
      HLO_TRY(print_lanes_fold(d, k, o, s, vary, level, lanes, vt, true));
      sb_printf(o, "%sif (hlo_nan%u || accl%u[0] == 0 || accl%u[0] != accl%u[0]) {\n", ind, s, s,
                s, s);
      HLO_TRY(print_exact_refold(d, k, o, s, vary, level + 1, vt, mm));
      sb_printf(o, "%s}\n", ind);
    } else {
      HLO_TRY(print_lanes_fold(d, k, o, s, vary, level, lanes, vt, false));
    }
    sb_printf(o, "%sconst %s acc%u = accl%u[0];\n", ind, cstyle_compute_type(st->acc_dtype), s, s);
  } else if (row_spread(k)) {
    HLO_TRY(print_spread_reduce(d, k, o, s, vary, level));
  } else {
    open_row_loops(k, o, k->rank, &level, ind, sizeof ind);
    snprintf(acc, sizeof acc, "acc%u", s);
    HLO_TRY(print_point(d, k, o, s, vary, acc, ind, NULL));
    close_row_loops(k, o, k->rank, &level, ind, sizeof ind);
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

/* A LOOP kernel's body (kernel.h, Loops), at one point: the instructions
 * before the loop, the carried values c0.. as variables, the loop (the
 * condition, a break when false, the body, the next values), then the
 * stores. The carried values are assigned after every next value is
 * computed (those are constants of the iteration), so one may take
 * another's old value. */
static hlo_status print_loop(const cstyle_dialect *d, const kernel *k, strbuf *o,
                             uint32_t level) {
  const kernel_loop *l = &k->loop;
  char ind[64], ind2[64];
  put_indent(ind, sizeof ind, level);
  put_indent(ind2, sizeof ind2, level + 1);
  for (uint32_t i = 0; i < l->begin; i++) HLO_TRY(print_inst(d, k, o, k->body, i, "v", "", "", ind));
  for (uint32_t c = 0; c < l->num_carried; c++)
    sb_printf(o, "%s%s c%u = v%u;\n", ind, cstyle_compute_type(k->body[l->param[c]].dtype), c,
              l->init[c]);
  sb_printf(o, "%sfor (;;) {\n", ind);
  for (uint32_t i = l->begin; i < l->cond_end; i++)
    HLO_TRY(print_inst(d, k, o, k->body, i, "v", "", "", ind2));
  sb_printf(o, "%sif (!v%u) break;\n", ind2, l->cond);
  for (uint32_t i = l->cond_end; i < k->num_body; i++)
    HLO_TRY(print_inst(d, k, o, k->body, i, "v", "", "", ind2));
  for (uint32_t c = 0; c < l->num_carried; c++) sb_printf(o, "%sc%u = v%u;\n", ind2, c, l->next[c]);
  sb_printf(o, "%s}\n", ind);
  for (uint32_t oi = 0; oi < k->num_outputs; oi++) {
    uint32_t v = k->outputs[oi].value;
    char val[24];
    if (v >= l->begin) snprintf(val, sizeof val, "c%u", k->body[v].input);
    else snprintf(val, sizeof val, "v%u", v);
    store(o, k, oi, val, ind);
  }
  return NULL;
}

/* Where temporary t starts in the block's dynamic shared memory. */
static uint64_t temp_offset(const kernel *k, uint32_t t) {
  int64_t row = 1;
  for (uint32_t dd = k->rank - k->num_reduce_dims; dd < k->rank; dd++) row *= k->dims[dd];
  if (row < 1) row = 1;
  uint64_t off = 0;
  for (uint32_t i = 0; i < t && i < k->num_temps; i++) {
    int bits = dtype_bits(kernel_compute_dtype(k->temps[i].dtype));
    uint64_t bytes = (uint64_t)row * (uint64_t)(bits >= 8 ? bits / 8 : 1);
    off += (bytes + 15) & ~(uint64_t)15;
  }
  return off;
}

uint64_t cstyle_shared_bytes(const kernel *k) {
  if (!row_spread(k) || !k->num_temps) return 0;
  return temp_offset(k, k->num_temps);
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
  if (k->loop.num_carried) sb_printf(o, ", a while loop of %u carried values", k->loop.num_carried);
  uint32_t maxl = 0;
  for (uint32_t st = 0; st < k->num_stages; st++)
    if (s->reduce_lanes[st] > maxl) maxl = s->reduce_lanes[st];
  if (k->num_reduce_dims && maxl > 1) sb_printf(o, ", %u reduction lanes", maxl);
  bool spread = row_spread(k);
  if (spread) {
    if (!d->block_tile_open || !d->thread_index || !d->barrier || !d->shared_kw ||
        !d->dyn_shared_decl || !d->shfl_xor)
      return status_new(HLO_INTERNAL, "kernel %s: threads per row in dialect %s", k->name, d->name);
    sb_printf(o, ", a block of %u threads per row", s->row_threads);
  }
  sb_puts(o, " */\n");
  const char *bufs = d->bufs ? d->bufs : "bufs";
  sb_printf(o, "%s %s(%s) {\n", d->kernel_prefix, k->name,
            d->params ? d->params : "void *const *bufs, int64_t tile_begin, int64_t tile_end");
  for (uint32_t i = 0; i < k->num_inputs; i++) {
    const char *st = cstyle_storage_type(k->inputs[i].dtype);
    if (!st)
      return status_at(HLO_UNIMPLEMENTED, &k->loc, "kernel %s: element type %s", k->name,
                       hlo_dtype_name(k->inputs[i].dtype));
    sb_printf(o, "  const %s *%s in%u = (const %s *)%s[%u];\n", st,
              k->inputs[i].may_alias ? "" : d->restrict_kw, i, st, bufs, i);
  }
  for (uint32_t i = 0; i < k->num_outputs; i++) {
    const char *st = cstyle_storage_type(k->outputs[i].buf.dtype);
    if (!st)
      return status_at(HLO_UNIMPLEMENTED, &k->loc, "kernel %s: element type %s", k->name,
                       hlo_dtype_name(k->outputs[i].buf.dtype));
    sb_printf(o, "  %s *%s out%u = (%s *)%s[%u];\n", st,
              k->outputs[i].buf.may_alias ? "" : d->restrict_kw, i, st, bufs, k->num_inputs + i);
  }
  for (uint32_t i = 0; i < k->num_outputs; i++) cstyle_print_dus_starts(o, k, i);
  int64_t row = 1;
  for (uint32_t dd = np; dd < k->rank; dd++) row *= k->dims[dd];
  for (uint32_t t = 0; t < k->num_temps; t++) {
    const char *ct = cstyle_compute_type(k->temps[t].dtype);
    if (!ct)
      return status_at(HLO_UNIMPLEMENTED, &k->loc, "kernel %s: element type %s", k->name,
                       hlo_dtype_name(k->temps[t].dtype));
    if (!spread) {
      sb_printf(o, "  %s tmp%u[%lld];\n", ct, t, (long long)(row > 0 ? row : 1));
      continue;
    }
    if (t == 0) sb_printf(o, "  %s\n", d->dyn_shared_decl);
    sb_printf(o, "  %s *tmp%u = (%s *)(hlo_smem + %llu);\n", ct, t, ct,
              (unsigned long long)temp_offset(k, t));
  }
  if (spread) {
    sb_printf(o, "  const int64_t hlo_tid = %s;\n", d->thread_index);
    for (uint32_t st = 0; st < k->num_stages; st++)
      if (k->stages[st].kind == KSTAGE_REDUCE)
        sb_printf(o, "  %s %s hlo_red%u[32];\n", d->shared_kw,
                  cstyle_compute_type(k->stages[st].acc_dtype), st);
  }
  bool *vary = malloc((k->num_body ? k->num_body : 1) * sizeof *vary);
  if (!vary) return status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
  kernel_row_varying(k, vary);
  sb_printf(o, "  %s\n", spread ? d->block_tile_open : d->tile_open);
  level++;
  put_indent(ind, sizeof ind, level);
  for (uint32_t i = 0; i < k->num_outputs; i++) print_dus_copy(o, k, i, ind);
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
  if (k->loop.num_carried) err = print_loop(d, k, o, level);
  for (uint32_t st = 0; st < k->num_stages && !err && !k->loop.num_carried; st++)
    err = print_stage(d, k, o, st, vary, level);
  /* the block's threads leave the row together (the temporaries and
   * hlo_red are the next row's) */
  if (spread) sb_printf(o, "%s%s\n", ind, d->barrier);
  free(vary);
  HLO_TRY(err);
  while (opened--) {
    put_indent(ind, sizeof ind, --level);
    sb_printf(o, "%s}\n", ind);
  }
  sb_printf(o, "  %s\n}\n", d->tile_close);
  return NULL;
}

void cstyle_fill_c_ops(cstyle_dialect *d) {
  const char **f = d->float_ops;
  f[OP_ADD] = "($0 + $1)";
  f[OP_SUBTRACT] = "($0 - $1)";
  f[OP_MULTIPLY] = "($0 * $1)";
  f[OP_DIVIDE] = "($0 / $1)";
  f[OP_REMAINDER] = "fmod$f($0, $1)";
  f[OP_MAXIMUM] = "hlo_max$f($0, $1)";
  f[OP_MINIMUM] = "hlo_min$f($0, $1)";
  f[OP_POWER] = "pow$f($0, $1)";
  f[OP_ATAN2] = "atan2$f($0, $1)";
  f[OP_NEGATE] = "(-$0)";
  f[OP_ABS] = "fabs$f($0)";
  f[OP_SIGN] = "hlo_sign$f($0)";
  f[OP_EXPONENTIAL] = "hlo_exp$f($0)";
  f[OP_EXPONENTIAL_MINUS_ONE] = "expm1$f($0)";
  f[OP_LOG] = "log$f($0)";
  f[OP_LOG_PLUS_ONE] = "log1p$f($0)";
  f[OP_LOGISTIC] = "(($T)1 / (($T)1 + hlo_exp$f(-$0)))";
  f[OP_TANH] = "hlo_tanh$f($0)";
  f[OP_SINE] = "sin$f($0)";
  f[OP_COSINE] = "cos$f($0)";
  f[OP_TAN] = "tan$f($0)";
  f[OP_SQRT] = "sqrt$f($0)";
  f[OP_RSQRT] = "(($T)1 / sqrt$f($0))";
  f[OP_CBRT] = "cbrt$f($0)";
  f[OP_FLOOR] = "floor$f($0)";
  f[OP_CEIL] = "ceil$f($0)";
  f[OP_ROUND_NEAREST_AFZ] = "round$f($0)";
  f[OP_ROUND_NEAREST_EVEN] = "rint$f($0)";
  f[OP_SELECT] = "($0 ? $1 : $2)";
  f[OP_CLAMP] = "hlo_min$f(hlo_max$f($1, $0), $2)";

  /* integers wrap in uint64_t (no signed overflow); x / 0 = -1, INT_MIN / -1 =
   * INT_MIN, x % 0 = x, shifts past the width as XLA gives them */
  const char **i = d->int_ops;
  i[OP_ADD] = "($T)((uint64_t)$0 + (uint64_t)$1)";
  i[OP_SUBTRACT] = "($T)((uint64_t)$0 - (uint64_t)$1)";
  i[OP_MULTIPLY] = "($T)((uint64_t)$0 * (uint64_t)$1)";
  i[OP_DIVIDE] = "($1 == 0 ? ($T)-1 : $1 == ($T)-1 ? ($T)(0 - (uint64_t)$0) : ($T)($0 / $1))";
  i[OP_REMAINDER] = "($1 == 0 ? $0 : $1 == ($T)-1 ? ($T)0 : ($T)($0 % $1))";
  i[OP_MAXIMUM] = "($0 > $1 ? $0 : $1)";
  i[OP_MINIMUM] = "($0 < $1 ? $0 : $1)";
  i[OP_AND] = "($T)($0 & $1)";
  i[OP_OR] = "($T)($0 | $1)";
  i[OP_XOR] = "($T)($0 ^ $1)";
  i[OP_NOT] = "($T)~$0";
  i[OP_NEGATE] = "($T)(0 - (uint64_t)$0)";
  i[OP_ABS] = "($T)($0 < 0 ? 0 - (uint64_t)$0 : (uint64_t)$0)";
  i[OP_SIGN] = "($T)(($0 > 0) - ($0 < 0))";
  i[OP_SHIFT_LEFT] = "(($U)$1 >= $B ? ($T)0 : ($T)(($U)$0 << ($U)$1))";
  i[OP_SHIFT_RIGHT_LOGICAL] = "(($U)$1 >= $B ? ($T)0 : ($T)(($U)$0 >> ($U)$1))";
  i[OP_SHIFT_RIGHT_ARITHMETIC] =
      "(($U)$1 >= $B ? ($T)(($S)$0 < 0 ? -1 : 0) : ($T)(($S)$0 >> ($U)$1))";
  i[OP_SELECT] = "($0 ? $1 : $2)";
  i[OP_CLAMP] = "(($1 < $0 ? $0 : $1) > $2 ? $2 : ($1 < $0 ? $0 : $1))";

  const char **u = d->uint_ops;
  u[OP_DIVIDE] = "($1 == 0 ? ($T)-1 : ($T)($0 / $1))";
  u[OP_REMAINDER] = "($1 == 0 ? $0 : ($T)($0 % $1))";
  u[OP_ABS] = "$0";
  u[OP_SIGN] = "($T)($0 != 0)";

  const char **b = d->bool_ops;
  b[OP_ADD] = b[OP_OR] = b[OP_MAXIMUM] = "($0 | $1)";
  b[OP_MULTIPLY] = b[OP_AND] = b[OP_MINIMUM] = "($0 & $1)";
  b[OP_SUBTRACT] = "($0 & !$1)";
  b[OP_XOR] = "($0 ^ $1)";
  b[OP_NOT] = "(!$0)";
  b[OP_SELECT] = "($0 ? $1 : $2)";
  b[OP_CLAMP] = "(($1 | $0) & $2)";
}

hlo_status cstyle_print_inst(const cstyle_dialect *d, const kernel *k, strbuf *o, const kinst *list,
                             uint32_t i, const char *pfx, const char *param0, const char *param1,
                             const char *indent) {
  return print_inst(d, k, o, list, i, pfx, param0, param1, indent);
}

void cstyle_print_const(const cstyle_dialect *d, strbuf *o, hlo_dtype dt, int64_t i, double f) {
  print_const(d, o, dt, i, f);
}
