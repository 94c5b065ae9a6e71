/* conv_describe.c — a stablehlo.convolution op decoded into a backend_conv
 * (conv_describe.h). The checks repeat the interpreter's
 * (interp/interp_conv.c) and the verifier's: a description exists only for
 * a convolution the interpreter would run, so a backend taking it computes
 * what the interpreter computes. */
#include "backend/conv_describe.h"
#include <string.h>
#include "support/arena.h"

/* An integer field of the stablehlo.conv struct in [0, rank). */
static bool dim_field(const hlo_attr *dn, const char *name, uint32_t rank, uint32_t *out) {
  const hlo_attr *f = attr_field(dn, name);
  if (!f || f->kind != ATTR_INT || f->u.i.v < 0 || f->u.i.v >= (int64_t)rank) return false;
  *out = (uint32_t)f->u.i.v;
  return true;
}

/* Up to `cap` integers of `at` into buf; false unless exactly `want`. */
static bool ints_of(const hlo_attr *at, uint32_t want, int64_t *buf, uint32_t cap) {
  arena a;
  arena_init(&a);
  int64_t *v = NULL;
  uint32_t n = 0;
  bool ok = attr_as_ints(&a, at, &v, &n) && n == want && n <= cap;
  if (ok && n) memcpy(buf, v, n * sizeof *v);
  arena_deinit(&a);
  return ok;
}

/* A spatial-dims field of the stablehlo.conv struct (absent: only when
 * there are no spatial dims), each in [0, rank). */
static bool dims_field(const hlo_attr *dn, const char *name, uint32_t S, uint32_t rank,
                       uint32_t *out) {
  const hlo_attr *f = attr_field(dn, name);
  int64_t v[BACKEND_CONV_MAX_SPATIAL];
  if (!f) return S == 0;
  if (!ints_of(f, S, v, BACKEND_CONV_MAX_SPATIAL)) return false;
  for (uint32_t s = 0; s < S; s++) {
    if (v[s] < 0 || v[s] >= (int64_t)rank) return false;
    out[s] = (uint32_t)v[s];
  }
  return true;
}

/* An optional per-spatial-dim attribute (absent: `dflt` each); with
 * `positive` every value must be >= 1. */
static bool window_attr(const hlo_op *op, const char *name, uint32_t S, int64_t dflt,
                        bool positive, int64_t *out) {
  const hlo_attr *a = op_attr(op, name);
  if (!a) {
    for (uint32_t s = 0; s < S; s++) out[s] = dflt;
    return true;
  }
  if (!ints_of(a, S, out, BACKEND_CONV_MAX_SPATIAL)) return false;
  for (uint32_t s = 0; s < S && positive; s++)
    if (out[s] < 1) return false;
  return true;
}

/* Whether d[0..n) is a permutation of 0..n-1. */
static bool is_perm(const uint32_t *d, uint32_t n) {
  bool used[BACKEND_CONV_MAX_RANK] = {0};
  for (uint32_t i = 0; i < n; i++) {
    if (d[i] >= n || used[d[i]]) return false;
    used[d[i]] = true;
  }
  return true;
}

static bool static_plain_tensor(const hlo_type *t) {
  return t && t->kind == TYPE_TENSOR && !t->quant && type_is_static(t) && t->rank >= 2 &&
         t->rank <= BACKEND_CONV_MAX_RANK && type_num_elements(t) >= 0;
}

/* The precision_config entries (absent or empty: DEFAULT). */
static bool precisions(const hlo_op *op, backend_precision *out) {
  out[0] = out[1] = BACKEND_PRECISION_DEFAULT;
  const hlo_attr *pc = op_attr(op, "precision_config");
  if (!pc) return true;
  if (pc->kind != ATTR_ARRAY || (pc->u.arr.n != 0 && pc->u.arr.n != 2)) return false;
  for (uint32_t i = 0; i < pc->u.arr.n; i++) {
    const hlo_attr *e = pc->u.arr.items[i];
    if (!e || e->kind != ATTR_ENUM || !e->u.en.value) return false;
    const char *v = e->u.en.value;
    if (!strcmp(v, "DEFAULT")) out[i] = BACKEND_PRECISION_DEFAULT;
    else if (!strcmp(v, "HIGH")) out[i] = BACKEND_PRECISION_HIGH;
    else if (!strcmp(v, "HIGHEST")) out[i] = BACKEND_PRECISION_HIGHEST;
    else return false;
  }
  return true;
}

/* The result's spatial size for spatial dim s (spec C25), or -1 when the
 * arithmetic leaves int64. */
static int64_t result_spatial(const backend_conv *c, uint32_t s) {
  int64_t ld = c->lhs_dims[c->input_spatial_dimensions[s]];
  int64_t kd = c->rhs_dims[c->kernel_spatial_dimensions[s]];
  __int128 dil_in = ld == 0 ? 0 : (__int128)(ld - 1) * c->lhs_dilation[s] + 1;
  __int128 padded = (__int128)c->padding_low[s] + dil_in + c->padding_high[s];
  __int128 dil_win = kd == 0 ? 0 : (__int128)(kd - 1) * c->rhs_dilation[s] + 1;
  __int128 nw = (padded <= 0 || dil_win > padded) ? 0 : (padded - dil_win) / c->window_strides[s] + 1;
  return nw > INT64_MAX ? -1 : (int64_t)nw;
}

bool conv_describe(const hlo_op *op, backend_conv *out) {
  backend_conv *c = out;
  memset(c, 0, sizeof *c);
  if (op->opcode != OP_CONVOLUTION || op->num_operands != 2 || op->num_results != 1) return false;
  const hlo_type *lt = op->operands[0]->type, *kt = op->operands[1]->type,
                 *rt = op->results[0].type;
  if (!static_plain_tensor(lt) || !static_plain_tensor(kt) || !static_plain_tensor(rt) ||
      lt->rank != kt->rank || rt->rank != lt->rank)
    return false;
  uint32_t N = lt->rank, S = N - 2;
  c->rank = N;
  c->num_spatial = S;
  c->lhs_dtype = lt->dtype;
  c->rhs_dtype = kt->dtype;
  c->result_dtype = rt->dtype;
  c->loc = op->loc;
  for (uint32_t i = 0; i < N; i++) {
    c->lhs_dims[i] = lt->dims[i];
    c->rhs_dims[i] = kt->dims[i];
    c->result_dims[i] = rt->dims[i];
  }
  const hlo_attr *dn = op_attr(op, "dimension_numbers");
  if (!dn || dn->kind != ATTR_STRUCT) return false;
  if (!dim_field(dn, "input_batch_dimension", N, &c->input_batch_dimension) ||
      !dim_field(dn, "input_feature_dimension", N, &c->input_feature_dimension) ||
      !dims_field(dn, "input_spatial_dimensions", S, N, c->input_spatial_dimensions) ||
      !dim_field(dn, "kernel_input_feature_dimension", N, &c->kernel_input_feature_dimension) ||
      !dim_field(dn, "kernel_output_feature_dimension", N, &c->kernel_output_feature_dimension) ||
      !dims_field(dn, "kernel_spatial_dimensions", S, N, c->kernel_spatial_dimensions) ||
      !dim_field(dn, "output_batch_dimension", N, &c->output_batch_dimension) ||
      !dim_field(dn, "output_feature_dimension", N, &c->output_feature_dimension) ||
      !dims_field(dn, "output_spatial_dimensions", S, N, c->output_spatial_dimensions))
    return false;
  uint32_t perm[BACKEND_CONV_MAX_RANK];
  perm[0] = c->input_batch_dimension;
  perm[1] = c->input_feature_dimension;
  memcpy(perm + 2, c->input_spatial_dimensions, S * sizeof *perm);
  if (!is_perm(perm, N)) return false;
  perm[0] = c->kernel_input_feature_dimension;
  perm[1] = c->kernel_output_feature_dimension;
  memcpy(perm + 2, c->kernel_spatial_dimensions, S * sizeof *perm);
  if (!is_perm(perm, N)) return false;
  perm[0] = c->output_batch_dimension;
  perm[1] = c->output_feature_dimension;
  memcpy(perm + 2, c->output_spatial_dimensions, S * sizeof *perm);
  if (!is_perm(perm, N)) return false;

  if (!window_attr(op, "window_strides", S, 1, true, c->window_strides) ||
      !window_attr(op, "lhs_dilation", S, 1, true, c->lhs_dilation) ||
      !window_attr(op, "rhs_dilation", S, 1, true, c->rhs_dilation))
    return false;
  int64_t rv[BACKEND_CONV_MAX_SPATIAL];
  if (!window_attr(op, "window_reversal", S, 0, false, rv)) return false;
  for (uint32_t s = 0; s < S; s++) c->window_reversal[s] = rv[s] != 0;
  const hlo_attr *pad = op_attr(op, "padding");
  if (pad) {
    int64_t p[2 * BACKEND_CONV_MAX_SPATIAL];
    if (!ints_of(pad, 2 * S, p, 2 * BACKEND_CONV_MAX_SPATIAL)) return false;
    for (uint32_t s = 0; s < S; s++) {
      c->padding_low[s] = p[2 * s];
      c->padding_high[s] = p[2 * s + 1];
    }
  }
  if (!precisions(op, c->precision)) return false;

  const hlo_attr *fa = op_attr(op, "feature_group_count"), *ba = op_attr(op, "batch_group_count");
  if ((fa && fa->kind != ATTR_INT) || (ba && ba->kind != ATTR_INT)) return false;
  c->feature_group_count = fa ? fa->u.i.v : 1;
  c->batch_group_count = ba ? ba->u.i.v : 1;
  int64_t fgc = c->feature_group_count, bgc = c->batch_group_count;
  if (fgc < 1 || bgc < 1 || (fgc != 1 && bgc != 1)) return false;
  int64_t B = c->lhs_dims[c->input_batch_dimension], C = c->lhs_dims[c->input_feature_dimension];
  int64_t KI = c->rhs_dims[c->kernel_input_feature_dimension];
  int64_t KO = c->rhs_dims[c->kernel_output_feature_dimension];
  if (B % bgc || C % fgc || KI != C / fgc || KO % bgc || KO % fgc) return false;
  if (c->result_dims[c->output_batch_dimension] != B / bgc ||
      c->result_dims[c->output_feature_dimension] != KO)
    return false;
  for (uint32_t s = 0; s < S; s++) {
    /* attributes the verifier let through may be absurd: keep the
     * arithmetic of the backends in int64 */
    if (c->padding_low[s] > INT32_MAX || c->padding_low[s] < INT32_MIN ||
        c->padding_high[s] > INT32_MAX || c->padding_high[s] < INT32_MIN ||
        c->window_strides[s] > INT32_MAX || c->lhs_dilation[s] > INT32_MAX ||
        c->rhs_dilation[s] > INT32_MAX)
      return false;
    int64_t w = result_spatial(c, s);
    if (w < 0 || w != c->result_dims[c->output_spatial_dimensions[s]]) return false;
  }
  return true;
}

int64_t conv_group_count(const backend_conv *c) {
  return c->feature_group_count > 1 ? c->feature_group_count : c->batch_group_count;
}

static int64_t product(const int64_t *d, uint32_t n) {
  int64_t p = 1;
  for (uint32_t i = 0; i < n; i++) p *= d[i];
  return p;
}

int64_t conv_lhs_elements(const backend_conv *c) { return product(c->lhs_dims, c->rank); }
int64_t conv_rhs_elements(const backend_conv *c) { return product(c->rhs_dims, c->rank); }
int64_t conv_result_elements(const backend_conv *c) { return product(c->result_dims, c->rank); }

double conv_macs(const backend_conv *c) {
  double w = (double)c->rhs_dims[c->kernel_input_feature_dimension];
  for (uint32_t s = 0; s < c->num_spatial; s++) w *= (double)c->rhs_dims[c->kernel_spatial_dimensions[s]];
  return (double)conv_result_elements(c) * w;
}

bool conv_all_dtype(const backend_conv *c, hlo_dtype t) {
  return c->lhs_dtype == t && c->rhs_dtype == t && c->result_dtype == t;
}
