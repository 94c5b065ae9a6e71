/* builder.h — building StableHLO IR from C: a thin layer over op_create /
 * op_insert_before / block_append (ir.h) for passes that emit many ops.
 *
 * A `builder` holds an insertion point (before an op, or at the end of a
 * block) and a location given to every op it makes. Every helper returns the
 * new value, or NULL when memory runs out or an input is NULL; a failure is
 * sticky (`b->failed`) so long expressions can be written without checking
 * each step, and builder_status() turns it into a status at the end.
 *
 * Types: helpers whose result has the shape of an operand ("like x") make
 * the result type with x's dims; element-type rules follow the spec (compare
 * gives i1, real/imag/abs of complex give the part type, convert gives the
 * asked type). All IR is allocated in the module's arena. */
#ifndef HLO_PASSES_BUILDER_H
#define HLO_PASSES_BUILDER_H
#include <stdbool.h>
#include <stdint.h>
#include "ir/ir.h"

typedef struct builder {
  hlo_module_ir *m;
  hlo_op *before;    /* insert before this op; or, when NULL, ... */
  hlo_block *block;  /* ... append at the end of this block */
  hlo_loc loc;       /* location of every op made */
  bool failed;       /* sticky: an allocation failed or an input was NULL */
} builder;

/* A builder that inserts before `before` (which must be in a block), at
 * before's location. */
void builder_at(builder *b, hlo_module_ir *m, hlo_op *before);
/* A builder that appends to block `blk`, with location `loc`. */
void builder_at_end(builder *b, hlo_module_ir *m, hlo_block *blk, hlo_loc loc);
/* NULL, or HLO_RESOURCE_EXHAUSTED (located at b->loc) when anything failed
 * (also when the failure was a NULL input, which the message then misnames). */
HLO_MUST_USE hlo_status builder_status(const builder *b);

/* ---- types (in the module's arena; NULL on failure, sets b->failed) */
/* A tensor type (dims copied). */
hlo_type *b_type(builder *b, hlo_dtype dt, uint32_t rank, const int64_t *dims);
/* The type with t's shape and element type `dt`. */
hlo_type *b_type_like(builder *b, const hlo_type *t, hlo_dtype dt);
/* The element type of a complex type's parts (C64 -> F32), else `dt`. */
hlo_dtype dtype_part(hlo_dtype dt);
/* The complex type with parts `dt` (F32 -> C64, F64 -> C128); else `dt`. */
hlo_dtype dtype_complex_of(hlo_dtype dt);

/* ---- generic op making */
/* Makes an op, inserts it at the insertion point and returns it. NULL (and
 * b->failed set) when the builder already failed, an operand or result type
 * is NULL, or memory runs out. */
hlo_op *b_op(builder *b, hlo_opcode opc, hlo_value *const *operands, uint32_t n,
             hlo_type *const *result_types, uint32_t nres, uint32_t nregions);
/* Sets attribute `name` on `op` (tolerates NULL op/value: marks failure). */
void b_set_attr(builder *b, hlo_op *op, const char *name, hlo_attr *value);
/* An ATTR_DENSE_ARRAY of i64. */
hlo_attr *b_i64s(builder *b, const int64_t *v, uint32_t n);

/* ---- constants */
/* stablehlo.constant holding `value` (an ATTR_DENSE); result type is the
 * attribute's type. */
hlo_value *b_constant(builder *b, hlo_attr *value);
/* A splat constant with x's type (shape and element type) of value `v`:
 * floats round to nearest even, integers convert (truncate then wrap),
 * complex gets (v, 0), i1 gets v != 0. */
hlo_value *b_const_like(builder *b, double v, const hlo_value *x);
/* The same from an integer (exact for 64-bit integer types). */
hlo_value *b_const_int_like(builder *b, int64_t v, const hlo_value *x);
/* A splat constant of type `t`, value v (as b_const_like). */
hlo_value *b_const_of(builder *b, const hlo_type *t, double v);
/* The same from an integer (as b_const_int_like). */
hlo_value *b_const_int_of(builder *b, const hlo_type *t, int64_t v);
/* Limits of x's float element type (of its parts when complex), as splat
 * constants like x: largest finite value, +inf or -inf, smallest positive
 * normal value, smallest positive (subnormal) value. */
hlo_value *b_max_finite_like(builder *b, const hlo_value *x);
hlo_value *b_inf_like(builder *b, const hlo_value *x, bool negative);
hlo_value *b_smallest_normal_like(builder *b, const hlo_value *x);
hlo_value *b_smallest_like(builder *b, const hlo_value *x);
/* The same limits as doubles for float type `dt` (0 when not a float). */
double dtype_max_finite(hlo_dtype dt);
double dtype_smallest_normal(hlo_dtype dt);
double dtype_smallest_subnormal(hlo_dtype dt);

/* ---- elementwise ops */
/* A unary elementwise op whose result type equals x's (abs of complex
 * excepted: use b_unary_to). */
hlo_value *b_unary(builder *b, hlo_opcode opc, hlo_value *x);
/* A unary elementwise op with result element type `dt` (real, imag, abs of
 * complex, convert, bitcast_convert). */
hlo_value *b_unary_to(builder *b, hlo_opcode opc, hlo_value *x, hlo_dtype dt);
/* A binary elementwise op whose result type equals x's. */
hlo_value *b_binary(builder *b, hlo_opcode opc, hlo_value *x, hlo_value *y);
/* stablehlo.compare `dir` ("EQ", "NE", "LT", "LE", "GT", "GE") with
 * compare_type derived from the element type (FLOAT for floats and complex,
 * SIGNED, UNSIGNED for unsigned and i1). Result: i1 of x's shape. */
hlo_value *b_compare(builder *b, const char *dir, hlo_value *x, hlo_value *y);
/* The same with an explicit compare_type ("TOTALORDER", ...). */
hlo_value *b_compare_typed(builder *b, const char *dir, const char *type, hlo_value *x,
                           hlo_value *y);
/* stablehlo.select(pred, on_true, on_false); result type on_true's. */
hlo_value *b_select(builder *b, hlo_value *pred, hlo_value *on_true, hlo_value *on_false);
/* stablehlo.clamp(lo, x, hi); result type x's. */
hlo_value *b_clamp(builder *b, hlo_value *lo, hlo_value *x, hlo_value *hi);
/* stablehlo.complex(re, im). */
hlo_value *b_complex(builder *b, hlo_value *re, hlo_value *im);
/* stablehlo.convert of x to element type `dt` (x's shape). */
hlo_value *b_convert(builder *b, hlo_value *x, hlo_dtype dt);

/* Shorthands for the most used ops. */
#define B_ADD(b, x, y) b_binary((b), OP_ADD, (x), (y))
#define B_SUB(b, x, y) b_binary((b), OP_SUBTRACT, (x), (y))
#define B_MUL(b, x, y) b_binary((b), OP_MULTIPLY, (x), (y))
#define B_DIV(b, x, y) b_binary((b), OP_DIVIDE, (x), (y))
#define B_MAX(b, x, y) b_binary((b), OP_MAXIMUM, (x), (y))
#define B_MIN(b, x, y) b_binary((b), OP_MINIMUM, (x), (y))
#define B_AND(b, x, y) b_binary((b), OP_AND, (x), (y))
#define B_OR(b, x, y) b_binary((b), OP_OR, (x), (y))
#define B_NEG(b, x) b_unary((b), OP_NEGATE, (x))
#define B_ABS(b, x) b_unary((b), OP_ABS, (x))
#define B_SQRT(b, x) b_unary((b), OP_SQRT, (x))
#define B_LOG(b, x) b_unary((b), OP_LOG, (x))
#define B_LOG1P(b, x) b_unary((b), OP_LOG_PLUS_ONE, (x))
#define B_EXP(b, x) b_unary((b), OP_EXPONENTIAL, (x))
#define B_FLOOR(b, x) b_unary((b), OP_FLOOR, (x))
#define B_NOT(b, x) b_unary((b), OP_NOT, (x))

/* ---- shape ops */
/* stablehlo.broadcast_in_dim of x to `t` with broadcast_dimensions dims. */
hlo_value *b_broadcast_in_dim(builder *b, hlo_value *x, hlo_type *t, const int64_t *dims,
                              uint32_t ndims);
/* Broadcasts x numpy-style (trailing dims aligned) to the shape `rank/dims`
 * keeping its element type; returns x itself when the shape already matches. */
hlo_value *b_broadcast_to(builder *b, hlo_value *x, uint32_t rank, const int64_t *dims);
/* stablehlo.reshape of x to type `t` (element count not checked). */
hlo_value *b_reshape(builder *b, hlo_value *x, hlo_type *t);
/* stablehlo.slice with start/limit/strides of x's rank; strides NULL = 1s. */
/* stablehlo.transpose of x by `perm` (x's rank entries; result dim i is
 * x's dim perm[i]). */
hlo_value *b_transpose(builder *b, hlo_value *x, const int64_t *perm);
/* A `#stablehlo.dot<...>` dot_dimension_numbers attribute from the four
 * dimension lists (empty lists are left out, as the printer does). */
hlo_attr *b_dot_dims(builder *b, const int64_t *lb, uint32_t nlb, const int64_t *rb, uint32_t nrb,
                     const int64_t *lc, uint32_t nlc, const int64_t *rc, uint32_t nrc);
hlo_value *b_slice(builder *b, hlo_value *x, const int64_t *start, const int64_t *limit,
                   const int64_t *strides);
/* stablehlo.iota of type `t` along `dim` (iota_dimension). */
hlo_value *b_iota(builder *b, hlo_type *t, int64_t dim);
/* stablehlo.concatenate of xs[0..n) along `dim`; result type computed. */
hlo_value *b_concatenate(builder *b, hlo_value *const *xs, uint32_t n, int64_t dim);
#endif
