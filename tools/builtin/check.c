/* check.c — `hlo check`: parse and verify a program against the StableHLO
 * spec; warn about custom-call targets that have no handler. */
#include <stdio.h>

#include "builtin.h"
#include "interp/interp.h"
#include "ir/ir.h"
#include "runtime/runtime.h"

static const char *const usage_check =
    "usage: hlo check [--split-input-file] FILE\n"
    "\n"
    "Parses FILE and verifies every op against the type and shape constraints of the\n"
    "StableHLO spec. Prints `FILE: ok` or the first error as FILE:LINE:COL with the\n"
    "spec constraint it breaks; exits 1 on error.\n"
    "\n"
    "  --split-input-file  check each `// -----`-separated module\n";


/* Warns about custom calls whose target has no handler: running them fails,
 * but only when reached, so a call on an error path is no error here. */
static void warn_ops(const hlo_module_ir *ir, const hlo_block *b) {
  for (const hlo_op *op = b->first; op; op = op->next) {
    for (uint32_t r = 0; r < op->num_regions; r++) warn_ops(ir, &op->regions[r].block);
    if (op->opcode != OP_CUSTOM_CALL) continue;
    const hlo_attr *t = op_attr(op, "call_target_name");
    if (t && (t->kind == ATTR_STRING || t->kind == ATTR_SYMBOL) &&
        !interp_custom_call_known(t->u.str.s))
      fprintf(stderr, "%s:%u:%u: warning: custom_call target '%s' is not registered; running "
              "this call will fail\n", ir->source.name ? ir->source.name : "<input>",
              op->loc.line, op->loc.col, t->u.str.s);
  }
}

static void warn_unknown_targets(const hlo_module_ir *ir) {
  for (const hlo_func *f = ir->funcs; f; f = f->next) warn_ops(ir, &f->body.block);
}

int cmd_check(int argc, char **argv) {
  bool split = false;
  const char *file = NULL;
  for (int i = 0; i < argc; i++) {
    if (cli_is_flag(argv[i], "--help") || cli_is_flag(argv[i], "-h")) { fputs(usage_check, stdout); return 0; }
    else if (cli_is_flag(argv[i], "--split-input-file")) split = true;
    else if (argv[i][0] == '-' && argv[i][1]) {
      fprintf(stderr, "hlo check: unknown flag '%s'\n%s", argv[i], usage_check);
      return 2;
    } else if (!file) file = argv[i];
    else { fprintf(stderr, "hlo check: more than one FILE\n%s", usage_check); return 2; }
  }
  if (!file) { fprintf(stderr, "hlo check: missing FILE\n%s", usage_check); return 2; }
  module_piece *mp;
  size_t n;
  hlo_status st = cli_load_pieces(file, split, true, &mp, &n);
  if (st) return cli_report(st);
  int rc = 0;
  for (size_t i = 0; i < n; i++) {
    if (mp[i].st) {
      hlo_status_print(mp[i].st, stderr);
      rc = 1;
      continue;
    }
    warn_unknown_targets(runtime_module_ir(mp[i].m));
  }
  if (!rc) printf("%s: ok (%zu module%s)\n", file, n, n == 1 ? "" : "s");
  cli_free_pieces(mp, n);
  return rc;
}
