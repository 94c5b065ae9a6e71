/* verify_sdy.h — the verifier's checks of Shardy (`sdy`) shardings and ops
 * (verify_sdy.c), called from verify.c. Each returns NULL when fine, else a
 * located HLO_VERIFY_ERROR ("sdy.manual_computation (SDY): ..."). The checks
 * are those of Shardy's own verifiers that are cheap and catch real mistakes:
 * a referenced mesh exists, a sharding's rank equals its tensor's rank, axis
 * names exist in the mesh and are used once, sub-axes divide their axis,
 * manual_computation's region signature is the local (per-device) shape. */
#ifndef HLO_IR_VERIFY_SDY_H
#define HLO_IR_VERIFY_SDY_H
#include "ir/ir.h"

/* The module's `sdy.mesh` declarations (axis sizes positive, names unique,
 * device_ids a permutation-sized list of distinct non-negative ids). */
HLO_MUST_USE hlo_status verify_sdy_module(const hlo_module_ir *m);
/* `sdy.sharding` and GSPMD `mhlo.sharding` attributes of @f's arguments and
 * results. */
HLO_MUST_USE hlo_status verify_sdy_func(const hlo_module_ir *m, const hlo_func *f);
/* An `sdy.sharding` (#sdy.sharding_per_value) or GSPMD `mhlo.sharding`
 * attribute on any op. */
HLO_MUST_USE hlo_status verify_sdy_op_attrs(const hlo_module_ir *m, const hlo_op *op);
/* An sdy op (OP_SDY_*): its own constraints. */
HLO_MUST_USE hlo_status verify_sdy_op(const hlo_module_ir *m, const hlo_op *op);
/* true for the OP_SDY_* opcodes. */
bool op_is_sdy(hlo_opcode c);
#endif
