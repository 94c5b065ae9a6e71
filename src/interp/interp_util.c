/* interp_util.c — helpers shared by several interpreter kernel files (see
 * interp_util.h). */
#include "interp/interp_util.h"

#include <stdlib.h>
#include "interp/interp_linalg_internal.h"

void iu_release_all(tensor **v, uint32_t n) {
  for (uint32_t i = 0; i < n; i++) {
    tensor_release(v[i]);
    v[i] = NULL;
  }
}

hlo_status iu_finish(hlo_status st, tensor **res, uint32_t n, tensor **out) {
  if (st) {
    iu_release_all(res, n);
    return st;
  }
  for (uint32_t k = 0; k < n; k++) out[k] = res[k];
  return NULL;
}

bool iu_load_operands(const tensor *lhs, const tensor *rhs, bool fl, bool cx, double **lf,
                      double **rf, uint64_t **lu, uint64_t **ru) {
  *lf = *rf = NULL;
  *lu = *ru = NULL;
  if (fl) {
    *lf = la_load_f64(lhs, cx);
    *rf = la_load_f64(rhs, cx);
  } else {
    *lu = la_load_u64(lhs);
    *ru = la_load_u64(rhs);
  }
  if (fl ? (*lf && *rf) : (*lu && *ru)) return true;
  free(*lf);
  free(*rf);
  free(*lu);
  free(*ru);
  *lf = *rf = NULL;
  *lu = *ru = NULL;
  return false;
}
