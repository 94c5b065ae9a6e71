/* run_model.c — embedding hlo in a C program: load a StableHLO module that
 * JAX exported, run its @main on buffers made in C, print the results.
 * Uses only the public API (include/hlo/hlo.h).
 *
 * usage: run_model MODEL.mlir
 * Element i of every f32 argument (any shape) is ((i mod 11) - 5) / 10, in
 * [-0.5, 0.5]; other element types are zero. It needs nothing beside the
 * library (not even libm), so that it builds with pkg-config's flags alone:
 *   cc run_model.c $(pkg-config --cflags --libs hlo) -o run_model */
#include <stdio.h>
#include <stdlib.h>

#include "hlo/hlo.h"

static int fail(hlo_status st) {
  hlo_status_print(st, stderr);
  hlo_status_free(st);
  return 1;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s MODEL.mlir\n", argv[0]);
    return 2;
  }
  hlo_module *m;
  hlo_status st = hlo_module_load(argv[1], &m);
  if (st) return fail(st);
  hlo_executable *e;
  st = hlo_executable_create(m, NULL, HLO_BACKEND_INTERP, &e);
  if (st) { hlo_module_destroy(m); return fail(st); }

  int n = hlo_executable_num_args(e);
  hlo_buffer_view *args = calloc((size_t)n + 1, sizeof *args);
  int rc = 0;
  for (int i = 0; i < n && !rc; i++) {
    hlo_dtype dt;
    int rank;
    const int64_t *dims;
    st = hlo_executable_arg_type(e, i, &dt, &rank, &dims);
    if (st) { rc = fail(st); break; }
    int64_t count = 1;
    for (int d = 0; d < rank; d++) count *= dims[d];
    void *data = calloc((size_t)count + 1, hlo_dtype_size(dt));
    if (dt == HLO_F32)
      for (int64_t k = 0; k < count; k++) ((float *)data)[k] = (float)(k % 11 - 5) / 10.0f;
    args[i] = (hlo_buffer_view){dt, rank, dims, data};
  }
  hlo_buffer **res = NULL;
  if (!rc) {
    st = hlo_executable_run(e, args, n, &res);
    if (st) rc = fail(st);
  }
  for (int k = 0; !rc && k < hlo_executable_num_results(e); k++) {
    const hlo_buffer *b = res[k];
    printf("result %d: %s, rank %d, %zu bytes", k, hlo_dtype_name(hlo_buffer_dtype(b)),
           hlo_buffer_rank(b), hlo_buffer_nbytes(b));
    if (hlo_buffer_dtype(b) == HLO_F32 && hlo_buffer_nbytes(b) >= 4) {
      const float *v = hlo_buffer_data(b);
      double sum = 0;
      for (size_t j = 0; j < hlo_buffer_nbytes(b) / sizeof *v; j++) sum += v[j];
      printf(", first value %g, sum %.6g", v[0], sum);
    }
    printf("\n");
    hlo_buffer_destroy(res[k]);
  }
  free(res);
  for (int i = 0; i < n; i++) free(args[i].data);
  free(args);
  hlo_executable_destroy(e);
  hlo_module_destroy(m);
  return rc;
}
