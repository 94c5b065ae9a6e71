/* cache_dir.c — the root folder of hlo's on-disk caches (cache_dir.h). */
#include "support/cache_dir.h"
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>
#include "support/path.h"

/* Whether `v` is one of the words that turn the cache off. */
static bool off_word(const char *v) {
  return !strcasecmp(v, "off") || !strcmp(v, "0") || !strcasecmp(v, "false") ||
         !strcasecmp(v, "no");
}

cache_dir_result cache_dir_resolve(const char *dir, char out[CACHE_DIR_PATH_MAX], char *why,
                                   size_t cap) {
  int w;
  const char *e, *from;
  if (why && cap) why[0] = 0;
  if (dir && *dir) {
    if (off_word(dir)) return CACHE_DIR_OFF;
    from = "--cache-dir";
    w = snprintf(out, CACHE_DIR_PATH_MAX, "%s", dir);
  } else if ((e = getenv("HLO_CACHE_DIR")) && *e) { /* empty: as if unset */
    if (off_word(e)) return CACHE_DIR_OFF;
    from = "HLO_CACHE_DIR";
    w = snprintf(out, CACHE_DIR_PATH_MAX, "%s", e);
  } else if ((e = getenv("XDG_CACHE_HOME")) && *e == '/') { /* relative: ignored (XDG spec) */
    from = "XDG_CACHE_HOME";
    w = snprintf(out, CACHE_DIR_PATH_MAX, "%s/hlo", e);
  } else if ((e = getenv("HOME")) && *e) {
    from = "HOME";
    w = snprintf(out, CACHE_DIR_PATH_MAX, "%s/.cache/hlo", e);
  } else {
    if (why && cap)
      snprintf(why, cap, "no cache folder: none of --cache-dir, HLO_CACHE_DIR, XDG_CACHE_HOME "
               "and HOME is set");
    out[0] = 0;
    return CACHE_DIR_UNUSABLE;
  }
  if (w > 0 && w < CACHE_DIR_PATH_MAX) return CACHE_DIR_OK;
  if (why && cap)
    snprintf(why, cap, "the cache folder from %s is %d bytes long, more than %d", from, w,
             CACHE_DIR_PATH_MAX - 1);
  out[0] = 0;
  return CACHE_DIR_UNUSABLE;
}

bool cache_dir_root(const char *dir, char out[CACHE_DIR_PATH_MAX]) {
  char why[256];
  cache_dir_result r = cache_dir_resolve(dir, out, why, sizeof why);
  if (r == CACHE_DIR_UNUSABLE) {
    static atomic_flag warned = ATOMIC_FLAG_INIT;
    if (!atomic_flag_test_and_set(&warned))
      fprintf(stderr, "hlo: warning: the compilation cache is off: %s\n", why);
  }
  return r == CACHE_DIR_OK;
}

bool cache_dir_sub(const char *dir, const char *sub, char out[CACHE_DIR_PATH_MAX]) {
  char root[CACHE_DIR_PATH_MAX];
  if (!cache_dir_root(dir, root)) return false;
  int w = snprintf(out, CACHE_DIR_PATH_MAX, "%s/%s", root, sub);
  if (w <= 0 || w >= CACHE_DIR_PATH_MAX) return false;
  struct stat sb;
  if (stat(out, &sb) != 0) {
    /* a root hlo makes is private (0700); the folders in it are as shared
       as the root (0755 less the umask), so that a root its owner made
       group-writable is shared whole */
    hlo_status st = path_make_dirs(root, 0700);
    if (st) {
      hlo_status_free(st);
      return false;
    }
    if (mkdir(out, 0755) != 0 && errno != EEXIST) return false;
  }
  return access(out, W_OK | X_OK) == 0;
}
