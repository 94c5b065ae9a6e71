/* ffi.c — the public custom-call API (include/hlo/hlo.h, "custom calls
 * (FFI)"): hlo_custom_call_register / _unregister over the registry that
 * the interpreter's custom_call kernel dispatches through
 * (src/interp/custom_call_registry.c), and hlo_status_create, with which a
 * handler reports an error. */
#include "hlo/hlo.h"
#include "interp/custom_call_registry.h"
#include "support/status.h"

hlo_status hlo_status_create(hlo_status_code code, const char *message) {
  if (code == HLO_OK) return NULL;
  if ((int)code < 0 || code > HLO_INTERNAL) code = HLO_INTERNAL;
  return status_new(code, "%s", message ? message : "");
}

hlo_status hlo_custom_call_register(const char *target, const char *platform,
                                    hlo_custom_call_fn fn, void *user_data) {
  return custom_call_registry_add(target, platform, fn, user_data);
}

hlo_status hlo_custom_call_unregister(const char *target, const char *platform) {
  return custom_call_registry_remove(target, platform);
}
