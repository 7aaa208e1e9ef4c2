/* shipped.c — the shipped files' directory, found from where the library's
 * code was loaded: the shared library's own file, or the program a static
 * library was linked into.  So a build tree and a relocated install (a
 * DESTDIR, a copied prefix) find their own kernels, not the configured
 * prefix's. */
#define _GNU_SOURCE             /* dladdr1 and struct link_map */
#include "code/shipped.h"
#include "base/alloc.h"

#include <stdbool.h>
#include <stddef.h>

#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The meson build defines these: the data directory of the configured
 * prefix, and the way to it from the library's and the programs'
 * directories of an install ("../share/cudag"). */
#ifndef CUDAG_DATADIR
#define CUDAG_DATADIR "/usr/local/share/cudag"
#endif
#ifndef CUDAG_DATADIR_FROM_LIBDIR
#define CUDAG_DATADIR_FROM_LIBDIR "../share/cudag"
#endif
#ifndef CUDAG_DATADIR_FROM_BINDIR
#define CUDAG_DATADIR_FROM_BINDIR "../share/cudag"
#endif

/* The directory of the file this code was loaded from, or false.  The main
 * program's link map has an empty name (dladdr gives its argv[0], which is
 * relative to a directory it may have left), so it is /proc/self/exe. */
static bool code_dir(char out[PATH_MAX])
{
    /* Any object of this file's lies in the file it was loaded from. */
    static const char anchor = 0;
    Dl_info info;
    struct link_map *map = NULL;
    char path[PATH_MAX];
    if (!dladdr1(&anchor, &info, (void **)&map, RTLD_DL_LINKMAP) || !map)
        return false;
    if (map->l_name && map->l_name[0]) {
        if (!realpath(map->l_name, path))
            return false;
    } else {
        ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
        if (n <= 0)
            return false;
        path[n] = '\0';
    }
    char *slash = strrchr(path, '/');
    if (!slash)
        return false;
    *slash = '\0';
    memcpy(out, path, (size_t)(slash - path) + 1);
    return true;
}

/* dir, canonical, in a: when it exists. */
static const char *existing(cudag__arena *a, const char *dir)
{
    char real[PATH_MAX];
    if (!dir || !realpath(dir, real) || access(real, X_OK) != 0)
        return NULL;
    return cudag__arena_strdup(a, real);
}

const char *cudag__shipped_dir(cudag__arena *a)
{
    char here[PATH_MAX];
    if (code_dir(here)) {
        /* A build tree keeps the library (src/) and the programs (tools/,
         * tests/) one level below the build root, beside kernels/. */
        static const char *const rel[] = {"../kernels",
                                          CUDAG_DATADIR_FROM_LIBDIR,
                                          CUDAG_DATADIR_FROM_BINDIR};
        for (size_t i = 0; i < sizeof rel / sizeof *rel; i++) {
            const char *d = rel[i][0] == '/'
                                ? rel[i]
                                : cudag__arena_printf(a, "%s/%s", here, rel[i]);
            if ((d = existing(a, d)))
                return d;
        }
    }
    return existing(a, CUDAG_DATADIR);
}
