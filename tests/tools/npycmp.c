/* npycmp — compares two .npy files the way the model tests need.
 *
 * usage: npycmp ACTUAL.npy EXPECTED.npy [--rtol R] [--exact] [--ulp N]
 *   Floats: passes when ||actual - expected|| / ||expected|| <= R (the
 *   relative error of the whole array, as ../shared/models/README.md
 *   suggests; default 1e-5), NaNs in the same places, infinities equal. Integers and bools, or
 *   with --exact: every element equal (bit-exact for floats).
 *   --ulp N: float32/float64 elements at most N units in the last place
 *   apart (NaNs in the same places).
 *   Complex (complex64 / complex128, either file): the same with |a - e|
 *   the modulus of the complex difference, ||e|| over the moduli (so --rtol
 *   bounds the norm-wise relative error of the whole array), an element
 *   being NaN when either part is; --exact compares both parts. --ulp does
 *   not apply (--rtol is used).
 * Prints one line: "ok rel=..." or "MISMATCH ..." with the worst element,
 * and exits 0 or 1 (2 on unreadable files). */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/element.h"
#include "support/float.h"
#include "support/npy.h"

/* Complex arrays (either one; a real one reads with im = 0): exact, or the
 * norm-wise relative error over the moduli of the differences, NaN (either
 * part) in the same places. Prints the verdict; returns 0 or 1. */
static int cmp_complex(const npy_array *a, const npy_array *e, int64_t n, double rtol,
                       int exact) {
  double num = 0, den = 0, worst = -1;
  int64_t worst_i = 0;
  for (int64_t i = 0; i < n; i++) {
    double xr, xi, yr, yi;
    elem_get_c128(a->dtype, a->data, i, &xr, &xi);
    elem_get_c128(e->dtype, e->data, i, &yr, &yi);
    int xn = isnan(xr) || isnan(xi), yn = isnan(yr) || isnan(yi);
    if (xn || yn) {
      if (xn && yn) continue;
      printf("MISMATCH NaN at element %lld: actual (%.9g, %.9g), expected (%.9g, %.9g)\n",
             (long long)i, xr, xi, yr, yi);
      return 1;
    }
    if (!exact && (isinf(xr) || isinf(xi) || isinf(yr) || isinf(yi))) {
      if (xr == yr && xi == yi) continue; /* equal infinities stay out of the norm */
      printf("MISMATCH non-finite at element %lld: actual (%.9g, %.9g), expected (%.9g, %.9g)\n",
             (long long)i, xr, xi, yr, yi);
      return 1;
    }
    if (exact && (xr != yr || xi != yi)) {
      printf("MISMATCH at element %lld: actual (%.9g, %.9g), expected (%.9g, %.9g)\n",
             (long long)i, xr, xi, yr, yi);
      return 1;
    }
    double d = hypot(xr - yr, xi - yi), m = hypot(yr, yi);
    num += d * d;
    den += m * m;
    if (d > worst) { worst = d; worst_i = i; }
  }
  if (exact) {
    printf("ok exact (%lld complex elements)\n", (long long)n);
    return 0;
  }
  double rel = den > 0 ? sqrt(num / den) : sqrt(num);
  if (!(rel <= rtol)) {
    double xr, xi, yr, yi;
    elem_get_c128(a->dtype, a->data, worst_i, &xr, &xi);
    elem_get_c128(e->dtype, e->data, worst_i, &yr, &yi);
    printf("MISMATCH rel=%.3g > %.3g; worst at element %lld: actual (%.9g, %.9g), expected "
           "(%.9g, %.9g)\n", rel, rtol, (long long)worst_i, xr, xi, yr, yi);
    return 1;
  }
  printf("ok rel=%.3g (%lld complex elements)\n", rel, (long long)n);
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: npycmp ACTUAL.npy EXPECTED.npy [--rtol R] [--exact]\n");
    return 2;
  }
  double rtol = 1e-5;
  int exact = 0;
  long ulp = -1;
  for (int i = 3; i < argc; i++) {
    if (!strcmp(argv[i], "--rtol") && i + 1 < argc) rtol = atof(argv[++i]);
    else if (!strcmp(argv[i], "--exact")) exact = 1;
    else if (!strcmp(argv[i], "--ulp") && i + 1 < argc) ulp = atol(argv[++i]);
    else { fprintf(stderr, "npycmp: unknown argument '%s'\n", argv[i]); return 2; }
  }
  npy_array a, e;
  hlo_status st = npy_read(argv[1], &a);
  if (st) { hlo_status_print(st, stderr); hlo_status_free(st); return 2; }
  st = npy_read(argv[2], &e);
  if (st) { hlo_status_print(st, stderr); hlo_status_free(st); npy_free(&a); return 2; }
  int rc = 0;
  int64_t na = (int64_t)(a.nbytes / hlo_dtype_size(a.dtype));
  int64_t ne = (int64_t)(e.nbytes / hlo_dtype_size(e.dtype));
  int same_shape = a.rank == e.rank;
  for (int d = 0; same_shape && d < a.rank; d++) same_shape = a.dims[d] == e.dims[d];
  if (!same_shape || na != ne) {
    printf("MISMATCH shape: actual %s rank %d (%lld elements), expected %s rank %d (%lld)\n",
           a.descr, a.rank, (long long)na, e.descr, e.rank, (long long)ne);
    rc = 1;
  } else if (ulp >= 0 && dtype_is_float(e.dtype) && a.dtype == e.dtype &&
             (e.dtype == HLO_F32 || e.dtype == HLO_F64)) {
    long worst = 0;
    int64_t worst_i = 0;
    for (int64_t i = 0; i < na; i++) {
      double x = elem_get_f64(a.dtype, a.data, i), y = elem_get_f64(e.dtype, e.data, i);
      if (isnan(x) || isnan(y)) {
        if (!(isnan(x) && isnan(y))) { worst = LONG_MAX; worst_i = i; break; }
        continue;
      }
      /* ordered integer images of the bit patterns: their difference is the ULP distance */
      int64_t bx = (int64_t)elem_get_bits(a.dtype, a.data, i), by = (int64_t)elem_get_bits(e.dtype, e.data, i);
      int64_t sign = e.dtype == HLO_F32 ? (int64_t)1 << 31 : INT64_MIN;
      if (e.dtype == HLO_F32) { bx = (int32_t)bx; by = (int32_t)by; }
      if (bx < 0) bx = sign - bx;
      if (by < 0) by = sign - by;
      long dist = (long)(bx > by ? bx - by : by - bx);
      if (dist > worst) { worst = dist; worst_i = i; }
    }
    if (worst > ulp) {
      printf("MISMATCH %ld ULP > %ld at element %lld: actual %.9g, expected %.9g\n", worst, ulp,
             (long long)worst_i, elem_get_f64(a.dtype, a.data, worst_i),
             elem_get_f64(e.dtype, e.data, worst_i));
      rc = 1;
    } else {
      printf("ok %ld ULP at most (%lld elements)\n", worst, (long long)na);
    }
  } else if (dtype_class(a.dtype) == HLO_CLASS_COMPLEX ||
             dtype_class(e.dtype) == HLO_CLASS_COMPLEX) {
    rc = cmp_complex(&a, &e, na, rtol, exact);
  } else if (exact || !dtype_is_float(e.dtype)) {
    for (int64_t i = 0; i < na; i++) {
      int eq;
      if (dtype_is_float(e.dtype) || dtype_is_float(a.dtype)) {
        double x = elem_get_f64(a.dtype, a.data, i), y = elem_get_f64(e.dtype, e.data, i);
        eq = x == y || (isnan(x) && isnan(y));
      } else {
        eq = elem_get_i64(a.dtype, a.data, i) == elem_get_i64(e.dtype, e.data, i);
      }
      if (!eq) {
        printf("MISMATCH at element %lld: actual %.9g, expected %.9g\n", (long long)i,
               elem_get_f64(a.dtype, a.data, i), elem_get_f64(e.dtype, e.data, i));
        rc = 1;
        break;
      }
    }
    if (!rc) printf("ok exact (%lld elements)\n", (long long)na);
  } else {
    double num = 0, den = 0, worst = 0;
    int64_t worst_i = 0, nan_mismatch = -1;
    for (int64_t i = 0; i < na; i++) {
      double x = elem_get_f64(a.dtype, a.data, i), y = elem_get_f64(e.dtype, e.data, i);
      if (isnan(x) || isnan(y)) {
        if (!(isnan(x) && isnan(y)) && nan_mismatch < 0) nan_mismatch = i;
        continue;
      }
      if (isinf(x) || isinf(y)) { /* infinities must agree exactly, and stay out of the norm */
        if (x != y && nan_mismatch < 0) nan_mismatch = i;
        continue;
      }
      double d = x - y;
      num += d * d;
      den += y * y;
      if (fabs(d) > worst) { worst = fabs(d); worst_i = i; }
    }
    double rel = den > 0 ? sqrt(num / den) : sqrt(num);
    if (nan_mismatch >= 0) {
      printf("MISMATCH NaN/inf at element %lld: actual %.9g, expected %.9g\n", (long long)nan_mismatch,
             elem_get_f64(a.dtype, a.data, nan_mismatch), elem_get_f64(e.dtype, e.data, nan_mismatch));
      rc = 1;
    } else if (!(rel <= rtol)) {
      printf("MISMATCH rel=%.3g > %.3g; worst at element %lld: actual %.9g, expected %.9g\n", rel,
             rtol, (long long)worst_i, elem_get_f64(a.dtype, a.data, worst_i),
             elem_get_f64(e.dtype, e.data, worst_i));
      rc = 1;
    } else {
      printf("ok rel=%.3g (%lld elements)\n", rel, (long long)na);
    }
  }
  npy_free(&a);
  npy_free(&e);
  return rc;
}
