/* print.c — the printer. PLACEHOLDER until the printer lands. */
#include "ir/ir.h"
#include <stdlib.h>
char *module_print(const hlo_module_ir *m) { (void)m; return NULL; }
