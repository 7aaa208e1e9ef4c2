/* map.c — the string map (open addressing, hashes kept beside the keys): its
 * own file because it is a container with no idea of errors or text. */
#include "base/map.h"
#include "base/alloc.h"

#include <stdbool.h>
#include <stdint.h>

#include "cudag.h"

#include <string.h>

/* ---- string map ----------------------------------------------------- */

static uint64_t hash_str(const char *s)
{
    /* FNV-1a: short keys, no adversary worth a keyed hash (the limits bound
     * what a hostile file can make us do). */
    uint64_t h = UINT64_C(1469598103934665603);
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= UINT64_C(1099511628211);
    }
    return h;
}

/* A lookup compares stored hashes first: a repeated graph looks names up
 * many times per node, and a strcmp on each probed key (a cache miss to the
 * arena) cost more than the hashing. */
bool cudag__map_get(const cudag__map *m, const char *key, uint32_t *val)
{
    if (!m->cap)
        return false;
    uint32_t mask = m->cap - 1;
    uint64_t h = hash_str(key);
    for (uint32_t i = (uint32_t)h & mask;; i = (i + 1) & mask) {
        if (!m->keys[i])
            return false;
        if (m->hashes[i] == h && strcmp(m->keys[i], key) == 0) {
            if (val)
                *val = m->vals[i];
            return true;
        }
    }
}

static void map_insert(const char **keys, uint32_t *vals, uint64_t *hashes,
                       uint32_t cap, const char *key, uint64_t h, uint32_t val,
                       bool *added)
{
    uint32_t mask = cap - 1;
    for (uint32_t i = (uint32_t)h & mask;; i = (i + 1) & mask) {
        if (!keys[i]) {
            keys[i] = key;
            vals[i] = val;
            hashes[i] = h;
            *added = true;
            return;
        }
        if (hashes[i] == h && strcmp(keys[i], key) == 0) {
            vals[i] = val;
            *added = false;
            return;
        }
    }
}

static int map_grow(cudag__map *m, uint32_t ncap)
{
    bool added;
    const char **nk = cudag__calloc(ncap, sizeof *nk);
    uint32_t *nv = cudag__calloc(ncap, sizeof *nv);
    uint64_t *nh = cudag__calloc(ncap, sizeof *nh);
    if (!nk || !nv || !nh) {
        cudag__free(nk);
        cudag__free(nv);
        cudag__free(nh);
        return CUDAG_ENOMEM;
    }
    for (uint32_t i = 0; i < m->cap; i++)
        if (m->keys[i])
            map_insert(nk, nv, nh, ncap, m->keys[i], m->hashes[i], m->vals[i],
                       &added);
    cudag__free(m->keys);
    cudag__free(m->vals);
    cudag__free(m->hashes);
    m->keys = nk;
    m->vals = nv;
    m->hashes = nh;
    m->cap = ncap;
    return CUDAG_OK;
}

int cudag__map_reserve(cudag__map *m, uint32_t n)
{
    uint32_t ncap = m->cap ? m->cap : 64;
    while ((uint64_t)n * 4 > (uint64_t)ncap * 3) {
        if (ncap > UINT32_MAX / 2)
            return CUDAG_ENOMEM;
        ncap *= 2;
    }
    return ncap > m->cap ? map_grow(m, ncap) : CUDAG_OK;
}

int cudag__map_put(cudag__map *m, const char *key, uint32_t val)
{
    bool added;
    if ((uint64_t)(m->len + 1) * 4 > (uint64_t)m->cap * 3) {
        uint32_t ncap = m->cap ? m->cap * 2 : 64;
        if (ncap <= m->cap || map_grow(m, ncap) != CUDAG_OK)
            return CUDAG_ENOMEM;
    }
    map_insert(m->keys, m->vals, m->hashes, m->cap, key, hash_str(key), val,
               &added);
    if (added)
        m->len++;
    return CUDAG_OK;
}

void cudag__map_free(cudag__map *m)
{
    cudag__free(m->keys);
    cudag__free(m->vals);
    cudag__free(m->hashes);
    memset(m, 0, sizeof *m);
}
