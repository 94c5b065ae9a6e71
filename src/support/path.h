/* path.h — file-system helpers shared by the stages that write files
 * (--dump-to folders, caches). */
#ifndef HLO_SUPPORT_PATH_H
#define HLO_SUPPORT_PATH_H
#include "support/status.h"

/* mkdir -p: makes `dir` and every missing parent with permissions `mode`
 * (before the umask). Errors: HLO_UNAVAILABLE naming the folder that could
 * not be made and the system's reason, or that `dir` exists but is not a
 * folder; HLO_RESOURCE_EXHAUSTED. */
HLO_MUST_USE hlo_status path_make_dirs(const char *dir, unsigned mode);

#endif
