/* cli_cache_options.c — the compilation cache's flags, shared by `hlo run`,
 * `hlo bench` and `hlo compile` (--cache-dir, --no-cache, --cache-max-bytes,
 * --log-compiles, --explain-cache-misses), and byte counts with K/M/G
 * suffixes. Declared in tools/builtin/builtin.h. The environment variables
 * (HLO_CACHE_DIR, HLO_CACHE_MAX_BYTES, HLO_LOG_COMPILES,
 * HLO_EXPLAIN_CACHE_MISSES) are read by the runtime, not here. */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "builtin/builtin.h"

bool cli_parse_bytes(const char *s, uint64_t *out) {
  if (!s || !isdigit((unsigned char)*s)) return false;
  uint64_t v = 0;
  const char *p = s;
  for (; isdigit((unsigned char)*p); p++) {
    unsigned d = (unsigned)(*p - '0');
    if (v > (UINT64_MAX - d) / 10) return false;
    v = v * 10 + d;
  }
  unsigned shift = 0;
  switch (*p) {
    case 'k': case 'K': shift = 10; p++; break;
    case 'm': case 'M': shift = 20; p++; break;
    case 'g': case 'G': shift = 30; p++; break;
    default: break;
  }
  if (*p) return false;
  if (shift && v > (UINT64_MAX >> shift)) return false;
  *out = v << shift;
  return true;
}

int cli_cache_flag(const char *verb, int argc, char **argv, int *i, cli_cache_opts *o) {
  const char *a = argv[*i];
  bool has_val = *i + 1 < argc;
  if (cli_is_flag(a, "--no-cache")) o->no_cache = true;
  else if (cli_is_flag(a, "--log-compiles")) o->log_compiles = true;
  else if (cli_is_flag(a, "--explain-cache-misses")) o->explain_cache_misses = true;
  else if (cli_is_flag(a, "--cache-dir") && has_val) {
    o->dir = argv[++*i];
    if (!*o->dir) {
      fprintf(stderr, "hlo %s: --cache-dir: expected a folder (or `off`), not an empty string\n",
              verb);
      return -1;
    }
  } else if (cli_is_flag(a, "--cache-max-bytes") && has_val) {
    const char *v = argv[++*i];
    if (!cli_parse_bytes(v, &o->max_bytes) || o->max_bytes == 0) {
      fprintf(stderr, "hlo %s: --cache-max-bytes '%s': expected a positive whole number of bytes, "
              "optionally with a K, M or G suffix (powers of 1024), e.g. 512M\n", verb, v);
      return -1;
    }
  } else {
    return 0;
  }
  return 1;
}

void cli_cache_apply(const cli_cache_opts *o, hlo_compile_options *co) {
  co->cache_dir = o->dir;
  co->no_cache = o->no_cache;
  co->cache_max_bytes = o->max_bytes;
  co->log_compiles = o->log_compiles;
  co->explain_cache_misses = o->explain_cache_misses;
}
