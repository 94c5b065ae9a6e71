/* testlib.c — corpus plumbing shared by the unit tests (see testlib.h). */
#include "testlib.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <math.h>
#include "backend/cuda/emit_cuda.h"
#include "backend/cuda/nvrtc.h"
#include "codegen/kernel.h"
#include "ir/element.h"
#include "passes/passes.h"

const char *tl_shared_dir(void) {
  const char *s = getenv("HLO_SHARED");
  return s && *s ? s : "../shared";
}

char *tl_read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  long n = -1;
  if (fseek(f, 0, SEEK_END) == 0) n = ftell(f);
  if (n < 0 || fseek(f, 0, SEEK_SET) != 0) {
    fclose(f);
    return NULL;
  }
  char *buf = malloc((size_t)n + 1);
  if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
    free(buf);
    buf = NULL;
  }
  fclose(f);
  if (buf) {
    buf[n] = 0;
    *len = (size_t)n;
  }
  return buf;
}

bool tl_dump_has(const char *dir, const char *needle) {
  DIR *d = opendir(dir);
  if (!d) return false;
  bool found = false;
  struct dirent *e;
  while (!found && (e = readdir(d))) {
    size_t n = strlen(e->d_name);
    if (n < 3 || strcmp(e->d_name + n - 2, ".c")) continue;
    char path[4096];
    if (snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >= (int)sizeof path) continue;
    size_t len;
    char *text = tl_read_file(path, &len);
    found = text && strstr(text, needle) != NULL;
    free(text);
  }
  closedir(d);
  return found;
}

static bool paths_add(tl_paths *ps, const char *p) {
  if (ps->n == ps->cap) {
    size_t cap = ps->cap ? ps->cap * 2 : 256;
    char **v = realloc(ps->v, cap * sizeof *v);
    if (!v) return false;
    ps->v = v;
    ps->cap = cap;
  }
  char *s = strdup(p);
  if (!s) return false;
  ps->v[ps->n++] = s;
  return true;
}

bool tl_list_mlir(const char *dir, bool recurse, tl_name_filter keep, const void *ctx,
                  tl_paths *out) {
  DIR *d = opendir(dir);
  if (!d) return true;
  bool ok = true;
  struct dirent *e;
  while (ok && (e = readdir(d))) {
    if (e->d_name[0] == '.') continue;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    struct stat st;
    if (stat(path, &st) != 0) continue;
    if (S_ISDIR(st.st_mode)) {
      if (recurse) ok = tl_list_mlir(path, recurse, keep, ctx, out);
      continue;
    }
    size_t l = strlen(e->d_name);
    if (l <= 5 || strcmp(e->d_name + l - 5, ".mlir") != 0) continue;
    if (keep && !keep(e->d_name, ctx)) continue;
    ok = paths_add(out, path);
  }
  closedir(d);
  return ok;
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

void tl_paths_sort(tl_paths *ps) {
  if (ps->n) qsort(ps->v, ps->n, sizeof *ps->v, cmp_str);
}

void tl_paths_free(tl_paths *ps) {
  for (size_t i = 0; i < ps->n; i++) free(ps->v[i]);
  free(ps->v);
  memset(ps, 0, sizeof *ps);
}

bool tl_name_has_prefix(const char *name, const void *ctx) {
  for (const char *const *p = ctx; *p; p++)
    if (!strncmp(name, *p, strlen(*p))) return true;
  return false;
}

size_t tl_for_each_mlir(const char *dir, bool recurse, void (*fn)(const char *path, void *ctx),
                        void *ctx) {
  tl_paths ps = {0};
  if (!tl_list_mlir(dir, recurse, NULL, NULL, &ps))
    fprintf(stderr, "tl_for_each_mlir: out of memory listing %s\n", dir);
  tl_paths_sort(&ps);
  for (size_t i = 0; i < ps.n; i++) fn(ps.v[i], ctx);
  size_t n = ps.n;
  tl_paths_free(&ps);
  return n;
}

hlo_status tl_file_read(const char *path, tl_file *f) {
  memset(f, 0, sizeof *f);
  f->text = tl_read_file(path, &f->len);
  if (!f->text) return status_new(HLO_NOT_FOUND, "cannot read %s", path);
  f->pieces = malloc(sizeof *f->pieces);
  if (!f->pieces) return status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
  f->pieces[0].begin = 0;
  f->pieces[0].end = f->len;
  f->pieces[0].first_line = 1;
  f->num_pieces = 1;
  f->src = (hlo_source){path, f->text, f->len, 1};
  return NULL;
}

hlo_status tl_file_split(tl_file *f) {
  free(f->pieces);
  f->pieces = NULL;
  f->num_pieces = 0;
  return parse_split(f->text, f->len, &f->pieces, &f->num_pieces);
}

hlo_status tl_file_load(const char *path, tl_file *f) {
  HLO_TRY(tl_file_read(path, f));
  return tl_file_split(f);
}

void tl_file_free(tl_file *f) {
  free(f->pieces);
  free(f->text);
  memset(f, 0, sizeof *f);
}

hlo_source tl_source(const char *name, const char *text) {
  return (hlo_source){name, text, strlen(text), 1};
}

hlo_module_ir *tl_parse_piece(const hlo_source *src, size_t begin, size_t end, hlo_status *err) {
  hlo_module_ir *m = NULL;
  *err = parse_module(src, begin, end, &m);
  return *err ? NULL : m;
}

/* The steps of `flags` on a parsed module, in their documented order. */
static hlo_status after_parse(hlo_module_ir *m, unsigned flags) {
  if (flags & TL_VERIFY) HLO_TRY(module_verify(m));
  if (flags & TL_LEGALIZE_CHLO) HLO_TRY(pass_chlo_legalize(m));
  return NULL;
}

hlo_module_ir *tl_parse_text(const char *name, const char *text, unsigned flags,
                             hlo_status *err) {
  hlo_source src = tl_source(name, text);
  hlo_module_ir *m = NULL;
  hlo_status st = parse_module(&src, 0, src.len, &m);
  if (!st) st = after_parse(m, flags);
  if (st) {
    if (m) module_free(m);
    m = NULL;
    if (!err) {
      hlo_status_print(st, stderr);
      hlo_status_free(st);
      st = NULL;
    }
  }
  if (err) *err = st;
  return m;
}

hlo_status tl_run_text(const char *name, const char *text, unsigned flags,
                       const interp_options *opts, tensor *const *args, uint32_t nargs,
                       tl_run *r) {
  hlo_source src = tl_source(name, text);
  hlo_status st = tl_prepare(&src, 0, src.len, flags, opts, r);
  if (!st) st = tl_call(r, args, nargs);
  if (st) tl_run_free(r);
  return st;
}

tensor *tl_tensor(arena *a, hlo_dtype dt, uint32_t rank, const int64_t *dims, const void *data) {
  hlo_type *t = type_tensor(a, dt, rank, dims);
  tensor *x = t ? tensor_new(t) : NULL;
  if (x && data) memcpy(x->data, data, x->nbytes);
  return x;
}

hlo_status tl_prepare(const hlo_source *src, size_t begin, size_t end, unsigned flags,
                      const interp_options *opts, tl_run *r) {
  memset(r, 0, sizeof *r);
  HLO_TRY(parse_module(src, begin, end, &r->m));
  HLO_TRY(after_parse(r->m, flags));
  r->f = module_entry(r->m, NULL);
  if (!r->f) return status_new(HLO_NOT_FOUND, "no entry function");
  return interp_create(r->m, opts, &r->it);
}

hlo_status tl_call(tl_run *r, tensor *const *args, uint32_t nargs) {
  HLO_TRY(interp_call(r->it, r->f, args, nargs, &r->res));
  r->n = r->f->num_results;
  return NULL;
}

hlo_status tl_run_entry(const hlo_source *src, size_t begin, size_t end, unsigned flags,
                        const interp_options *opts, tl_run *r) {
  HLO_TRY(tl_prepare(src, begin, end, flags, opts, r));
  return tl_call(r, NULL, 0);
}

void tl_run_free(tl_run *r) {
  for (uint32_t i = 0; r->res && i < r->n; i++) tensor_release(r->res[i]);
  free(r->res);
  if (r->it) interp_destroy(r->it);
  if (r->m) module_free(r->m);
  memset(r, 0, sizeof *r);
}

bool tl_piece_has(const char *text, size_t begin, size_t end, const char *word) {
  size_t w = strlen(word);
  for (size_t p = begin; p + w <= end; p++)
    if (text[p] == word[0] && !memcmp(text + p, word, w)) return true;
  return false;
}

/* ------------------------------------------------ backends side by side */

static double tl_rnd(uint64_t *r) {
  *r = *r * 6364136223846793005ULL + 1442695040888963407ULL;
  return (double)(*r >> 11) / 9007199254740992.0;
}

static int tl_mant_bits(hlo_dtype dt) {
  return dt == HLO_BF16 ? 7 : dt == HLO_F16 ? 10 : dt == HLO_F64 ? 52 : 23;
}

/* Result k of the two backends: bit for bit (ulps 0) or within `ulps` of
 * the tensor's largest magnitude. */
static bool tl_same_buffer(const char *name, const hlo_buffer *got, const hlo_buffer *want,
                           double ulps, int k) {
  hlo_dtype dt = hlo_buffer_dtype(want);
  if (hlo_buffer_dtype(got) != dt || hlo_buffer_nbytes(got) != hlo_buffer_nbytes(want)) {
    fprintf(stderr, "  %s: result %d: type or size differs\n", name, k);
    return false;
  }
  size_t es = hlo_dtype_size(dt);
  int64_t n = es ? (int64_t)(hlo_buffer_nbytes(want) / es) : 0;
  const void *g = hlo_buffer_data(got), *w = hlo_buffer_data(want);
  bool fl = dtype_class(dt) == HLO_CLASS_FLOAT;
  double scale = 0;
  for (int64_t i = 0; fl && i < n; i++) {
    double b = fabs(elem_get_f64(dt, w, i));
    if (b > scale && !isinf(b)) scale = b;
  }
  for (int64_t i = 0; i < n; i++) {
    if (!fl || ulps == 0) {
      if (elem_get_bits(dt, g, i) == elem_get_bits(dt, w, i)) continue;
      fprintf(stderr, "  %s: result %d [%lld]: bits differ\n", name, k, (long long)i);
      return false;
    }
    double a = elem_get_f64(dt, g, i), b = elem_get_f64(dt, w, i);
    if (a == b || (isnan(a) && isnan(b))) continue;
    double ulp = scale == 0 ? ldexp(1.0, -126) : ldexp(1.0, ilogb(scale) - tl_mant_bits(dt));
    if (fabs(a - b) > ulps * ulp) {
      fprintf(stderr, "  %s: result %d [%lld]: %.9g vs %.9g\n", name, k, (long long)i, a, b);
      return false;
    }
  }
  return true;
}

bool tl_backends_agree(const char *name, const char *text, const hlo_compile_options *cpu,
                       unsigned ulp_mask, double ulps, uint64_t seed, runtime_cpu_stats *stats,
                       bool *skipped) {
  if (skipped) *skipped = false;
  /* never tiered: a tiered compile's first runs may be the interpreter's
   * (docs/tiered.md), and this compares the native code with it */
  hlo_compile_options co = cpu ? *cpu : (hlo_compile_options){.backend = HLO_BACKEND_CPU};
  co.no_tiering = true;
  hlo_module *m = NULL;
  hlo_executable *ei = NULL, *ec = NULL;
  hlo_status st = hlo_module_parse(name, text, strlen(text), &m);
  if (!st) st = hlo_executable_create(m, NULL, HLO_BACKEND_INTERP, &ei);
  if (!st) st = hlo_executable_compile(m, NULL, &co, &ec);
  if (st && hlo_status_code_of(st) == HLO_UNAVAILABLE) {
    printf("%s: skipped (%s)\n", name, hlo_status_message(st));
    hlo_status_free(st);
    hlo_executable_destroy(ei);
    hlo_module_destroy(m);
    if (skipped) *skipped = true;
    return true;
  }
  int na = ec ? hlo_executable_num_args(ec) : 0;
  hlo_buffer_view *views = calloc((size_t)(na ? na : 1), sizeof *views);
  void **data = calloc((size_t)(na ? na : 1), sizeof *data);
  bool ok = views && data;
  for (int i = 0; i < na && !st && ok; i++) {
    const int64_t *dims;
    int rank;
    hlo_dtype dt;
    st = hlo_executable_arg_type(ec, i, &dt, &rank, &dims);
    if (st) break;
    int64_t n = 1;
    for (int d = 0; d < rank; d++) n *= dims[d];
    data[i] = calloc((size_t)(n ? n : 1), hlo_dtype_size(dt));
    ok = data[i] != NULL;
    for (int64_t j = 0; ok && j < n; j++) {
      if (dtype_class(dt) == HLO_CLASS_FLOAT) elem_set_f64(dt, data[i], j, tl_rnd(&seed) * 4 - 2);
      else elem_set_i64(dt, data[i], j, (int64_t)(tl_rnd(&seed) * 9));
    }
    views[i] = (hlo_buffer_view){dt, rank, dims, data[i]};
  }
  for (int rep = 0; rep < 2 && !st && ok; rep++) {
    hlo_buffer **ri = NULL, **rc = NULL;
    st = hlo_executable_run(ei, views, na, &ri);
    if (!st) st = hlo_executable_run(ec, views, na, &rc);
    int nr = hlo_executable_num_results(ec);
    for (int k = 0; k < nr && ri && rc; k++)
      ok &= tl_same_buffer(name, rc[k], ri[k], (ulp_mask >> k) & 1 ? ulps : 0, k);
    for (int k = 0; k < nr; k++) {
      if (ri) hlo_buffer_destroy(ri[k]);
      if (rc) hlo_buffer_destroy(rc[k]);
    }
    free(ri);
    free(rc);
  }
  if (st) {
    fprintf(stderr, "  %s: ", name);
    hlo_status_print(st, stderr);
    hlo_status_free(st);
    ok = false;
  }
  for (int i = 0; data && i < na; i++) free(data[i]);
  free(data);
  free(views);
  const runtime_cpu_stats *cs = ec ? runtime_executable_cpu_stats(ec) : NULL;
  if (stats && cs) *stats = *cs; /* after the runs: their counters too */
  hlo_executable_destroy(ec);
  hlo_executable_destroy(ei);
  hlo_module_destroy(m);
  return ok;
}

const tl_kernel_type tl_kernel_types[] = {
    {HLO_I1, "i1", TL_C_B},      {HLO_I8, "i8", TL_C_I},     {HLO_I16, "i16", TL_C_I},
    {HLO_I32, "i32", TL_C_I},    {HLO_I64, "i64", TL_C_I},   {HLO_UI8, "ui8", TL_C_U},
    {HLO_UI16, "ui16", TL_C_U},  {HLO_UI32, "ui32", TL_C_U}, {HLO_UI64, "ui64", TL_C_U},
    {HLO_BF16, "bf16", TL_C_F},  {HLO_F16, "f16", TL_C_F},   {HLO_F32, "f32", TL_C_F},
    {HLO_F64, "f64", TL_C_F},
};
const int tl_num_kernel_types = (int)(sizeof tl_kernel_types / sizeof tl_kernel_types[0]);
const tl_kernel_op tl_kernel_ops[] = {
    {"add", 2, TL_C_ALL},       {"subtract", 2, TL_C_ALL},     {"multiply", 2, TL_C_ALL},
    {"maximum", 2, TL_C_ALL},   {"minimum", 2, TL_C_ALL},      {"divide", 2, TL_C_NUM},
    {"remainder", 2, TL_C_NUM}, {"and", 2, TL_C_INT | TL_C_B},    {"or", 2, TL_C_INT | TL_C_B},
    {"xor", 2, TL_C_INT | TL_C_B}, {"shift_left", 2, TL_C_INT},   {"shift_right_logical", 2, TL_C_INT},
    {"shift_right_arithmetic", 2, TL_C_INT}, {"power", 2, TL_C_F}, {"atan2", 2, TL_C_F},
    {"not", 1, TL_C_INT | TL_C_B}, {"negate", 1, TL_C_NUM},       {"abs", 1, TL_C_F | TL_C_I},
    {"sign", 1, TL_C_F | TL_C_I},  {"exponential", 1, TL_C_F},    {"exponential_minus_one", 1, TL_C_F},
    {"log", 1, TL_C_F},         {"log_plus_one", 1, TL_C_F},   {"logistic", 1, TL_C_F},
    {"tanh", 1, TL_C_F},        {"sine", 1, TL_C_F},           {"cosine", 1, TL_C_F},
    {"tan", 1, TL_C_F},         {"sqrt", 1, TL_C_F},           {"rsqrt", 1, TL_C_F},
    {"cbrt", 1, TL_C_F},        {"floor", 1, TL_C_F},          {"ceil", 1, TL_C_F},
    {"round_nearest_afz", 1, TL_C_F}, {"round_nearest_even", 1, TL_C_F},
    {"select", 3, TL_C_ALL},    {"clamp", 3, TL_C_ALL},
};
const int tl_num_kernel_ops = (int)(sizeof tl_kernel_ops / sizeof tl_kernel_ops[0]);

uint64_t tl_xorshift64(uint64_t *s) {
  uint64_t x = *s;
  x ^= x << 13;
  x ^= x >> 7;
  x ^= x << 17;
  return *s = x;
}

int64_t tl_rand_in(uint64_t *s, int64_t lo, int64_t hi) {
  return lo + (int64_t)(tl_xorshift64(s) % (uint64_t)(hi - lo + 1));
}

void tl_softmax_program(const char *ty, int rows, int cols, char *out, size_t cap) {
  char m[64], r[64];
  snprintf(m, sizeof m, "tensor<%dx%dx%s>", rows, cols, ty);
  snprintf(r, sizeof r, "tensor<%dx%s>", rows, ty);
  const char *ninf = !strcmp(ty, "f32") ? "0xFF800000" : "0xFF80";
  snprintf(out, cap,
           "func.func @main(%%x: %s) -> %s {\n"
           "  %%ninf = stablehlo.constant dense<%s> : tensor<%s>\n"
           "  %%zero = stablehlo.constant dense<0.0> : tensor<%s>\n"
           "  %%m = stablehlo.reduce(%%x init: %%ninf) applies stablehlo.maximum across dimensions = [1] : (%s, tensor<%s>) -> %s\n"
           "  %%mb = stablehlo.broadcast_in_dim %%m, dims = [0] : (%s) -> %s\n"
           "  %%d = stablehlo.subtract %%x, %%mb : %s\n"
           "  %%e = stablehlo.exponential %%d : %s\n"
           "  %%s = stablehlo.reduce(%%e init: %%zero) applies stablehlo.add across dimensions = [1] : (%s, tensor<%s>) -> %s\n"
           "  %%sb = stablehlo.broadcast_in_dim %%s, dims = [0] : (%s) -> %s\n"
           "  %%y = stablehlo.divide %%e, %%sb : %s\n"
           "  return %%y : %s\n}\n",
           m, m, ninf, ty, ty, m, ty, r, r, m, m, m, m, ty, r, r, m, m, m);
}

bool tl_cuda_prints_and_compiles(const char *test, kernel *k, const char *kname,
                                 const char *const *want, int n) {
  cuda_schedule(k);
  const kernel *ks[1] = {k};
  strbuf src = {0};
  hlo_status st = cuda_emit_module(ks, &kname, 1, &src);
  bool ok = !st && src.data;
  if (st) fprintf(stderr, "%s: %s\n", test, hlo_status_message(st));
  hlo_status_free(st);
  for (int i = 0; i < n && src.data; i++)
    if (!strstr(src.data, want[i])) {
      fprintf(stderr, "  %s: no \"%s\" in the source\n", test, want[i]);
      ok = false;
    }
  hlo_status ls = src.data ? nvrtc_load() : NULL;
  if (ls) {
    printf("%s: NVRTC skipped: %s\n", test, hlo_status_message(ls));
    hlo_status_free(ls);
  } else if (src.data) {
    void *cubin = NULL;
    size_t len = 0;
    hlo_status cs = nvrtc_compile(src.data, kname, 90, &cubin, &len);
    if (cs) fprintf(stderr, "%s\n%s\n", hlo_status_message(cs), src.data);
    ok &= !cs;
    hlo_status_free(cs);
    free(cubin);
  }
  sb_free(&src);
  return ok;
}
