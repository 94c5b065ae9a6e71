/* math_preamble.c — prints the CPU backend's C preamble (the static inline
 * helpers every generated kernel source starts with: hlo_expf, hlo_tanhf,
 * ...) to stdout, so that bench/math_ulp.c can be compiled against exactly
 * the code the kernels use. Used by bench/math_ulp.sh (bench/MATH.md).
 *   (built by bench/math_ulp.sh) */
#include <stdio.h>
#include "backend/cpu/cpu.h"

int main(void) {
  fputs(cpu_c_dialect()->preamble, stdout);
  return ferror(stdout) ? 1 : 0;
}
