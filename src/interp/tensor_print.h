/* tensor_print.h — printing interpreter values in the StableHLO reference
 * interpreter's format. */
#ifndef HLO_INTERP_TENSOR_PRINT_H
#define HLO_INTERP_TENSOR_PRINT_H
#include "interp/interp.h"
#include "support/strbuf.h"

/* Appends `x` to `b` as the reference interpreter prints a value:
 *   tensor<2x2xi8> {
 *     [
 *       [1, 2],
 *       [3, 4]
 *     ]
 *   }
 * (a scalar: `tensor<ui8> {1}`), ending with a newline. Tuples print their
 * elements between `{` and `}`. */
void tensor_print(strbuf *b, const tensor *x);
#endif
