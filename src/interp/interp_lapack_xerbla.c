/* interp_lapack_xerbla.c — hlo's own LAPACK / BLAS error handler.
 *
 * Reference LAPACK and BLAS report an illegal argument by calling
 * XERBLA(SRNAME, INFO), whose reference version prints "On entry to SRNAME
 * parameter number INFO had an illegal value" and executes Fortran STOP:
 * the whole process exits (with status 0). Some routines call it on data,
 * not on a caller's mistake: since LAPACK 3.11 ?GEBAL (inside ?GEEV, ?GEES)
 * reports a NaN in the matrix as "parameter 3" and returns. A library must
 * never exit, so hlo defines xerbla_ and xerbla_array_ itself: the program
 * (or any executable linked with libhlo.a, which lists -llapack -lblas after
 * it) exports these definitions, and the dynamic linker binds the calls
 * inside liblapack.so / libblas.so to them instead of their own. They
 * record the routine name and the argument number in thread-local state
 * and return, as OpenBLAS's xerbla (what jaxlib's kernels run on) does;
 * the LAPACK routine then returns its (negative) INFO to the custom-call
 * kernel, which puts it into the info result as jaxlib does.
 *
 * This object is pulled out of libhlo.a by the kernels' calls to
 * lk_xerbla_clear / lk_xerbla_take; the override only holds while it is
 * linked in (tests/unit/test_custom_call.c checks that it is). */
#include <stddef.h>
#include <string.h>
#include "interp/interp_lapack.h"

/* The last report on this thread since lk_xerbla_clear: routine name
 * (NUL-terminated, trailing blanks removed), argument number, count. */
static _Thread_local struct {
  char name[LK_XERBLA_NAME_MAX];
  int arg;
  int count;
} xerbla_state;

static void record(const char *name, size_t len, int arg) {
  while (len > 0 && (name[len - 1] == ' ' || name[len - 1] == '\0')) len--;
  if (len >= sizeof xerbla_state.name) len = sizeof xerbla_state.name - 1;
  memcpy(xerbla_state.name, name, len);
  xerbla_state.name[len] = '\0';
  xerbla_state.arg = arg;
  xerbla_state.count++;
}

/* Fortran SUBROUTINE XERBLA(SRNAME, INFO), CHARACTER*(*) SRNAME: gfortran
 * passes the length of SRNAME after the visible arguments. Records and
 * returns (never prints, never exits). */
void xerbla_(const char *srname, const int *info, size_t srname_len) {
  record(srname ? srname : "", srname ? srname_len : 0, info ? *info : 0);
}

/* Fortran SUBROUTINE XERBLA_ARRAY(SRNAME_ARRAY, SRNAME_LEN, INFO): the name
 * as an array of CHARACTER(1) (from C callers such as LAPACKE). */
void xerbla_array_(const char *srname_array, const int *srname_len, const int *info,
                   size_t elem_len) {
  (void)elem_len;
  int n = srname_len && *srname_len > 0 ? *srname_len : 0;
  record(srname_array ? srname_array : "", srname_array ? (size_t)n : 0, info ? *info : 0);
}

void lk_xerbla_clear(void) {
  xerbla_state.name[0] = '\0';
  xerbla_state.arg = 0;
  xerbla_state.count = 0;
}

int lk_xerbla_take(char name[LK_XERBLA_NAME_MAX], int *arg) {
  int n = xerbla_state.count;
  if (name) memcpy(name, xerbla_state.name, LK_XERBLA_NAME_MAX);
  if (arg) *arg = xerbla_state.arg;
  lk_xerbla_clear();
  return n;
}
