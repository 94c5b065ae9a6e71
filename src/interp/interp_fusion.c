/* interp_fusion.c — the kernel of hlo.fusion (ops.def): a fusion computes
 * exactly what its body computes, so the interpreter runs the body on the
 * operands (as sdy.named_computation does) whatever its kind. The body's
 * stablehlo.return is handled by the core's region walker. */
#include "interp/interp.h"

static hlo_status k_fusion(interp *it, const hlo_op *op, tensor *const *in,
                           const hlo_type *const *rt, tensor **out) {
  (void)rt;
  if (op->num_regions != 1) return interp_error(op, HLO_INTERNAL, "expects one region");
  uint32_t n = 0;
  HLO_TRY(interp_run_region(it, &op->regions[0], in, op->num_operands, out, op->num_results, &n));
  if (n != op->num_results) {
    for (uint32_t i = 0; i < n; i++) {
      tensor_release(out[i]);
      out[i] = NULL;
    }
    return interp_error(op, HLO_INTERNAL, "the fusion body returned %u value(s), expected %u", n,
                        op->num_results);
  }
  return NULL;
}

void interp_register_fusion(interp_kernel *table) { table[OP_FUSION] = k_fusion; }
