/* cache.c — the compile cache's files: naming the directory, reading an
 * entry back with every field checked, writing one atomically (temporary
 * file + rename), removing them all; and the key hash. */
#include "code/cache.h"
#include "cudag.h"
#include "base/alloc.h"
#include "base/diag.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ---- hash ------------------------------------------------------------------ */

/* Two 64-bit lanes fed a word at a time with different multipliers and
 * rotations, finished with MurmurHash3's fmix64. */
#define P1 0x9E3779B185EBCA87ull
#define P2 0xC2B2AE3D27D4EB4Full

static uint64_t rotl(uint64_t x, unsigned r) { return x << r | x >> (64 - r); }

static uint64_t fmix(uint64_t k)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    k *= 0xc4ceb9fe1a85ec53ull;
    k ^= k >> 33;
    return k;
}

static void word(cudag__hash *h, uint64_t w)
{
    h->a = rotl((h->a ^ w) * P1, 31) + P2;
    h->b = rotl(h->b + w * P2, 29) * P1 ^ (h->a >> 17);
}

static void feed(cudag__hash *h, const uint8_t *p, size_t n)
{
    h->n += n;
    while (n > 0 && h->nbuf) {
        h->buf[h->nbuf++] = *p++;
        n--;
        if (h->nbuf == 8) {
            uint64_t w;
            memcpy(&w, h->buf, 8);
            word(h, w);
            h->nbuf = 0;
        }
    }
    for (; n >= 8; n -= 8, p += 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        word(h, w);
    }
    while (n--)
        h->buf[h->nbuf++] = *p++;
}

void cudag__hash_init(cudag__hash *h)
{
    memset(h, 0, sizeof *h);
    h->a = 0x243F6A8885A308D3ull;
    h->b = 0x13198A2E03707344ull;
}

void cudag__hash_part(cudag__hash *h, const void *p, size_t n)
{
    uint64_t len = n;
    feed(h, (const uint8_t *)&len, sizeof len);
    feed(h, p, n);
}

void cudag__hash_hex(const cudag__hash *h, char out[33])
{
    cudag__hash t = *h;
    uint64_t tail = 0;
    memcpy(&tail, t.buf, t.nbuf);
    word(&t, tail ^ (uint64_t)t.nbuf << 56);
    uint64_t x = fmix(t.a ^ fmix(t.n)), y = fmix(t.b + x);
    snprintf(out, 33, "%016llx%016llx", (unsigned long long)x,
             (unsigned long long)y);
}

/* ---- files ------------------------------------------------------------------ */

/* An entry: magic, payload length, payload hash, the key, then the payload.
 * A file that does not have exactly this shape is no entry. */
static const char magic[8] = {'C', 'U', 'D', 'A', 'G', 'C', '1', '\n'};
#define HEADER (8 + 8 + 32 + 32)

bool cudag__cache_dir(char *buf, size_t size)
{
    const char *own = getenv("CUDAG_CACHE_DIR");
    const char *xdg = getenv("XDG_CACHE_HOME");
    const char *home = getenv("HOME");
    int n = -1;
    if (own && *own)
        n = snprintf(buf, size, "%s", own);
    else if (xdg && *xdg == '/')    /* the spec ignores relative values */
        n = snprintf(buf, size, "%s/cudag", xdg);
    else if (home && *home)
        n = snprintf(buf, size, "%s/.cache/cudag", home);
    if (n <= 0 || (size_t)n >= size) {
        if (size)
            buf[0] = '\0';
        return false;
    }
    return true;
}

static bool entry_path(char *buf, size_t size, const char *dir,
                       const char *key)
{
    int n = snprintf(buf, size, "%s/%s.cudagc", dir, key);
    return n > 0 && (size_t)n < size;
}

int cudag__cache_get(const char *dir, const char *key, void **data,
                     size_t *len)
{
    *data = NULL;
    *len = 0;
    char path[4096];
    if (strlen(key) != 32 || !entry_path(path, sizeof path, dir, key))
        return CUDAG_EIO;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return CUDAG_EIO;
    struct stat st;
    uint8_t *buf = NULL;
    int rc = CUDAG_EIO;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < HEADER ||
        (uint64_t)st.st_size > CUDAG__CACHE_MAX_ENTRY)
        goto done;
    size_t size = (size_t)st.st_size;
    buf = cudag__malloc(size);
    if (!buf) {
        rc = CUDAG_ENOMEM;
        goto done;
    }
    size_t got = 0;
    while (got < size) {
        ssize_t r = read(fd, buf + got, size - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            goto done;
        got += (size_t)r;
    }
    uint64_t plen;
    memcpy(&plen, buf + 8, 8);
    char sum[33];
    cudag__hash h;
    cudag__hash_init(&h);
    if (memcmp(buf, magic, 8) != 0 || plen != size - HEADER ||
        memcmp(buf + 48, key, 32) != 0)
        goto done;
    cudag__hash_part(&h, buf + HEADER, plen);
    cudag__hash_hex(&h, sum);
    if (memcmp(buf + 16, sum, 32) != 0)
        goto done;
    /* The payload is moved to the front, so the caller frees one block. */
    memmove(buf, buf + HEADER, plen);
    *data = buf;
    *len = plen;
    buf = NULL;
    rc = CUDAG_OK;
done:
    cudag__free(buf);
    close(fd);
    return rc;
}

/* mkdir -p, one component at a time. */
static int make_dirs(const char *dir)
{
    char p[4096];
    size_t n = strlen(dir);
    if (n == 0 || n >= sizeof p)
        return ENAMETOOLONG;
    memcpy(p, dir, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (p[i] != '/' && p[i] != '\0')
            continue;
        char c = p[i];
        p[i] = '\0';
        if (mkdir(p, 0755) != 0 && errno != EEXIST)
            return errno;
        p[i] = c;
    }
    struct stat st;
    if (stat(dir, &st) != 0)
        return errno;
    return S_ISDIR(st.st_mode) ? 0 : ENOTDIR;
}

static int write_all(int fd, const void *p, size_t n)
{
    const uint8_t *b = p;
    while (n > 0) {
        ssize_t w = write(fd, b, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return w < 0 ? errno : EIO;
        b += w;
        n -= (size_t)w;
    }
    return 0;
}

int cudag__cache_put(const char *dir, const char *key, const void *data,
                     size_t len, cudag_error *err)
{
    char path[4096], tmp[4096];
    if (strlen(key) != 32 || !entry_path(path, sizeof path, dir, key))
        return cudag__fail_at(err, CUDAG_EIO, CUDAG__NOPOS,
                              "cannot write the compile cache: the path of an "
                              "entry in '%s' is too long", dir);
    int e = make_dirs(dir);
    if (e)
        return cudag__fail_at(err, CUDAG_EIO, CUDAG__NOPOS,
                              "cannot write the compile cache in '%s': %s",
                              dir, strerror(e));
    /* A name no other writer uses: the process and the clock, tried again
     * (O_EXCL) in the unlikely case that a thread of ours took it. */
    int fd = -1;
    for (unsigned attempt = 0; fd < 0 && attempt < 64; attempt++) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        int n = snprintf(tmp, sizeof tmp, "%s/.tmp-%s-%ld-%ld-%u", dir, key,
                         (long)getpid(), (long)ts.tv_nsec, attempt);
        if (n <= 0 || (size_t)n >= sizeof tmp)
            return cudag__fail_at(err, CUDAG_EIO, CUDAG__NOPOS,
                                  "cannot write the compile cache: the path "
                                  "of an entry in '%s' is too long", dir);
        fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        if (fd < 0 && errno != EEXIST)
            break;
    }
    if (fd < 0)
        return cudag__fail_at(err, CUDAG_EIO, CUDAG__NOPOS,
                              "cannot write the compile cache: %s: %s", tmp,
                              strerror(errno));
    uint8_t head[HEADER];
    uint64_t plen = len;
    char sum[33];
    cudag__hash h;
    cudag__hash_init(&h);
    cudag__hash_part(&h, data, len);
    cudag__hash_hex(&h, sum);
    memcpy(head, magic, 8);
    memcpy(head + 8, &plen, 8);
    memcpy(head + 16, sum, 32);
    memcpy(head + 48, key, 32);
    e = write_all(fd, head, sizeof head);
    if (!e)
        e = write_all(fd, data, len);
    if (close(fd) != 0 && !e)
        e = errno;
    if (!e && rename(tmp, path) != 0)
        e = errno;
    if (e) {
        unlink(tmp);
        return cudag__fail_at(err, CUDAG_EIO, CUDAG__NOPOS,
                              "cannot write the compile cache: %s: %s", path,
                              strerror(e));
    }
    return CUDAG_OK;
}

/* Names the cache writes: 32 hex digits + ".cudagc", or ".tmp-…". */
static bool ours(const char *name)
{
    if (strncmp(name, ".tmp-", 5) == 0)
        return true;
    size_t n = strlen(name);
    if (n != 32 + 7 || strcmp(name + 32, ".cudagc") != 0)
        return false;
    for (size_t i = 0; i < 32; i++)
        if (!strchr("0123456789abcdef", name[i]))
            return false;
    return true;
}

int cudag__cache_clean(const char *dir, unsigned *removed, cudag_error *err)
{
    *removed = 0;
    DIR *d = opendir(dir);
    if (!d) {
        if (errno == ENOENT)
            return CUDAG_OK;
        return cudag__fail_at(err, CUDAG_EIO, CUDAG__NOPOS, "%s: %s", dir,
                              strerror(errno));
    }
    int rc = CUDAG_OK;
    struct dirent *ent;
    char path[4096];
    while ((ent = readdir(d)) != NULL) {
        if (!ours(ent->d_name))
            continue;
        int n = snprintf(path, sizeof path, "%s/%s", dir, ent->d_name);
        if (n <= 0 || (size_t)n >= sizeof path)
            continue;
        if (unlink(path) == 0)
            (*removed)++;
        else if (errno != ENOENT && rc == CUDAG_OK)
            rc = cudag__fail_at(err, CUDAG_EIO, CUDAG__NOPOS, "%s: %s", path,
                                strerror(errno));
    }
    closedir(d);
    return rc;
}
