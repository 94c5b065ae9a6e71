/* strbuf.h — a growable byte buffer for building text (the printer, error
 * messages). Out of memory sets `oom` and drops further appends; callers check
 * it once at the end. */
#ifndef HLO_SUPPORT_STRBUF_H
#define HLO_SUPPORT_STRBUF_H
#include <stdarg.h>
#include <stddef.h>
#include "hlo/hlo.h"

typedef struct strbuf {
  char *data;   /* NUL-terminated when len > 0 or after sb_cstr */
  size_t len, cap;
  int oom;
} strbuf;

/* An empty buffer (no allocation until the first append). */
void sb_init(strbuf *b);
/* Frees the data; `b` is empty (and usable) again afterwards. */
void sb_free(strbuf *b);
/* Append one char / a NUL-terminated string / `n` bytes of `s` / printf-style
 * text. On out of memory (or a buffer over 2^40 bytes) they set `oom` and
 * append nothing, then or later; there is no other failure. */
void sb_putc(strbuf *b, char c);
void sb_puts(strbuf *b, const char *s);
void sb_putn(strbuf *b, const char *s, size_t n);
void sb_printf(strbuf *b, const char *fmt, ...) HLO_PRINTF(2, 3);
void sb_vprintf(strbuf *b, const char *fmt, va_list ap);
/* The contents as a C string ("" when empty); lent. */
const char *sb_cstr(strbuf *b);
/* Takes the heap string out (caller frees); `b` is empty afterwards. NULL on
 * out of memory. */
char *sb_take(strbuf *b);
#endif
