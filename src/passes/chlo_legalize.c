/* chlo_legalize.c — PLACEHOLDER until the chlo pass lands. */
#include "passes/passes.h"
hlo_status pass_chlo_legalize(hlo_module_ir *m) { (void)m; return NULL; }
