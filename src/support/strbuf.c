/* strbuf.c — growable text buffer. */
#include "support/strbuf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "support/arena.h"

void sb_init(strbuf *b) { memset(b, 0, sizeof *b); }
void sb_free(strbuf *b) { free(b->data); memset(b, 0, sizeof *b); }

static int grow(strbuf *b, size_t extra) {
  if (b->oom) return 0;
  if (b->len + extra + 1 <= b->cap) return 1;
  size_t cap = b->cap ? b->cap : 256;
  while (cap < b->len + extra + 1) {
    if (cap > ((size_t)1 << 40)) { b->oom = 1; return 0; }
    cap *= 2;
  }
  char *p = xrealloc(b->data, cap);
  if (!p) { b->oom = 1; return 0; }
  b->data = p;
  b->cap = cap;
  return 1;
}

void sb_putn(strbuf *b, const char *s, size_t n) {
  if (!grow(b, n)) return;
  memcpy(b->data + b->len, s, n);
  b->len += n;
  b->data[b->len] = 0;
}
void sb_putc(strbuf *b, char c) { sb_putn(b, &c, 1); }
void sb_puts(strbuf *b, const char *s) { sb_putn(b, s, strlen(s)); }

void sb_vprintf(strbuf *b, const char *fmt, va_list ap) {
  if (b->oom) return;
  /* formatted once into the room there is; a second time only when it
     did not fit (the printer and the kernel emitter call this a lot) */
  if (!b->data && !grow(b, 64)) return;
  size_t room = b->cap - b->len;
  va_list ap2;
  va_copy(ap2, ap);
  int n = vsnprintf(b->data + b->len, room, fmt, ap2);
  va_end(ap2);
  if (n < 0) {
    b->data[b->len] = 0;
    return;
  }
  if ((size_t)n >= room) {
    if (!grow(b, (size_t)n)) {
      b->data[b->len] = 0;
      return;
    }
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
  }
  b->len += (size_t)n;
}

void sb_printf(strbuf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  sb_vprintf(b, fmt, ap);
  va_end(ap);
}

const char *sb_cstr(strbuf *b) { return b->data ? b->data : ""; }

char *sb_take(strbuf *b) {
  char *p = b->data;
  if (b->oom) { free(p); p = NULL; }
  else if (!p) { p = xmalloc(1); if (p) *p = 0; }
  memset(b, 0, sizeof *b);
  return p;
}
