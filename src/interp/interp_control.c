/* interp_control.c — PLACEHOLDER until its kernels land. */
#include "interp/interp.h"
void interp_register_control(interp_kernel *table) { (void)table; }
