/* cublaslt.c — opens libcublasLt.so.13 at run time and resolves the entry
 * points gemm nodes use into one table, so that cudag links no cuBLAS and
 * loads it only for a graph that multiplies matrices; also turns cuBLASLt
 * statuses into cudag_error values. */
#include "lib/cublaslt.h"
#include "cudag.h"
#include "base/diag.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdarg.h>

#include <dlfcn.h>
#include <glob.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef CUDAG_TOOLKIT_DIR
#define CUDAG_TOOLKIT_DIR "/usr/local/cuda"
#endif

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static cudag__lt real;
static int load_code = CUDAG_OK;
static cudag_error load_err;

#ifdef CUDAG_TESTING
static const cudag__lt *override;

void cudag__cublaslt_override(const cudag__lt *t) { override = t; }
#endif

/* cudag__cublaslt_open; *absent tells a library that is not there from
 * one that is wrong. */
static int open_at(const char *path, cudag__lt *t, bool *absent,
                   cudag_error *err)
{
    memset(t, 0, sizeof *t);
    *absent = false;
    /* RTLD_LOCAL: a host program that links its own cuBLAS keeps its
     * symbols. */
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *why = dlerror();
        *absent = true;
        return cudag__fail_at(err, CUDAG_ENODRIVER, CUDAG__NOPOS,
                              "cuBLASLt not found (" CUDAG__LT_SONAME "): %s",
                              why ? why : "unknown dlopen error");
    }
    cudag__lt n;
#define CUDAG__LT_RESOLVE(ret, name, params)                                   \
    *(void **)&n.name = dlsym(h, #name);                                       \
    if (!n.name) {                                                             \
        dlclose(h);                                                            \
        return cudag__fail_at(err, CUDAG_ENODRIVER, CUDAG__NOPOS,              \
                              "cuBLASLt at %s has no %s (cudag needs "         \
                              "cuBLASLt %d)",                                  \
                              path, #name, CUDAG__LT_MAJOR);                   \
    }
    CUDAG__CUBLASLT_FUNCS(CUDAG__LT_RESOLVE)
#undef CUDAG__LT_RESOLVE
    /* MAJOR*10000 + MINOR*100 + PATCH: the declarations in cublaslt.h are
     * those of one major version. */
    size_t v = n.cublasLtGetVersion();
    if (v / 10000 != CUDAG__LT_MAJOR) {
        dlclose(h);
        return cudag__fail_at(err, CUDAG_ENODRIVER, CUDAG__NOPOS,
                              "cuBLASLt at %s is version %zu.%zu (cudag needs "
                              "cuBLASLt %d)",
                              path, v / 10000, v / 100 % 100, CUDAG__LT_MAJOR);
    }
    /* The handle stays open: the table points into the library. */
    *t = n;
    return CUDAG_OK;
}

int cudag__cublaslt_open(const char *path, cudag__lt *t, cudag_error *err)
{
    bool absent;
    return open_at(path, t, &absent, err);
}

/* Appends to the list of places tried, for the message when all fail. */
static void tried(char *list, size_t cap, const char *what)
{
    size_t len = strlen(list);
    if (len + 3 < cap)
        snprintf(list + len, cap - len, "%s%s", len ? ", " : "", what);
}

/* Tries each directory under which a toolkit or a wheel may hold the
 * library; true once one opens. */
static bool try_dirs(char *list, size_t cap)
{
    const char *home = getenv("HOME");
    const char *roots[] = {getenv("CUDA_HOME"), getenv("CUDA_PATH"),
                           CUDAG_TOOLKIT_DIR};
    char path[4096];
    for (size_t i = 0; i < sizeof roots / sizeof *roots; i++) {
        if (!roots[i] || !roots[i][0])
            continue;
        static const char *const sub[] = {"lib64", "lib"};
        for (size_t j = 0; j < 2; j++) {
            snprintf(path, sizeof path, "%s/%s/" CUDAG__LT_SONAME, roots[i],
                     sub[j]);
            cudag_error e;
            if (cudag__cublaslt_open(path, &real, &e) == CUDAG_OK)
                return true;
        }
        tried(list, cap, roots[i]);
    }
    /* pip's nvidia-cublas wheels: nvidia/cu13/lib (CUDA 13 wheels) or
     * nvidia/cublas/lib (older layout), in site- or dist-packages. */
    char local[4096] = "";
    if (home)
        snprintf(local, sizeof local, "%s/.local", home);
    const char *prefixes[] = {getenv("VIRTUAL_ENV"), getenv("CONDA_PREFIX"),
                              local, "/usr/local", "/usr"};
    static const char *const wheel[] = {"cu13", "cublas"};
    for (size_t i = 0; i < sizeof prefixes / sizeof *prefixes; i++) {
        if (!prefixes[i] || !prefixes[i][0])
            continue;
        for (size_t w = 0; w < 2; w++) {
            snprintf(path, sizeof path,
                     "%s/lib/python3*/*-packages/nvidia/%s/lib/" CUDAG__LT_SONAME,
                     prefixes[i], wheel[w]);
            glob_t gl;
            if (glob(path, 0, NULL, &gl) != 0)
                continue;
            bool ok = false;
            for (size_t k = 0; k < gl.gl_pathc && !ok; k++) {
                cudag_error e;
                ok = cudag__cublaslt_open(gl.gl_pathv[k], &real, &e) ==
                     CUDAG_OK;
            }
            globfree(&gl);
            if (ok)
                return true;
        }
    }
    tried(list, cap, "the pip wheels' nvidia/cu13/lib and nvidia/cublas/lib");
    return false;
}

static void load(void)
{
    const char *forced = getenv("CUDAG_CUBLASLT");
    if (forced && forced[0]) {
        load_code = cudag__cublaslt_open(forced, &real, &load_err);
        if (load_code != CUDAG_OK)
            cudag__error_prefix(&load_err, CUDAG__NOPOS, "CUDAG_CUBLASLT=%s",
                                forced);
        return;
    }
    bool absent;
    load_code = open_at(CUDAG__LT_SONAME, &real, &absent, &load_err);
    if (load_code == CUDAG_OK || !absent)
        return;
    /* Not on the loader's path: the usual places, then one sentence that
     * says where cudag looked. */
    char list[700] = "";
    if (try_dirs(list, sizeof list)) {
        load_code = CUDAG_OK;
        return;
    }
    cudag__fail_at(&load_err, CUDAG_ENODRIVER, CUDAG__NOPOS,
                   "cuBLASLt not found (" CUDAG__LT_SONAME "): not on the "
                   "library path, nor under %s; install cuBLAS (the CUDA "
                   "toolkit or the nvidia-cublas pip wheel), or set "
                   "CUDAG_CUBLASLT to the library's path",
                   list);
}

int cudag__cublaslt(const cudag__lt **out, cudag_error *err)
{
    *out = NULL;
#ifdef CUDAG_TESTING
    if (override) {
        *out = override;
        return CUDAG_OK;
    }
#endif
    pthread_once(&load_once, load);
    if (load_code != CUDAG_OK) {
        if (err)
            *err = load_err;
        return load_code;
    }
    *out = &real;
    return CUDAG_OK;
}

int cudag__lt_fail(cudag_error *err, const cudag__lt *lt, cudag__lt_status s,
                   cudag__pos pos, const char *fmt, ...)
{
    const char *name = lt && lt->cublasLtGetStatusName
                           ? lt->cublasLtGetStatusName(s)
                           : NULL;
    const char *desc = lt && lt->cublasLtGetStatusString
                           ? lt->cublasLtGetStatusString(s)
                           : NULL;
    va_list ap;
    va_start(ap, fmt);
    int rc = cudag__vfail_call(err, pos, s,
                               name ? name : "CUBLAS_STATUS_UNKNOWN",
                               desc ? desc : "unknown error", fmt, ap);
    va_end(ap);
    return rc;
}
