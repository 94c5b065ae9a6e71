/* math_ulp.c — the error of the CPU backend's inline f32 math (hlo_tanhf,
 * hlo_expf, ... from emit_c.c's preamble) over ALL 2^32 float inputs,
 * against the correctly rounded result (the double libm function on the
 * float input, rounded once to float; double tanh/exp/log are within an ULP
 * of double, so the float rounding is right but for ties closer than 2^-29
 * ULP). Prints per function: the largest distance in ULPs from the correctly
 * rounded float (ordered-integer distance, so +-inf and the largest finite
 * float are one ULP apart) and the input where it happens, the largest
 * error in ULPs of the exact (double) value, how many inputs are off by 0,
 * 1, 2, 3 and more ULPs, and the NaN mismatches; the same for glibc's own
 * float function for comparison, and the distance between the two (what a
 * test against the interpreter, which calls glibc, can see; its "of exact"
 * column is then the error in ULPs of glibc's result). bench/MATH.md has the results.
 *
 * Not built by the Makefile: bench/math_ulp.sh compiles it with the
 * kernels' own flags and the preamble the backend prints
 * (bench/math_preamble.c) included after the system headers
 * (-DHLO_PREAMBLE), so the numbers are those of the generated code.
 * Each function is run over blocks of 4096 inputs in a loop like a kernel's,
 * so it is vectorised the way the kernels are.
 *   sh bench/math_ulp.sh build/NAME [tanh|exp|logistic|all] [THREADS] */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include HLO_PREAMBLE

/* The functions under test: one block loop each (like a kernel's inner
 * loop), the float libm counterpart, the double reference. */
static void blk_tanh(const float *x, float *y, int n) {
  for (int i = 0; i < n; i++) y[i] = hlo_tanhf(x[i]);
}
static void blk_exp(const float *x, float *y, int n) {
  for (int i = 0; i < n; i++) y[i] = hlo_expf(x[i]);
}
static void blk_logistic(const float *x, float *y, int n) {
  for (int i = 0; i < n; i++) y[i] = 1.0f / (1.0f + hlo_expf(-x[i]));
}
static float logistic_libm(float x) { return 1.0f / (1.0f + expf(-x)); }
static double logistic_ref(double x) { return 1.0 / (1.0 + exp(-x)); }

typedef struct func {
  const char *name;
  void (*ours)(const float *, float *, int);
  float (*libm)(float);
  double (*ref)(double);
} func;

static const func funcs[] = {
    {"tanh", blk_tanh, tanhf, tanh},
    {"exp", blk_exp, expf, exp},
    {"logistic", blk_logistic, logistic_libm, logistic_ref},
};
enum { NUM_FUNCS = sizeof funcs / sizeof *funcs, BLOCK = 4096, HIST = 5 };

/* Error statistics of one implementation over a range of inputs. */
typedef struct stats {
  uint64_t max_ulps;     /* largest ordered distance from the rounded result */
  uint32_t max_ulps_at;  /* an input (bits) where it happens */
  double max_err;        /* largest |got - exact| / ulp(exact) */
  uint32_t max_err_at;
  uint64_t hist[HIST];   /* inputs off by 0, 1, 2, 3, more ULPs */
  uint64_t nan_mismatch; /* NaN where the result is not, or the reverse */
  uint32_t nan_at;
} stats;

static uint32_t bits(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}
static float from_bits(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}
/* Floats in the order of the integers: -0 and +0 both 0. */
static int64_t ordered(float f) {
  uint32_t u = bits(f);
  return u >> 31 ? -(int64_t)(u & 0x7fffffffu) : (int64_t)u;
}
/* The ULP of float at the exact value r: 2^(floor(log2|r|) - 23), at least
 * the subnormal spacing 2^-149. */
static double ulp_at(double r) {
  int e;
  frexp(r, &e);
  return ldexp(1.0, e - 24 < -149 ? -149 : e - 24);
}

static void account(stats *s, uint32_t in, float got, double r) {
  float rf = (float)r;
  if (isnan(r) || isnan(got)) {
    if (!(isnan(r) && isnan(got)) && s->nan_mismatch++ == 0) s->nan_at = in;
    if (isnan(r) && isnan(got)) s->hist[0]++;
    return;
  }
  int64_t d = ordered(got) - ordered(rf);
  uint64_t ad = (uint64_t)(d < 0 ? -d : d);
  s->hist[ad < HIST - 1 ? ad : HIST - 1]++;
  if (ad > s->max_ulps) s->max_ulps = ad, s->max_ulps_at = in;
  if (isfinite(rf) && isfinite(got)) {
    double e = fabs((double)got - r) / ulp_at(r);
    if (e > s->max_err) s->max_err = e, s->max_err_at = in;
  }
}

typedef struct job {
  const func *f;
  uint64_t begin, end; /* input bit patterns [begin, end) */
  stats ours, libm, ours_libm; /* ours and glibc's vs the exact; ours vs glibc's */
} job;

static void *run_job(void *arg) {
  job *j = arg;
  float x[BLOCK], y[BLOCK];
  for (uint64_t b = j->begin; b < j->end; b += BLOCK) {
    int n = (int)(j->end - b < BLOCK ? j->end - b : BLOCK);
    for (int i = 0; i < n; i++) x[i] = from_bits((uint32_t)(b + (uint64_t)i));
    j->f->ours(x, y, n);
    for (int i = 0; i < n; i++) {
      double r = j->f->ref((double)x[i]);
      account(&j->ours, (uint32_t)(b + (uint64_t)i), y[i], r);
      float l = j->f->libm(x[i]);
      account(&j->libm, (uint32_t)(b + (uint64_t)i), l, r);
      account(&j->ours_libm, (uint32_t)(b + (uint64_t)i), y[i], (double)l);
    }
  }
  return NULL;
}

static void merge(stats *to, const stats *s) {
  if (s->max_ulps > to->max_ulps) to->max_ulps = s->max_ulps, to->max_ulps_at = s->max_ulps_at;
  if (s->max_err > to->max_err) to->max_err = s->max_err, to->max_err_at = s->max_err_at;
  for (int i = 0; i < HIST; i++) to->hist[i] += s->hist[i];
  if (s->nan_mismatch && !to->nan_mismatch) to->nan_at = s->nan_at;
  to->nan_mismatch += s->nan_mismatch;
}

static void print_stats(const char *fname, const char *who, const stats *s) {
  float a = from_bits(s->max_ulps_at), e = from_bits(s->max_err_at);
  printf("%-9s %-12s max %llu ulp at %a (%.9g); max %.3f ulp of exact at %a;"
         " 0/1/2/3/more: %llu/%llu/%llu/%llu/%llu; nan mismatches %llu",
         fname, who, (unsigned long long)s->max_ulps, (double)a, (double)a, s->max_err, (double)e,
         (unsigned long long)s->hist[0], (unsigned long long)s->hist[1],
         (unsigned long long)s->hist[2], (unsigned long long)s->hist[3],
         (unsigned long long)s->hist[4], (unsigned long long)s->nan_mismatch);
  if (s->nan_mismatch) printf(" (first at 0x%08x)", (unsigned)s->nan_at);
  printf("\n");
}

int main(int argc, char **argv) {
  const char *which = argc > 1 ? argv[1] : "all";
  int nt = argc > 2 ? atoi(argv[2]) : 2;
  if (nt < 1 || nt > 64) nt = 2;
  int found = 0;
  for (int fi = 0; fi < NUM_FUNCS; fi++) {
    if (strcmp(which, "all") && strcmp(which, funcs[fi].name)) continue;
    found = 1;
    job jobs[64];
    pthread_t th[64];
    uint64_t total = (uint64_t)1 << 32, per = total / (uint64_t)nt;
    for (int t = 0; t < nt; t++) {
      memset(&jobs[t], 0, sizeof jobs[t]);
      jobs[t].f = &funcs[fi];
      jobs[t].begin = per * (uint64_t)t;
      jobs[t].end = t == nt - 1 ? total : per * (uint64_t)(t + 1);
      if (pthread_create(&th[t], NULL, run_job, &jobs[t])) {
        fprintf(stderr, "math_ulp: cannot start a thread\n");
        return 1;
      }
    }
    stats ours = {0}, libm = {0}, ours_libm = {0};
    for (int t = 0; t < nt; t++) {
      pthread_join(th[t], NULL);
      merge(&ours, &jobs[t].ours);
      merge(&libm, &jobs[t].libm);
      merge(&ours_libm, &jobs[t].ours_libm);
    }
    print_stats(funcs[fi].name, "hlo", &ours);
    print_stats(funcs[fi].name, "glibc", &libm);
    print_stats(funcs[fi].name, "hlo-vs-glibc", &ours_libm);
    fflush(stdout);
  }
  if (!found) {
    fprintf(stderr, "math_ulp: unknown function '%s' (tanh, exp, logistic, all)\n", which);
    return 2;
  }
  return 0;
}
