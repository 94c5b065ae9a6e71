/* interp_sdy.c — kernels of the Shardy (`sdy`) ops on one device. A sharding
 * only says how a value is laid out over a mesh's devices, so on one device
 * sharding_constraint, reshard and propagation_barrier are identities and
 * sharding_group does nothing. named_computation runs its body.
 * manual_computation runs its body once when its mesh has one device (then
 * every local shape equals the global one); on a mesh of N > 1 devices it
 * needs the SPMD partitioner (a later issue) and fails with a located error.
 * sdy.return is a terminator, handled by the core's region walker. */
#include <string.h>
#include "interp/interp.h"

static hlo_status k_identity(interp *it, const hlo_op *op, tensor *const *in,
                             const hlo_type *const *rt, tensor **out) {
  (void)it;
  (void)rt;
  if (op->num_operands != 1 || op->num_results != 1)
    return interp_error(op, HLO_INTERNAL, "expects one operand and one result");
  out[0] = tensor_retain(in[0]);
  return NULL;
}

static hlo_status k_nothing(interp *it, const hlo_op *op, tensor *const *in,
                            const hlo_type *const *rt, tensor **out) {
  (void)it, (void)op, (void)in, (void)rt, (void)out;
  return NULL;
}

/* Runs the op's single region on its operands, the results to out. */
static hlo_status run_body(interp *it, const hlo_op *op, tensor *const *in, tensor **out) {
  if (op->num_regions != 1) return interp_error(op, HLO_INTERNAL, "expects one region");
  uint32_t n = 0;
  HLO_TRY(interp_run_region(it, &op->regions[0], in, op->num_operands, out, op->num_results, &n));
  if (n != op->num_results) {
    for (uint32_t i = 0; i < n; i++) {
      tensor_release(out[i]);
      out[i] = NULL;
    }
    return interp_error(op, HLO_INTERNAL, "the body returned %u value(s), expected %u", n,
                        op->num_results);
  }
  return NULL;
}

static hlo_status k_named(interp *it, const hlo_op *op, tensor *const *in,
                          const hlo_type *const *rt, tensor **out) {
  (void)rt;
  return run_body(it, op, in, out);
}

/* The mesh of the op's first in/out sharding (NULL when none or unknown). */
static const sdy_mesh *manual_mesh(interp *it, const hlo_op *op, const char **name) {
  const char *keys[2] = {"in_shardings", "out_shardings"};
  for (int k = 0; k < 2; k++) {
    const hlo_attr *a = op_attr(op, keys[k]);
    if (!a || a->kind != ATTR_SDY || a->u.sdy->kind != SDY_SHARDING_PER_VALUE || !a->u.sdy->n) continue;
    const sdy_sharding *s = a->u.sdy->shardings[0];
    *name = s->mesh_name ? s->mesh_name : "(inline mesh)";
    return sdy_sharding_mesh(interp_module(it), s);
  }
  return NULL;
}

static hlo_status k_manual(interp *it, const hlo_op *op, tensor *const *in,
                           const hlo_type *const *rt, tensor **out) {
  (void)rt;
  const char *name = "?";
  const sdy_mesh *m = manual_mesh(it, op, &name);
  int64_t n = m ? sdy_mesh_num_devices(m) : 1;
  if (n != 1)
    return interp_error(op, HLO_UNIMPLEMENTED,
                        "mesh @%s has %lld devices, but the interpreter runs "
                        "one device; multi-device (SPMD) runs come later",
                        name, (long long)n);
  /* one device: the local shapes are the global ones */
  for (uint32_t i = 0; i < op->num_operands && i < op->regions[0].block.num_args; i++)
    if (!type_same_shape(op->operands[i]->type, op->regions[0].block.args[i].type))
      return interp_error(op, HLO_INTERNAL, "region argument #%u's type differs on a one-device mesh", i);
  return run_body(it, op, in, out);
}

void interp_register_sdy(interp_kernel *table) {
  table[OP_SDY_SHARDING_CONSTRAINT] = k_identity;
  table[OP_SDY_RESHARD] = k_identity;
  table[OP_SDY_PROPAGATION_BARRIER] = k_identity;
  table[OP_SDY_SHARDING_GROUP] = k_nothing;
  table[OP_SDY_NAMED_COMPUTATION] = k_named;
  table[OP_SDY_MANUAL_COMPUTATION] = k_manual;
}
