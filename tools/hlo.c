/* hlo.c — the hlo command-line program. PLACEHOLDER until the CLI lands. */
#include <stdio.h>
#include "hlo/hlo.h"
int main(int argc, char **argv) { (void)argc; (void)argv; fprintf(stderr, "hlo: not built yet\n"); return 1; }
