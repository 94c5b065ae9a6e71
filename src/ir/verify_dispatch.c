/* verify_dispatch.c — verify_op_complex: the one opcode → check table for
 * every op outside verify_ops.c. The checks live by theme in verify_linalg.c,
 * verify_window.c, verify_regions.c, verify_collective.c, verify_dynamic.c and
 * verify_chlo.c; the few ops whose check is a handful of lines
 * (optimization_barrier, uniform_quantize/dequantize, and the signature-only
 * legacy ops einsum, unary_einsum, torch_index_select, trace) are checked here,
 * following reference/stablehlo-spec.md. */
#include "ir/element.h"
#include "ir/verify.h"

#define T(i) (op->operands[(i)]->type)
#define R(i) (op->results[(i)].type)

hlo_status verify_op_complex(vctx *c, const hlo_op *op, bool *handled) {
  *handled = true;
  switch (op->opcode) {
    case OP_DOT_GENERAL: return verify_dot_general(c, op);
    case OP_DOT: return verify_dot(c, op);
    case OP_CONVOLUTION: return verify_convolution(c, op, false);
    case OP_REDUCE: return verify_reduce(c, op);
    case OP_REDUCE_WINDOW: return verify_reduce_window(c, op);
    case OP_SELECT_AND_SCATTER: return verify_select_and_scatter(c, op);
    case OP_GATHER: return verify_gather(c, op, false);
    case OP_SCATTER: return verify_scatter(c, op);
    case OP_SORT: return verify_sort(c, op);
    case OP_MAP: return verify_map(c, op);
    case OP_IF: return verify_if(c, op);
    case OP_CASE: return verify_case(c, op);
    case OP_WHILE: return verify_while(c, op);
    case OP_TRIANGULAR_SOLVE: return verify_triangular_solve(c, op);
    case OP_CHOLESKY: return verify_cholesky(c, op);
    case OP_FFT: return verify_fft(c, op);
    case OP_RNG_BIT_GENERATOR: return verify_rng_bit_generator(c, op);
    case OP_RNG: return verify_rng(c, op);
    case OP_CUSTOM_CALL: return verify_custom_call(c, op);
    case OP_ALL_REDUCE: return verify_all_reduce(c, op);
    case OP_ALL_GATHER: return verify_all_gather(c, op);
    case OP_ALL_TO_ALL: return verify_all_to_all(c, op);
    case OP_REDUCE_SCATTER: return verify_reduce_scatter(c, op);
    case OP_BATCH_NORM_INFERENCE: return verify_batch_norm(c, op, 5, 1);
    case OP_BATCH_NORM_TRAINING: return verify_batch_norm(c, op, 3, 3);
    case OP_BATCH_NORM_GRAD: return verify_batch_norm(c, op, 5, 3);
    case OP_COLLECTIVE_PERMUTE: return verify_collective_permute(c, op);
    case OP_COLLECTIVE_BROADCAST: return verify_collective_broadcast(c, op);
    case OP_OPTIMIZATION_BARRIER:
      HLO_TRY(vcount(op, 0, -1, (int)op->num_operands, (int)op->num_operands));
      for (uint32_t i = 0; i < op->num_operands; i++)
        if (!vtype_eq(T(i), R(i))) return verr(op, "C1", "result #%u type differs from operand", i);
      return NULL;
    case OP_GET_DIMENSION_SIZE: return verify_get_dimension_size(c, op);
    case OP_SET_DIMENSION_SIZE: return verify_set_dimension_size(c, op);
    case OP_REAL_DYNAMIC_SLICE: return verify_real_dynamic_slice(c, op);
    case OP_UNIFORM_QUANTIZE:
      HLO_TRY(vcount(op, 1, 1, 1, 1));
      HLO_TRY(vall_tensors(op));
      if (!vshape_eq(T(0), R(0))) return verr(op, "C1", "result shape differs from operand");
      if (!R(0)->quant) return verr(op, "O1", "result must be a quantized tensor, got %s", vtype_str(c, R(0)));
      if (!T(0)->quant && !dtype_is_float(T(0)->dtype)) return verr(op, "I1", "operand must be floating-point or quantized");
      if (R(0)->quant->expressed != (T(0)->quant ? T(0)->quant->expressed : T(0)->dtype))
        return verr(op, "C2", "expressed type of the result differs from the operand's");
      return NULL;
    case OP_UNIFORM_DEQUANTIZE:
      HLO_TRY(vcount(op, 1, 1, 1, 1));
      HLO_TRY(vall_tensors(op));
      if (!vshape_eq(T(0), R(0))) return verr(op, "C1", "result shape differs from operand");
      if (!T(0)->quant) return verr(op, "I1", "operand must be a quantized tensor, got %s", vtype_str(c, T(0)));
      if (R(0)->quant || R(0)->dtype != T(0)->quant->expressed)
        return verr(op, "C2", "result element type must be the operand's expressed type");
      return NULL;
    case OP_AFTER_ALL:
    case OP_CREATE_TOKEN:
    case OP_PARTITION_ID:
    case OP_REPLICA_ID:
    case OP_INFEED:
    case OP_RECV:
    case OP_OUTFEED:
    case OP_SEND:
    case OP_CROSS_REPLICA_SUM: return verify_token_op(c, op);
    case OP_DYNAMIC_BROADCAST_IN_DIM: return verify_dynamic_broadcast_in_dim(c, op);
    case OP_DYNAMIC_IOTA: return verify_dynamic_iota(c, op);
    case OP_DYNAMIC_PAD: return verify_dynamic_pad(c, op);
    case OP_DYNAMIC_RESHAPE: return verify_dynamic_reshape(c, op);
    case OP_DYNAMIC_GATHER: return verify_gather(c, op, true);
    case OP_DYNAMIC_CONV: return verify_convolution(c, op, true);
    case OP_EINSUM: return vcount(op, 2, 2, 1, 1);
    case OP_UNARY_EINSUM: return vcount(op, 1, 1, 1, 1);
    case OP_TORCH_INDEX_SELECT: return vcount(op, 2, 2, 1, 1);
    case OP_TRACE: return vcount(op, 1, 1, 0, 0);
    case OP_FUSION: return verify_fusion(c, op);
    default:
      if (op_flags(op->opcode) & OPF_CHLO) return verify_op_chlo(c, op);
      *handled = false;
      return NULL;
  }
}
