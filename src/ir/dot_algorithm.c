/* dot_algorithm.c — decoding, matching and the numerics of dot_general's
 * `algorithm` attribute; see dot_algorithm.h for the supported list and
 * where it comes from. */
#include "ir/dot_algorithm.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include "ir/element.h"
#include "support/float.h"

#define TF32_NAME "tf32"

/* Precision-type field `name` of `alg`: its dtype (F32 with *tf32 for tf32).
 * Absent: *present = false. */
static bool decode_type(const hlo_attr *alg, const char *name, hlo_dtype *t, bool *tf32,
                        bool *present, char *err, size_t errn) {
  const hlo_attr *f = attr_field(alg, name);
  *present = f != NULL;
  *tf32 = false;
  *t = HLO_F32;
  if (!f) return true;
  char text[32] = "";
  if (f->kind == ATTR_OPAQUE || f->kind == ATTR_STRING) {
    size_t n = f->u.str.len < sizeof text - 1 ? f->u.str.len : sizeof text - 1;
    if (f->u.str.s) memcpy(text, f->u.str.s, n);
    text[n] = 0;
  } else if (f->kind == ATTR_TYPE && f->u.type && f->u.type->kind == TYPE_TENSOR &&
             f->u.type->rank == 0 && !f->u.type->quant) {
    snprintf(text, sizeof text, "%s", hlo_dtype_name(f->u.type->dtype));
  } else {
    snprintf(err, errn, "%s must be a floating-point type", name);
    return false;
  }
  if (!strcmp(text, TF32_NAME)) {
    *tf32 = true;
    return true;
  }
  for (int d = 0; d < HLO_DTYPE_COUNT; d++)
    if (!strcmp(text, hlo_dtype_name((hlo_dtype)d))) {
      if (!dtype_is_float((hlo_dtype)d)) break;
      *t = (hlo_dtype)d;
      return true;
    }
  snprintf(err, errn, "%s must be a floating-point type or tf32, got '%s'", name, text);
  return false;
}

/* Integer field `name`; absent: *present = false. */
static bool decode_int(const hlo_attr *alg, const char *name, int64_t *v, bool *present,
                       char *err, size_t errn) {
  const hlo_attr *f = attr_field(alg, name);
  *present = f != NULL;
  *v = 1;
  if (!f) return true;
  if (f->kind != ATTR_INT) {
    snprintf(err, errn, "%s must be an integer", name);
    return false;
  }
  *v = f->u.i.v;
  return true;
}

bool hlo_dot_algorithm_decode(const hlo_attr *alg, hlo_dot_algorithm *out, bool *out_present,
                              char *err, size_t errn) {
  memset(out, 0, sizeof *out);
  *out_present = false;
  if (errn) err[0] = 0;
  if (!alg) return true;
  if (alg->kind != ATTR_STRUCT) {
    snprintf(err, errn, "attribute 'algorithm' must be #stablehlo.dot_algorithm<...>");
    return false;
  }
  bool p[7];
  if (!decode_type(alg, "lhs_precision_type", &out->lhs_type, &out->lhs_tf32, &p[0], err, errn) ||
      !decode_type(alg, "rhs_precision_type", &out->rhs_type, &out->rhs_tf32, &p[1], err, errn) ||
      !decode_type(alg, "accumulation_type", &out->acc_type, &out->acc_tf32, &p[2], err, errn) ||
      !decode_int(alg, "lhs_component_count", &out->lhs_components, &p[3], err, errn) ||
      !decode_int(alg, "rhs_component_count", &out->rhs_components, &p[4], err, errn) ||
      !decode_int(alg, "num_primitive_operations", &out->primitive_ops, &p[5], err, errn))
    return false;
  const hlo_attr *imp = attr_field(alg, "allow_imprecise_accumulation");
  p[6] = imp != NULL;
  if (imp && imp->kind != ATTR_BOOL) {
    snprintf(err, errn, "allow_imprecise_accumulation must be a bool");
    return false;
  }
  out->allow_imprecise = imp && imp->u.b;
  int n = 0;
  for (int i = 0; i < 7; i++) n += p[i];
  if (n == 0) return true; /* the spec's empty algorithm: precision_config decides */
  if (n != 7) {
    static const char *const names[7] = {
        "lhs_precision_type", "rhs_precision_type", "accumulation_type", "lhs_component_count",
        "rhs_component_count", "num_primitive_operations", "allow_imprecise_accumulation"};
    for (int i = 0; i < 7; i++)
      if (!p[i]) {
        snprintf(err, errn, "dot algorithm is missing '%s' (give every field, or none)", names[i]);
        return false;
      }
  }
  *out_present = true;
  return true;
}

static bool is_f8(hlo_dtype t) {
  switch (t) {
    case HLO_F8E3M4: case HLO_F8E4M3: case HLO_F8E4M3FN: case HLO_F8E4M3FNUZ:
    case HLO_F8E4M3B11FNUZ: case HLO_F8E5M2: case HLO_F8E5M2FNUZ: return true;
    default: return false;
  }
}

/* One row of the table: lhs = rhs precision type, accumulation type, the
 * number of primitive ops, the parts each operand is split into, the name. */
typedef struct known {
  hlo_dtype in;
  bool in_tf32;
  hlo_dtype acc;
  int64_t prims;
  int splits;
  const char *preset;
} known;

static const known KNOWN[] = {
    {HLO_F16, false, HLO_F16, 1, 1, "F16_F16_F16"},
    {HLO_F16, false, HLO_F32, 1, 1, "F16_F16_F32"},
    {HLO_BF16, false, HLO_BF16, 1, 1, "BF16_BF16_BF16"},
    {HLO_BF16, false, HLO_F32, 1, 1, "BF16_BF16_F32"},
    {HLO_BF16, false, HLO_F32, 3, 2, "BF16_BF16_F32_X3"},
    {HLO_BF16, false, HLO_F32, 6, 3, "BF16_BF16_F32_X6"},
    {HLO_BF16, false, HLO_F32, 9, 3, "BF16_BF16_F32_X9"},
    {HLO_F32, true, HLO_F32, 1, 1, "TF32_TF32_F32"},
    {HLO_F32, true, HLO_F32, 3, 2, "TF32_TF32_F32_X3"},
    {HLO_F32, false, HLO_F32, 1, 1, "F32_F32_F32"},
    {HLO_F64, false, HLO_F64, 1, 1, "F64_F64_F64"},
};

bool hlo_dot_algorithm_match(hlo_dot_algorithm *a) {
  a->preset = NULL;
  a->splits = 0;
  if (a->lhs_components != 1 || a->rhs_components != 1 || a->acc_tf32) return false;
  if (!a->lhs_tf32 && !a->rhs_tf32 && is_f8(a->lhs_type) && is_f8(a->rhs_type) &&
      a->acc_type == HLO_F32 && a->primitive_ops == 1) {
    a->preset = a->allow_imprecise ? "ANY_F8_ANY_F8_F32_FAST_ACCUM" : "ANY_F8_ANY_F8_F32";
    a->splits = 1;
    return true;
  }
  if (a->allow_imprecise || a->lhs_tf32 != a->rhs_tf32 || a->lhs_type != a->rhs_type) return false;
  for (size_t i = 0; i < sizeof KNOWN / sizeof *KNOWN; i++) {
    const known *k = &KNOWN[i];
    if (k->in == a->lhs_type && k->in_tf32 == a->lhs_tf32 && k->acc == a->acc_type &&
        k->prims == a->primitive_ops) {
      a->preset = k->preset;
      a->splits = k->splits;
      return true;
    }
  }
  return false;
}

static const char *type_text(hlo_dtype t, bool tf32) { return tf32 ? TF32_NAME : hlo_dtype_name(t); }

void hlo_dot_algorithm_format(const hlo_dot_algorithm *a, char *buf, size_t n) {
  snprintf(buf, n,
           "lhs_precision_type = %s, rhs_precision_type = %s, accumulation_type = %s, "
           "lhs_component_count = %lld, rhs_component_count = %lld, "
           "num_primitive_operations = %lld, allow_imprecise_accumulation = %s",
           type_text(a->lhs_type, a->lhs_tf32), type_text(a->rhs_type, a->rhs_tf32),
           type_text(a->acc_type, a->acc_tf32), (long long)a->lhs_components,
           (long long)a->rhs_components, (long long)a->primitive_ops,
           a->allow_imprecise ? "true" : "false");
}

const char *hlo_dot_algorithm_supported(void) {
  return "(lhs, rhs, accumulation, num_primitive_operations) = (f16, f16, f16, 1), "
         "(f16, f16, f32, 1), (bf16, bf16, bf16, 1), (bf16, bf16, f32, 1|3|6|9), "
         "(tf32, tf32, f32, 1|3), (f32, f32, f32, 1), (f64, f64, f64, 1), "
         "(any f8, any f8, f32, 1), with component counts 1 and "
         "allow_imprecise_accumulation = false except for f8";
}

/* x rounded to nearest even to tf32: 11 significant bits, f32's exponent
 * range (largest finite (2 - 2^-10) * 2^127, subnormal spacing 2^-136). */
static double round_tf32(double x) {
  if (!isfinite(x) || x == 0) return x;
  int e;
  (void)frexp(x, &e); /* |x| in [2^(e-1), 2^e) */
  int q = e - 11;     /* spacing exponent of a normal number */
  if (q < -136) q = -136;
  double r = ldexp(nearbyint(ldexp(x, -q)), q);
  if (fabs(r) > ldexp(2.0 - ldexp(1.0, -10), 127)) return copysign(INFINITY, x);
  return r;
}

double hlo_dot_algorithm_round(const hlo_dot_algorithm *a, int side, double x) {
  bool tf32 = side ? a->rhs_tf32 : a->lhs_tf32;
  hlo_dtype t = side ? a->rhs_type : a->lhs_type;
  if (tf32) return round_tf32(x);
  return float_round(t, x);
}

void hlo_dot_algorithm_split(const hlo_dot_algorithm *a, int side, double x, double *parts) {
  int n = a->splits > 0 ? a->splits : 1;
  double r = x;
  for (int i = 0; i < n; i++) {
    parts[i] = hlo_dot_algorithm_round(a, side, r);
    if (i + 1 < n) r = (double)(float)(r - parts[i]); /* the remainder in f32 */
  }
}

int hlo_dot_algorithm_pairs(const hlo_dot_algorithm *a, const int **out_pairs) {
  static const int one[] = {0, 0};
  static const int three[] = {1, 0, 0, 1, 0, 0};
  static const int six[] = {1, 1, 2, 0, 0, 2, 1, 0, 0, 1, 0, 0};
  static const int nine[] = {2, 2, 1, 2, 2, 1, 1, 1, 2, 0, 0, 2, 1, 0, 0, 1, 0, 0};
  switch (a->primitive_ops) {
    case 3: *out_pairs = three; return 3;
    case 6: *out_pairs = six; return 6;
    case 9: *out_pairs = nine; return 9;
    default: *out_pairs = one; return 1;
  }
}
