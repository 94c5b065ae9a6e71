/* verify.c — the verifier. PLACEHOLDER until the verifier lands. */
#include "ir/ir.h"
hlo_status module_verify(const hlo_module_ir *m) { (void)m; return NULL; }
