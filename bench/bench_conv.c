/* bench_conv.c — times every stablehlo.convolution of a program on the CPU
 * backend's im2col + GEMM (backend/cpu/conv.c) against the reference
 * interpreter and against one product of the equivalent size (M x N x K
 * of the whole convolution) through the backend's GEMM (cpu_sgemm). Notes and tables: bench/CONV.md.
 *
 *   build/NAME/bench/bench_conv FILE.mlir [--iters N] [--no-interp] [--cpu-time]
 *
 * Prints one line per convolution: shapes, milliseconds (median of N warm
 * runs; the interpreter once) of cpu_conv (the path it takes: direct,
 * oneDNN or im2col) and of its im2col path alone, GFLOP/s (2 x multiply-adds /
 * time). With
 * --cpu-time the times are the process's CPU time, not wall time: on a
 * machine shared with other jobs, run single-threaded (HLO_NUM_THREADS=1
 * OMP_NUM_THREADS=1) and compare per-core work that way. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "backend/conv_describe.h"
#include "backend/cpu/conv.h"
#include "backend/cpu/gemm.h"
#include "interp/interp.h"
#include "ir/element.h"
#include "parse/parse.h"


static clockid_t clock_id = CLOCK_MONOTONIC;

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(clock_id, &ts);
  return (double)ts.tv_sec * 1e3 + 1e-6 * (double)ts.tv_nsec;
}

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_d);
  return v[n / 2];
}

static void fill(tensor *t) {
  uint64_t s = 88172645463325252ULL;
  for (int64_t i = 0; i < t->num_elems; i++) {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    elem_set_f64(t->type->dtype, t->data, i, (double)(s >> 11) / 9007199254740992.0 - 0.5);
  }
}

int main(int argc, char **argv) {
  const char *file = NULL;
  int iters = 20;
  bool interp_too = true;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--iters") && i + 1 < argc) iters = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--no-interp")) interp_too = false;
    else if (!strcmp(argv[i], "--cpu-time")) clock_id = CLOCK_PROCESS_CPUTIME_ID;
    else file = argv[i];
  }
  if (!file || iters < 1 || iters > 1000) {
    fprintf(stderr, "usage: bench_conv FILE.mlir [--iters N] [--no-interp] [--cpu-time]\n");
    return 2;
  }
  FILE *fp = fopen(file, "rb");
  if (!fp) {
    fprintf(stderr, "cannot read %s\n", file);
    return 1;
  }
  static char text[1 << 22];
  size_t len = fread(text, 1, sizeof text - 1, fp);
  fclose(fp);
  text[len] = 0;
  hlo_source src = {file, text, len, 1};
  hlo_module_ir *m = NULL;
  hlo_status st = parse_module(&src, 0, len, &m);
  interp *it = NULL;
  if (!st) st = interp_create(m, NULL, &it);
  if (st) {
    hlo_status_print(st, stderr);
    return 1;
  }
  double tot_cpu = 0, tot_im2col = 0, tot_interp = 0, tot_gemm = 0;
  int n = 0;
  for (hlo_func *f = m->funcs; f; f = f->next) {
    func_number_values(f);
    for (const hlo_op *op = f->body.block.first; op; op = op->next) {
      if (op->opcode != OP_CONVOLUTION) continue;
      backend_conv c;
      if (!conv_describe(op, &c) || !cpu_conv_takes(&c)) {
        printf("conv %d (line %u): not taken\n", n++, op->loc.line);
        continue;
      }
      tensor *in[2] = {tensor_new(op->operands[0]->type), tensor_new(op->operands[1]->type)};
      tensor *out = tensor_new(op->results[0].type), *ref = NULL;
      fill(in[0]);
      fill(in[1]);
      size_t sb = cpu_conv_scratch_bytes(&c), sb2 = cpu_conv_im2col_scratch_bytes(&c);
      if (sb2 > sb) sb = sb2; /* the im2col path is timed too */
      void *scratch = sb ? aligned_alloc(64, (sb + 63) & ~(size_t)63) : NULL;
      double t[1000], ms[2];
      const char *path_name = cpu_conv_direct_takes(&c)   ? "direct"
                              : cpu_conv_onednn_takes(&c) ? "oneDNN"
                                                          : "im2col";
      for (int path = 0; path < 2; path++) { /* 0: cpu_conv (oneDNN where it takes); 1: im2col */
        for (int i = -2; i < iters; i++) {
          double t0 = now_ms();
          st = path ? cpu_conv_im2col(&c, in[0]->data, in[1]->data, out->data, scratch)
                    : cpu_conv(&c, in[0]->data, in[1]->data, out->data, scratch);
          if (st) {
            hlo_status_print(st, stderr);
            return 1;
          }
          if (i >= 0) t[i] = now_ms() - t0;
        }
        ms[path] = median(t, iters);
      }
      double ims = 0;
      if (interp_too) {
        const hlo_value *vals[2] = {op->operands[0], op->operands[1]};
        double t0 = now_ms();
        st = interp_run_op(it, op, vals, in, 2, &ref);
        ims = now_ms() - t0;
        if (st) {
          hlo_status_print(st, stderr);
          return 1;
        }
        double maxd = 0;
        for (int64_t e = 0; e < out->num_elems; e++) {
          double d = elem_get_f64(c.result_dtype, out->data, e) -
                     elem_get_f64(c.result_dtype, ref->data, e);
          if (d < 0) d = -d;
          if (d > maxd) maxd = d;
        }
        if (maxd > 1e-3) printf("  (max difference to the interpreter %.3g)\n", maxd);
      }
      /* the equivalent single GEMM: M = result elements / C_out, N = C_out, K */
      int64_t N = c.rhs_dims[c.kernel_output_feature_dimension];
      double macs = conv_macs(&c);
      int64_t M = conv_result_elements(&c) / N, K = (int64_t)(macs / (double)conv_result_elements(&c));
      float *A = calloc((size_t)(M * K), 4), *B = calloc((size_t)(K * N), 4),
            *C = calloc((size_t)(M * N), 4);
      for (int64_t i = 0; i < M * K; i++) A[i] = (float)(i % 7) - 3;
      for (int64_t i = 0; i < K * N; i++) B[i] = (float)(i % 5) - 2;
      for (int i = -2; i < iters; i++) {
        double t0 = now_ms();
        cpu_sgemm(false, false, M, N, K, A, K, B, N, 0.0f, C, N);
        if (i >= 0) t[i] = now_ms() - t0;
      }
      double gms = median(t, iters);
      printf("conv %d (line %u): M %lld N %lld K %lld, %.1f MFLOP, scratch %.2f MB: cpu %.3f ms "
             "(%s, %.1f GFLOP/s), im2col %.3f ms (%.1f GFLOP/s), gemm alone %.3f ms "
             "(%.1f GFLOP/s)",
             n, op->loc.line, (long long)M, (long long)N, (long long)K, 2 * macs / 1e6,
             (double)sb / 1048576.0, ms[0], path_name, 2 * macs / ms[0] / 1e6,
             ms[1], 2 * macs / ms[1] / 1e6, gms, 2 * macs / gms / 1e6);
      if (interp_too) printf(", interpreter %.1f ms (x%.0f)", ims, ims / ms[0]);
      printf("\n");
      tot_cpu += ms[0], tot_im2col += ms[1], tot_interp += ims, tot_gemm += gms;
      free(A), free(B), free(C), free(scratch);
      tensor_release(in[0]), tensor_release(in[1]), tensor_release(out), tensor_release(ref);
      n++;
    }
  }
  printf("total: cpu %.3f ms, im2col %.3f ms, gemm alone %.3f ms", tot_cpu, tot_im2col, tot_gemm);
  if (interp_too) printf(", interpreter %.1f ms", tot_interp);
  printf("\n");
  interp_destroy(it);
  module_free(m);
  return 0;
}
