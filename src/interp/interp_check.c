/* interp_check.c — PLACEHOLDER until its kernels land. */
#include "interp/interp.h"
void interp_register_check(interp_kernel *table) { (void)table; }
hlo_status interp_check_custom_call(interp *it, const hlo_op *op, tensor *const *in,
                                    const hlo_type *const *result_types, tensor **out) {
  (void)it; (void)in; (void)result_types; (void)out;
  return status_at(HLO_UNIMPLEMENTED, &op->loc, "check custom calls are not implemented yet");
}
