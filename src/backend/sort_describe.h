/* sort_describe.h — a `stablehlo.sort` op whose comparator is one of the
 * forms JAX and the StableHLO tests emit, decoded into one backend-neutral
 * description (backend_sort) that native backends read instead of calling
 * the comparator region per comparison: the CPU backend's sort
 * (backend/cpu/sort.c) now, a GPU one later. An op not described keeps the
 * interpreter's thunk.
 *
 * What is described (spec, "sort"):
 *   - 1 .. BACKEND_SORT_MAX_OPERANDS static, not quantized operands of one
 *     shape, rank 1 .. BACKEND_SORT_MAX_RANK, any element type the keys
 *     allow (payload operands: any type up to 16 bytes), the results of
 *     the same types; `dimension` (negative counts from the back);
 *   - the comparator as a lexicographic chain of KEYS. A key is operand k
 *     (or the real / imag part of a complex operand) compared as
 *     `compare DIR, f(arg 2k), f(arg 2k+1)` with DIR = LT or GT (arguments
 *     swapped: the other direction), where f is the identity or JAX's
 *     float canonicalisation: selects of a constant under `compare EQ, x,
 *     C, FLOAT` / `compare NE, x, x, FLOAT` (x == 0 -> +0, NaN -> one
 *     NaN), outermost select tested first. A chain of keys K1, K2, ...
 *     is `or(K1.lt, and(K1.eq, rest))` (operands of or / and either
 *     way round) or `select(K1.eq, rest, K1.lt)` / `select(K1.ne, K1.lt,
 *     rest)`, where K.eq / K.ne is `compare EQ / NE` of the same two
 *     canonicalised values with the same comparison type;
 *   - comparison types as the interpreter applies them: signed integers
 *     SIGNED, unsigned integers and i1 UNSIGNED (whatever the attribute
 *     says), floats (f16, bf16, f32, f64) TOTALORDER when the attribute
 *     says so, else FLOAT (IEEE: -0 == +0, NaN unordered).
 *
 * Semantics: result k's slice along `dimension` is input k's slice
 * permuted so that the comparator, a strict weak order or not, gives the
 * order the reference interpreter's stable bottom-up merge sort gives
 * (interp/interp_sort.c); is_stable = false allows any order the spec
 * permits, and the described sort gives that same (stable) one. */
#ifndef HLO_BACKEND_SORT_DESCRIBE_H
#define HLO_BACKEND_SORT_DESCRIBE_H
#include <stdbool.h>
#include <stdint.h>
#include "ir/ir.h"

#define BACKEND_SORT_MAX_OPERANDS 16
#define BACKEND_SORT_MAX_KEYS 8
#define BACKEND_SORT_MAX_RANK 8
#define BACKEND_SORT_MAX_CANON 4

/* How a key's two values compare (the interpreter's compare). */
typedef enum backend_sort_cmp {
  BACKEND_SORT_SIGNED,     /* integers, two's complement */
  BACKEND_SORT_UNSIGNED,   /* unsigned integers and i1 */
  BACKEND_SORT_FLOAT,      /* IEEE: -0 == +0; NaN neither less, greater nor equal */
  BACKEND_SORT_TOTALORDER, /* IEEE totalOrder on the bits: -NaN < -inf < .. < -0 < +0 < .. < +NaN */
} backend_sort_cmp;

/* One step of a float key's canonicalisation: when the value satisfies
 * the test (is NaN, or == eq_value under IEEE compare), it becomes the
 * constant with bits `to_bits` (of the key's element type). */
typedef struct backend_sort_canon {
  bool is_nan;             /* the test is `compare NE, x, x` */
  double eq_value;         /* else `compare EQ, x, eq_value` */
  uint64_t to_bits;
} backend_sort_canon;

typedef struct backend_sort_key {
  uint32_t operand;        /* which input */
  int32_t part;            /* -1: the element; 0 / 1: real / imag part of a complex one */
  hlo_dtype dtype;         /* of the compared value (the part's for complex) */
  backend_sort_cmp cmp;
  bool descending;         /* GT: the greater sorts first */
  uint32_t ncanon;         /* canonicalisation steps, outermost (tested first) first */
  backend_sort_canon canon[BACKEND_SORT_MAX_CANON];
} backend_sort_key;

typedef struct backend_sort {
  uint32_t num_operands;
  hlo_dtype dtypes[BACKEND_SORT_MAX_OPERANDS]; /* of the inputs (= of the results) */
  uint32_t rank;
  int64_t dims[BACKEND_SORT_MAX_RANK];
  uint32_t dimension;      /* the sorted dim, in [0, rank) */
  bool is_stable;          /* the attribute (the order given is the same either way) */
  uint32_t nkeys;          /* >= 1: the comparator is lexicographic over keys[0..nkeys) */
  backend_sort_key keys[BACKEND_SORT_MAX_KEYS];
} backend_sort;

/* Decodes `op` (a stablehlo.sort) into *out when its operands and
 * comparator are of the forms above; false otherwise (*out undefined).
 * Reads the op only; never fails on bad input (false). */
bool sort_describe(const hlo_op *op, backend_sort *out);

/* A one-line summary of `s` into buf (e.g. "2 operands 24x8 dim 1, keys:
 * #0 f32 desc totalorder, #1 i32 asc signed"), for dumps and tests. */
void sort_describe_print(const backend_sort *s, char *buf, size_t size);

#endif /* HLO_BACKEND_SORT_DESCRIBE_H */
