/* map.h — the string map: a name to a 32-bit index, the lookup every stage
 * makes for variables, buffers, nodes and kernels. */
#ifndef CUDAG_MAP_H
#define CUDAG_MAP_H

#include <stdbool.h>
#include <stdint.h>

/* ---- string map ----------------------------------------------------- */

/* Open addressing from a string (not copied: the caller keeps it alive, in
 * practice in an arena) to a 32-bit value. */
typedef struct cudag__map {
    const char **keys;
    uint32_t *vals;
    uint64_t *hashes;           /* each key's hash: compared before the key */
    uint32_t cap, len;
} cudag__map;

/* Returns true and sets *val when key is present. */
bool cudag__map_get(const cudag__map *m, const char *key, uint32_t *val);
/* Inserts or replaces.  Returns CUDAG_ENOMEM (map unchanged) or CUDAG_OK. */
int cudag__map_put(cudag__map *m, const char *key, uint32_t val);
/* Makes room for n entries in all, so that n puts do not rehash. */
int cudag__map_reserve(cudag__map *m, uint32_t n);
void cudag__map_free(cudag__map *m);

#endif /* CUDAG_MAP_H */
