/* element.c — one element of any element type, read and written. */
#include "ir/element.h"

#include <string.h>
#include "support/float.h"

static const struct { const char *name; int bits; size_t bytes; hlo_dtype_class cls; } info[] = {
#define HLO_DTYPE(e, s, b, n, c) {s, b, n, c},
#include "hlo/dtypes.def"
#undef HLO_DTYPE
};

const char *hlo_dtype_name(hlo_dtype t) {
  return (unsigned)t < HLO_DTYPE_COUNT ? info[t].name : "?";
}
size_t hlo_dtype_size(hlo_dtype t) { return (unsigned)t < HLO_DTYPE_COUNT ? info[t].bytes : 0; }
hlo_dtype_class dtype_class(hlo_dtype t) { return info[t].cls; }
int dtype_bits(hlo_dtype t) { return info[t].bits; }
bool dtype_is_int(hlo_dtype t) {
  return info[t].cls == HLO_CLASS_SINT || info[t].cls == HLO_CLASS_UINT;
}
bool dtype_is_float(hlo_dtype t) { return info[t].cls == HLO_CLASS_FLOAT; }

bool dtype_parse(const char *s, size_t n, hlo_dtype *out) {
  for (int t = 0; t < HLO_DTYPE_COUNT; t++)
    if (strlen(info[t].name) == n && memcmp(info[t].name, s, n) == 0) {
      *out = (hlo_dtype)t;
      return true;
    }
  return false;
}

int64_t int_wrap(hlo_dtype t, int64_t v) {
  int bits = info[t].bits;
  if (info[t].cls == HLO_CLASS_BOOL) return v & 1;
  if (bits >= 64) return v;
  uint64_t mask = ((uint64_t)1 << bits) - 1;
  uint64_t u = (uint64_t)v & mask;
  if (info[t].cls == HLO_CLASS_SINT && (u >> (bits - 1)) & 1) u |= ~mask;
  return (int64_t)u;
}

int64_t int_min(hlo_dtype t) {
  if (info[t].cls != HLO_CLASS_SINT) return 0;
  return info[t].bits >= 64 ? INT64_MIN : -((int64_t)1 << (info[t].bits - 1));
}

uint64_t int_max(hlo_dtype t) {
  int bits = info[t].bits;
  if (info[t].cls == HLO_CLASS_BOOL) return 1;
  if (info[t].cls == HLO_CLASS_SINT) return ((uint64_t)1 << (bits - 1)) - 1;
  return bits >= 64 ? UINT64_MAX : ((uint64_t)1 << bits) - 1;
}

uint64_t elem_get_bits(hlo_dtype t, const void *data, int64_t i) {
  const uint8_t *p = (const uint8_t *)data + (size_t)i * info[t].bytes;
  switch (info[t].bytes) {
    case 1: return p[0];
    case 2: { uint16_t v; memcpy(&v, p, 2); return v; }
    case 4: { uint32_t v; memcpy(&v, p, 4); return v; }
    default: { uint64_t v; memcpy(&v, p, 8); return v; }
  }
}

void elem_set_bits(hlo_dtype t, void *data, int64_t i, uint64_t bits) {
  uint8_t *p = (uint8_t *)data + (size_t)i * info[t].bytes;
  switch (info[t].bytes) {
    case 1: p[0] = (uint8_t)bits; break;
    case 2: { uint16_t v = (uint16_t)bits; memcpy(p, &v, 2); break; }
    case 4: { uint32_t v = (uint32_t)bits; memcpy(p, &v, 4); break; }
    default: memcpy(p, &bits, 8); break;
  }
}

int64_t elem_get_i64(hlo_dtype t, const void *data, int64_t i) {
  switch (info[t].cls) {
    case HLO_CLASS_BOOL: return elem_get_bits(t, data, i) & 1;
    case HLO_CLASS_SINT: return int_wrap(t, (int64_t)elem_get_bits(t, data, i));
    case HLO_CLASS_UINT: return (int64_t)elem_get_bits(t, data, i);
    case HLO_CLASS_FLOAT:
    case HLO_CLASS_COMPLEX: {
      /* truncate toward zero, saturating; NaN gives 0 (no UB on any input) */
      double v = elem_get_f64(t, data, i);
      if (v != v) return 0;
      if (v >= 9223372036854775807.0) return INT64_MAX;
      if (v <= -9223372036854775808.0) return INT64_MIN;
      return (int64_t)v;
    }
  }
  return 0;
}

uint64_t elem_get_u64(hlo_dtype t, const void *data, int64_t i) {
  if (info[t].cls == HLO_CLASS_UINT) return elem_get_bits(t, data, i);
  return (uint64_t)elem_get_i64(t, data, i);
}

double elem_get_f64(hlo_dtype t, const void *data, int64_t i) {
  switch (info[t].cls) {
    case HLO_CLASS_BOOL:
    case HLO_CLASS_SINT: return (double)elem_get_i64(t, data, i);
    case HLO_CLASS_UINT: return (double)elem_get_bits(t, data, i);
    case HLO_CLASS_FLOAT:
      if (t == HLO_F32) { float f; memcpy(&f, (const uint8_t *)data + 4 * i, 4); return f; }
      if (t == HLO_F64) { double d; memcpy(&d, (const uint8_t *)data + 8 * i, 8); return d; }
      if (t == HLO_BF16) return bf16_to_f32((uint16_t)elem_get_bits(t, data, i));
      return float_decode(t, elem_get_bits(t, data, i));
    case HLO_CLASS_COMPLEX: { double re, im; elem_get_c128(t, data, i, &re, &im); return re; }
  }
  return 0;
}

void elem_get_c128(hlo_dtype t, const void *data, int64_t i, double *re, double *im) {
  if (t == HLO_C64) {
    float v[2];
    memcpy(v, (const uint8_t *)data + 8 * i, 8);
    *re = v[0]; *im = v[1];
  } else if (t == HLO_C128) {
    double v[2];
    memcpy(v, (const uint8_t *)data + 16 * i, 16);
    *re = v[0]; *im = v[1];
  } else {
    *re = elem_get_f64(t, data, i);
    *im = 0;
  }
}

void elem_set_i64(hlo_dtype t, void *data, int64_t i, int64_t v) {
  switch (info[t].cls) {
    case HLO_CLASS_BOOL:
    case HLO_CLASS_SINT:
    case HLO_CLASS_UINT: elem_set_bits(t, data, i, (uint64_t)int_wrap(t, v)); break;
    case HLO_CLASS_FLOAT: elem_set_f64(t, data, i, (double)v); break;
    case HLO_CLASS_COMPLEX: elem_set_c128(t, data, i, (double)v, 0); break;
  }
}

void elem_set_u64(hlo_dtype t, void *data, int64_t i, uint64_t v) {
  switch (info[t].cls) {
    case HLO_CLASS_FLOAT: elem_set_f64(t, data, i, (double)v); break;
    case HLO_CLASS_COMPLEX: elem_set_c128(t, data, i, (double)v, 0); break;
    default: elem_set_i64(t, data, i, (int64_t)v); break;
  }
}

void elem_set_f64(hlo_dtype t, void *data, int64_t i, double v) {
  switch (info[t].cls) {
    case HLO_CLASS_FLOAT:
      if (t == HLO_F32) { float f = (float)v; memcpy((uint8_t *)data + 4 * i, &f, 4); return; }
      if (t == HLO_F64) { memcpy((uint8_t *)data + 8 * i, &v, 8); return; }
      elem_set_bits(t, data, i, float_encode(t, v));
      return;
    case HLO_CLASS_COMPLEX: elem_set_c128(t, data, i, v, 0); return;
    default: /* the caller saturates first where the spec asks; guard UB here */
      if (v != v) v = 0;
      if (v >= 9223372036854775807.0) { elem_set_u64(t, data, i, v >= 18446744073709551615.0 ? UINT64_MAX : (uint64_t)v); return; }
      if (v < -9223372036854775808.0) v = -9223372036854775808.0;
      elem_set_i64(t, data, i, (int64_t)v);
      return;
  }
}

void elem_set_c128(hlo_dtype t, void *data, int64_t i, double re, double im) {
  if (t == HLO_C64) {
    float v[2] = {(float)re, (float)im};
    memcpy((uint8_t *)data + 8 * i, v, 8);
  } else if (t == HLO_C128) {
    double v[2] = {re, im};
    memcpy((uint8_t *)data + 16 * i, v, 16);
  } else {
    elem_set_f64(t, data, i, re);
  }
}
