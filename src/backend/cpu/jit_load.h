/* jit_load.h — loading a shared object that exists only as bytes in memory
 * (a compiled object handed back by the compilation cache, backend.h's
 * backend_object), and reading an object file's bytes back: the two halves
 * of the JIT's self-contained objects (jit.c). */
#ifndef HLO_BACKEND_CPU_JIT_LOAD_H
#define HLO_BACKEND_CPU_JIT_LOAD_H
#include <stdbool.h>
#include <stddef.h>

/* Whether bytes[0..len) start like a shared object this process can load:
 * an ELF header of this machine's class and byte order, of type ET_DYN (a
 * cheap check before dlopen; dlopen checks the rest). */
bool cpu_jit_looks_loadable(const void *bytes, size_t len);

/* dlopen(RTLD_NOW | RTLD_LOCAL) of the shared object bytes[0..len), or NULL
 * when it does not load (not an object, a missing library, out of memory);
 * dlerror() is not kept. The bytes are written to an anonymous memory file
 * (memfd_create) loaded as /proc/self/fd/N, the descriptor closed right
 * after; where memfd_create or /proc is unavailable, to a temporary file
 * "hlo-jit-PID-XXXXXX" in $TMPDIR (else /tmp), unlinked right after dlopen
 * (the object stays mapped). The name given to dlopen is one that no
 * object loaded now has (glibc returns the object already loaded under a
 * name, whatever the file holds now: an earlier memfd that had the same
 * descriptor number), so a handle is always of these bytes. Thread-safe. */
void *cpu_jit_load_bytes(const void *bytes, size_t len);

/* Reads the whole regular file `path` into *bytes (malloc'd, yours) and
 * *len; false (nothing allocated) when it cannot (absent, not a regular
 * file, over 1 GiB, a read error). */
bool cpu_jit_read_file(const char *path, void **bytes, size_t *len);

#endif /* HLO_BACKEND_CPU_JIT_LOAD_H */
