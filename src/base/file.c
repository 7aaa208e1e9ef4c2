/* file.c — whole files read or mapped, for every reader of the library
 * (CUDA sources and headers, kernel code files): one place that opens
 * without blocking on a FIFO, refuses what is not a regular file, bounds the
 * size and says why a read failed.  Its own file: it is what the library
 * asks of the file system, apart from containers and text. */
#include "base/file.h"
#include "cudag.h"
#include "base/alloc.h"
#include "base/diag.h"

#include <stddef.h>
#include <stdint.h>

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* Reads size bytes of fd into p, retrying reads cut by a signal; 0, or the
 * errno of the failure, or -1 when the file shrank. */
static int read_all(int fd, char *p, size_t size, size_t *got)
{
    *got = 0;
    while (*got < size) {
        ssize_t r = read(fd, p + *got, size - *got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return r < 0 ? errno : -1;
        *got += (size_t)r;
    }
    return 0;
}

int cudag__file_read(const char *path, uint64_t max, unsigned how,
                     cudag__arena *a, const char *what, cudag__pos pos,
                     cudag__file_bytes *out, uint64_t *size_out,
                     cudag_error *err)
{
    const char *w = what ? what : "", *sep = what ? ": " : "";
    *out = (cudag__file_bytes){0};
    /* O_NONBLOCK: opening a FIFO would wait for a writer forever; only a
     * regular file is read (checked below), where the flag changes
     * nothing. */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return cudag__fail_at(err, CUDAG_EIO, pos, "%s%scannot read '%s': %s",
                              w, sep, path, strerror(errno));
    struct stat st;
    int rc = CUDAG_OK;
    size_t size = 0;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        rc = cudag__fail_at(err, CUDAG_EIO, pos,
                            "%s%scannot read '%s': not a regular file", w, sep,
                            path);
        goto done;
    }
    if ((uint64_t)st.st_size > max) {
        if (size_out)
            *size_out = (uint64_t)st.st_size;
        rc = cudag__fail_at(err, CUDAG_ELIMIT, pos,
                            "%s%s'%s' is %llu bytes (at most %llu)", w, sep,
                            path, (unsigned long long)st.st_size,
                            (unsigned long long)max);
        goto done;
    }
    size = (size_t)st.st_size;
    if (how == CUDAG__FILE_MAP) {
        /* Mapped: sniffing and listing entry points touch a few pages of a
         * fatbin of megabytes. */
        void *map = size ? mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0)
                         : NULL;
        if (map == MAP_FAILED) {
            rc = cudag__fail_at(err, CUDAG_EIO, pos,
                                "%s%scannot read '%s': %s", w, sep, path,
                                strerror(errno));
            goto done;
        }
        *out = (cudag__file_bytes){map ? map : "", size, map};
        goto done;
    }
    char *text = cudag__arena_alloc(a, size + 1);   /* zeroed: the NUL */
    if (!text) {
        rc = cudag__fail_at(err, CUDAG_ENOMEM, pos, "out of memory");
        goto done;
    }
    size_t got;
    int e = read_all(fd, text, size, &got);
    if (e)
        rc = cudag__fail_at(err, CUDAG_EIO, pos, "%s%scannot read '%s': %s", w,
                            sep, path, e > 0 ? strerror(e) : "file shrank");
    else
        *out = (cudag__file_bytes){text, got, NULL};
done:
    close(fd);
    return rc;
}

void cudag__file_release(cudag__file_bytes *f)
{
    if (f->map)
        munmap(f->map, f->len);
    *f = (cudag__file_bytes){0};
}

char *cudag__dir_of(cudag__arena *a, const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return cudag__arena_strdup(a, ".");
    if (slash == path)
        return cudag__arena_strdup(a, "/");
    return cudag__arena_strndup(a, path, (size_t)(slash - path));
}
