/* cache_dir.c — the root folder of hlo's on-disk caches (cache_dir.h). */
#include "support/cache_dir.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include "support/path.h"

/* Whether `v` is one of the words that turn the cache off. */
static bool off_word(const char *v) {
  return !strcasecmp(v, "off") || !strcmp(v, "0") || !strcasecmp(v, "false") ||
         !strcasecmp(v, "no");
}

bool cache_dir_root(const char *dir, char out[CACHE_DIR_PATH_MAX]) {
  int w;
  const char *e;
  if (dir && *dir) {
    if (off_word(dir)) return false;
    w = snprintf(out, CACHE_DIR_PATH_MAX, "%s", dir);
  } else if ((e = getenv("HLO_CACHE_DIR"))) {
    if (!*e || off_word(e)) return false;
    w = snprintf(out, CACHE_DIR_PATH_MAX, "%s", e);
  } else if ((e = getenv("XDG_CACHE_HOME")) && *e == '/') { /* relative: ignored (XDG spec) */
    w = snprintf(out, CACHE_DIR_PATH_MAX, "%s/hlo", e);
  } else if ((e = getenv("HOME")) && *e) {
    w = snprintf(out, CACHE_DIR_PATH_MAX, "%s/.cache/hlo", e);
  } else {
    return false;
  }
  return w > 0 && w < CACHE_DIR_PATH_MAX;
}

bool cache_dir_sub(const char *dir, const char *sub, char out[CACHE_DIR_PATH_MAX]) {
  char root[CACHE_DIR_PATH_MAX];
  if (!cache_dir_root(dir, root)) return false;
  int w = snprintf(out, CACHE_DIR_PATH_MAX, "%s/%s", root, sub);
  if (w <= 0 || w >= CACHE_DIR_PATH_MAX) return false;
  hlo_status st = path_make_dirs(out, 0700);
  if (st) {
    hlo_status_free(st);
    return false;
  }
  return access(out, W_OK | X_OK) == 0;
}
