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
 * A reduction kernel opens the parallel loops, sets `acc` to the init
 * value, runs the reduction loops with the body and the combiner inside,
 * and stores `acc` after them. With reduction lanes (kernel.h) the
 * accumulator is `accl[L]` (lane 0 from init, the others from the
 * combiner's identity), the innermost reduction loop runs in blocks of L
 * with an inner `for (xl = 0; xl < L; xl++)` loop folding element xb + xl
 * into accl[xl] (the loop gcc vectorises), the tail into accl[0], and a
 * tree over the lanes makes `acc`. `acc` and the combiner are of the
 * kernel's acc_dtype (wider than the output for bf16/f16 and f32 sums),
 * rounded to the output's type once, at the store. Each kernel is preceded
 * by a one-line comment: its index space, tile count, buffers, lanes. */
#include "codegen/cstyle.h"
#include <math.h>
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

/* Declares the accumulator of a reduction: `acc` = init, or with lanes
 * `accl[L]`, lane 0 = init and the others the combiner's identity. */
static hlo_status open_accumulator(const cstyle_dialect *d, const kernel *k, strbuf *o,
                                   uint32_t lanes, const char *ind) {
  hlo_dtype adt = k->acc_dtype;
  const char *at = cstyle_compute_type(adt);
  if (!at)
    return status_at(HLO_UNIMPLEMENTED, &k->loc, "kernel %s: accumulator type %s", k->name,
                     hlo_dtype_name(adt));
  if (!lanes) {
    sb_printf(o, "%s%s acc = ", ind, at);
    print_const(d, o, adt, k->init.i, k->init.f);
    sb_puts(o, ";\n");
    return NULL;
  }
  sb_printf(o, "%s%s accl[%u];\n%saccl[0] = ", ind, at, lanes, ind);
  print_const(d, o, adt, k->init.i, k->init.f);
  sb_printf(o, ";\n%sfor (int64_t xl = 1; xl < %u; xl++) accl[xl] = ", ind, lanes);
  print_const(d, o, adt, k->identity.i, k->identity.f);
  sb_puts(o, ";\n");
  return NULL;
}

/* The body, then the combiner folding the reduced value into `acc` (a C
 * lvalue): `acc = combiner(acc, value)`. */
static hlo_status print_fold(const cstyle_dialect *d, const kernel *k, strbuf *o,
                             const char *acc, const char *ind) {
  for (uint32_t i = 0; i < k->num_body; i++)
    HLO_TRY(print_inst(d, k, o, k->body, i, "v", "", "", ind));
  char v[24];
  snprintf(v, sizeof v, "v%u", k->outputs[0].value);
  for (uint32_t i = 0; i < k->num_comb; i++)
    HLO_TRY(print_inst(d, k, o, k->comb, i, "c", acc, v, ind));
  sb_printf(o, "%s%s = c%u;\n", ind, acc, k->comb_result);
  return NULL;
}

/* After the reduction loops: the lanes combined as a tree into `acc`, then
 * the store (the one rounding of a wider accumulator: f64 -> f32 here,
 * f32 -> bf16/f16 in the store). */
static hlo_status close_accumulator(const cstyle_dialect *d, const kernel *k, strbuf *o,
                                    uint32_t lanes, const char *ind) {
  if (lanes) {
    sb_printf(o, "%sfor (int64_t w = %u; w >= 1; w /= 2) {\n", ind, lanes / 2);
    sb_printf(o, "%s  for (int64_t xl = 0; xl < w; xl++) {\n", ind);
    char ind2[64];
    snprintf(ind2, sizeof ind2, "%s    ", ind);
    for (uint32_t i = 0; i < k->num_comb; i++)
      HLO_TRY(print_inst(d, k, o, k->comb, i, "c", "accl[xl]", "accl[xl + w]", ind2));
    sb_printf(o, "%saccl[xl] = c%u;\n%s  }\n%s}\n", ind2, k->comb_result, ind, ind);
    sb_printf(o, "%sconst %s acc = accl[0];\n", ind, cstyle_compute_type(k->acc_dtype));
  }
  hlo_dtype ct = kernel_compute_dtype(k->outputs[0].buf.dtype);
  char v[32];
  if (ct != k->acc_dtype) snprintf(v, sizeof v, "(%s)acc", cstyle_compute_type(ct));
  else snprintf(v, sizeof v, "acc");
  store(o, k, 0, v, ind);
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
  if (k->num_reduce_dims && s->reduce_lanes > 1) sb_printf(o, ", %u reduction lanes", s->reduce_lanes);
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
  /* element loops; with reduction lanes the innermost (reduction) dim is
   * printed by the lanes section below */
  uint32_t lanes = k->num_reduce_dims && s->reduce_lanes > 1 ? s->reduce_lanes : 0;
  uint32_t last_open = lanes ? k->rank - 1 : k->rank;
  for (uint32_t dd = 0; dd <= last_open && dd < k->rank + 1; dd++) {
    if (dd == np && k->num_reduce_dims) HLO_TRY(open_accumulator(d, k, o, lanes, ind));
    if (dd == last_open) break;
    int64_t n = k->dims[dd], tile = s->tile[dd];
    bool split = tile < n && dd < np; /* reduction dims are never split */
    if (!split) {
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
  if (!k->num_reduce_dims) {
    for (uint32_t i = 0; i < k->num_body; i++)
      HLO_TRY(print_inst(d, k, o, k->body, i, "v", "", "", ind));
    for (uint32_t i = 0; i < k->num_outputs; i++) {
      char v[24];
      snprintf(v, sizeof v, "v%u", k->outputs[i].value);
      store(o, k, i, v, ind);
    }
  } else if (!lanes) {
    HLO_TRY(print_fold(d, k, o, "acc", ind));
  } else {
    /* lane xl folds the elements xb + xl; the tail (past the last multiple
     * of L) goes to lane 0 */
    uint32_t r = k->rank - 1;
    long long n = (long long)k->dims[r], nm = n - n % (long long)lanes;
    char ind2[64], ind3[64];
    put_indent(ind2, sizeof ind2, level + 1);
    put_indent(ind3, sizeof ind3, level + 2);
    sb_printf(o, "%sfor (int64_t xb = 0; xb < %lld; xb += %u) {\n", ind, nm, lanes);
    sb_printf(o, "%sfor (int64_t xl = 0; xl < %u; xl++) {\n", ind2, lanes);
    sb_printf(o, "%sconst int64_t x%u = xb + xl;\n", ind3, r);
    HLO_TRY(print_fold(d, k, o, "accl[xl]", ind3));
    sb_printf(o, "%s}\n%s}\n", ind2, ind);
    if (nm < n) {
      sb_printf(o, "%sfor (int64_t x%u = %lld; x%u < %lld; x%u++) {\n", ind, r, nm, r, n, r);
      HLO_TRY(print_fold(d, k, o, "accl[0]", ind2));
      sb_printf(o, "%s}\n", ind);
    }
    if (np == r) HLO_TRY(close_accumulator(d, k, o, lanes, ind));
  }
  /* close the loops; a reduction stores after its reduction loops */
  for (uint32_t dd = last_open; dd-- > 0;) {
    put_indent(ind, sizeof ind, --level);
    sb_printf(o, "%s}\n", ind);
    opened--;
    if (dd == np && k->num_reduce_dims) HLO_TRY(close_accumulator(d, k, o, lanes, ind));
  }
  while (opened--) {
    put_indent(ind, sizeof ind, --level);
    sb_printf(o, "%s}\n", ind);
  }
  sb_printf(o, "  %s\n}\n", d->tile_close);
  return NULL;
}
