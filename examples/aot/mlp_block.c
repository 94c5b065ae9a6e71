/* mlp_block.c — using a library that `hlo compile --emit=lib` made from
 * examples/models/mlp_block/mlp_block.mlir (see build.sh beside this file):
 * no hlo at run time, only mlp.h and libmlp.a (plus what mlp_LINK_FLAGS
 * names: a BLAS, libm, pthreads). Fills the arguments from the signature the library describes,
 * runs it on 2 threads and prints a checksum of the result. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mlp.h"

int main(void) {
  void *args[mlp_NUM_ARGS], *results[mlp_NUM_RESULTS];
  for (int i = 0; i < mlp_NUM_ARGS; i++) {
    const mlp_tensor_info *t = &mlp_args[i];
    if (strcmp(t->dtype, "f32")) return fprintf(stderr, "argument %d: %s\n", i, t->dtype), 1;
    float *a = malloc((size_t)t->bytes);
    if (!a) return 1;
    for (int64_t k = 0; k < t->bytes / 4; k++) a[k] = (float)((k * 7 + i) % 13 - 6) / 16.0f;
    args[i] = a;
  }
  for (int i = 0; i < mlp_NUM_RESULTS; i++)
    if (!(results[i] = malloc((size_t)mlp_results[i].bytes))) return 1;
  /* one scratch buffer per concurrent call: the library allocates nothing */
  void *scratch = aligned_alloc(mlp_SCRATCH_ALIGN,
                                (mlp_scratch_bytes() + mlp_SCRATCH_ALIGN - 1) /
                                    mlp_SCRATCH_ALIGN * mlp_SCRATCH_ALIGN);
  int rc = mlp_run((const void *const *)args, results, scratch, 2);
  if (rc) return fprintf(stderr, "mlp_run: %s\n", mlp_strerror(rc)), 1;
  const float *r = results[0];
  double sum = 0;
  for (int64_t k = 0; k < mlp_results[0].bytes / 4; k++) sum += r[k];
  printf("result 0: %s[%lld, %lld], sum %.6f\n", mlp_results[0].dtype,
         (long long)mlp_results[0].dims[0], (long long)mlp_results[0].dims[1], sum);
  for (int i = 0; i < mlp_NUM_ARGS; i++) free(args[i]);
  for (int i = 0; i < mlp_NUM_RESULTS; i++) free(results[i]);
  free(scratch);
  return 0;
}
