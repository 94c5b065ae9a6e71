/* compile.c — `hlo compile`: compile a program without running it and
 * print a one-screen summary of what the compiler made of it (or one JSON
 * object): ops before and after the pass pipeline, kernels by fusion kind,
 * library calls, interpreter thunks, constants, the time of each stage
 * (ours and the C compiler's apart) and the pass report. A thin layer over
 * hlo_bench_compile (include/hlo/bench.h) and the executable's statistics
 * (src/runtime/runtime.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aot/aot.h"
#include "builtin.h"
#include "hlo/bench.h"
#include "hlo/hlo.h"
#include "ir/ir.h"
#include "passes/pass_manager.h"
#include "passes/pass_util.h"
#include "runtime/runtime.h"
#include "support/status.h"

static const char *const usage_compile =
    "usage: hlo compile FILE [--backend cpu|interp] [--passes LIST] [--entry NAME]\n"
    "                   [--dump-to DIR] [--json] [--cache-dir DIR] [--no-cache]\n"
    "                   [--cache-max-bytes N] [--log-compiles] [--explain-cache-misses]\n"
    "       hlo compile FILE --emit=lib -o DIR [--name NAME] [--entry NAME] [--no-blas]\n"
    "                   [--blas cblas|openblas|dnnl|none] [--march ARCH]\n"
    "                   [--constants=file] [--no-build]\n"
    "\n"
    "Compiles the entry function (@main, or the only function) of FILE without\n"
    "running it and prints a summary: ops before and after the pass pipeline, the\n"
    "kernels by fusion kind (loop, input, output: the hlo.fusion ops of the\n"
    "optimised module), library calls (BLAS gemm), interpreter thunks and their ops,\n"
    "constants, the time of each stage (read, parse, verify, passes, lower, cc,\n"
    "prepare; ours and the C compiler's apart) and each pass's time and op counts.\n"
    "\n"
    "  --backend cpu      compile for this CPU (the default)\n"
    "  --backend interp   prepare for the reference interpreter (no kernels)\n"
    "  --passes LIST      the pass pipeline (default: the backend's; see hlo run --help)\n"
    "  --entry NAME       compile function @NAME instead of @main\n"
    "  --dump-to DIR      dump each pass's module and the generated C to DIR\n"
    "  --json             one JSON object: file, entry, backend, pipeline, dynamic,\n"
    "                     ops_in, ops_after, top_level_ops, fusions {total, loop,\n"
    "                     input, row, output, other} (the entry's top-level fusions: its\n"
    "                     kernels), fused_ops {loop, ...} (ops inside them),\n"
    "                     nested_fusions (those inside while/case/... bodies and\n"
    "                     other functions), kernels, blas_gemm, gemm_epilogues,\n"
    "                     gemm_chains, sorts, interp_thunks, interp_ops, constants,\n"
    "                     filled_constants (null where the backend has none),\n"
    "                     compile_ms, ours_ms, cc_ms, stages_ms,\n"
    "                     passes [{name, ms, ops_before, ops_after}], passes_ms; on\n"
    "                     cpu also buffers {count, temp_bytes, peak_bytes, arg_bytes,\n"
    "                     out_bytes, const_bytes, heap_peak_bytes}\n"
    CLI_CACHE_USAGE
    "\n"
    "Ahead of time (issue 11): --emit=lib writes the program, compiled for the CPU\n"
    "(pipeline cpu), as one C library that needs only libc, libm, pthreads and\n"
    "(unless --no-blas) a CBLAS (linked as -lblas): DIR/NAME.h (the API:\n"
    "NAME_scratch_bytes, NAME_run, NAME_strerror, the signature as data, every\n"
    "argument's and result's type, shape and bytes), DIR/NAME.c (the generated C:\n"
    "kernels, constants, buffer plan, call sequence), DIR/libNAME.a and\n"
    "DIR/libNAME.so (built with $HLO_CC, else cc: -O2 -std=c11 -fPIC).\n"
    "  --emit=lib         write the library instead of printing a summary\n"
    "  -o DIR             the folder it goes to (made; required with --emit=lib)\n"
    "  --name NAME        the library's name and symbol prefix (a C identifier;\n"
    "                     default: FILE's base name up to its first '.')\n"
    "  --no-blas          matrix products on the library's own loops (no CBLAS)\n"
    "  --blas LIB         the matrix library: cblas (the default, -lblas), openblas\n"
    "                     (linked by path), dnnl (oneDNN, what the CPU backend runs)\n"
    "                     or none (= --no-blas); NAME_LINK_FLAGS in NAME.h says what\n"
    "                     to link ($HLO_AOT_BLAS when not given)\n"
    "  --march ARCH       the kernels' -march (default native: the library runs on\n"
    "                     CPUs like this one; $HLO_AOT_MARCH)\n"
    "  --constants=file   constants of 1 KiB and more go to DIR/NAME.bin, loaded with\n"
    "                     NAME_load_constants(path) or NAME_set_constants(ptr, bytes)\n"
    "  --no-build         write NAME.h and NAME.c only (no compiler run)\n"
    "Ops that run on the interpreter in the CPU backend (custom calls other than\n"
    "LAPACK's, rng, fft, ...) cannot be embedded yet: the error names the op and its\n"
    "line (exit status 1).\n"
    "\n"
    "The \"cc\" stage is the C compiler's: emitting the kernels' C, compiling it and\n"
    "loading the shared object (fast when the kernel cache has them: HLO_CACHE_DIR=off\n"
    "turns it off); every other stage is hlo's own. Op counts include the ops of\n"
    "nested regions (fusion bodies, while bodies), terminators excluded.\n";

/* Fusion kinds, as the hlo.fusion op's `kind` attribute names them
 * (src/ir/verify_fusion.c), and a bucket for anything else. */
enum { KIND_LOOP, KIND_INPUT, KIND_ROW, KIND_OUTPUT, KIND_OTHER, NUM_KINDS };
static const char *const kind_names[NUM_KINDS] = {"loop", "input", "row", "output", "other"};

/* What `hlo compile` reports. Counts of the optimised module are taken
 * here; the thunk counts come from the CPU backend (has_cpu). */
typedef struct compile_summary {
  const char *file, *entry, *backend, *pipeline; /* pipeline NULL: none ran */
  bool dynamic;             /* shapes fixed at run time: nothing compiled yet */
  uint64_t ops_in;          /* module_count_ops of the program as read */
  uint64_t ops_after;       /* module_count_ops of the optimised module */
  uint64_t top_level_ops;   /* ops of the optimised entry's body (terminator excluded) */
  /* The hlo.fusion ops of the entry's body by kind, and the ops inside them. */
  uint64_t fusions[NUM_KINDS], fused_ops[NUM_KINDS];
  uint64_t num_fusions;
  uint64_t nested_fusions;  /* the others: in nested bodies (while, case...), other functions */
  uint64_t constants;       /* top-level constants of the entry */
  uint64_t fills;           /* of which large splats filled at run time */
  bool has_cpu;             /* the CPU backend's statistics below are set */
  runtime_cpu_stats cpu;
  hlo_compile_times times;
  double ours_ms, cc_ms;    /* every stage but "cc"; the "cc" stage */
  const pass_report *passes; /* lent from the executable; n == 0 when none ran */
  /* BUFFERS — the runtime's buffer assignment (src/runtime/executable_cpu.c,
   * runtime_cpu_stats): set by fill_buffers() below only when the runtime
   * reports it; both printers show the figures only when has_buffers.
   * Nothing is estimated here. */
  bool has_buffers;
  uint64_t num_buffers;     /* values placed in the arena of temporaries */
  int64_t temp_bytes;       /* that arena's size */
  int64_t peak_bytes;       /* arguments + results + arena + interpreter temporaries' peak */
  int64_t arg_bytes, out_bytes, const_bytes, heap_peak_bytes;
} compile_summary;

/* Fills the buffer figures of `s` from the CPU backend's statistics (the
 * interpreter has no buffer assignment: has_buffers stays false). */
static void fill_buffers(compile_summary *s, const runtime_cpu_stats *cs) {
  if (!cs) return;
  s->has_buffers = true;
  s->num_buffers = cs->arena_buffers;
  s->temp_bytes = cs->temp_bytes;
  s->peak_bytes = cs->peak_bytes;
  s->arg_bytes = cs->arg_bytes;
  s->out_bytes = cs->out_bytes;
  s->const_bytes = cs->const_bytes;
  s->heap_peak_bytes = cs->heap_peak_bytes;
}

/* Number of ops of `b` and its regions, terminators excluded. */
static uint64_t count_ops(const hlo_block *b, int depth) {
  uint64_t n = 0;
  if (depth > 64) return 0;
  for (const hlo_op *op = b->first; op; op = op->next) {
    if (!(op_flags(op->opcode) & OPF_TERMINATOR)) n++;
    for (uint32_t r = 0; r < op->num_regions; r++) n += count_ops(&op->regions[r].block, depth + 1);
  }
  return n;
}

/* Counts the hlo.fusion ops of `b` (`top`: the entry's body) by kind with
 * the ops inside each, and those of nested regions other than fusion
 * bodies as nested_fusions. */
static void count_fusions(compile_summary *s, const hlo_block *b, bool top, int depth) {
  if (depth > 64) return;
  for (const hlo_op *op = b->first; op; op = op->next) {
    if (op->opcode == OP_FUSION && !top) {
      s->nested_fusions++;
      continue;
    }
    if (op->opcode == OP_FUSION) {
      const hlo_attr *k = op_attr(op, "kind");
      int kind = KIND_OTHER;
      for (int i = 0; i < KIND_OTHER && k && k->kind == ATTR_STRING; i++)
        if (!strcmp(k->u.str.s, kind_names[i])) kind = i;
      s->fusions[kind]++;
      s->num_fusions++;
      for (uint32_t r = 0; r < op->num_regions; r++)
        s->fused_ops[kind] += count_ops(&op->regions[r].block, depth + 1);
      continue;
    }
    for (uint32_t r = 0; r < op->num_regions; r++)
      count_fusions(s, &op->regions[r].block, false, depth + 1);
  }
}

/* The pipeline spelled out as the runtime spells it (src/runtime/api.c):
 * NULL for none. */
static const char *pipeline_of(const char *passes, hlo_backend_kind backend) {
  if (!passes)
    return backend == HLO_BACKEND_INTERP  ? NULL
           : backend == HLO_BACKEND_CUDA ? PASS_PIPELINE_CUDA
                                         : PASS_PIPELINE_CPU;
  if (!*passes || !strcmp(passes, "none")) return NULL;
  if (!strcmp(passes, "default")) return PASS_PIPELINE_DEFAULT;
  if (!strcmp(passes, "cpu")) return PASS_PIPELINE_CPU;
  if (!strcmp(passes, "cuda")) return PASS_PIPELINE_CUDA;
  return passes;
}

/* Gathers the summary of `e` (made from module `m` by hlo_bench_compile). */
static void summarize(compile_summary *s, hlo_module *m, const hlo_executable *e) {
  const hlo_module_ir *in = runtime_module_ir(m);
  const hlo_module_ir *opt = runtime_executable_module_ir(e);
  s->passes = runtime_executable_pass_report(e);
  s->ops_in = s->passes && s->passes->n ? s->passes->stats[0].ops_before : module_count_ops(in);
  s->dynamic = opt == NULL;
  const runtime_cpu_stats *cs = runtime_executable_cpu_stats(e);
  if (cs) {
    s->has_cpu = true;
    s->cpu = *cs;
  }
  if (opt) {
    s->ops_after = module_count_ops(opt);
    const hlo_func *f = module_entry(opt, runtime_executable_entry(e)->name);
    for (const hlo_func *g = opt->funcs; g; g = g->next) count_fusions(s, &g->body.block, g == f, 0);
    for (const hlo_op *op = f ? f->body.block.first : NULL; op; op = op->next) {
      if (!(op_flags(op->opcode) & OPF_TERMINATOR)) s->top_level_ops++;
      if (op->opcode == OP_CONSTANT) s->constants++;
    }
    if (cs) s->constants = cs->constants;
    if (cs) s->fills = cs->fills;
  }
  for (int i = 0; i < s->times.num_stages; i++) {
    if (!strcmp(s->times.stages[i].name, "cc")) s->cc_ms += s->times.stages[i].ms;
    else s->ours_ms += s->times.stages[i].ms;
  }
  fill_buffers(s, cs);
}

/* A byte count in a unit that suits it ("512 B", "112.0 KiB"). */
static void fmt_bytes(char *buf, size_t n, int64_t b) {
  if (b < 1024) snprintf(buf, n, "%lld B", (long long)b);
  else if (b < 1024 * 1024) snprintf(buf, n, "%.1f KiB", (double)b / 1024);
  else if (b < 1024LL * 1024 * 1024) snprintf(buf, n, "%.1f MiB", (double)b / (1024 * 1024));
  else snprintf(buf, n, "%.2f GiB", (double)b / (1024.0 * 1024 * 1024));
}

static void print_text(const compile_summary *s, const char *dump_dir) {
  printf("%s: @%s on %s, pipeline %s\n", s->file, s->entry, s->backend,
         s->pipeline ? s->pipeline : "none");
  if (s->dynamic) {
    printf("  ops:       %llu in\n", (unsigned long long)s->ops_in);
    printf("  dynamic shapes: the entry is optimised and compiled for each input shape at its\n"
           "  first run with it; nothing past verification ran here\n");
  } else {
    uint64_t fused = 0;
    for (int k = 0; k < NUM_KINDS; k++) fused += s->fused_ops[k];
    printf("  ops:       %llu in -> %llu after passes (@%s: %llu top-level, %llu inside fusions)\n",
           (unsigned long long)s->ops_in, (unsigned long long)s->ops_after, s->entry,
           (unsigned long long)s->top_level_ops, (unsigned long long)fused);
    printf("  fusions:   %llu", (unsigned long long)s->num_fusions);
    const char *sep = ": ";
    for (int k = 0; k < NUM_KINDS; k++) {
      if (!s->fusions[k]) continue;
      printf("%s%s %llu (%llu ops)", sep, kind_names[k], (unsigned long long)s->fusions[k],
             (unsigned long long)s->fused_ops[k]);
      sep = ", ";
    }
    if (s->nested_fusions)
      printf("; %llu more inside while/case/... bodies", (unsigned long long)s->nested_fusions);
    printf("\n");
    if (s->has_cpu) {
      printf("  thunks:    %u kernels, %u library calls (BLAS gemm", s->cpu.kernels, s->cpu.blas);
      if (s->cpu.epilogues)
        printf("; %u run a kernel on their rows: output fusion", s->cpu.epilogues);
      if (s->cpu.gemm_chains)
        printf("; %u chained to the next product on those rows", s->cpu.gemm_chains);
      printf("), ");
      if (s->cpu.sorts) printf("%u native sorts, ", s->cpu.sorts);
      printf("%u interpreter", s->cpu.interp);
      if (s->cpu.interp) printf(" (%s)", s->cpu.interp_ops);
      printf("\n");
    } else {
      printf("  thunks:    none: the interpreter runs every op\n");
    }
    printf("  constants: %llu", (unsigned long long)s->constants);
    if (s->has_buffers && s->constants) {
      char cb[32];
      fmt_bytes(cb, sizeof cb, s->const_bytes);
      printf(" (%s, made at compile time", cb);
      if (s->fills) printf("; %llu large splats filled at run time", (unsigned long long)s->fills);
      printf(")");
    }
    printf("\n");
    /* BUFFERS: shown only when the runtime reports its buffer assignment */
    if (s->has_buffers) {
      char temp[32], peak[32], args[32], outs[32], heap[32];
      fmt_bytes(temp, sizeof temp, s->temp_bytes);
      fmt_bytes(peak, sizeof peak, s->peak_bytes);
      fmt_bytes(args, sizeof args, s->arg_bytes);
      fmt_bytes(outs, sizeof outs, s->out_bytes);
      fmt_bytes(heap, sizeof heap, s->heap_peak_bytes);
      printf("  buffers:   %llu temporaries in a %s arena\n", (unsigned long long)s->num_buffers,
             temp);
      printf("  peak:      %s = arguments %s + results %s + arena %s + interpreter %s\n", peak,
             args, outs, temp, heap);
    }
  }
  printf("  compile:   %.3f ms = ours %.3f ms + C compiler %.3f ms\n", s->times.total_ms,
         s->ours_ms, s->cc_ms);
  printf("  stages:   ");
  for (int i = 0; i < s->times.num_stages; i++)
    printf("%s %s %.3f", i ? "," : "", s->times.stages[i].name, s->times.stages[i].ms);
  printf(" (ms)\n");
  if (s->passes && s->passes->n) {
    printf("  passes:    %.3f ms in all (verification after each included)\n", s->passes->total_ms);
    int w = 16;
    for (uint32_t i = 0; i < s->passes->n; i++)
      if ((int)strlen(s->passes->stats[i].name) > w) w = (int)strlen(s->passes->stats[i].name);
    for (uint32_t i = 0; i < s->passes->n; i++) {
      const pass_stat *p = &s->passes->stats[i];
      printf("    %-*s %9.3f ms  %6llu -> %llu ops\n", w, p->name, p->ms,
             (unsigned long long)p->ops_before, (unsigned long long)p->ops_after);
    }
  }
  if (dump_dir) printf("  dumped to: %s\n", dump_dir);
}

/* An unsigned count, or null when `has` is false. */
static void json_count(const char *key, bool has, unsigned long long v) {
  printf(", \"%s\": ", key);
  if (has) printf("%llu", v);
  else fputs("null", stdout);
}

static void print_json(const compile_summary *s) {
  bool opt = !s->dynamic;
  printf("{\"file\": ");
  cli_json_string(stdout, s->file);
  printf(", \"entry\": ");
  cli_json_string(stdout, s->entry);
  printf(", \"backend\": ");
  cli_json_string(stdout, s->backend);
  printf(", \"pipeline\": ");
  cli_json_string(stdout, s->pipeline);
  printf(", \"dynamic\": %s", s->dynamic ? "true" : "false");
  json_count("ops_in", true, s->ops_in);
  json_count("ops_after", opt, s->ops_after);
  json_count("top_level_ops", opt, s->top_level_ops);
  printf(", \"fusions\": {\"total\": %llu", (unsigned long long)s->num_fusions);
  for (int k = 0; k < NUM_KINDS; k++)
    printf(", \"%s\": %llu", kind_names[k], (unsigned long long)s->fusions[k]);
  printf("}, \"nested_fusions\": %llu, \"fused_ops\": {", (unsigned long long)s->nested_fusions);
  for (int k = 0; k < NUM_KINDS; k++)
    printf("%s\"%s\": %llu", k ? ", " : "", kind_names[k], (unsigned long long)s->fused_ops[k]);
  printf("}");
  json_count("kernels", s->has_cpu, s->cpu.kernels);
  json_count("blas_gemm", s->has_cpu, s->cpu.blas);
  json_count("gemm_epilogues", s->has_cpu, s->cpu.epilogues);
  json_count("gemm_chains", s->has_cpu, s->cpu.gemm_chains);
  json_count("sorts", s->has_cpu, s->cpu.sorts);
  json_count("interp_thunks", s->has_cpu, s->cpu.interp);
  printf(", \"interp_ops\": ");
  cli_json_string(stdout, s->has_cpu ? s->cpu.interp_ops : NULL);
  json_count("constants", opt, s->constants);
  json_count("filled_constants", opt, s->fills);
  /* BUFFERS: present only when the runtime reports its buffer assignment */
  if (s->has_buffers)
    printf(", \"buffers\": {\"count\": %llu, \"temp_bytes\": %lld, \"peak_bytes\": %lld, "
           "\"arg_bytes\": %lld, \"out_bytes\": %lld, \"const_bytes\": %lld, "
           "\"heap_peak_bytes\": %lld}",
           (unsigned long long)s->num_buffers, (long long)s->temp_bytes,
           (long long)s->peak_bytes, (long long)s->arg_bytes, (long long)s->out_bytes,
           (long long)s->const_bytes, (long long)s->heap_peak_bytes);
  printf(", \"compile_ms\": %.4f, \"ours_ms\": %.4f, \"cc_ms\": %.4f, \"stages_ms\": {",
         s->times.total_ms, s->ours_ms, s->cc_ms);
  for (int i = 0; i < s->times.num_stages; i++) {
    printf("%s", i ? ", " : "");
    cli_json_string(stdout, s->times.stages[i].name);
    printf(": %.4f", s->times.stages[i].ms);
  }
  printf("}, \"passes\": [");
  uint32_t np = s->passes ? s->passes->n : 0;
  for (uint32_t i = 0; i < np; i++) {
    const pass_stat *p = &s->passes->stats[i];
    printf("%s{\"name\": ", i ? ", " : "");
    cli_json_string(stdout, p->name);
    printf(", \"ms\": %.4f, \"ops_before\": %llu, \"ops_after\": %llu}", p->ms,
           (unsigned long long)p->ops_before, (unsigned long long)p->ops_after);
  }
  printf("], \"passes_ms\": %.4f}\n", np ? s->passes->total_ms : 0.0);
}

int cmd_compile(int argc, char **argv) {
  const char *path = NULL, *entry = NULL, *passes = NULL, *dump_dir = NULL;
  hlo_backend_kind backend = HLO_BACKEND_CPU;
  bool json = false, emit_lib = false;
  const char *out_dir = NULL;
  aot_options ao = {0};
  cli_cache_opts cache = {0};
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i];
    bool has_val = i + 1 < argc;
    int cf = cli_cache_flag("compile", argc, argv, &i, &cache);
    if (cf < 0) return 2;
    if (cf > 0) continue;
    if (cli_is_flag(a, "--help") || cli_is_flag(a, "-h")) { fputs(usage_compile, stdout); return 0; }
    else if (cli_is_flag(a, "--json")) json = true;
    else if (!strcmp(a, "--emit=lib")) emit_lib = true;
    else if (cli_is_flag(a, "--emit") && has_val && !strcmp(argv[i + 1], "lib")) emit_lib = true, i++;
    else if (!strncmp(a, "--emit", 6)) {
      /* `--emit=X` arrives split as `--emit X`: name X, the form given */
      const char *form = !strcmp(a, "--emit") ? (has_val ? argv[i + 1] : "") : a;
      fprintf(stderr, "hlo compile: unknown --emit form '%s' (only --emit=lib)\n", form);
      return 2;
    }
    else if ((!strcmp(a, "-o") || cli_is_flag(a, "--output")) && has_val) out_dir = argv[++i];
    else if (cli_is_flag(a, "--name") && has_val) ao.name = argv[++i];
    else if (cli_is_flag(a, "--no-blas")) ao.no_blas = true;
    else if (cli_is_flag(a, "--blas") && has_val) ao.blas = argv[++i];
    else if (cli_is_flag(a, "--march") && has_val) ao.march = argv[++i];
    else if (!strcmp(a, "--constants=file")) ao.constants_file = true;
    else if (cli_is_flag(a, "--no-build")) ao.no_build = true;
    else if (cli_is_flag(a, "--entry") && has_val) entry = argv[++i];
    else if (cli_is_flag(a, "--passes") && has_val) passes = argv[++i];
    else if (cli_is_flag(a, "--dump-to") && has_val) dump_dir = argv[++i];
    else if (cli_is_flag(a, "--backend") && has_val) {
      ++i;
      if (!cli_parse_backend("compile", argv[i], &backend)) return 2;
    } else if (a[0] == '-' && a[1]) {
      fprintf(stderr, "hlo compile: unknown flag or missing value '%s'\n%s", a, usage_compile);
      return 2;
    } else if (!path) path = a;
    else { fprintf(stderr, "hlo compile: more than one FILE ('%s')\n%s", a, usage_compile); return 2; }
  }
  if (!path) { fprintf(stderr, "hlo compile: missing FILE\n%s", usage_compile); return 2; }
  if (!emit_lib && (out_dir || ao.name || ao.no_blas || ao.no_build || ao.blas || ao.march ||
                    ao.constants_file)) {
    fprintf(stderr, "hlo compile: -o, --name, --no-blas, --blas, --march, --constants=file and "
            "--no-build go with --emit=lib\n");
    return 2;
  }
  if (emit_lib) {
    if (!out_dir) { fprintf(stderr, "hlo compile: --emit=lib needs -o DIR\n"); return 2; }
    if (json || passes || dump_dir || backend != HLO_BACKEND_CPU) {
      fprintf(stderr, "hlo compile: --emit=lib takes no --json, --passes, --dump-to or --backend\n");
      return 2;
    }
    ao.entry = entry;
    hlo_status est = aot_emit_lib(path, out_dir, &ao);
    if (est) return cli_report(est);
    printf("wrote %s: the library's header, source%s\n", out_dir,
           ao.no_build ? "" : ", static and shared libraries");
    return 0;
  }
  hlo_compile_options co = {.backend = backend, .passes = passes, .dump_dir = dump_dir};
  cli_cache_apply(&cache, &co);
  compile_summary s;
  memset(&s, 0, sizeof s);
  hlo_module *m = NULL;
  hlo_executable *e = NULL;
  hlo_status st = hlo_bench_compile(path, entry, &co, &s.times, &m, &e);
  if (st) return cli_report(st);
  s.file = !strcmp(path, "-") ? "<stdin>" : path;
  s.entry = runtime_executable_entry(e)->name;
  s.backend = cli_backend_name(backend);
  s.pipeline = pipeline_of(passes, backend);
  summarize(&s, m, e);
  if (json) print_json(&s);
  else print_text(&s, dump_dir);
  int rc = 0;
  if (fflush(stdout) != 0) {
    fprintf(stderr, "hlo compile: cannot write the summary\n");
    rc = 1;
  }
  hlo_executable_destroy(e);
  hlo_module_destroy(m);
  return rc;
}
