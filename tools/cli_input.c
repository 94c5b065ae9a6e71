/* cli_input.c — what the `hlo` verbs share on the way in: flags, error
 * reports, reading a program file (whole or split in `// -----` pieces) and
 * turning --input .npy files and --arg literals into views of @main's
 * parameters. Declared in tools/builtin/builtin.h. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builtin/builtin.h"
#include "hlo/hlo.h"
#include "ir/element.h"
#include "ir/ir.h"
#include "parse/parse.h"
#include "runtime/runtime.h"
#include "support/float.h"
#include "support/npy.h"
#include "support/status.h"

bool cli_is_flag(const char *a, const char *f) { return strcmp(a, f) == 0; }

/* --backend: the public kinds, and cpu-devmem (RUNTIME_BACKEND_CPU_DEVMEM):
 * the CPU backend with its buffers kept apart from the host's, as a GPU's
 * are, which tests the device-memory path without a GPU. */
static const struct {
  const char *name;
  hlo_backend_kind kind;
} cli_backends[] = {
    {"cpu", HLO_BACKEND_CPU},
    {"interp", HLO_BACKEND_INTERP},
    {"cuda", HLO_BACKEND_CUDA},
    {"cpu-devmem", RUNTIME_BACKEND_CPU_DEVMEM},
};

bool cli_parse_backend(const char *verb, const char *name, hlo_backend_kind *out) {
  for (size_t i = 0; i < sizeof cli_backends / sizeof *cli_backends; i++)
    if (!strcmp(name, cli_backends[i].name)) {
      *out = cli_backends[i].kind;
      return true;
    }
  fprintf(stderr,
          "hlo %s: unknown backend '%s' (available: interp, cpu, cuda; cpu-devmem tests the "
          "GPU's memory path on the CPU)\n",
          verb, name);
  return false;
}

const char *cli_backend_name(hlo_backend_kind k) {
  for (size_t i = 0; i < sizeof cli_backends / sizeof *cli_backends; i++)
    if (cli_backends[i].kind == k) return cli_backends[i].name;
  return "?";
}

int cli_report(hlo_status st) {
  hlo_status_print(st, stderr);
  hlo_status_free(st);
  return 1;
}

/* ----------------------------------------------------------- the program */

/* The message of the first `expected-error... {{MSG}}` comment in text[0..n)
 * (MLIR's --verify-diagnostics convention), malloc'd, or NULL. */
static char *find_expected_error(const char *text, size_t n) {
  const char *key = "expected-error";
  size_t kl = strlen(key);
  for (size_t i = 0; i + kl < n; i++) {
    if (memcmp(text + i, key, kl) != 0) continue;
    size_t j = i + kl;
    while (j + 1 < n && text[j] != '\n' && !(text[j] == '{' && text[j + 1] == '{')) j++;
    if (j + 1 >= n || text[j] != '{') continue;
    size_t k = j + 2;
    while (k + 1 < n && text[k] != '\n' && !(text[k] == '}' && text[k + 1] == '}')) k++;
    if (k + 1 >= n || text[k] != '}') continue;
    return strndup(text + j + 2, k - j - 2);
  }
  return NULL;
}

/* Reads FILE and parses it whole or split into pieces; each piece gets its
 * module or its error. Returns a status only for errors reading the file. */
hlo_status cli_load_pieces(const char *path, bool split, bool verify, module_piece **out,
                           size_t *out_n) {
  char *text;
  size_t len;
  HLO_TRY(runtime_read_file(path, &text, &len));
  split_piece *pieces = NULL;
  size_t n = 1;
  if (split) {
    hlo_status st = parse_split(text, len, &pieces, &n);
    if (st) { free(text); return st; }
  } else {
    pieces = malloc(sizeof *pieces);
    if (!pieces) { free(text); return status_new(HLO_RESOURCE_EXHAUSTED, "out of memory"); }
    pieces[0] = (split_piece){0, len, 1};
  }
  module_piece *mp = calloc(n, sizeof *mp);
  if (!mp) {
    free(text);
    free(pieces);
    return status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
  }
  for (size_t i = 0; i < n; i++) {
    mp[i].first_line = pieces[i].first_line;
    mp[i].expect = find_expected_error(text + pieces[i].begin, pieces[i].end - pieces[i].begin);
    const char *name = strcmp(path, "-") == 0 ? "<stdin>" : path;
    if (verify) {
      mp[i].st = hlo_module_parse_at(name, text + pieces[i].begin, pieces[i].end - pieces[i].begin,
                                     pieces[i].first_line, &mp[i].m);
    } else {
      hlo_source src = {name, text + pieces[i].begin, pieces[i].end - pieces[i].begin,
                        pieces[i].first_line};
      hlo_module_ir *ir = NULL;
      mp[i].st = parse_module(&src, 0, src.len, &ir);
      if (!mp[i].st) {
        mp[i].m = runtime_module_wrap(ir);
        if (!mp[i].m) {
          module_free(ir);
          mp[i].st = status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
        }
      }
    }
  }
  free(text);
  free(pieces);
  *out = mp;
  *out_n = n;
  return NULL;
}

void cli_free_pieces(module_piece *mp, size_t n) {
  for (size_t i = 0; i < n; i++) {
    hlo_module_destroy(mp[i].m);
    hlo_status_free(mp[i].st);
    free(mp[i].expect);
  }
  free(mp);
}

/* ---------------------------------------------------------------- inputs */

static void type_text(char *buf, size_t n, hlo_dtype dt, uint32_t rank, const int64_t *dims) {
  size_t k = (size_t)snprintf(buf, n, "tensor<");
  for (uint32_t d = 0; d < rank && k < n; d++) {
    if (dims[d] == HLO_DYN) k += (size_t)snprintf(buf + k, n - k, "?x");
    else k += (size_t)snprintf(buf + k, n - k, "%lldx", (long long)dims[d]);
  }
  if (k < n) snprintf(buf + k, n - k, "%s>", hlo_dtype_name(dt));
}

/* Checks that input file `path` (array `a`, element type `dt` after any
 * conversion) fits parameter `i` of `f`; the error names the file, what it
 * holds and what the parameter is, located at the parameter. */
static hlo_status check_input(const hlo_func *f, uint32_t i, const char *path, const npy_array *a,
                              hlo_dtype dt, bool narrow_float) {
  const hlo_type *t = f->body.block.args[i].type;
  bool ok = t->kind == TYPE_TENSOR && dt == t->dtype && (uint32_t)a->rank == t->rank;
  uint32_t bad = UINT32_MAX;
  for (uint32_t d = 0; ok && d < t->rank; d++)
    if (!(t->dims[d] == HLO_DYN || t->dims[d] == a->dims[d])) { ok = false; bad = d; }
  if (ok) return NULL;
  char dimmsg[96] = "";
  if (bad != UINT32_MAX)
    snprintf(dimmsg, sizeof dimmsg, " (dimension %u must be %lld, not %lld)", bad,
             (long long)t->dims[bad], (long long)a->dims[bad]);
  char want[160] = "a tuple or token", got[160];
  if (t->kind == TYPE_TENSOR) type_text(want, sizeof want, t->dtype, t->rank, t->dims);
  type_text(got, sizeof got, a->dtype, (uint32_t)a->rank, a->dims);
  if (a->opaque_byte)
    snprintf(got, sizeof got, "1-byte elements of an ml_dtypes type");
  return status_at(HLO_INVALID_ARGUMENT, &f->body.block.args[i].loc,
                   "input %u ('%s') holds %s (numpy '%s'), but argument %u of @%s is %s%s%s", i,
                   path, got, a->descr, i, f->name, want, dimmsg,
                   narrow_float && a->dtype == HLO_F32 && dt != t->dtype
                       ? "; float32 data is accepted for it only when exactly representable"
                       : "");
}

/* Converts a .npy array into a view of parameter `i` of `f`, converting
 * float32 data for narrower float parameters when every value is exact.
 * *out_owned is set to memory the caller frees (or NULL). */
static hlo_status view_from_npy(const hlo_func *f, uint32_t i, const char *path,
                                npy_array *a, hlo_buffer_view *v, void **out_owned) {
  *out_owned = NULL;
  const hlo_type *t = f->body.block.args[i].type;
  v->dtype = a->dtype;
  v->rank = a->rank;
  v->dims = a->dims;
  v->data = a->data;
  if (a->opaque_byte && t->kind == TYPE_TENSOR && hlo_dtype_size(t->dtype) == 1 &&
      t->dtype != HLO_I1) {
    /* an ml_dtypes 1-byte type: its bytes are the parameter's bit patterns */
    v->dtype = t->dtype;
    return check_input(f, i, path, a, v->dtype, false);
  }
  if (t->kind != TYPE_TENSOR || a->dtype == t->dtype) return check_input(f, i, path, a, a->dtype, false);
  bool narrow_float = dtype_is_float(t->dtype) && hlo_dtype_size(t->dtype) < 4;
  if (a->dtype == HLO_F32 && narrow_float) {
    int64_t n = (int64_t)(a->nbytes / 4);
    size_t es = hlo_dtype_size(t->dtype);
    void *buf = malloc(n ? (size_t)n * es : 1);
    if (!buf) return status_new(HLO_RESOURCE_EXHAUSTED, "out of memory converting '%s'", path);
    for (int64_t k = 0; k < n; k++) {
      double x = elem_get_f64(HLO_F32, a->data, k);
      elem_set_f64(t->dtype, buf, k, x);
      double y = elem_get_f64(t->dtype, buf, k);
      if (!(x == y || (isnan(x) && isnan(y)))) {
        free(buf);
        return status_at(HLO_INVALID_ARGUMENT, &f->body.block.args[i].loc,
                          "input %u ('%s'): element %lld = %.9g is not exactly representable "
                          "in %s, the type of argument %u of @%s",
                          i, path, (long long)k, x, hlo_dtype_name(t->dtype), i, f->name);
      }
    }
    v->dtype = t->dtype;
    v->data = buf;
    *out_owned = buf;
  }
  return check_input(f, i, path, a, v->dtype, narrow_float);
}

/* Evaluates `dense<...> : tensor<...>` (an --arg) into a host buffer by
 * running a one-constant program through the library. */
static hlo_status literal_to_buffer(const char *lit, hlo_buffer **out) {
  *out = NULL;
  const char *colon = strrchr(lit, ':');
  if (!colon)
    return status_new(HLO_INVALID_ARGUMENT,
                      "--arg '%s': expected a dense literal with its type, e.g. "
                      "'dense<1> : tensor<2xi32>'", lit);
  const char *type = colon + 1;
  while (*type == ' ') type++;
  size_t n = strlen(lit) * 2 + strlen(type) * 2 + 128;
  char *text = malloc(n);
  if (!text) return status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
  snprintf(text, n, "func.func @main() -> %s {\n  %%0 = stablehlo.constant %s\n  return %%0 : %s\n}\n",
           type, lit, type);
  hlo_module *m = NULL;
  hlo_executable *e = NULL;
  hlo_buffer **res = NULL;
  hlo_status st = hlo_module_parse("--arg", text, strlen(text), &m);
  if (!st) st = hlo_executable_create(m, NULL, HLO_BACKEND_INTERP, &e);
  if (!st) st = hlo_executable_run(e, NULL, 0, &res);
  if (!st) { *out = res[0]; free(res); }
  hlo_executable_destroy(e);
  hlo_module_destroy(m);
  free(text);
  if (st) status_note(st, "while reading --arg '%s'", lit);
  return st;
}

void cli_free_inputs(run_inputs *in) {
  for (int i = 0; i < in->n; i++) {
    if (in->arrs) npy_free(&in->arrs[i]);
    if (in->lits) hlo_buffer_destroy(in->lits[i]);
    if (in->owned) free(in->owned[i]);
  }
  free(in->arrs);
  free(in->lits);
  free(in->owned);
  free(in->views);
  memset(in, 0, sizeof *in);
}

/* Number of parameters of `f` that take an input (all but tokens). */
uint32_t cli_num_value_args(const hlo_func *f) {
  uint32_t n = 0;
  for (uint32_t i = 0; i < f->num_args; i++) n += f->body.block.args[i].type->kind != TYPE_TOKEN;
  return n;
}

/* Reads every --input file and evaluates every --arg literal into views for
 * the parameters of `f`, checking element types and shapes. Token
 * parameters take no input: they get a token view (HLO_RANK_TOKEN). */
hlo_status cli_load_inputs(const hlo_func *f, const cli_input_list *list, run_inputs *in) {
  size_t n = (size_t)f->num_args + 1;
  in->n = (int)f->num_args;
  in->arrs = calloc(n, sizeof *in->arrs);
  in->lits = calloc(n, sizeof *in->lits);
  in->owned = calloc(n, sizeof *in->owned);
  in->views = calloc(n, sizeof *in->views);
  if (!in->arrs || !in->lits || !in->owned || !in->views)
    return status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
  for (int i = 0, j = 0; i < (int)f->num_args; i++) {
    if (f->body.block.args[i].type->kind == TYPE_TOKEN) {
      in->views[i] = (hlo_buffer_view){HLO_F32, HLO_RANK_TOKEN, NULL, NULL};
      continue;
    }
    int inp = j++; /* the input given for argument i */
    if (list->is_literal[inp]) {
      HLO_TRY(literal_to_buffer(list->inputs[inp], &in->lits[i]));
      const hlo_buffer *b = in->lits[i];
      in->views[i] = (hlo_buffer_view){hlo_buffer_dtype(b), hlo_buffer_rank(b),
                                       hlo_buffer_dims(b), (void *)hlo_buffer_data(b)};
      continue;
    }
    HLO_RETURN_IF_ERROR(npy_read(list->inputs[inp], &in->arrs[i]),
                        "while reading input %d (argument %d) of @%s", inp, i, f->name);
    HLO_TRY(view_from_npy(f, (uint32_t)i, list->inputs[inp], &in->arrs[i], &in->views[i],
                          &in->owned[i]));
  }
  return NULL;
}

hlo_status cli_check_input_count(const hlo_func *f, const cli_input_list *list) {
  uint32_t nval = cli_num_value_args(f);
  if ((uint32_t)list->n == nval) return NULL;
  return status_at(HLO_INVALID_ARGUMENT, &f->loc,
                   "@%s takes %u argument%s%s but %d input%s given (--input/--arg)", f->name,
                   nval, nval == 1 ? "" : "s",
                   nval != f->num_args ? " (besides its tokens, which take no input)" : "",
                   list->n, list->n == 1 ? " was" : "s were");
}
