/* Unit tests of float conversions (src/support/float.c and the interpreter's
 * `convert`): the values of issue 6 §4 and other edge cases, offline. The
 * expected bits are ml_dtypes 0.6 / XLA:CPU's (checked by hand with
 * `np.array(x).astype(ml_dtypes.T)` and `jax.jit(lambda x: x.astype(T))`);
 * tests/float/check_convert.py checks every pattern against ml_dtypes. */
#include "test.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "hlo/hlo.h"
#include "ir/element.h"
#include "support/float.h"

static uint64_t f32b(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static uint64_t f64b(double d) { uint64_t u; memcpy(&u, &d, 8); return u; }

/* Converts element bits `in` (n elements of `from`) with a one-op program
 * run on the interpreter; the result bits land in out. Returns 0 on success. */
static int run_convert(const char *from, const char *to, const uint64_t *in, uint64_t *out, int n) {
  hlo_dtype ft, tt;
  if (!dtype_parse(from, strlen(from), &ft) || !dtype_parse(to, strlen(to), &tt)) return 1;
  char text[512];
  snprintf(text, sizeof text,
           "func.func @main(%%a: tensor<%dx%s>) -> tensor<%dx%s> {\n"
           "  %%0 = stablehlo.convert %%a : (tensor<%dx%s>) -> tensor<%dx%s>\n"
           "  return %%0 : tensor<%dx%s>\n}\n", n, from, n, to, n, from, n, to, n, to);
  uint8_t buf[256] = {0};
  for (int i = 0; i < n; i++) elem_set_bits(ft, buf, i, in[i]);
  hlo_module *m = NULL;
  hlo_executable *e = NULL;
  hlo_buffer **res = NULL;
  int64_t dims[1] = {n};
  hlo_buffer_view arg = {ft, 1, dims, buf};
  hlo_status st = hlo_module_parse("t.mlir", text, strlen(text), &m);
  if (!st) st = hlo_executable_create(m, NULL, HLO_BACKEND_INTERP, &e);
  if (!st) st = hlo_executable_run(e, &arg, 1, &res);
  int rc = st != NULL;
  if (st) { hlo_status_print(st, stderr); hlo_status_free(st); }
  else {
    for (int i = 0; i < n; i++) out[i] = elem_get_bits(tt, hlo_buffer_data(res[0]), i);
    hlo_buffer_destroy(res[0]);
    free(res);
  }
  hlo_executable_destroy(e);
  hlo_module_destroy(m);
  return rc;
}

/* Runs `from` -> `to` on the interpreter and checks each result. */
static void expect(const char *from, const char *to, const uint64_t *in, const uint64_t *want, int n) {
  uint64_t got[32];
  CHECK(run_convert(from, to, in, got, n) == 0);
  for (int i = 0; i < n; i++) {
    if (got[i] != want[i])
      fprintf(stderr, "  %s -> %s: 0x%llx gives 0x%llx, want 0x%llx\n", from, to,
              (unsigned long long)in[i], (unsigned long long)got[i], (unsigned long long)want[i]);
    CHECK(got[i] == want[i]);
  }
}

TEST(issue_examples) {
  /* f32 3.0 -> f8E8M0FNU is 4.0 (0x81), 0.75 is 1.0 (0x7f): ties round up */
  CHECK(float_convert(HLO_F32, HLO_F8E8M0FNU, f32b(3.0f)) == 0x81);
  CHECK(float_convert(HLO_F32, HLO_F8E8M0FNU, f32b(0.75f)) == 0x7f);
  /* NaN -> f4E2M1FN is -0 (ml_dtypes' quiet_NaN()), -NaN is +0 */
  CHECK(float_convert(HLO_F32, HLO_F4E2M1FN, 0x7fc00000) == 0x8);
  CHECK(float_convert(HLO_F32, HLO_F4E2M1FN, 0xffc00000) == 0x0);
  /* -1000, -inf, -NaN -> f8E4M3FN are the negative NaN 0xFF */
  CHECK(float_convert(HLO_F32, HLO_F8E4M3FN, f32b(-1000.0f)) == 0xff);
  CHECK(float_convert(HLO_F32, HLO_F8E4M3FN, f32b(-INFINITY)) == 0xff);
  CHECK(float_convert(HLO_F32, HLO_F8E4M3FN, 0xffc00000) == 0xff);
  /* a negative signaling NaN keeps its sign and is quieted */
  CHECK(float_convert(HLO_F32, HLO_F16, 0xff800001) == 0xfe00);
  CHECK(float_convert(HLO_F32, HLO_BF16, 0xff800001) == 0xffc0);
  /* the same through the interpreter's convert */
  uint64_t in[] = {f32b(3.0f), f32b(0.75f), 0x7fc00000, f32b(-1000.0f), f32b(-INFINITY), 0xffc00000, 0xff800001};
  uint64_t e8[] = {0x81, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff};
  uint64_t f4[] = {0x5, 0x2, 0x8, 0xf, 0xf, 0x0, 0x0};
  uint64_t e4[] = {0x44, 0x34, 0x7f, 0xff, 0xff, 0xff, 0xff};
  uint64_t h[] = {0x4200, 0x3a00, 0x7e00, 0xe3d0, 0xfc00, 0xfe00, 0xfe00};
  uint64_t bf[] = {0x4040, 0x3f40, 0x7fc0, 0xc47a, 0xff80, 0xffc0, 0xffc0};
  expect("f32", "f8E8M0FNU", in, e8, 7);
  expect("f32", "f4E2M1FN", in, f4, 7);
  expect("f32", "f8E4M3FN", in, e4, 7);
  expect("f32", "f16", in, h, 7);
  expect("f32", "bf16", in, bf, 7);
}

TEST(special_values_per_family) {
  /* zeros: FNUZ has no -0; E8M0 has no zero (NaN) */
  CHECK(float_convert(HLO_F32, HLO_F8E4M3FNUZ, 0x80000000) == 0);
  CHECK(float_convert(HLO_F32, HLO_F8E5M2, 0x80000000) == 0x80);
  CHECK(float_convert(HLO_F32, HLO_F8E8M0FNU, 0) == 0xff);
  CHECK(float_convert(HLO_F32, HLO_F8E8M0FNU, f32b(-1.0f)) == 0xff);
  /* a negative value rounding to zero in FNUZ is +0 */
  CHECK(float_convert(HLO_F32, HLO_F8E4M3FNUZ, f32b(-1e-30f)) == 0);
  CHECK(float_convert(HLO_F32, HLO_F8E4M3FN, f32b(-1e-30f)) == 0x80);
  /* overflow: IEEE types go to inf, FNUZ to its NaN, f4/f6 saturate */
  CHECK(float_convert(HLO_F32, HLO_F8E5M2, f32b(-1e6f)) == 0xfc);
  CHECK(float_convert(HLO_F32, HLO_F8E5M2FNUZ, f32b(-1e6f)) == 0x80);
  CHECK(float_convert(HLO_F32, HLO_F6E3M2FN, f32b(-1e6f)) == 0x3f);
  CHECK(float_convert(HLO_F32, HLO_F8E4M3FN, f32b(465.0f)) == 0x7f);  /* past the tie */
  CHECK(float_convert(HLO_F32, HLO_F8E4M3FN, f32b(464.0f)) == 0x7e);  /* tie: even, 448 */
  /* NaNs: canonical with the sign; the FNUZ NaN (sign bit alone) is negative */
  CHECK(float_convert(HLO_F8E4M3FNUZ, HLO_F32, 0x80) == 0xffc00000);
  CHECK(float_convert(HLO_F8E5M2, HLO_F16, 0x7d) == 0x7e00);
  CHECK(float_convert(HLO_F8E5M2, HLO_F32, 0xfd) == 0xffc00000);
  CHECK(float_convert(HLO_F8E8M0FNU, HLO_BF16, 0xff) == 0x7fc0);
  CHECK(float_convert(HLO_F16, HLO_BF16, 0xfd01) == 0xffc0);
  /* payloads between f16/f32/f64: kept (truncated or widened), quieted */
  CHECK(float_convert(HLO_F16, HLO_F32, 0xfc01) == 0xffc02000);
  CHECK(float_convert(HLO_F32, HLO_F64, 0x7f800001) == 0x7ff8000020000000ull);
  CHECK(float_convert(HLO_BF16, HLO_F32, 0x7f81) == 0x7f810000); /* a shift */
  /* E8M0 below its range: 2^-127 is 0x00; smaller values stay there */
  CHECK(float_convert(HLO_F32, HLO_F8E8M0FNU, f32b(ldexpf(1, -127))) == 0);
  CHECK(float_convert(HLO_F32, HLO_F8E8M0FNU, f32b(1e-45f)) == 0);
  CHECK(float_decode(HLO_F8E8M0FNU, 0) == ldexp(1, -127));
  /* subnormal targets: f8E4M3FN's smallest is 2^-9; half of it ties to 0 */
  CHECK(float_convert(HLO_F32, HLO_F8E4M3FN, f32b(ldexpf(1, -10))) == 0);
  CHECK(float_convert(HLO_F32, HLO_F8E4M3FN, f32b(ldexpf(3, -11))) == 0x1);
  /* narrow -> narrow goes straight (exact widening or one rounding) */
  CHECK(float_convert(HLO_F8E4M3FN, HLO_F8E5M2, 0x7e) == 0x5f);  /* 448 -> 448 */
  CHECK(float_convert(HLO_F8E5M2, HLO_F8E4M3FN, 0x7b) == 0x7f);  /* 57344 -> NaN */
}

TEST(f64_rounds_through_f32) {
  /* ml_dtypes converts f64 to bf16 and the 8-bit types through f32 (two
   * roundings): 1 + 2^-4 + 2^-40 is above the tie in f64, a tie in f32 */
  double x = 1 + ldexp(1, -4) + ldexp(1, -40);
  CHECK(float_convert(HLO_F64, HLO_F8E4M3FN, f64b(x)) == 0x38);
  CHECK(float_convert(HLO_F64, HLO_BF16, f64b(1 + ldexp(1, -8) + ldexp(1, -40))) == 0x3f80);
  /* ... and f16 once (numpy) */
  CHECK(float_convert(HLO_F64, HLO_F16, f64b(1 + ldexp(1, -11) + ldexp(1, -40))) == 0x3c01);
  /* float_encode (op results) rounds once */
  CHECK(float_encode(HLO_F8E4M3FN, x) == 0x39);
}

TEST(integer_converts) {
  /* int -> narrow float through f32 (XLA and ml_dtypes): 2^40 + 2^32 + 1
   * is a tie in f32's rounding, so bf16 gets 2^40 (0x5380), not 0x5381 */
  uint64_t in[] = {(1ull << 40) + (1ull << 32) + 1, 300, (uint64_t)-3, 0};
  uint64_t bf[] = {0x5380, 0x4396, 0xc040, 0};
  uint64_t e8[] = {0xa7, 0x87, 0xff, 0xff};
  expect("i64", "bf16", in, bf, 4);
  expect("i64", "f8E8M0FNU", in, e8, 4);
  /* float -> int: truncate; NaN -> 0 and saturation as XLA (spec: TBD) */
  uint64_t fin[] = {0x7f, 0xff, 0x7e, 0xfe, 0x3c, 0xbc};
  uint64_t i8[] = {0, 0, 127, (uint64_t)-128 & 0xff, 1, 0xff};
  expect("f8E4M3FN", "i8", fin, i8, 6);
  uint64_t u8[] = {0, 0, 255, 0, 1, 0};
  expect("f8E4M3FN", "ui8", fin, u8, 6);
  uint64_t e8in[] = {0xff, 0xfe, 0x7f};
  uint64_t i32[] = {0, 0x7fffffff, 1};
  expect("f8E8M0FNU", "i32", e8in, i32, 3);
}

TEST_MAIN()
