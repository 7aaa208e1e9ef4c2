/* cache.h — compiled code kept between runs: one file per key under
 * $XDG_CACHE_HOME/cudag (or ~/.cache/cudag), written whole and renamed into
 * place, so that readers and concurrent writers never see part of an entry;
 * and the 128-bit hash the keys are made of. */
#ifndef CUDAG_CACHE_H
#define CUDAG_CACHE_H

#include "cudag.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A streaming 128-bit hash (not cryptographic: it tells apart inputs that
 * differ by accident, which is what a cache key needs). */
typedef struct cudag__hash {
    uint64_t a, b, n;
    uint8_t buf[8];
    unsigned nbuf;
} cudag__hash;

void cudag__hash_init(cudag__hash *h);
/* Adds one part, prefixed by its length, so that ("ab","c") and ("a","bc")
 * differ. */
void cudag__hash_part(cudag__hash *h, const void *p, size_t n);
/* Writes the hash as 32 hex digits and a NUL. */
void cudag__hash_hex(const cudag__hash *h, char out[33]);

/* The largest entry read back; a bigger file is treated as corrupt. */
#define CUDAG__CACHE_MAX_ENTRY (512u << 20)

/*
 * The cache directory: $CUDAG_CACHE_DIR if set (tests, CI), else
 * $XDG_CACHE_HOME/cudag, else $HOME/.cache/cudag.  Returns false (buf "")
 * when none can be named or it does not fit.
 */
bool cudag__cache_dir(char *buf, size_t size);

/*
 * Reads the entry for key (32 hex digits) from dir into *data (freed by the
 * caller with cudag__free) and *len.  Returns CUDAG_OK; CUDAG_EIO when there
 * is no valid entry: missing, unreadable, truncated, or replaced by other
 * bytes (the header's magic, key, length and checksum are all checked), so
 * the caller compiles and puts a new one; CUDAG_ENOMEM.  *data is NULL on
 * error.
 */
int cudag__cache_get(const char *dir, const char *key, void **data,
                     size_t *len);

/*
 * Writes the entry for key: creates dir (and its parents) if needed, writes
 * a temporary file in dir and renames it over the entry, so a reader sees
 * the old entry, no entry, or the whole new one.  Returns CUDAG_OK, or
 * CUDAG_EIO with err saying which path and why (the caller reports it as a
 * warning: compiling still worked), or CUDAG_ENOMEM.
 */
int cudag__cache_put(const char *dir, const char *key, const void *data,
                     size_t len, cudag_error *err);

/*
 * Removes every entry and leftover temporary file of dir (nothing else),
 * counting them in *removed.  A missing dir is an empty cache.  Returns
 * CUDAG_OK or CUDAG_EIO (err names the file).
 */
int cudag__cache_clean(const char *dir, unsigned *removed, cudag_error *err);

#endif /* CUDAG_CACHE_H */
