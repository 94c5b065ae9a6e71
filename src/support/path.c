/* path.c — file-system helpers (path.h). */
#include "support/path.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "support/arena.h"

hlo_status path_make_dirs(const char *dir, unsigned mode) {
  size_t len = strlen(dir);
  char *p = xmalloc(len + 1);
  if (!p) return status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
  memcpy(p, dir, len + 1);
  hlo_status st = NULL;
  for (size_t i = 1; i <= len && !st; i++) {
    if (p[i] != '/' && p[i] != 0) continue;
    char c = p[i];
    p[i] = 0;
    if (mkdir(p, (mode_t)mode) != 0 && errno != EEXIST)
      st = status_new(HLO_UNAVAILABLE, "cannot create the folder %s: %s", p, strerror(errno));
    p[i] = c;
  }
  struct stat sbuf;
  if (!st && (stat(dir, &sbuf) != 0 || !S_ISDIR(sbuf.st_mode)))
    st = status_new(HLO_UNAVAILABLE, "%s is not a folder", dir);
  free(p);
  return st;
}
