/* chlo_lower.h — the decompositions behind pass_chlo_legalize, shared by the
 * chlo_*.c files (internal to src/passes/).
 *
 * Value-level decompositions take their operands and return the result value
 * built at `b`'s insertion point, of the operand's type (unless stated). They
 * return NULL either because building failed (then b->failed is set) or
 * because the element type is not supported (b->failed clear): the pass then
 * reports HLO_UNIMPLEMENTED at the op.
 *
 * The formulas are those of stablehlo's chlo-legalize-to-stablehlo
 * (ChloLegalizeToStablehlo.cpp, ChloDecompositionPatterns.td and the
 * generated ChloDecompositionPatternsMath.td), with the same coefficients,
 * the same expression trees and the same intermediate types, so results match
 * the reference interpreter's bit for bit where the elementwise kernels do. */
#ifndef HLO_PASSES_CHLO_LOWER_H
#define HLO_PASSES_CHLO_LOWER_H
#include "passes/builder.h"

/* chlo_special.c: special functions (Cephes / Eigen / Lanczos based, as the
 * upstream patterns cite them). Element types: erf, erfc and bessel_i1e
 * accept f64, f32, f16, bf16 only; erf_inv, lgamma, digamma, zeta, polygamma
 * any float type; cosh float or complex; sinh float or complex. Floats
 * narrower than f32 are computed in f32 (chlo_with_upcast); f64 has its own
 * polynomials for erf, erfc, erf_inv and bessel_i1e. */
hlo_value *chlo_erf(builder *b, hlo_value *x);
hlo_value *chlo_erfc(builder *b, hlo_value *x);
hlo_value *chlo_erf_inv(builder *b, hlo_value *x);
/* lgamma(x) by the Lanczos approximation, with reflection for x < 0.5. */
hlo_value *chlo_lgamma(builder *b, hlo_value *x);
hlo_value *chlo_digamma(builder *b, hlo_value *x);
/* zeta(x, q): Hurwitz zeta (Cephes zeta: Euler-Maclaurin summation); x and q
 * of one float type. */
hlo_value *chlo_zeta(builder *b, hlo_value *x, hlo_value *q);
/* polygamma(n, x) = (-1)^(n+1) n! zeta(n+1, x), digamma for n == 0; n and x
 * of one float type. */
hlo_value *chlo_polygamma(builder *b, hlo_value *n, hlo_value *x);
/* Exponentially scaled modified Bessel function of order 1 (Cephes i1e:
 * Chebyshev series). */
hlo_value *chlo_bessel_i1e(builder *b, hlo_value *x);
hlo_value *chlo_cosh(builder *b, hlo_value *x);
hlo_value *chlo_sinh(builder *b, hlo_value *x);

/* chlo_trig.c: inverse trigonometric / hyperbolic functions, tan, square,
 * conj, is_inf family, next_after, mulhi. acos, acosh, asin, asinh, atan,
 * atanh, tan: float or complex (complex asin/acos/acosh follow Hull et al.'s
 * algorithm as functional_algorithms / ChloDecompositionPatternsMath.td
 * generate it). square: any type. conj: a real x is returned unchanged. */
hlo_value *chlo_acos(builder *b, hlo_value *x);
hlo_value *chlo_acosh(builder *b, hlo_value *x);
hlo_value *chlo_asin(builder *b, hlo_value *x);
hlo_value *chlo_asinh(builder *b, hlo_value *x);
hlo_value *chlo_atan(builder *b, hlo_value *x);
hlo_value *chlo_atanh(builder *b, hlo_value *x);
hlo_value *chlo_tan(builder *b, hlo_value *x);
hlo_value *chlo_square(builder *b, hlo_value *x);
hlo_value *chlo_conj(builder *b, hlo_value *x);
/* i1 results of x's shape; float x only. */
hlo_value *chlo_is_inf(builder *b, hlo_value *x);
hlo_value *chlo_is_pos_inf(builder *b, hlo_value *x);
hlo_value *chlo_is_neg_inf(builder *b, hlo_value *x);
/* nextafter(x, y) elementwise by stepping x's bit pattern (as an integer of
 * the same width) toward y; float x and y of one type. */
hlo_value *chlo_next_after(builder *b, hlo_value *x, hlo_value *y);
/* The high half of the double-width product x * y; signed or unsigned
 * integers of one type (i64/ui64 from 32-bit partial products). */
hlo_value *chlo_mulhi(builder *b, hlo_value *x, hlo_value *y);

/* chlo_control.c: ops with regions or several results; each builds the
 * replacement before `op` and writes op->num_results values to out.
 * Errors: HLO_UNIMPLEMENTED (located at op) for forms not supported,
 * HLO_RESOURCE_EXHAUSTED. */
HLO_MUST_USE hlo_status chlo_lower_top_k(hlo_module_ir *m, hlo_op *op, hlo_value **out);
HLO_MUST_USE hlo_status chlo_lower_scan(hlo_module_ir *m, hlo_op *op, hlo_value **out);
HLO_MUST_USE hlo_status chlo_lower_ragged_dot(hlo_module_ir *m, hlo_op *op, hlo_value **out);

/* Applies `fn` to x computed in f32 when x is a float narrower than 32 bits
 * (converting there and back), else to x directly ("materializeWithUpcast"). */
hlo_value *chlo_with_upcast(builder *b, hlo_value *x, hlo_value *(*fn)(builder *, hlo_value *));
/* The same for a binary `fn`; the upcast is decided by x's element type. */
hlo_value *chlo_with_upcast2(builder *b, hlo_value *x, hlo_value *y,
                             hlo_value *(*fn)(builder *, hlo_value *, hlo_value *));
#endif
