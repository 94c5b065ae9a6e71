/* div_rcp_check.c — the exact divide by a row value (codegen/cstyle.c,
 * "Divides by a row value"; the preamble's hlo_rcp_ok in
 * backend/cpu/emit_c.c) against the IEEE divide, bit for bit:
 *   (float)((double)a * (1.0 / (double)b)) == a / b
 * for every f32 significand of a (2^23 of them, both signs alternating)
 * in each of 9 binades (1, 2^-100, 2^99, 2^-126 .. 2^-149 subnormal
 * dividends, 2^-140, 2^-60, 2^20, 2^127 near overflow), times 48 divisors
 * b that hlo_rcp_ok allows (sqrt(32), 3, 7, 1024, 0.1, 1e-6, 2^-126,
 * 2^24 - 1, values next to binade edges, 24 random ones), plus a few
 * special dividends (zeros, infinities, NaN). Then b = 98 and b = 6,
 * which hlo_rcp_ok refuses (even integers: a tie of a subnormal result
 * may round the other way through the double: 98 does, 6 happens not
 * to), to show the check is needed.
 * Build and run: cc -O2 -march=native bench/div_rcp_check.c -o /tmp/drc && /tmp/drc
 * (a minute on this machine). Exit status 0 when every allowed divisor
 * agrees. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static float bitsf(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}
static uint32_t fbits(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}

/* the preamble's hlo_rcp_ok */
static int rcp_ok(float b) {
  uint32_t u = fbits(b) & 0x7fffffffu;
  float h = b * 0.5f;
  return u - 0x00800000u < 0x4b800000u - 0x00800000u && (h != truncf(h) || (u & 0x7fffffu) == 0);
}

static long mismatches(const float *a, float *q, float *r, int n, float b) {
  const double y = 1.0 / (double)b;
  for (int i = 0; i < n; i++) {
    q[i] = (float)((double)a[i] * y);
    r[i] = a[i] / b;
  }
  long bad = 0;
  for (int i = 0; i < n; i++)
    if (fbits(q[i]) != fbits(r[i]) && !(isnan(q[i]) && isnan(r[i]) && fbits(q[i]) == fbits(r[i])))
      bad++;
  return bad;
}

int main(void) {
  enum { N = 1 << 23 };
  float *a = malloc(N * sizeof *a), *q = malloc(N * sizeof *q), *r = malloc(N * sizeof *r);
  if (!a || !q || !r) return 2;
  float bs[64];
  int nb = 0;
  const float fixed[] = {5.656854152679443f, 3.f, 7.f, 1024.f, 1.5f, 1.0000001f, 1.9999999f, 1.f,
                         0.1f, 1e-6f, 0x1p-126f, 16777215.f, 3.3333333f, 0.99999994f, 255.f,
                         1000.5f, 123.456f, -5.656854152679443f, -3.f, 0x1.fffffep-1f, 2.f,
                         0x1p23f, 0x1.000002p-126f, 12345.678f};
  for (unsigned i = 0; i < sizeof fixed / sizeof *fixed; i++) bs[nb++] = fixed[i];
  srand(1);
  while (nb < 48) {
    uint32_t e = 1 + (uint32_t)rand() % 150, m = ((uint32_t)rand() << 8 ^ (uint32_t)rand()) & 0x7fffff;
    float b = bitsf(e << 23 | m);
    if (rcp_ok(b)) bs[nb++] = b;
  }
  /* binades of the dividend: biased exponents (0: subnormal) */
  const int exps[] = {127, 27, 226, 1, 0, 13, 67, 147, 254};
  const int ne = sizeof exps / sizeof *exps;
  long bad = 0, cases = 0;
  for (int bi = 0; bi < nb; bi++) {
    if (!rcp_ok(bs[bi])) {
      printf("divisor %a: refused by hlo_rcp_ok (a bug in this list)\n", bs[bi]);
      return 2;
    }
    long here = 0;
    for (int ei = 0; ei < ne; ei++) {
      for (int i = 0; i < N; i++)
        a[i] = bitsf((uint32_t)exps[ei] << 23 | (uint32_t)i) * ((i & 1) ? -1.f : 1.f);
      here += mismatches(a, q, r, N, bs[bi]);
      cases += N;
    }
    const float sp[] = {0.f, -0.f, INFINITY, -INFINITY, NAN, -NAN, 0x1p-149f, 3.4028235e38f};
    for (int i = 0; i < 8; i++) a[i] = sp[i];
    here += mismatches(a, q, r, 8, bs[bi]);
    if (here) printf("divisor %a: %ld mismatches\n", bs[bi], here);
    bad += here;
  }
  printf("%d allowed divisors x %ld dividends: %ld mismatches\n", nb, cases / nb, bad);
  const float refused[] = {98.f, 6.f, 0x1p25f, 0x1p-127f};
  for (int bi = 0; bi < 4; bi++) {
    long here = 0;
    for (int ei = 0; ei < ne; ei++) {
      for (int i = 0; i < N; i++)
        a[i] = bitsf((uint32_t)exps[ei] << 23 | (uint32_t)i) * ((i & 1) ? -1.f : 1.f);
      here += mismatches(a, q, r, N, refused[bi]);
    }
    printf("refused divisor %a (hlo_rcp_ok %d): %ld mismatches\n", refused[bi], rcp_ok(refused[bi]),
           here);
  }
  free(a);
  free(q);
  free(r);
  return bad != 0;
}
