/* chlo_special.c — decompositions of chlo's special functions: erf, erfc,
 * erf_inv, lgamma, digamma, zeta, polygamma, bessel_i1e, cosh, sinh.
 *
 * Source of every formula and coefficient: stablehlo's
 * stablehlo/transforms/ChloLegalizeToStablehlo.cpp (Cephes-based erf/erfc
 * for f64, Eigen's erf for f32, Giles' erf_inv, Lanczos lgamma/digamma with
 * g = 7 and 8 coefficients, the Hurwitz zeta of Johansson (2015) formula (5),
 * Cephes' Chebyshev i1e). Expression trees follow that file op for op, so the
 * decomposed programs compute what the reference's do. Narrow floats (f16,
 * bf16) are computed in f32 as the reference does. */
#include <math.h>

#include "passes/chlo_lower.h"
#include "ir/element.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

/* ------------------------------------------------------------- helpers */

static bool is_narrow_float(hlo_dtype dt) {
  return dtype_is_float(dt) && dtype_bits(dt) < 32;
}

hlo_value *chlo_with_upcast(builder *b, hlo_value *x, hlo_value *(*fn)(builder *, hlo_value *)) {
  if (!x) { b->failed = true; return NULL; }
  hlo_dtype dt = x->type->dtype;
  if (!is_narrow_float(dt)) return fn(b, x);
  hlo_value *r = fn(b, b_convert(b, x, HLO_F32));
  return r ? b_convert(b, r, dt) : NULL;
}

hlo_value *chlo_with_upcast2(builder *b, hlo_value *x, hlo_value *y,
                             hlo_value *(*fn)(builder *, hlo_value *, hlo_value *)) {
  if (!x || !y) { b->failed = true; return NULL; }
  hlo_dtype dt = x->type->dtype;
  if (!is_narrow_float(dt)) return fn(b, x, y);
  hlo_value *r = fn(b, b_convert(b, x, HLO_F32), b_convert(b, y, HLO_F32));
  return r ? b_convert(b, r, dt) : NULL;
}

/* Horner: ((c0 * x + c1) * x + c2) ... ("materializePolynomialApproximation"). */
static hlo_value *poly(builder *b, hlo_value *x, const double *c, size_t n) {
  if (n == 0) return b_const_like(b, 0.0, x);
  hlo_value *p = b_const_like(b, c[0], x);
  for (size_t i = 1; i < n; i++) p = B_ADD(b, B_MUL(b, p, x), b_const_like(b, c[i], x));
  return p;
}

static hlo_value *polyf(builder *b, hlo_value *x, const float *c, size_t n) {
  double d[32];
  if (n > NELEM(d)) { b->failed = true; return NULL; }
  for (size_t i = 0; i < n; i++) d[i] = c[i];
  return poly(b, x, d, n);
}

/* ----------------------------------------------------------- erf, erfc */

/* erfc for |x| >= 1, f64 (Cephes). */
static hlo_value *erfc_ge_one_f64(builder *b, hlo_value *x) {
  static const double kMaxlog = 7.09782712893383996843E2;
  static const double P[] = {2.46196981473530512524E-10, 5.64189564831068821977E-1,
                             7.46321056442269912687E0,   4.86371970985681366614E1,
                             1.96520832956077098242E2,   5.26445194995477358631E2,
                             9.34528527171957607540E2,   1.02755188689515710272E3,
                             5.57535335369399327526E2};
  static const double Q[] = {1.00000000000000000000E0, 1.32281951154744992508E1,
                             8.67072140885989742329E1, 3.54937778887819891062E2,
                             9.75708501743205489753E2, 1.82390916687909736289E3,
                             2.24633760818710981792E3, 1.65666309194161350182E3,
                             5.57535340817727675546E2};
  static const double R[] = {5.64189583547755073984E-1, 1.27536670759978104416E0,
                             5.01905042251180477414E0,  6.16021097993053585195E0,
                             7.40974269950448939160E0,  2.97886665372100240670E0};
  static const double S[] = {1.00000000000000000000E0, 2.26052863220117276590E0,
                             9.39603524938001434673E0, 1.20489539808096656605E1,
                             1.70814450747565897222E1, 9.60896809063285878198E0,
                             3.36907645100081516050E0};
  hlo_value *x_sq = B_MUL(b, x, x);
  hlo_value *z = B_NEG(b, x_sq);
  hlo_value *exp_z = B_EXP(b, z);
  hlo_value *abs_x = B_ABS(b, x);
  hlo_value *approx18 = B_DIV(b, B_MUL(b, exp_z, poly(b, abs_x, P, NELEM(P))),
                              poly(b, abs_x, Q, NELEM(Q)));
  hlo_value *approx8inf = B_DIV(b, B_MUL(b, exp_z, poly(b, abs_x, R, NELEM(R))),
                                poly(b, abs_x, S, NELEM(S)));
  hlo_value *lt8 = b_compare(b, "LT", abs_x, b_const_like(b, 8.0, x));
  hlo_value *approx = b_select(b, lt8, approx18, approx8inf);
  hlo_value *z_lt = b_compare(b, "LT", z, b_const_like(b, -kMaxlog, x));
  hlo_value *zero = b_const_like(b, 0.0, x);
  hlo_value *clamped = b_select(b, z_lt, zero, approx);
  hlo_value *x_lt0 = b_compare(b, "LT", x, zero);
  return b_select(b, x_lt0, B_SUB(b, b_const_like(b, 2.0, x), clamped), clamped);
}

/* erf for |x| <= 1, f64 (Cephes): x T(x^2) / U(x^2). */
static hlo_value *erf_le_one_f64(builder *b, hlo_value *x) {
  static const double T[] = {9.60497373987051638749E0, 9.00260197203842689217E1,
                             2.23200534594684319226E3, 7.00332514112805075473E3,
                             5.55923013010394962768E4};
  static const double U[] = {1.00000000000000000000E0, 3.35617141647503099647E1,
                             5.21357949780152679795E2, 4.59432382970980127987E3,
                             2.26290000613890934246E4, 4.92673942608635921086E4};
  hlo_value *x_sq = B_MUL(b, x, x);
  return B_DIV(b, B_MUL(b, x, poly(b, x_sq, T, NELEM(T))), poly(b, x_sq, U, NELEM(U)));
}

static hlo_value *erf_f64(builder *b, hlo_value *x) {
  hlo_value *erf_approx = erf_le_one_f64(b, x);
  hlo_value *one = b_const_like(b, 1.0, x);
  hlo_value *erfc_based = B_SUB(b, one, erfc_ge_one_f64(b, x));
  hlo_value *lt1 = b_compare(b, "LT", B_ABS(b, x), one);
  return b_select(b, lt1, erf_approx, erfc_based);
}

static hlo_value *erfc_f64(builder *b, hlo_value *x) {
  hlo_value *erfc_approx = erfc_ge_one_f64(b, x);
  hlo_value *one = b_const_like(b, 1.0, x);
  hlo_value *erf_based = B_SUB(b, one, erf_le_one_f64(b, x));
  hlo_value *lt1 = b_compare(b, "LT", B_ABS(b, x), one);
  return b_select(b, lt1, erf_based, erfc_approx);
}

/* erfc for |x| >= 1, f32 (Cephes). */
static hlo_value *erfc_ge_one_f32(builder *b, hlo_value *x) {
  static const double kMaxlog = 88.72283905206835;
  static const float P[] = {+2.326819970068386E-2f, -1.387039388740657E-1f,
                            +3.687424674597105E-1f, -5.824733027278666E-1f,
                            +6.210004621745983E-1f, -4.944515323274145E-1f,
                            +3.404879937665872E-1f, -2.741127028184656E-1f,
                            +5.638259427386472E-1f};
  static const float R[] = {-1.047766399936249E+1f, +1.297719955372516E+1f,
                            -7.495518717768503E+0f, +2.921019019210786E+0f,
                            -1.015265279202700E+0f, +4.218463358204948E-1f,
                            -2.820767439740514E-1f, +5.641895067754075E-1f};
  hlo_value *x_sq = B_MUL(b, x, x);
  hlo_value *z = B_NEG(b, x_sq);
  hlo_value *abs_x = B_ABS(b, x);
  hlo_value *one = b_const_like(b, 1.0, x);
  hlo_value *recip_x_sq = B_DIV(b, one, x_sq);
  hlo_value *exp_z = B_EXP(b, z);
  hlo_value *one_div_abs_x = B_DIV(b, one, abs_x);
  hlo_value *exp_z_mul = B_MUL(b, exp_z, one_div_abs_x);
  hlo_value *two = b_const_like(b, 2.0, x);
  hlo_value *lt2 = b_compare(b, "LT", abs_x, two);
  hlo_value *pol_p = polyf(b, recip_x_sq, P, NELEM(P));
  hlo_value *pol_r = polyf(b, recip_x_sq, R, NELEM(R));
  hlo_value *p = b_select(b, lt2, pol_p, pol_r);
  hlo_value *approx = B_MUL(b, exp_z_mul, p);
  hlo_value *z_lt = b_compare(b, "LT", z, b_const_like(b, -kMaxlog, x));
  hlo_value *zero = b_const_like(b, 0.0, x);
  hlo_value *clamped = b_select(b, z_lt, zero, approx);
  hlo_value *x_lt0 = b_compare(b, "LT", x, zero);
  return b_select(b, x_lt0, B_SUB(b, two, clamped), clamped);
}

/* erf for |x| <= 1, f32 (Cephes): x T(x^2). */
static hlo_value *erf_le_one_f32(builder *b, hlo_value *x) {
  static const float T[] = {+7.853861353153693E-5f, -8.010193625184903E-4f,
                            +5.188327685732524E-3f, -2.685381193529856E-2f,
                            +1.128358514861418E-1f, -3.761262582423300E-1f,
                            +1.128379165726710E+0f};
  hlo_value *x_sq = B_MUL(b, x, x);
  return B_MUL(b, x, polyf(b, x_sq, T, NELEM(T)));
}

/* erf, f32: Eigen's rational approximation on [-4, 4]. */
static hlo_value *erf_f32(builder *b, hlo_value *x) {
  static const float kAlpha[] = {-2.72614225801306e-10f, 2.77068142495902e-08f,
                                 -2.10102402082508e-06f, -5.69250639462346e-05f,
                                 -7.34990630326855e-04f, -2.95459980854025e-03f,
                                 -1.60960333262415e-02f};
  static const float kBeta[] = {-1.45660718464996e-05f, -2.13374055278905e-04f,
                                -1.68282697438203e-03f, -7.37332916720468e-03f,
                                -1.42647390514189e-02f};
  x = b_clamp(b, b_const_like(b, -4.0, x), x, b_const_like(b, 4.0, x));
  hlo_value *x_sq = B_MUL(b, x, x);
  hlo_value *alpha = polyf(b, x_sq, kAlpha, NELEM(kAlpha));
  hlo_value *beta = polyf(b, x_sq, kBeta, NELEM(kBeta));
  hlo_value *erf = B_DIV(b, B_MUL(b, x, alpha), beta);
  return b_clamp(b, b_const_like(b, -1.0, x), erf, b_const_like(b, 1.0, x));
}

static hlo_value *erfc_f32(builder *b, hlo_value *x) {
  hlo_value *erfc_approx = erfc_ge_one_f32(b, x);
  hlo_value *one = b_const_like(b, 1.0, x);
  hlo_value *erf_based = B_SUB(b, one, erf_le_one_f32(b, x));
  hlo_value *lt1 = b_compare(b, "LT", B_ABS(b, x), one);
  return b_select(b, lt1, erf_based, erfc_approx);
}

static bool erf_type_ok(hlo_dtype dt) {
  return dt == HLO_F64 || dt == HLO_F32 || dt == HLO_F16 || dt == HLO_BF16;
}

hlo_value *chlo_erf(builder *b, hlo_value *x) {
  if (!x) { b->failed = true; return NULL; }
  hlo_dtype dt = x->type->dtype;
  if (!erf_type_ok(dt)) return NULL;
  if (dt == HLO_F64) return erf_f64(b, x);
  return chlo_with_upcast(b, x, erf_f32);
}

hlo_value *chlo_erfc(builder *b, hlo_value *x) {
  if (!x) { b->failed = true; return NULL; }
  hlo_dtype dt = x->type->dtype;
  if (!erf_type_ok(dt)) return NULL;
  if (dt == HLO_F64) return erfc_f64(b, x);
  return chlo_with_upcast(b, x, erfc_f32);
}

/* ------------------------------------------------------------- erf_inv */

/* Giles, "Approximating the erfinv function", single precision. */
static hlo_value *erf_inv_f32(builder *b, hlo_value *x) {
  static const float lt5[9] = {2.81022636e-08f,  3.43273939e-07f, -3.5233877e-06f,
                               -4.39150654e-06f, 0.00021858087f,  -0.00125372503f,
                               -0.00417768164f,  0.246640727f,    1.50140941f};
  static const float gt5[9] = {-0.000200214257f, 0.000100950558f, 0.00134934322f,
                               -0.00367342844f,  0.00573950773f,  -0.0076224613f,
                               0.00943887047f,   1.00167406f,     2.83297682f};
  hlo_value *minus_x_sq = B_MUL(b, x, B_NEG(b, x));
  hlo_value *w = B_NEG(b, B_LOG1P(b, minus_x_sq));
  hlo_value *lt = b_compare(b, "LT", w, b_const_like(b, 5.0, x));
  w = b_select(b, lt, B_SUB(b, w, b_const_like(b, 2.5, x)),
               B_SUB(b, B_SQRT(b, w), b_const_like(b, 3.0, x)));
  hlo_value *p = b_select(b, lt, b_const_like(b, lt5[0], x), b_const_like(b, gt5[0], x));
  for (int i = 1; i < 9; i++) {
    hlo_value *c = b_select(b, lt, b_const_like(b, lt5[i], x), b_const_like(b, gt5[i], x));
    p = B_ADD(b, c, B_MUL(b, p, w));
  }
  hlo_value *result = B_MUL(b, p, x);
  hlo_value *is_one = b_compare(b, "EQ", B_ABS(b, x), b_const_like(b, 1.0, x));
  return b_select(b, is_one, B_MUL(b, x, b_inf_like(b, x, false)), result);
}

/* Giles, double precision. */
static hlo_value *erf_inv_f64(builder *b, hlo_value *x) {
  static const double lt625[23] = {
      -3.6444120640178196996e-21, -1.685059138182016589e-19, 1.2858480715256400167e-18,
      1.115787767802518096e-17,   -1.333171662854620906e-16, 2.0972767875968561637e-17,
      6.6376381343583238325e-15,  -4.0545662729752068639e-14, -8.1519341976054721522e-14,
      2.6335093153082322977e-12,  -1.2975133253453532498e-11, -5.4154120542946279317e-11,
      1.051212273321532285e-09,   -4.1126339803469836976e-09, -2.9070369957882005086e-08,
      4.2347877827932403518e-07,  -1.3654692000834678645e-06, -1.3882523362786468719e-05,
      0.0001867342080340571352,   -0.00074070253416626697512, -0.0060336708714301490533,
      0.24015818242558961693,     1.6536545626831027356};
  static const double lt16[19] = {
      2.2137376921775787049e-09,  9.0756561938885390979e-08,  -2.7517406297064545428e-07,
      1.8239629214389227755e-08,  1.5027403968909827627e-06,  -4.013867526981545969e-06,
      2.9234449089955446044e-06,  1.2475304481671778723e-05,  -4.7318229009055733981e-05,
      6.8284851459573175448e-05,  2.4031110387097893999e-05,  -0.0003550375203628474796,
      0.00095328937973738049703,  -0.0016882755560235047313,  0.0024914420961078508066,
      -0.0037512085075692412107,  0.005370914553590063617,    1.0052589676941592334,
      3.0838856104922207635};
  static const double gt16[17] = {
      -2.7109920616438573243e-11, -2.5556418169965252055e-10, 1.5076572693500548083e-09,
      -3.7894654401267369937e-09, 7.6157012080783393804e-09,  -1.4960026627149240478e-08,
      2.9147953450901080826e-08,  -6.7711997758452339498e-08, 2.2900482228026654717e-07,
      -9.9298272942317002539e-07, 4.5260625972231537039e-06,  -1.9681778105531670567e-05,
      7.5995277030017761139e-05,  -0.00021503011930044477347, -0.00013871931833623122026,
      1.0103004648645343977,      4.8499064014085844221};
  hlo_value *minus_x_sq = B_MUL(b, x, B_NEG(b, x));
  hlo_value *w = B_NEG(b, B_LOG1P(b, minus_x_sq));
  hlo_value *is_lt625 = b_compare(b, "LT", w, b_const_like(b, 6.25, x));
  hlo_value *is_lt16 = b_compare(b, "LT", w, b_const_like(b, 16.0, x));
  hlo_value *sqrt_w = B_SQRT(b, w);
  hlo_value *w_m3125 = B_SUB(b, w, b_const_like(b, 3.125, x));
  hlo_value *sel2 = b_select(b, is_lt16, b_const_like(b, 3.25, w), b_const_like(b, 5.0, w));
  w = b_select(b, is_lt625, w_m3125, B_SUB(b, sqrt_w, sel2));
#define COEFF(i, out)                                                              \
  do {                                                                             \
    hlo_value *c_ = b_const_like(b, lt625[i], x);                                  \
    if ((i) < 19) c_ = b_select(b, is_lt625, c_, b_const_like(b, lt16[i], x));     \
    if ((i) < 17) c_ = b_select(b, is_lt16, c_, b_const_like(b, gt16[i], x));      \
    (out) = c_;                                                                    \
  } while (0)
  hlo_value *p, *c;
  COEFF(0, p);
  for (int i = 1; i < 17; i++) {
    COEFF(i, c);
    p = B_ADD(b, c, B_MUL(b, p, w));
  }
  for (int i = 17; i < 19; i++) {
    COEFF(i, c);
    p = b_select(b, is_lt16, B_ADD(b, c, B_MUL(b, p, w)), p);
  }
  for (int i = 19; i < 23; i++) {
    COEFF(i, c);
    p = b_select(b, is_lt625, B_ADD(b, c, B_MUL(b, p, w)), p);
  }
#undef COEFF
  hlo_value *result = B_MUL(b, p, x);
  hlo_value *is_one = b_compare(b, "EQ", B_ABS(b, x), b_const_like(b, 1.0, x));
  return b_select(b, is_one, B_MUL(b, x, b_inf_like(b, x, false)), result);
}

hlo_value *chlo_erf_inv(builder *b, hlo_value *x) {
  if (!x) { b->failed = true; return NULL; }
  hlo_dtype dt = x->type->dtype;
  if (!dtype_is_float(dt)) return NULL;
  if (dt == HLO_F64) return erf_inv_f64(b, x);
  return chlo_with_upcast(b, x, erf_inv_f32);
}

/* ----------------------------------------------------- lgamma, digamma */

static const double kLanczosGamma = 7;
static const double kBaseLanczosCoeff = 0.99999999999980993227684700473478;
static const double kLanczosCoefficients[8] = {
    676.520368121885098567009190444019, -1259.13921672240287047156078755283,
    771.3234287776530788486528258894,   -176.61502916214059906584551354,
    12.507343278686904814458936853,     -0.13857109526572011689554707,
    9.984369578019570859563e-6,         1.50563273514931155834e-7};

/* lgamma by Lanczos' approximation with Euler's reflection for x < 1/2. */
static hlo_value *lgamma_impl(builder *b, hlo_value *x) {
  hlo_value *half = b_const_like(b, 0.5, x);
  hlo_value *need_reflect = b_compare(b, "LT", x, half);
  hlo_value *neg_x = B_NEG(b, x);
  hlo_value *one = b_const_like(b, 1.0, x);
  hlo_value *x_sub_one = B_SUB(b, x, one);
  hlo_value *z = b_select(b, need_reflect, neg_x, x_sub_one);
  hlo_value *a = b_const_like(b, kBaseLanczosCoeff, x);
  for (int i = 0; i < 8; i++) {
    hlo_value *coeff = b_const_like(b, kLanczosCoefficients[i], x);
    hlo_value *idx = b_const_like(b, (double)(i + 1), x);
    a = B_ADD(b, a, B_DIV(b, coeff, B_ADD(b, z, idx)));
  }
  hlo_value *lanczos_plus_half = b_const_like(b, kLanczosGamma + 0.5, x);
  hlo_value *t = B_ADD(b, lanczos_plus_half, z);
  hlo_value *log_term = b_const_like(b, log(kLanczosGamma + 0.5), x);
  hlo_value *log1p_term = B_LOG1P(b, B_DIV(b, z, lanczos_plus_half));
  hlo_value *log_t = B_ADD(b, log_term, log1p_term);
  hlo_value *t_div_log_t = B_DIV(b, t, log_t);
  hlo_value *sum = B_SUB(b, B_ADD(b, z, half), t_div_log_t);
  hlo_value *r = B_MUL(b, sum, log_t);
  hlo_value *log_a = B_LOG(b, a);
  hlo_value *lgamma = B_ADD(b, B_ADD(b, b_const_like(b, (log(2.0) + log(M_PI)) / 2, x), r), log_a);

  hlo_value *abs = B_ABS(b, x);
  hlo_value *abs_frac = B_SUB(b, abs, B_FLOOR(b, abs));
  hlo_value *reduce = b_compare(b, "LT", half, abs_frac);
  abs_frac = b_select(b, reduce, B_SUB(b, one, abs_frac), abs_frac);
  hlo_value *refl_denom = B_LOG(
      b, b_unary(b, OP_SINE, B_MUL(b, b_const_like(b, M_PI, x), abs_frac)));
  hlo_value *lgamma_refl =
      B_SUB(b, B_SUB(b, b_const_like(b, log(M_PI), x), refl_denom), lgamma);
  hlo_value *finite = b_unary_to(b, OP_IS_FINITE, refl_denom, HLO_I1);
  lgamma_refl = b_select(b, finite, lgamma_refl, B_NEG(b, refl_denom));
  lgamma = b_select(b, need_reflect, lgamma_refl, lgamma);
  hlo_value *x_is_inf = chlo_is_inf(b, x);
  return b_select(b, x_is_inf, b_inf_like(b, x, false), lgamma);
}

/* digamma by Lanczos' approximation with reflection for x < 1/2. */
static hlo_value *digamma_impl(builder *b, hlo_value *x) {
  hlo_value *half = b_const_like(b, 0.5, x);
  hlo_value *need_reflect = b_compare(b, "LT", x, half);
  hlo_value *neg_x = B_NEG(b, x);
  hlo_value *one = b_const_like(b, 1.0, x);
  hlo_value *x_sub_one = B_SUB(b, x, one);
  hlo_value *z = b_select(b, need_reflect, neg_x, x_sub_one);
  hlo_value *zero = b_const_like(b, 0.0, x);
  hlo_value *a = b_const_like(b, kBaseLanczosCoeff, x);
  hlo_value *a_prime = zero;
  for (int i = 0; i < 8; i++) {
    hlo_value *coeff = b_const_like(b, kLanczosCoefficients[i], x);
    hlo_value *idx = b_const_like(b, (double)(i + 1), x);
    hlo_value *z_term = B_ADD(b, z, idx);
    a_prime = B_SUB(b, a_prime, B_DIV(b, coeff, B_MUL(b, z_term, z_term)));
    a = B_ADD(b, a, B_DIV(b, coeff, z_term));
  }
  hlo_value *lanczos_plus_half = b_const_like(b, kLanczosGamma + 0.5, x);
  hlo_value *t = B_ADD(b, lanczos_plus_half, z);
  hlo_value *log_term = b_const_like(b, log(kLanczosGamma + 0.5), x);
  hlo_value *log1p_term = B_LOG1P(b, B_DIV(b, z, lanczos_plus_half));
  hlo_value *log_t = B_ADD(b, log_term, log1p_term);
  hlo_value *a_prime_div_a = B_DIV(b, a_prime, a);
  hlo_value *g_div_t = B_DIV(b, b_const_like(b, kLanczosGamma, x), t);
  hlo_value *digamma = B_SUB(b, B_ADD(b, log_t, a_prime_div_a), g_div_t);

  hlo_value *reduced_x = B_ADD(b, x, B_ABS(b, B_FLOOR(b, B_ADD(b, x, b_const_like(b, 0.5, x)))));
  hlo_value *pi = b_const_like(b, M_PI, x);
  hlo_value *pi_x = B_MUL(b, pi, reduced_x);
  hlo_value *cos = b_unary(b, OP_COSINE, pi_x);
  hlo_value *sin = b_unary(b, OP_SINE, pi_x);
  hlo_value *reflection = B_SUB(b, digamma, B_DIV(b, B_MUL(b, pi, cos), sin));
  digamma = b_select(b, need_reflect, reflection, digamma);

  /* Digamma has poles at zero and the negative integers: NaN there, as
   * XLA's Digamma and stablehlo's materializeDigamma return */
  hlo_value *is_le_zero = b_compare(b, "LE", x, zero);
  hlo_value *is_int = b_compare(b, "EQ", x, B_FLOOR(b, x));
  hlo_value *pole = B_AND(b, is_le_zero, is_int);
  return b_select(b, pole, b_const_like(b, NAN, x), digamma);
}

hlo_value *chlo_lgamma(builder *b, hlo_value *x) {
  if (!x) { b->failed = true; return NULL; }
  if (!dtype_is_float(x->type->dtype)) return NULL;
  return chlo_with_upcast(b, x, lgamma_impl);
}

hlo_value *chlo_digamma(builder *b, hlo_value *x) {
  if (!x) { b->failed = true; return NULL; }
  if (!dtype_is_float(x->type->dtype)) return NULL;
  return chlo_with_upcast(b, x, digamma_impl);
}

/* ------------------------------------------------------ zeta, polygamma */

/* Hurwitz zeta(x, q): Euler-Maclaurin summation with 9 terms plus a 12-term
 * tail (Johansson 2015, formula (5)), as XLA's math.cc. */
static hlo_value *zeta_impl(builder *b, hlo_value *x, hlo_value *q) {
  enum { kTerms = 12, kIters = 9, kTwoTermsMinusOne = 2 * kTerms - 1 };
  static const double kZetaCoeffs[kTerms] = {
      -7.1661652561756670113e18, 1.8152105401943546773e17, -4.5979787224074726105e15,
      1.1646782814350067249e14,  -2.950130727918164224e12, 7.47242496e10,
      -1.8924375803183791606e9,  47900160.0,               -1209600.0,
      30240.0,                   -720.0,                   12.0};
  hlo_value *zero = b_const_like(b, 0.0, q);
  hlo_value *one = b_const_like(b, 1.0, q);
  hlo_value *acc = q;
  hlo_value *neg_x = B_NEG(b, x);
  hlo_value *power_sum = b_binary(b, OP_POWER, q, neg_x);
  hlo_value *q_neg_power;
  for (int i = 0; i < kIters; i++) {
    acc = B_ADD(b, acc, one);
    q_neg_power = b_binary(b, OP_POWER, acc, neg_x);
    power_sum = B_ADD(b, power_sum, q_neg_power);
  }
  acc = B_ADD(b, acc, one);
  q_neg_power = b_binary(b, OP_POWER, acc, neg_x);
  hlo_value *one_like_x = b_const_like(b, 1.0, x);
  hlo_value *correction = B_DIV(b, B_MUL(b, q_neg_power, acc), B_SUB(b, x, one_like_x));
  hlo_value *rsqrt_acc = B_DIV(b, one, B_MUL(b, acc, acc));
  hlo_value *horner_sum = zero;
  hlo_value *horner_product = one;
  for (int i = 0; i < kTerms - 1; i++) {
    hlo_value *fl = B_ADD(b, x, b_const_like(b, (double)(kTwoTermsMinusOne - 1 - 2 * i), x));
    hlo_value *fr = B_ADD(b, x, b_const_like(b, (double)(kTwoTermsMinusOne - 2 - 2 * i), x));
    horner_product = B_MUL(b, fl, fr);
    horner_sum = B_MUL(b, horner_product,
                       B_MUL(b, rsqrt_acc,
                             B_ADD(b, horner_sum, b_const_like(b, 1. / kZetaCoeffs[i], acc))));
  }
  (void)horner_product;
  hlo_value *half = b_const_like(b, .5, q_neg_power);
  hlo_value *x_div_acc = B_DIV(b, x, acc);
  hlo_value *tail = B_MUL(
      b, q_neg_power,
      B_ADD(b, half,
            B_MUL(b, x_div_acc,
                  B_ADD(b, b_const_like(b, 1. / kZetaCoeffs[kTerms - 1], acc), horner_sum))));
  hlo_value *accurate = B_ADD(b, B_ADD(b, power_sum, correction), tail);
  hlo_value *abs_qnp = B_ABS(b, q_neg_power);
  hlo_value *abs_ps = B_ABS(b, power_sum);
  hlo_value *output = b_select(
      b, b_compare(b, "LT", abs_qnp, B_MUL(b, abs_ps, b_smallest_like(b, acc))), power_sum,
      accurate);
  hlo_value *nan = b_const_like(b, NAN, x);
  output = b_select(b, b_compare(b, "LT", x, one_like_x), nan, output);
  hlo_value *q_le_zero = b_compare(b, "LE", q, zero);
  hlo_value *x_not_int = b_compare(b, "NE", x, B_FLOOR(b, x));
  output = b_select(b, B_AND(b, q_le_zero, x_not_int), nan, output);
  hlo_value *inf = b_const_like(b, INFINITY, x);
  hlo_value *q_is_int = b_compare(b, "EQ", q, B_FLOOR(b, q));
  hlo_value *at_pole = B_AND(b, q_le_zero, q_is_int);
  hlo_value *two = b_const_like(b, 2.0, x);
  hlo_value *x_is_int = b_compare(b, "EQ", x, B_FLOOR(b, x));
  hlo_value *x_is_even = b_compare(b, "EQ", b_binary(b, OP_REMAINDER, x, two), zero);
  hlo_value *x_even_int = B_AND(b, x_is_int, x_is_even);
  output = b_select(b, at_pole, b_select(b, x_even_int, inf, nan), output);
  return b_select(b, b_compare(b, "EQ", x, one), inf, output);
}

hlo_value *chlo_zeta(builder *b, hlo_value *x, hlo_value *q) {
  if (!x || !q) { b->failed = true; return NULL; }
  if (!dtype_is_float(x->type->dtype)) return NULL;
  return chlo_with_upcast2(b, x, q, zeta_impl);
}

static hlo_value *polygamma_impl(builder *b, hlo_value *n, hlo_value *x) {
  hlo_value *one = b_const_like(b, 1.0, x);
  hlo_value *two = b_const_like(b, 2.0, x);
  hlo_value *sign = B_SUB(b, B_MUL(b, two, b_binary(b, OP_REMAINDER, n, two)), one);
  hlo_value *n_plus_one = B_ADD(b, n, one);
  hlo_value *exp_lgamma = B_EXP(b, lgamma_impl(b, n_plus_one));
  hlo_value *zeta = zeta_impl(b, n_plus_one, x);
  hlo_value *result = B_MUL(b, B_MUL(b, sign, exp_lgamma), zeta);
  hlo_value *zero = b_const_like(b, 0.0, x);
  hlo_value *n_eq_zero = b_compare(b, "EQ", n, zero);
  result = b_select(b, n_eq_zero, digamma_impl(b, x), result);
  hlo_value *non_int = b_compare(b, "NE", n, B_FLOOR(b, n));
  hlo_value *negative = b_compare(b, "LT", n, zero);
  hlo_value *non_natural = B_OR(b, non_int, negative);
  return b_select(b, non_natural, b_const_like(b, NAN, x), result);
}

hlo_value *chlo_polygamma(builder *b, hlo_value *n, hlo_value *x) {
  if (!n || !x) { b->failed = true; return NULL; }
  if (!dtype_is_float(x->type->dtype)) return NULL;
  return chlo_with_upcast2(b, n, x, polygamma_impl);
}

/* ---------------------------------------------------------- bessel_i1e */

static hlo_value *chebyshev(builder *b, hlo_value *x, const double *c, size_t n) {
  hlo_value *b0 = b_const_like(b, 0.0, x);
  hlo_value *b1 = b_const_like(b, 0.0, x);
  hlo_value *b2 = b_const_like(b, 0.0, x);
  for (size_t i = 0; i < n; i++) {
    b2 = b1;
    b1 = b0;
    b0 = B_MUL(b, x, b1);
    b0 = B_SUB(b, b0, b2);
    b0 = B_ADD(b, b0, b_const_like(b, c[i], x));
  }
  return B_MUL(b, B_SUB(b, b0, b2), b_const_like(b, 0.5, x));
}

/* Cephes i1e: Chebyshev series `ca` for |x| <= 8, `cb` above. */
static hlo_value *i1e_impl(builder *b, hlo_value *x, const double *ca, size_t na,
                           const double *cb, size_t nb) {
  hlo_value *z = B_ABS(b, x);
  hlo_value *half = b_const_like(b, 0.5, x);
  hlo_value *two = b_const_like(b, 2.0, x);
  hlo_value *thirty_two = b_const_like(b, 32.0, x);
  hlo_value *eight = b_const_like(b, 8.0, x);
  hlo_value *tmp = B_SUB(b, B_MUL(b, half, z), two);
  hlo_value *le8 = B_MUL(b, z, chebyshev(b, tmp, ca, na));
  tmp = B_SUB(b, B_DIV(b, thirty_two, z), two);
  hlo_value *gt8 = B_DIV(b, chebyshev(b, tmp, cb, nb), B_SQRT(b, z));
  hlo_value *is_le8 = b_compare(b, "LE", z, eight);
  return B_MUL(b, b_unary(b, OP_SIGN, x), b_select(b, is_le8, le8, gt8));
}

static hlo_value *i1e_f32(builder *b, hlo_value *x) {
  static const float A[] = {
      9.38153738649577178388E-9f,  -4.44505912879632808065E-8f, 2.00329475355213526229E-7f,
      -8.56872026469545474066E-7f, 3.47025130813767847674E-6f,  -1.32731636560394358279E-5f,
      4.78156510755005422638E-5f,  -1.61760815825896745588E-4f, 5.12285956168575772895E-4f,
      -1.51357245063125314899E-3f, 4.15642294431288815669E-3f,  -1.05640848946261981558E-2f,
      2.47264490306265168283E-2f,  -5.29459812080949914269E-2f, 1.02643658689847095384E-1f,
      -1.76416518357834055153E-1f, 2.52587186443633654823E-1f};
  static const float B[] = {-3.83538038596423702205E-9f, -2.63146884688951950684E-8f,
                            -2.51223623787020892529E-7f, -3.88256480887769039346E-6f,
                            -1.10588938762623716291E-4f, -9.76109749136146840777E-3f,
                            7.78576235018280120474E-1f};
  double a[NELEM(A)], bb[NELEM(B)];
  for (size_t i = 0; i < NELEM(A); i++) a[i] = A[i];
  for (size_t i = 0; i < NELEM(B); i++) bb[i] = B[i];
  return i1e_impl(b, x, a, NELEM(a), bb, NELEM(bb));
}

static hlo_value *i1e_f64(builder *b, hlo_value *x) {
  static const double A[] = {
      2.77791411276104639959E-18, -2.11142121435816608115E-17, 1.55363195773620046921E-16,
      -1.10559694773538630805E-15, 7.60068429473540693410E-15, -5.04218550472791168711E-14,
      3.22379336594557470981E-13, -1.98397439776494371520E-12, 1.17361862988909016308E-11,
      -6.66348972350202774223E-11, 3.62559028155211703701E-10, -1.88724975172282928790E-9,
      9.38153738649577178388E-9,  -4.44505912879632808065E-8, 2.00329475355213526229E-7,
      -8.56872026469545474066E-7, 3.47025130813767847674E-6,  -1.32731636560394358279E-5,
      4.78156510755005422638E-5,  -1.61760815825896745588E-4, 5.12285956168575772895E-4,
      -1.51357245063125314899E-3, 4.15642294431288815669E-3,  -1.05640848946261981558E-2,
      2.47264490306265168283E-2,  -5.29459812080949914269E-2, 1.02643658689847095384E-1,
      -1.76416518357834055153E-1, 2.52587186443633654823E-1};
  static const double B[] = {
      7.51729631084210481353E-18,  4.41434832307170791151E-18,  -4.65030536848935832153E-17,
      -3.20952592199342395980E-17, 2.96262899764595013876E-16,  3.30820231092092828324E-16,
      -1.88035477551078244854E-15, -3.81440307243700780478E-15, 1.04202769841288027642E-14,
      4.27244001671195135429E-14,  -2.10154184277266431302E-14, -4.08355111109219731823E-13,
      -7.19855177624590851209E-13, 2.03562854414708950722E-12,  1.41258074366137813316E-11,
      3.25260358301548823856E-11,  -1.89749581235054123450E-11, -5.58974346219658380687E-10,
      -3.83538038596423702205E-9,  -2.63146884688951950684E-8,  -2.51223623787020892529E-7,
      -3.88256480887769039346E-6,  -1.10588938762623716291E-4,  -9.76109749136146840777E-3,
      7.78576235018280120474E-1};
  return i1e_impl(b, x, A, NELEM(A), B, NELEM(B));
}

hlo_value *chlo_bessel_i1e(builder *b, hlo_value *x) {
  if (!x) { b->failed = true; return NULL; }
  hlo_dtype dt = x->type->dtype;
  if (!erf_type_ok(dt)) return NULL;
  if (dt == HLO_F64) return i1e_f64(b, x);
  return chlo_with_upcast(b, x, i1e_f32);
}

/* ---------------------------------------------------------- cosh, sinh */

/* cosh(x) = e^(x + log(1/2)) + e^(-x + log(1/2)). */
static hlo_value *cosh_impl(builder *b, hlo_value *x) {
  hlo_value *log_half = B_LOG(b, b_const_like(b, 0.5, x));
  hlo_value *e_add = B_EXP(b, B_ADD(b, x, log_half));
  hlo_value *e_sub = B_EXP(b, B_SUB(b, log_half, x));
  return B_ADD(b, e_add, e_sub);
}

/* sinh(x) = e^(x + log(1/2)) - e^(-x + log(1/2)). */
static hlo_value *sinh_large(builder *b, hlo_value *x) {
  hlo_value *log_half = B_LOG(b, b_const_like(b, 0.5, x));
  hlo_value *e_add = B_EXP(b, B_ADD(b, x, log_half));
  hlo_value *e_sub = B_EXP(b, B_SUB(b, log_half, x));
  return B_SUB(b, e_add, e_sub);
}

/* sinh with (expm1(x) + expm1(x) / (expm1(x) + 1)) / 2 for |x| < 1. */
static hlo_value *sinh_impl(builder *b, hlo_value *x) {
  hlo_value *large = sinh_large(b, x);
  hlo_value *expm1 = b_unary(b, OP_EXPONENTIAL_MINUS_ONE, x);
  hlo_value *one = b_const_like(b, 1.0, x);
  hlo_value *half = b_const_like(b, 0.5, x);
  hlo_value *ratio = B_DIV(b, expm1, B_ADD(b, expm1, one));
  hlo_value *small = B_MUL(b, half, B_ADD(b, expm1, ratio));
  hlo_value *lt1 = b_compare(b, "LT", B_ABS(b, x), one);
  return b_select(b, lt1, small, large);
}

hlo_value *chlo_cosh(builder *b, hlo_value *x) {
  if (!x) { b->failed = true; return NULL; }
  hlo_dtype dt = x->type->dtype;
  if (!dtype_is_float(dt) && dtype_class(dt) != HLO_CLASS_COMPLEX) return NULL;
  return chlo_with_upcast(b, x, cosh_impl);
}

hlo_value *chlo_sinh(builder *b, hlo_value *x) {
  if (!x) { b->failed = true; return NULL; }
  hlo_dtype dt = x->type->dtype;
  if (dtype_class(dt) == HLO_CLASS_COMPLEX) return sinh_large(b, x);
  if (!dtype_is_float(dt)) return NULL;
  return chlo_with_upcast(b, x, sinh_impl);
}
