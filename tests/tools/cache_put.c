/* cache_put — writes one compilation-cache entry with compile_cache_store,
 * for tests of `hlo cache` that need entries of known content without
 * compiling anything (tests/suite_cache.sh).
 *
 * usage: cache_put ROOT NAME META [BYTES]
 *   The entry's key is compile_cache_key of NAME; META is its `meta`
 *   section, `\n` written as the two characters backslash-n or as real
 *   newlines; BYTES (default 0) adds a section "code" of that many bytes
 *   (byte i = i mod 251), so entries of a chosen size can be made. The
 *   bound is 2^62 bytes (nothing is evicted). Prints the 32-hex key; exits
 *   0, 1 when the store fails (its message on stderr), 2 on a usage error. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/compile_cache.h"

int main(int argc, char **argv) {
  if (argc < 4 || argc > 5) {
    fprintf(stderr, "usage: cache_put ROOT NAME META [BYTES]\n");
    return 2;
  }
  char *end = NULL;
  unsigned long long nbytes = argc == 5 ? strtoull(argv[4], &end, 10) : 0;
  if ((argc == 5 && (!*argv[4] || *end)) || nbytes > (1ull << 30)) {
    fprintf(stderr, "cache_put: BYTES '%s': expected a whole number up to 2^30\n", argv[4]);
    return 2;
  }
  /* the meta text, `\n` escapes turned into newlines */
  size_t ml = strlen(argv[3]);
  char *meta = malloc(ml + 2);
  unsigned char *code = malloc(nbytes + 1);
  if (!meta || !code) {
    fprintf(stderr, "cache_put: out of memory\n");
    return 1;
  }
  size_t k = 0;
  for (size_t i = 0; i < ml; i++) {
    if (argv[3][i] == '\\' && argv[3][i + 1] == 'n') { meta[k++] = '\n'; i++; }
    else meta[k++] = argv[3][i];
  }
  if (k == 0 || meta[k - 1] != '\n') meta[k++] = '\n';
  meta[k] = 0;
  for (unsigned long long i = 0; i < nbytes; i++) code[i] = (unsigned char)(i % 251);
  char key[COMPILE_CACHE_KEY_HEX];
  const char *parts[1] = {argv[2]};
  compile_cache_key(parts, 1, key);
  cache_section secs[2] = {{"meta", meta, k}, {"code", code, (size_t)nbytes}};
  hlo_status st = compile_cache_store(argv[1], key, secs, nbytes ? 2 : 1, 1ull << 62);
  free(meta);
  free(code);
  if (st) {
    fprintf(stderr, "cache_put: %s\n", hlo_status_message(st));
    hlo_status_free(st);
    return 1;
  }
  printf("%s\n", key);
  return 0;
}
