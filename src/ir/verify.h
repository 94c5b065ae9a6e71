/* verify.h — the verifier's shared helpers (internal to src/ir/verify*.c).
 *
 * verify.c walks the module (functions, blocks, regions, terminators, calls)
 * and dispatches each op to verify_op_basic (verify_ops.c: elementwise and
 * shape ops), then verify_op_complex (verify_dispatch.c: the one table for
 * everything else), whose checks live by theme in verify_linalg.c (dot_general,
 * dot, triangular_solve, cholesky, fft, batch_norm, rng), verify_window.c
 * (convolution, reduce_window, select_and_scatter), verify_regions.c (reduce,
 * gather, scatter, sort, map, if, case, while), verify_collective.c
 * (collectives, token ops, custom_call), verify_dynamic.c (the dynamic-shape
 * ops) and verify_chlo.c (chlo). Every check is lenient where the
 * spec allows dynamic dims (`?` matches any size) and quantized element
 * types (checked only where cheap). Attribute values are untrusted: every
 * index taken from an attribute is range-checked before use.
 *
 * Errors: every hlo_status below is NULL or a located HLO_VERIFY_ERROR made
 * by verr (attribute-shape problems use the pseudo constraint id "ATTR",
 * operand/result counts "SIG", a dot algorithm hlo does not run "ALG"); out of memory is HLO_RESOURCE_EXHAUSTED. */
#ifndef HLO_IR_VERIFY_H
#define HLO_IR_VERIFY_H
#include <stdbool.h>
#include <stdint.h>
#include "ir/ir.h"

/* Verifier state: the module (for func.call / composite look-ups) and a
 * scratch arena for decoded attribute lists, freed when verification ends. */
typedef struct vctx {
  const hlo_module_ir *m;
  arena scratch;
  /* values defined so far in the current function (an open-addressing
   * pointer set, malloc'd), for the use-before-definition check */
  const hlo_value **seen;
  size_t seen_cap, seen_n;
} vctx;

/* A list of integers decoded from an attribute (lent; valid while the
 * verifier runs). */
typedef struct ilist {
  const int64_t *v;
  uint32_t n;
} ilist;

/* A located HLO_VERIFY_ERROR "NAME (CID): message" where NAME is the op's
 * name without the "stablehlo." prefix and CID the spec's constraint id
 * ("C12", "I1"). */
hlo_status verr(const hlo_op *op, const char *cid, const char *fmt, ...) HLO_PRINTF(3, 4);
/* The op's name without a "stablehlo." prefix ("dot_general", "chlo.erf"). */
const char *vop_name(const hlo_op *op);

/* Dimension sizes compatible: equal, or either is dynamic (HLO_DYN). */
bool vdim_eq(int64_t a, int64_t b);
/* Both tensors of equal rank with compatible dims. */
bool vshape_eq(const hlo_type *a, const hlo_type *b);
/* Same element type: dtype equal and both quantized or both not (quantized:
 * same storage and expressed types; scales are not compared). */
bool velem_eq(const hlo_type *a, const hlo_type *b);
/* Compatible types: tensors with compatible shapes and equal element types;
 * tuples element-wise; tokens. Encodings (bounds) are ignored. */
bool vtype_eq(const hlo_type *a, const hlo_type *b);
/* is_promotable(from, to) of the spec: same class and to at least as wide
 * (quantized types: accepted). */
bool vpromotable(const hlo_type *from, const hlo_type *to);
/* Short text of a type for messages ("tensor<2x?xf32>", cut at 255 bytes),
 * in scratch; "?" on out of memory. */
const char *vtype_str(vctx *c, const hlo_type *t);
/* Non-NULL tensor type (not tuple/token). */
bool vis_tensor(const hlo_type *t);
/* Rank-0 tensor. */
bool vis_scalar(const hlo_type *t);

/* Operand/result count check: error "(SIG)" unless min_ops <= operands <=
 * max_ops (max -1: unbounded) and the same for results. */
hlo_status vcount(const hlo_op *op, int min_ops, int max_ops, int min_res, int max_res);
/* Every operand and result of `op` a tensor (not tuple/token). */
hlo_status vall_tensors(const hlo_op *op);

/* Integer list attribute `name` of `op` (ATTR_DENSE_ARRAY of integers,
 * ATTR_ARRAY of ATTR_INT, or integer ATTR_DENSE). Absent: error when
 * `required`, else an empty list and *present = false (present may be NULL).
 * Wrong kind: error. */
hlo_status vints(vctx *c, const hlo_op *op, const char *name, bool required, ilist *out,
                 bool *present);
/* The same for field `field` of a struct attribute `st` (absent: empty). */
hlo_status vfield_ints(vctx *c, const hlo_op *op, const hlo_attr *st, const char *field,
                       ilist *out);
/* Integer list of any attribute value; false for the wrong kind. For an
 * ATTR_DENSE, *out_dense_type (may be NULL) gets its type (else NULL). */
bool vattr_ints(vctx *c, const hlo_attr *at, ilist *out, const hlo_type **out_dense_type);
/* Integer attribute (ATTR_INT); absent: error when `required`, else `dflt`. */
hlo_status vint(const hlo_op *op, const char *name, bool required, int64_t dflt, int64_t *out);
/* Integer field of a struct (ATTR_INT); `dflt` if absent. */
hlo_status vfield_int(const hlo_op *op, const hlo_attr *st, const char *field, int64_t dflt,
                      int64_t *out);
/* Bool attribute (ATTR_BOOL or ATTR_UNIT). */
hlo_status vbool(const hlo_op *op, const char *name, bool required, bool dflt, bool *out);
/* Enum attribute value ("LT", "FFT"); NULL when absent and not required.
 * Also accepts ATTR_STRING. */
hlo_status venum(const hlo_op *op, const char *name, bool required, const char **out);
/* Struct attribute named `sname` ("stablehlo.dot"). */
hlo_status vstruct(const hlo_op *op, const char *name, const char *sname, bool required,
                   const hlo_attr **out);

/* is_unique of a list: -1 when unique, else the index of a repeated entry
 * (its second occurrence). */
int64_t vdup(const int64_t *v, uint32_t n);
/* Each 0 <= v[i] < bound; index of the first violation or -1. */
int64_t vout_of_range(const int64_t *v, uint32_t n, int64_t bound);
/* v is in non-decreasing order (repeats allowed; see vdup). */
bool vis_sorted(const int64_t *v, uint32_t n);

/* Checks a single-block region used as a function: `nargs` arguments (if
 * arg_types is non-NULL, each compatible with arg_types[i]; else each a
 * rank-0 tensor), terminated by stablehlo.return. Writes the return op to
 * *out_ret. `what` names the region in messages. */
hlo_status vregion_sig(vctx *c, const hlo_op *op, const char *cid, uint32_t ridx,
                       const char *what, uint32_t nargs, hlo_type *const *arg_types,
                       const hlo_op **out_ret);
/* The reduction body shape shared by reduce / reduce_window / scatter /
 * all_reduce / reduce_scatter / select_and_scatter's scatter: region `ridx`
 * of `op` must have type (E0..En-1, E0..En-1) -> (E0..En-1) over rank-0
 * tensors, with is_promotable(element_type(operands[first_input + i]), Ei).
 * On success out_e[i] (n entries; out_e may be NULL) are the Ei types. */
hlo_status vreduce_body(vctx *c, const hlo_op *op, const char *cid, uint32_t ridx, uint32_t n,
                        uint32_t first_input, const hlo_type **out_e);

/* precision_config of dot_general / convolution: absent, or an array of 2
 * enums DEFAULT/HIGH/HIGHEST (error tagged `cid` otherwise); *all_default
 * tells whether every entry is DEFAULT (verify_linalg.c). */
hlo_status vprecision(const hlo_op *op, const char *cid, bool *all_default);

/* Per-op checks, one function per op (or family), each NULL when `op`
 * satisfies the spec's constraints for its opcode, else a located
 * HLO_VERIFY_ERROR. `op` must have the opcode(s) the name says; `dynamic`
 * selects the dynamic_* variant, `nin`/`nout` the batch_norm variant's
 * operand and result counts. */
/* verify_linalg.c */
hlo_status verify_dot_general(vctx *c, const hlo_op *op);
hlo_status verify_dot(vctx *c, const hlo_op *op);
hlo_status verify_triangular_solve(vctx *c, const hlo_op *op);
hlo_status verify_cholesky(vctx *c, const hlo_op *op);
hlo_status verify_fft(vctx *c, const hlo_op *op);
hlo_status verify_batch_norm(vctx *c, const hlo_op *op, int nin, int nout);
hlo_status verify_rng(vctx *c, const hlo_op *op);
hlo_status verify_rng_bit_generator(vctx *c, const hlo_op *op);
/* verify_window.c */
hlo_status verify_convolution(vctx *c, const hlo_op *op, bool dynamic);
hlo_status verify_reduce_window(vctx *c, const hlo_op *op);
hlo_status verify_select_and_scatter(vctx *c, const hlo_op *op);
/* verify_regions.c */
hlo_status verify_reduce(vctx *c, const hlo_op *op);
hlo_status verify_gather(vctx *c, const hlo_op *op, bool dynamic);
hlo_status verify_scatter(vctx *c, const hlo_op *op);
hlo_status verify_sort(vctx *c, const hlo_op *op);
hlo_status verify_map(vctx *c, const hlo_op *op);
hlo_status verify_if(vctx *c, const hlo_op *op);
hlo_status verify_case(vctx *c, const hlo_op *op);
hlo_status verify_while(vctx *c, const hlo_op *op);
/* verify_collective.c; verify_token_op covers after_all, create_token,
 * partition_id, replica_id, infeed, recv, outfeed, send, cross_replica_sum */
hlo_status verify_all_reduce(vctx *c, const hlo_op *op);
hlo_status verify_all_gather(vctx *c, const hlo_op *op);
hlo_status verify_all_to_all(vctx *c, const hlo_op *op);
hlo_status verify_reduce_scatter(vctx *c, const hlo_op *op);
hlo_status verify_collective_permute(vctx *c, const hlo_op *op);
hlo_status verify_collective_broadcast(vctx *c, const hlo_op *op);
hlo_status verify_token_op(vctx *c, const hlo_op *op);
hlo_status verify_custom_call(vctx *c, const hlo_op *op);
/* verify_dynamic.c */
hlo_status verify_dynamic_broadcast_in_dim(vctx *c, const hlo_op *op);
hlo_status verify_dynamic_iota(vctx *c, const hlo_op *op);
hlo_status verify_dynamic_pad(vctx *c, const hlo_op *op);
hlo_status verify_dynamic_reshape(vctx *c, const hlo_op *op);
hlo_status verify_real_dynamic_slice(vctx *c, const hlo_op *op);
hlo_status verify_get_dimension_size(vctx *c, const hlo_op *op);
hlo_status verify_set_dimension_size(vctx *c, const hlo_op *op);

/* The two dispatchers verify.c calls, in order. verify_op_basic:
 * elementwise, shape and data-movement ops (verify_ops.c);
 * verify_op_complex: every other op (verify_dispatch.c). Each returns
 * *handled = false for opcodes it does not cover. */
hlo_status verify_op_basic(vctx *c, const hlo_op *op, bool *handled);
hlo_status verify_op_complex(vctx *c, const hlo_op *op, bool *handled);
/* The chlo ops (verify_chlo.c; constraint ids are that file's own, listed
 * at its top). `op` must have the OPF_CHLO flag. */
hlo_status verify_op_chlo(vctx *c, const hlo_op *op);
/* verify_fusion.c: hlo.fusion (see ops.def) */
hlo_status verify_fusion(vctx *c, const hlo_op *op);
#endif
