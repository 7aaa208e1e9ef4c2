/* file.h — the one way the library reads a whole file: into an arena,
 * NUL-terminated (sources, headers), or mapped read-only (kernel code of
 * megabytes, of which a few pages are touched); and a path's directory. */
#ifndef CUDAG_FILE_H
#define CUDAG_FILE_H

#include "cudag.h"
#include "base/diag.h"

#include <stddef.h>
#include <stdint.h>

typedef struct cudag__arena cudag__arena;

/* A whole file's bytes: read into an arena (NUL-terminated) or mapped. */
typedef struct cudag__file_bytes {
    const char *p;              /* the bytes; "" for an empty file */
    size_t len;
    void *map;                  /* mapped (CUDAG__FILE_MAP): what
                                   cudag__file_release unmaps; NULL otherwise */
} cudag__file_bytes;

enum { CUDAG__FILE_READ = 0, CUDAG__FILE_MAP = 1 };

/*
 * Reads (CUDAG__FILE_READ, into arena a, NUL-terminated) or maps read-only
 * (CUDAG__FILE_MAP; a unused) the regular file `path` of at most max bytes.
 * Opens with O_NONBLOCK (a FIFO never blocks: it is refused as not regular)
 * and O_CLOEXEC; retries reads cut by a signal.  Errors at pos, each message
 * starting "WHAT: " when what is not NULL: CUDAG_EIO "cannot read 'PATH':
 * REASON" (the system's reason, "not a regular file", or "file shrank");
 * CUDAG_ELIMIT "'PATH' is SIZE bytes (at most MAX)" with *size_out the size
 * (may be NULL); CUDAG_ENOMEM "out of memory".  On error *out is zeroed and
 * nothing is left to release.
 */
int cudag__file_read(const char *path, uint64_t max, unsigned how,
                     cudag__arena *a, const char *what, cudag__pos pos,
                     cudag__file_bytes *out, uint64_t *size_out,
                     cudag_error *err);

/* Unmaps a mapped file; accepts a read or zeroed one (nothing to do). */
void cudag__file_release(cudag__file_bytes *f);

/* The directory part of a path ("." for none, "/" for the root), in a;
 * NULL on OOM. */
char *cudag__dir_of(cudag__arena *a, const char *path);

#endif /* CUDAG_FILE_H */
