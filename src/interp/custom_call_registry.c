/* custom_call_registry.c — the custom-call handler registry
 * (custom_call_registry.h).
 *
 * A linked list of registrations under one mutex (`mu`), the only mutable
 * state of the file besides each thread's list of the calls it is running.
 * A registration is found by (target, platform); `holds` counts the calls
 * that acquired it and have not released it. Removal unlinks it at once
 * (later lookups miss it), then waits on `cv` until `holds` drops to 0 and
 * frees it, so nobody calls a handler whose user data its owner may already
 * have freed. A handler that removes its own registration would wait for
 * itself: each thread keeps the registrations it is calling on a stack of
 * frames (`running`, thread-local: frames live in custom_call_registry_call's
 * stack frame), and removal refuses one found there. Few targets are
 * registered in practice, so a list is enough. */
#include "interp/custom_call_registry.h"
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "support/status.h"

#define TARGET_MAX 1024

struct cc_registration {
  struct cc_registration *next;
  char *target;
  size_t len;
  char platform[8];        /* "cpu", "cuda" or "*" */
  hlo_custom_call_fn fn;
  void *user_data;
  int holds;               /* calls holding it (under mu) */
  bool removed;            /* unlinked: freed by the remover once holds is 0 */
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static cc_registration *head;   /* under mu */

/* One call in progress on this thread (custom_call_registry_call). */
typedef struct frame {
  const cc_registration *r;
  const struct frame *up;
} frame;
static _Thread_local const frame *running;

/* "cpu", "cuda" or "*" as stored, or NULL for anything else. */
static const char *platform_name(const char *p) {
  if (!p) return NULL;
  if (!strcmp(p, "cpu")) return "cpu";
  if (!strcmp(p, "cuda")) return "cuda";
  if (!strcmp(p, "*")) return "*";
  return NULL;
}

/* The registration of target[0..len) on platform `p` (exactly), under mu. */
static cc_registration *find(const char *target, size_t len, const char *p) {
  for (cc_registration *r = head; r; r = r->next)
    if (r->len == len && !memcmp(r->target, target, len) && !strcmp(r->platform, p)) return r;
  return NULL;
}

hlo_status custom_call_registry_add(const char *target, const char *platform,
                                    hlo_custom_call_fn fn, void *user_data) {
  const char *p = platform_name(platform);
  if (!target || !*target)
    return status_new(HLO_INVALID_ARGUMENT, "hlo_custom_call_register: no target name");
  size_t len = strlen(target);
  if (len > TARGET_MAX)
    return status_new(HLO_INVALID_ARGUMENT,
                      "hlo_custom_call_register: a target name of %zu bytes (at most %d)", len,
                      TARGET_MAX);
  if (!strncmp(target, "check.", 6))
    return status_new(HLO_INVALID_ARGUMENT,
                      "hlo_custom_call_register: target '%s': names starting with 'check.' "
                      "belong to hlo's check dialect", target);
  if (!p)
    return status_new(HLO_INVALID_ARGUMENT,
                      "hlo_custom_call_register: platform '%s' for target '%s' (expected "
                      "\"cpu\", \"cuda\" or \"*\")", platform ? platform : "(null)", target);
  if (!fn)
    return status_new(HLO_INVALID_ARGUMENT,
                      "hlo_custom_call_register: target '%s': no handler function", target);
  cc_registration *r = calloc(1, sizeof *r);
  char *name = malloc(len + 1);
  if (!r || !name) {
    free(r);
    free(name);
    return status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
  }
  memcpy(name, target, len + 1);
  r->target = name;
  r->len = len;
  strcpy(r->platform, p);
  r->fn = fn;
  r->user_data = user_data;
  pthread_mutex_lock(&mu);
  bool dup = find(target, len, p) != NULL;
  if (!dup) {
    r->next = head;
    head = r;
  }
  pthread_mutex_unlock(&mu);
  if (dup) {
    free(name);
    free(r);
    return status_new(HLO_INVALID_ARGUMENT,
                      "hlo_custom_call_register: target '%s' already has a handler on "
                      "platform '%s' (unregister it first)", target, p);
  }
  return NULL;
}

hlo_status custom_call_registry_remove(const char *target, const char *platform) {
  const char *p = platform_name(platform);
  if (!target)
    return status_new(HLO_INVALID_ARGUMENT, "hlo_custom_call_unregister: no target name");
  if (!p)
    return status_new(HLO_INVALID_ARGUMENT,
                      "hlo_custom_call_unregister: platform '%s' for target '%s' (expected "
                      "\"cpu\", \"cuda\" or \"*\")", platform ? platform : "(null)", target);
  size_t len = strlen(target);
  pthread_mutex_lock(&mu);
  cc_registration *r = find(target, len, p);
  if (!r) {
    pthread_mutex_unlock(&mu);
    return status_new(HLO_NOT_FOUND,
                      "hlo_custom_call_unregister: target '%s' has no handler registered for "
                      "platform '%s'", target, p);
  }
  for (const frame *f = running; f; f = f->up)
    if (f->r == r) {
      pthread_mutex_unlock(&mu);
      return status_new(HLO_INVALID_ARGUMENT,
                        "hlo_custom_call_unregister: target '%s' (platform '%s') is being "
                        "unregistered from inside a call of its own handler, which would wait "
                        "for itself; unregister it after the run", target, p);
    }
  for (cc_registration **pp = &head; *pp; pp = &(*pp)->next)
    if (*pp == r) {
      *pp = r->next;
      break;
    }
  r->removed = true;
  while (r->holds > 0) pthread_cond_wait(&cv, &mu);
  pthread_mutex_unlock(&mu);
  free(r->target);
  free(r);
  return NULL;
}

cc_registration *custom_call_registry_acquire(const char *target, size_t len,
                                              const char *platform) {
  const char *p = platform_name(platform);
  if (!target || !p) return NULL;
  pthread_mutex_lock(&mu);
  cc_registration *r = head ? find(target, len, p) : NULL;
  if (!r && head && strcmp(p, "*")) r = find(target, len, "*");
  if (r) r->holds++;
  pthread_mutex_unlock(&mu);
  return r;
}

hlo_status custom_call_registry_call(cc_registration *r, const hlo_custom_call_info *info,
                                     const hlo_buffer_view *operands, int num_operands,
                                     const hlo_buffer_view *results, int num_results) {
  frame f = {r, running};
  running = &f;
  hlo_status st = r->fn(r->user_data, info, operands, num_operands, results, num_results);
  running = f.up;
  return st;
}

void custom_call_registry_release(cc_registration *r) {
  if (!r) return;
  pthread_mutex_lock(&mu);
  if (--r->holds == 0 && r->removed) pthread_cond_broadcast(&cv);
  pthread_mutex_unlock(&mu);
}

bool custom_call_registry_platforms(const char *target, size_t len, char *buf, size_t cap) {
  bool any = false;
  size_t used = 0;
  if (buf && cap) buf[0] = '\0';
  if (!target) return false;
  pthread_mutex_lock(&mu);
  for (const cc_registration *r = head; r; r = r->next) {
    if (r->len != len || memcmp(r->target, target, len)) continue;
    if (buf && cap > used + 1) {
      int n = snprintf(buf + used, cap - used, "%s%s", any ? ", " : "", r->platform);
      used = n < 0 ? used : (size_t)n >= cap - used ? cap - 1 : used + (size_t)n;
    }
    any = true;
  }
  pthread_mutex_unlock(&mu);
  return any;
}
