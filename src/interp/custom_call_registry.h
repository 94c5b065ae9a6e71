/* custom_call_registry.h — the registry of custom-call handlers that programs
 * register at run time (include/hlo/hlo.h, "custom calls (FFI)"): target
 * name and platform -> function and user data.
 *
 * It lives in src/interp because the interpreter's custom_call kernel
 * (interp_custom_call.c) is what calls the handlers — on the interpreter and
 * on every compiled backend, whose custom calls are interpreter thunks — and
 * interp may not include runtime (../shared/DESIGN.md, layers). The public
 * wrappers are in src/runtime/ffi.c.
 *
 * Thread safety: one mutex guards the table; handlers are called outside
 * it. A call in flight holds its registration (custom_call_registry_acquire
 * .. _release), and removing a registration waits until no call holds it,
 * so a handler's user data may be freed once hlo_custom_call_unregister
 * returns. */
#ifndef HLO_INTERP_CUSTOM_CALL_REGISTRY_H
#define HLO_INTERP_CUSTOM_CALL_REGISTRY_H
#include <stdbool.h>
#include <stddef.h>
#include "hlo/hlo.h"

/* The platform every backend runs custom calls on today: the host (the
 * CUDA backend runs them as interpreter thunks on host copies too). A call
 * looks up a handler for this platform, then one for "*". */
#define CUSTOM_CALL_PLATFORM_HOST "cpu"

/* A registration held for one call (opaque). */
typedef struct cc_registration cc_registration;

/* Adds handler `fn` (with `user_data`) for `target` on `platform` ("cpu",
 * "cuda" or "*"); both strings are copied. Errors: HLO_INVALID_ARGUMENT for
 * a NULL or empty target, a target over 1024 bytes or starting with
 * "check." (hlo's own check dialect), a platform other than those three,
 * a NULL fn, or a target already registered for that platform;
 * HLO_RESOURCE_EXHAUSTED. */
HLO_MUST_USE hlo_status custom_call_registry_add(const char *target, const char *platform,
                                                 hlo_custom_call_fn fn, void *user_data);
/* Removes the handler of `target` on `platform` (as given to _add: "*" is
 * only the "*" registration); waits until no call of it is in flight on
 * another thread. Errors: HLO_INVALID_ARGUMENT (NULL target, bad platform,
 * or a call from inside a call of that very handler on this thread, which
 * would wait for itself), HLO_NOT_FOUND (not registered). */
HLO_MUST_USE hlo_status custom_call_registry_remove(const char *target, const char *platform);
/* The handler for target[0..len) on `platform` (its own registration, else
 * the "*" one), held until custom_call_registry_release; NULL when there
 * is none (or out of memory for nothing: no allocation happens here). */
cc_registration *custom_call_registry_acquire(const char *target, size_t len,
                                              const char *platform);
/* Calls the held handler: fn(user_data, info, operands, ..., results, ...),
 * marking it as running on this thread (so that removing it from inside
 * the call is refused instead of waiting forever). Returns fn's status. */
hlo_status custom_call_registry_call(cc_registration *r, const hlo_custom_call_info *info,
                                     const hlo_buffer_view *operands, int num_operands,
                                     const hlo_buffer_view *results, int num_results);
/* Lets go of a registration acquire gave (NULL is fine). */
void custom_call_registry_release(cc_registration *r);
/* Whether target[0..len) has a handler on any platform; when it has, the
 * platforms it has ("cpu, *") are written to buf (cap bytes, truncated,
 * NUL-terminated; buf may be NULL when cap is 0). */
bool custom_call_registry_platforms(const char *target, size_t len, char *buf, size_t cap);
#endif
