/* bench_window.c — times every stablehlo.reduce_window and
 * select_and_scatter of a program on the CPU backend (backend/cpu/window.c)
 * against the reference interpreter, and a few common pooling shapes
 * (NHWC / NCHW, 2x2 stride 2, 3x3 stride 2 padded) natively. Notes and
 * tables: bench/WINDOW.md.
 *
 *   build/NAME/bench/bench_window FILE.mlir [--iters N] [--no-interp] [--cpu-time]
 *
 * Prints one line per op: shapes, milliseconds (median of N warm runs; the
 * interpreter once, and whether its bits equal the native ones), and the
 * rate in GB/s of the bytes the op must move at least (operand, result,
 * and source for select_and_scatter, each once). With --cpu-time the times
 * are the process's CPU time, not wall time: on a machine shared with
 * other jobs, run single-threaded (HLO_NUM_THREADS=1) and compare per-core
 * work that way. BENCH_WINDOW_ONLY=K in the environment times the program's
 * op K alone (for a profiler). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "backend/cpu/window.h"
#include "backend/window_describe.h"
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

static uint64_t seed = 88172645463325252ULL;
static void fill(hlo_dtype dt, void *data, int64_t n) {
  for (int64_t i = 0; i < n; i++) {
    seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
    elem_set_f64(dt, data, i, (double)(seed >> 11) / 9007199254740992.0 - 0.5);
  }
}

/* Median milliseconds of `iters` runs of w on the given buffers. */
static double time_native(const backend_window *w, void *x, void *src, void *init, void *out,
                          int iters) {
  double t[1000];
  for (int i = -2; i < iters; i++) {
    double t0 = now_ms();
    hlo_status st;
    if (w->kind == BACKEND_REDUCE_WINDOW) {
      void *ins[2] = {x, init}, *outs[1] = {out};
      st = cpu_reduce_window(w, ins, outs);
    } else {
      st = cpu_select_and_scatter(w, x, src, init, out);
    }
    if (st) {
      hlo_status_print(st, stderr);
      exit(1);
    }
    if (i >= 0) t[i] = now_ms() - t0;
  }
  return median(t, iters);
}

static double min_bytes(const backend_window *w) {
  double es = (double)hlo_dtype_size(w->dtype);
  double b = (double)window_operand_elements(w) * es + (double)window_out_elements(w) * es;
  if (w->kind == BACKEND_SELECT_AND_SCATTER) b += (double)window_operand_elements(w) * es;
  return b;
}

static void print_dims(const int64_t *d, uint32_t r) {
  for (uint32_t i = 0; i < r; i++) printf("%s%lld", i ? "x" : "", (long long)d[i]);
}

static void describe_line(const backend_window *w) {
  printf("%s %s ", w->kind == BACKEND_REDUCE_WINDOW ? "reduce_window" : "select_and_scatter",
         w->kind == BACKEND_REDUCE_WINDOW ? backend_reducer_name(w->reducer)
                                          : backend_select_name(w->select));
  print_dims(w->operand_dims, w->rank);
  printf(" -> ");
  print_dims(w->window_out_dims, w->rank);
  printf(" window ");
  print_dims(w->window_dimensions, w->rank);
  printf(" stride ");
  print_dims(w->window_strides, w->rank);
}

/* A pooling description: NHWC or NCHW, k x k window, stride s, padding p. */
static void pool(backend_window *w, backend_window_kind kind, bool nchw, int64_t n, int64_t c,
                 int64_t h, int64_t k, int64_t s, int64_t p) {
  memset(w, 0, sizeof *w);
  w->kind = kind;
  w->dtype = HLO_F32;
  w->rank = 4;
  w->reducer = kind == BACKEND_REDUCE_WINDOW ? BACKEND_REDUCER_MAX : BACKEND_REDUCER_ADD;
  int64_t x[4] = {n, nchw ? c : h, h, nchw ? h : c};
  for (uint32_t d = 0; d < 4; d++) {
    bool sp = nchw ? d >= 2 : (d == 1 || d == 2);
    w->operand_dims[d] = x[d];
    w->window_dimensions[d] = sp ? k : 1;
    w->window_strides[d] = sp ? s : 1;
    w->padding_low[d] = w->padding_high[d] = sp ? p : 0;
    w->base_dilations[d] = w->window_dilations[d] = 1;
    w->window_out_dims[d] = sp ? (x[d] + 2 * p - k) / s + 1 : x[d];
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
    fprintf(stderr, "usage: bench_window FILE.mlir [--iters N] [--no-interp] [--cpu-time]\n");
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
  double tot = 0, tot_interp = 0;
  int n = 0;
  for (hlo_func *f = m->funcs; f; f = f->next) {
    func_number_values(f);
    for (const hlo_op *op = f->body.block.first; op; op = op->next) {
      if (op->opcode != OP_REDUCE_WINDOW && op->opcode != OP_SELECT_AND_SCATTER) continue;
      backend_window w;
      if (getenv("BENCH_WINDOW_ONLY") && atoi(getenv("BENCH_WINDOW_ONLY")) != n) {
        n++;
        continue;
      }
      if (!window_describe(op, &w) || !cpu_window_takes(&w)) {
        printf("op %d (line %u): not taken\n", n++, op->loc.line);
        continue;
      }
      uint32_t nin = op->num_operands;
      tensor *in[3] = {NULL, NULL, NULL}, *ref = NULL;
      for (uint32_t i = 0; i < nin; i++) {
        in[i] = tensor_new(op->operands[i]->type);
        fill(w.dtype, in[i]->data, in[i]->num_elems);
      }
      elem_set_f64(w.dtype, in[nin - 1]->data, 0,
                   w.reducer == BACKEND_REDUCER_MAX && w.kind == BACKEND_REDUCE_WINDOW ? -INFINITY
                                                                                       : 0.0);
      tensor *out = tensor_new(op->results[0].type);
      bool ss = w.kind == BACKEND_SELECT_AND_SCATTER;
      double ms = time_native(&w, in[0]->data, ss ? in[1]->data : NULL, in[nin - 1]->data,
                              out->data, iters);
      printf("op %d (line %u): ", n, op->loc.line);
      describe_line(&w);
      printf(": cpu %.3f ms (%.1f GB/s)", ms, min_bytes(&w) / ms / 1e6);
      if (interp_too) {
        const hlo_value *vals[3] = {op->operands[0], op->operands[1],
                                    nin > 2 ? op->operands[2] : NULL};
        double t0 = now_ms();
        st = interp_run_op(it, op, vals, in, nin, &ref);
        double ims = now_ms() - t0;
        if (st) {
          hlo_status_print(st, stderr);
          return 1;
        }
        bool same = !memcmp(ref->data, out->data, ref->nbytes);
        printf(", interpreter %.1f ms (x%.0f), bits %s", ims, ims / ms,
               same ? "equal" : "DIFFER");
        tot_interp += ims;
      }
      printf("\n");
      tot += ms;
      for (uint32_t i = 0; i < nin; i++) tensor_release(in[i]);
      tensor_release(out);
      tensor_release(ref);
      n++;
    }
  }
  printf("total: cpu %.3f ms", tot);
  if (interp_too) printf(", interpreter %.1f ms", tot_interp);
  printf("\n");
  /* common pooling shapes, natively */
  static const struct {
    bool nchw;
    int64_t n, c, h, k, s, p;
  } pools[] = {
      {false, 64, 16, 28, 2, 2, 0}, {true, 64, 16, 28, 2, 2, 0}, {false, 32, 64, 56, 3, 2, 1},
      {true, 32, 64, 56, 3, 2, 1},
  };
  for (size_t i = 0; i < sizeof pools / sizeof pools[0] && !getenv("BENCH_WINDOW_ONLY"); i++)
    for (int kind = 0; kind < 2; kind++) {
      backend_window w;
      pool(&w, kind ? BACKEND_SELECT_AND_SCATTER : BACKEND_REDUCE_WINDOW, pools[i].nchw,
           pools[i].n, pools[i].c, pools[i].h, pools[i].k, pools[i].s, pools[i].p);
      size_t nx = (size_t)window_operand_elements(&w), no = (size_t)window_out_elements(&w);
      float *x = malloc(nx * 4), *o = malloc((kind ? nx : no) * 4), *s = malloc(no * 4);
      float init = kind ? 0.0f : -INFINITY;
      fill(HLO_F32, x, (int64_t)nx);
      fill(HLO_F32, s, (int64_t)no);
      double ms = time_native(&w, x, s, &init, o, iters);
      printf("%s ", pools[i].nchw ? "NCHW" : "NHWC");
      describe_line(&w);
      printf(": cpu %.3f ms (%.1f GB/s)\n", ms, min_bytes(&w) / ms / 1e6);
      free(x), free(o), free(s);
    }
  interp_destroy(it);
  module_free(m);
  return 0;
}
