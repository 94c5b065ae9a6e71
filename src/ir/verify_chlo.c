/* verify_chlo.c — constraint checks of the chlo ops (they are legalized to
 * StableHLO by pass_chlo_legalize, so anything the decompositions in
 * src/passes/chlo_*.c cannot handle is rejected here, at `hlo check` time).
 *
 * chlo has no numbered constraints in reference/stablehlo-spec.md; the ids
 * used in messages are this file's own, after the op definitions of
 * stablehlo's ChloOps.td (the type constraints and verifiers there):
 *   unary elementwise ops (acos ... tan):
 *     (C1) operand and result have the same shape;
 *     (C2) the same element type (is_inf / is_neg_inf / is_pos_inf: i1);
 *     (I1) the operand's element class is one the op accepts.
 *   binary elementwise ops (next_after, polygamma, zeta, mulhi):
 *     (C1) operands and result have the same shape; (C2) the same element
 *     type; (I1) element class.
 *   broadcast_* ops:
 *     (C1) lhs/rhs (select: on_true/on_false) have one element type, and
 *     select's pred is i1; (C2) the result element type is that type (i1 for
 *     compare, complex<E> for complex); (C3) rank(operand) <= rank(result),
 *     broadcast_dimensions (used for a lower-rank operand, as the
 *     decomposition does) has one in-range entry per operand dimension;
 *     (C4) numpy-style broadcast: per result dimension the operand sizes are
 *     1 or one common size, which the result has; (I1) element class.
 *   top_k: (C1) rank(operand) >= 1 and not complex; (C2) 0 <= k <=
 *     dim(operand, -1); (C3) values has the operand's type with the last
 *     dimension k; (C4) indices has the same shape, element type i32.
 *   scan: (C1) operandSegmentSizes (inputs, inits) add up to the operand
 *     count; (C2) 0 <= dimension < rank of every input and output, all of
 *     one size there; (C3) the body takes one slice per input (the input's
 *     type without `dimension`) then the carries (the inits' types) and
 *     returns one slice per output then the carries; (C4) the last results
 *     have the inits' types. */
#include <string.h>
#include "ir/element.h"
#include "ir/verify.h"

#define T(i) (op->operands[(i)]->type)
#define R(i) (op->results[(i)].type)

/* Element class bits. */
enum { C_B = 1, C_I = 2, C_F = 4, C_C = 8, C_F4 = 16 /* f16, bf16, f32, f64 only */ };

static unsigned cbits(hlo_dtype d) {
  switch (dtype_class(d)) {
    case HLO_CLASS_BOOL: return C_B;
    case HLO_CLASS_SINT:
    case HLO_CLASS_UINT: return C_I;
    case HLO_CLASS_FLOAT:
      return C_F | ((d == HLO_F16 || d == HLO_BF16 || d == HLO_F32 || d == HLO_F64) ? C_F4 : 0);
    case HLO_CLASS_COMPLEX: return C_C;
  }
  return 0;
}

static const char *cdesc(unsigned mask) {
  switch (mask) {
    case C_F: return "floating-point";
    case C_F4: return "f16, bf16, f32 or f64";
    case C_F | C_C: return "floating-point or complex";
    case C_I | C_F | C_C: return "integer, floating-point or complex";
    case C_I: return "integer";
    case C_B | C_I: return "boolean or integer";
    case C_F | C_C | C_I | C_B: return "any";
    default: return "an accepted";
  }
}

/* The element classes a unary elementwise chlo op accepts. */
static unsigned unary_mask(hlo_opcode opc) {
  switch (opc) {
    case OP_CHLO_ACOS: case OP_CHLO_ACOSH: case OP_CHLO_ASIN: case OP_CHLO_ASINH:
    case OP_CHLO_ATAN: case OP_CHLO_ATANH: case OP_CHLO_TAN: case OP_CHLO_COSH:
    case OP_CHLO_SINH: case OP_CHLO_CONJ:
      return C_F | C_C;
    case OP_CHLO_BESSEL_I1E: case OP_CHLO_ERF: case OP_CHLO_ERFC: return C_F4;
    case OP_CHLO_SQUARE: return C_I | C_F | C_C;
    default: return C_F; /* digamma, erf_inv, lgamma, is_inf family */
  }
}

/* Operand `i` (a tensor) has an element class in `mask`; quantized: accepted. */
static hlo_status vclass(vctx *c, const hlo_op *op, uint32_t i, unsigned mask, const char *what) {
  const hlo_type *t = T(i);
  if (t->quant || (cbits(t->dtype) & mask)) return NULL;
  return verr(op, "I1", "%s must be a tensor of %s type, got %s", what, cdesc(mask),
              vtype_str(c, t));
}

static hlo_status verify_unary(vctx *c, const hlo_op *op) {
  HLO_TRY(vcount(op, 1, 1, 1, 1));
  HLO_TRY(vall_tensors(op));
  const hlo_type *x = T(0), *r = R(0);
  HLO_TRY(vclass(c, op, 0, unary_mask(op->opcode), "operand"));
  if (!vshape_eq(x, r))
    return verr(op, "C1", "result shape of %s differs from operand %s", vtype_str(c, r),
                vtype_str(c, x));
  bool to_i1 = op->opcode == OP_CHLO_IS_INF || op->opcode == OP_CHLO_IS_NEG_INF ||
               op->opcode == OP_CHLO_IS_POS_INF;
  if (to_i1) {
    if (r->quant || r->dtype != HLO_I1)
      return verr(op, "C2", "result element type must be i1, got %s", vtype_str(c, r));
  } else if (!velem_eq(x, r)) {
    return verr(op, "C2", "result element type of %s differs from operand %s", vtype_str(c, r),
                vtype_str(c, x));
  }
  return NULL;
}

static hlo_status verify_binary(vctx *c, const hlo_op *op) {
  HLO_TRY(vcount(op, 2, 2, 1, 1));
  HLO_TRY(vall_tensors(op));
  unsigned mask = op->opcode == OP_CHLO_MULHI ? C_I : C_F;
  HLO_TRY(vclass(c, op, 0, mask, "lhs"));
  if (!vshape_eq(T(0), T(1)) || !vshape_eq(T(0), R(0)))
    return verr(op, "C1", "shapes of operands %s, %s and result %s differ", vtype_str(c, T(0)),
                vtype_str(c, T(1)), vtype_str(c, R(0)));
  if (!velem_eq(T(0), T(1)) || !velem_eq(T(0), R(0)))
    return verr(op, "C2", "element types of operands %s, %s and result %s differ",
                vtype_str(c, T(0)), vtype_str(c, T(1)), vtype_str(c, R(0)));
  return NULL;
}

/* ------------------------------------------------------ broadcast_* ops */

/* The element classes of a broadcast_* op's lhs/rhs; 0: any. */
static unsigned bcast_mask(hlo_opcode opc) {
  switch (opc) {
    case OP_CHLO_BROADCAST_AND: case OP_CHLO_BROADCAST_OR: case OP_CHLO_BROADCAST_XOR:
      return C_B | C_I;
    case OP_CHLO_BROADCAST_SHIFT_LEFT: case OP_CHLO_BROADCAST_SHIFT_RIGHT_ARITHMETIC:
    case OP_CHLO_BROADCAST_SHIFT_RIGHT_LOGICAL:
      return C_I;
    case OP_CHLO_BROADCAST_ATAN2: return C_F | C_C;
    case OP_CHLO_BROADCAST_COMPLEX: case OP_CHLO_BROADCAST_NEXT_AFTER:
    case OP_CHLO_BROADCAST_POLYGAMMA: case OP_CHLO_BROADCAST_ZETA:
      return C_F;
    case OP_CHLO_BROADCAST_DIVIDE: case OP_CHLO_BROADCAST_POWER:
    case OP_CHLO_BROADCAST_REMAINDER: case OP_CHLO_BROADCAST_SUBTRACT:
      return C_I | C_F | C_C;
    default: return 0;
  }
}

/* The complex type with parts of float type `d` in *out; false when there
 * is none (only f32 and f64 have one). */
static bool complex_of(hlo_dtype d, hlo_dtype *out) {
  if (d == HLO_F32) { *out = HLO_C64; return true; }
  if (d == HLO_F64) { *out = HLO_C128; return true; }
  return false;
}

static hlo_status verify_broadcast(vctx *c, const hlo_op *op) {
  bool sel = op->opcode == OP_CHLO_BROADCAST_SELECT;
  HLO_TRY(vcount(op, sel ? 3 : 2, sel ? 3 : 2, 1, 1));
  HLO_TRY(vall_tensors(op));
  const hlo_type *r = R(0);
  uint32_t a = sel ? 1 : 0; /* first value operand */
  const hlo_type *x = T(a), *y = T(a + 1);
  bool quant = x->quant || y->quant || r->quant;
  if (sel && !T(0)->quant && T(0)->dtype != HLO_I1)
    return verr(op, "C1", "pred must be a tensor of i1, got %s", vtype_str(c, T(0)));
  if (!quant) {
    unsigned mask = bcast_mask(op->opcode);
    if (mask) HLO_TRY(vclass(c, op, a, mask, sel ? "on_true" : "lhs"));
    if (!velem_eq(x, y))
      return verr(op, "C1", "%s element types differ (%s vs %s)", sel ? "on_true/on_false" : "lhs/rhs",
                  vtype_str(c, x), vtype_str(c, y));
    hlo_dtype want = x->dtype;
    if (op->opcode == OP_CHLO_BROADCAST_COMPARE) want = HLO_I1;
    if (op->opcode == OP_CHLO_BROADCAST_COMPLEX && !complex_of(x->dtype, &want))
      return verr(op, "I1", "lhs must be a tensor of f32 or f64, got %s", vtype_str(c, x));
    if (r->dtype != want)
      return verr(op, "C2", "result element type must be %s, got %s", hlo_dtype_name(want),
                  vtype_str(c, r));
  }
  ilist bd;
  bool have_bd;
  HLO_TRY(vints(c, op, "broadcast_dimensions", false, &bd, &have_bd));
  /* per result dimension: the common operand size (1 when none), or DYN */
  int64_t *need = r->rank ? arena_calloc(&c->scratch, r->rank, sizeof *need) : NULL;
  if (r->rank && !need) return status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
  for (uint32_t j = 0; j < r->rank; j++) need[j] = 1;
  for (uint32_t i = 0; i < op->num_operands; i++) {
    const hlo_type *t = T(i);
    if (t->rank > r->rank)
      return verr(op, "C3", "operand #%u has rank %u, above the result's %u", i, t->rank, r->rank);
    bool by_bd = have_bd && t->rank < r->rank && bd.n == t->rank;
    if (by_bd) {
      int64_t k = vout_of_range(bd.v, bd.n, r->rank);
      if (k >= 0)
        return verr(op, "C3", "broadcast_dimensions entry %lld is out of range for result rank %u",
                    (long long)bd.v[k], r->rank);
      if ((k = vdup(bd.v, bd.n)) >= 0)
        return verr(op, "C3", "broadcast_dimensions has duplicate %lld", (long long)bd.v[k]);
    }
    for (uint32_t d = 0; d < t->rank; d++) {
      uint32_t j = by_bd ? (uint32_t)bd.v[d] : r->rank - t->rank + d;
      int64_t s = t->dims[d];
      if (s == 1) continue;
      if (s == HLO_DYN || need[j] == HLO_DYN) { need[j] = HLO_DYN; continue; }
      if (need[j] != 1 && need[j] != s)
        return verr(op, "C4", "operand dimension sizes %lld and %lld cannot be broadcast together "
                    "(result dimension %u)", (long long)need[j], (long long)s, j);
      need[j] = s;
    }
  }
  for (uint32_t j = 0; j < r->rank; j++)
    if (need[j] != HLO_DYN && r->dims[j] != HLO_DYN && r->dims[j] != need[j])
      return verr(op, "C4", "result dimension %u has size %lld, broadcasting gives %lld", j,
                  (long long)r->dims[j], (long long)need[j]);
  return NULL;
}

/* ---------------------------------------------------------------- top_k */

static hlo_status verify_top_k(vctx *c, const hlo_op *op) {
  HLO_TRY(vcount(op, 1, 1, 2, 2));
  HLO_TRY(vall_tensors(op));
  const hlo_type *x = T(0), *v = R(0), *ix = R(1);
  if (x->rank == 0) return verr(op, "C1", "operand must have rank >= 1, got %s", vtype_str(c, x));
  if (!x->quant && dtype_class(x->dtype) == HLO_CLASS_COMPLEX)
    return verr(op, "C1", "operand must not be complex, got %s", vtype_str(c, x));
  int64_t k;
  HLO_TRY(vint(op, "k", true, 0, &k));
  int64_t last = x->dims[x->rank - 1];
  if (k < 0) return verr(op, "C2", "k must be >= 0, got %lld", (long long)k);
  if (last != HLO_DYN && k > last)
    return verr(op, "C2", "k = %lld exceeds the operand's last dimension %lld", (long long)k,
                (long long)last);
  bool ok = v->rank == x->rank && velem_eq(v, x);
  for (uint32_t i = 0; ok && i < x->rank; i++)
    ok = vdim_eq(v->dims[i], i + 1 == x->rank ? k : x->dims[i]);
  if (!ok)
    return verr(op, "C3", "values must have the operand's type with last dimension k = %lld, "
                "got %s", (long long)k, vtype_str(c, v));
  if (!vshape_eq(ix, v) || ix->quant || ix->dtype != HLO_I32)
    return verr(op, "C4", "indices must have the shape of values and element type i32, got %s",
                vtype_str(c, ix));
  return NULL;
}

/* ----------------------------------------------------------------- scan */

/* `full` with dimension `dim` removed matches `slice` (shape and element). */
static bool slice_of(const hlo_type *full, const hlo_type *slice, uint32_t dim) {
  if (!vis_tensor(full) || !vis_tensor(slice) || slice->rank + 1 != full->rank) return false;
  if (!velem_eq(full, slice)) return false;
  for (uint32_t i = 0, j = 0; i < full->rank; i++) {
    if (i == dim) continue;
    if (!vdim_eq(full->dims[i], slice->dims[j++])) return false;
  }
  return true;
}

static hlo_status verify_scan(vctx *c, const hlo_op *op) {
  if (op->num_regions != 1) return verr(op, "SIG", "expects one region, got %u", op->num_regions);
  uint32_t n = op->num_operands;
  ilist seg;
  bool have_seg;
  HLO_TRY(vints(c, op, "operandSegmentSizes", false, &seg, &have_seg));
  if (!have_seg) return NULL; /* the split into inputs and inits is unknown: nothing cheap */
  if (seg.n != 2 || seg.v[0] < 0 || seg.v[1] < 0 || (uint64_t)seg.v[0] + (uint64_t)seg.v[1] != n)
    return verr(op, "C1", "operandSegmentSizes must be [inputs, inits] adding up to %u", n);
  uint32_t nin = (uint32_t)seg.v[0], ninit = (uint32_t)seg.v[1];
  if (op->num_results < ninit)
    return verr(op, "SIG", "expects at least %u result(s) (one per init), got %u", ninit,
                op->num_results);
  uint32_t nout = op->num_results - ninit;
  for (uint32_t i = 0; i < n; i++)
    if (!vis_tensor(T(i))) return verr(op, "SIG", "operand #%u must be a tensor", i);
  for (uint32_t i = 0; i < op->num_results; i++)
    if (!vis_tensor(R(i))) return verr(op, "SIG", "result #%u must be a tensor", i);
  int64_t dim;
  HLO_TRY(vint(op, "dimension", true, 0, &dim));
  int64_t len = HLO_DYN;
  for (uint32_t i = 0; i < nin + nout; i++) {
    const hlo_type *t = i < nin ? T(i) : R(i - nin);
    if (dim < 0 || dim >= (int64_t)t->rank)
      return verr(op, "C2", "dimension %lld is out of range for %s #%u of rank %u", (long long)dim,
                  i < nin ? "input" : "output", i < nin ? i : i - nin, t->rank);
    int64_t s = t->dims[dim];
    if (!vdim_eq(s, len))
      return verr(op, "C2", "%s #%u has size %lld along dimension %lld, expected %lld",
                  i < nin ? "input" : "output", i < nin ? i : i - nin, (long long)s,
                  (long long)dim, (long long)len);
    if (s != HLO_DYN) len = s;
  }
  for (uint32_t j = 0; j < ninit; j++)
    if (!vtype_eq(R(nout + j), T(nin + j)))
      return verr(op, "C4", "result #%u has type %s, init #%u has %s", nout + j,
                  vtype_str(c, R(nout + j)), j, vtype_str(c, T(nin + j)));
  const hlo_block *b = &op->regions[0].block;
  if (b->num_args != n)
    return verr(op, "C3", "body takes %u argument(s), expected %u (inputs then inits)",
                b->num_args, n);
  for (uint32_t i = 0; i < n; i++) {
    const hlo_type *a = b->args[i].type;
    bool ok = i < nin ? slice_of(T(i), a, (uint32_t)dim) : vtype_eq(a, T(i));
    if (!ok)
      return verr(op, "C3", "body argument #%u has type %s, which does not fit %s %s", i,
                  vtype_str(c, a), i < nin ? "a slice of input" : "init", vtype_str(c, T(i)));
  }
  const hlo_op *ret = b->last;
  if (!ret || !(op_flags(ret->opcode) & OPF_TERMINATOR))
    return verr(op, "C3", "body must end with a return");
  if (ret->num_operands != op->num_results)
    return verr(op, "C3", "body returns %u value(s), expected %u (outputs then carries)",
                ret->num_operands, op->num_results);
  for (uint32_t i = 0; i < op->num_results; i++) {
    const hlo_type *v = ret->operands[i] ? ret->operands[i]->type : NULL;
    bool ok = i < nout ? slice_of(R(i), v, (uint32_t)dim) : vtype_eq(v, R(i));
    if (!ok)
      return verr(op, "C3", "body returns %s as value #%u, which does not fit %s %s",
                  vtype_str(c, v), i, i < nout ? "a slice of result" : "result",
                  vtype_str(c, R(i)));
  }
  return NULL;
}

hlo_status verify_op_chlo(vctx *c, const hlo_op *op) {
  unsigned fl = op_flags(op->opcode);
  if (fl & OPF_ELEMENTWISE) return verify_unary(c, op);
  if (op->opcode >= OP_CHLO_BROADCAST_ADD && op->opcode <= OP_CHLO_BROADCAST_ZETA)
    return verify_broadcast(c, op);
  switch (op->opcode) {
    case OP_CHLO_NEXT_AFTER:
    case OP_CHLO_POLYGAMMA:
    case OP_CHLO_ZETA:
    case OP_CHLO_MULHI: return verify_binary(c, op);
    case OP_CHLO_CONSTANT_LIKE: return vcount(op, 1, 1, 1, 1);
    case OP_CHLO_CONSTANT: return vcount(op, 0, 0, 1, 1);
    case OP_CHLO_TOP_K: return verify_top_k(c, op);
    case OP_CHLO_SCAN: return verify_scan(c, op);
    case OP_CHLO_RAGGED_DOT: return vcount(op, 3, 3, 1, 1);
    default: return NULL;
  }
}
