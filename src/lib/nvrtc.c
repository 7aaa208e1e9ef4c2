/* nvrtc.c — finds and opens libnvrtc.so.13 at run time and resolves the
 * entry points the compile step uses into one table, as driver.c does for
 * libcuda; nothing here compiles anything. */
#include "lib/nvrtc.h"
#include "cudag.h"
#include "base/diag.h"

#include <stdbool.h>
#include <stddef.h>

#include <dlfcn.h>
#include <glob.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static cudag__rtc real;
static int load_code = CUDAG_OK;
static char load_msg[900];

#ifdef CUDAG_TESTING
static const cudag__rtc *override;

void cudag__nvrtc_override(const cudag__rtc *t) { override = t; }
#endif

static bool is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* Tries dir/sub/soname; true (buf filled) when it exists. */
static bool try_dir(char *buf, size_t size, const char *dir, const char *sub)
{
    if (!dir || !*dir)
        return false;
    int n = snprintf(buf, size, "%s%s%s/%s", dir, sub ? "/" : "",
                     sub ? sub : "", CUDAG__NVRTC_SONAME);
    return n > 0 && (size_t)n < size && is_file(buf);
}

/* Tries every match of a glob pattern ending in the soname's directory. */
static bool try_glob(char *buf, size_t size, const char *pattern)
{
    glob_t gl;
    bool found = false;
    if (glob(pattern, GLOB_NOSORT, NULL, &gl) == 0) {
        for (size_t i = 0; i < gl.gl_pathc && !found; i++)
            found = try_dir(buf, size, gl.gl_pathv[i], NULL);
    }
    globfree(&gl);
    return found;
}

/* Every directory of a colon-separated list. */
static bool try_list(char *buf, size_t size, const char *list)
{
    if (!list)
        return false;
    char dir[512];
    for (const char *p = list; *p;) {
        size_t n = strcspn(p, ":");
        if (n > 0 && n < sizeof dir) {
            memcpy(dir, p, n);
            dir[n] = '\0';
            if (try_dir(buf, size, dir, NULL))
                return true;
        }
        p += n + (p[n] == ':');
    }
    return false;
}

bool cudag__nvrtc_locate(char *buf, size_t size)
{
    /* An explicit choice wins, even a wrong one (then loading says so). */
    const char *own = getenv("CUDAG_NVRTC");
    if (own && *own) {
        int n = snprintf(buf, size, "%s", own);
        return n > 0 && (size_t)n < size;
    }
    static const char *const homes[] = {"CUDA_HOME", "CUDA_PATH"};
    for (size_t i = 0; i < 2; i++) {
        const char *h = getenv(homes[i]);
        if (try_dir(buf, size, h, "lib64") || try_dir(buf, size, h, "lib"))
            return true;
    }
    if (try_dir(buf, size, "/usr/local/cuda", "lib64"))
        return true;
    /* NVIDIA's wheels: nvidia-cuda-nvrtc puts the library in nvidia/cu13/lib
     * (CUDA 13) or nvidia/cuda_nvrtc/lib (before), inside a site-packages
     * that a virtual environment, conda or the user's Python owns. */
    static const char *const wheels[] = {"nvidia/cu13/lib",
                                         "nvidia/cuda_nvrtc/lib"};
    static const char *const prefixes[] = {"VIRTUAL_ENV", "CONDA_PREFIX"};
    char pat[700];
    for (size_t w = 0; w < 2; w++) {
        for (size_t i = 0; i < 2; i++) {
            const char *p = getenv(prefixes[i]);
            if (p && *p &&
                snprintf(pat, sizeof pat, "%s/lib/python3*/site-packages/%s",
                         p, wheels[w]) < (int)sizeof pat &&
                try_glob(buf, size, pat))
                return true;
        }
        const char *home = getenv("HOME");
        if (home && *home &&
            snprintf(pat, sizeof pat, "%s/.local/lib/python3*/site-packages/%s",
                     home, wheels[w]) < (int)sizeof pat &&
            try_glob(buf, size, pat))
            return true;
        static const char *const sys[] = {"/usr/local/lib/python3*/dist-packages",
                                          "/usr/lib/python3/dist-packages",
                                          "/usr/local/lib/python3*/site-packages"};
        for (size_t i = 0; i < 3; i++)
            if (snprintf(pat, sizeof pat, "%s/%s", sys[i], wheels[w]) <
                    (int)sizeof pat &&
                try_glob(buf, size, pat))
                return true;
    }
    if (try_list(buf, size, getenv("LD_LIBRARY_PATH")) ||
        try_list(buf, size, "/usr/lib/x86_64-linux-gnu:/usr/lib/aarch64-linux-"
                            "gnu:/usr/lib64:/usr/lib:/lib64:/lib"))
        return true;
    if (size)
        buf[0] = '\0';
    return false;
}

/* The include directory beside a toolkit's or a wheel's lib directory: the
 * one that holds cuda_fp16.h, which NVRTC programs include routinely; and
 * the cccl directory inside it, when it has one ("" otherwise). */
static void find_include_dirs(const char *lib, char *out, size_t size,
                              char *cccl, size_t csize)
{
    out[0] = '\0';
    cccl[0] = '\0';
    char dir[512], probe[600];
    int n = snprintf(dir, sizeof dir, "%s", lib);
    if (n <= 0 || (size_t)n >= sizeof dir)
        return;
    char *slash = strrchr(dir, '/');
    if (!slash)
        return;
    *slash = '\0';                      /* …/lib64 */
    slash = strrchr(dir, '/');
    if (!slash)
        return;
    *slash = '\0';                      /* the toolkit or wheel root */
    if (snprintf(probe, sizeof probe, "%s/include/cuda_fp16.h", dir) >=
            (int)sizeof probe ||
        !is_file(probe) || strlen(dir) + 9 > size)
        return;
    snprintf(out, size, "%s/include", dir);
    /* <cuda/std/type_traits> stands for the whole of CCCL: the header
     * cooperative_groups.h fails on without it. */
    if (snprintf(probe, sizeof probe, "%s/include/cccl/cuda/std/type_traits",
                 dir) < (int)sizeof probe &&
        is_file(probe) && strlen(dir) + 14 <= csize)
        snprintf(cccl, csize, "%s/include/cccl", dir);
}

static void load(void)
{
    char path[512];
    bool located = cudag__nvrtc_locate(path, sizeof path);
    /* RTLD_LOCAL, as for libcuda: a host program's own NVRTC is not
     * disturbed. */
    void *h = dlopen(located ? path : CUDAG__NVRTC_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *why = dlerror();
        load_code = CUDAG_ENOTSUP;
        snprintf(load_msg, sizeof load_msg,
                 "NVRTC not found (%s): %s; CUDA source modules need it: "
                 "install the CUDA toolkit or NVIDIA's nvidia-cuda-nvrtc "
                 "wheel, or set CUDA_HOME; or compile the module with nvcc "
                 "(nvcc -fatbin -arch=sm_90 FILE.cu -o FILE.fatbin) and list "
                 "the fatbin instead",
                 CUDAG__NVRTC_SONAME, why ? why : "unknown dlopen error");
        return;
    }
    cudag__rtc t;
    memset(&t, 0, sizeof t);
#define CUDAG__RESOLVE(name, ret, args)                                        \
    *(void **)&t.name = dlsym(h, #name);                                       \
    if (!t.name) {                                                             \
        load_code = CUDAG_ENOTSUP;                                             \
        snprintf(load_msg, sizeof load_msg,                                    \
                 "NVRTC too old: %s has no %s", located ? path : CUDAG__NVRTC_SONAME, \
                 #name);                                                       \
        return;                                                                \
    }
    CUDAG__NVRTC_FUNCS(CUDAG__RESOLVE)
#undef CUDAG__RESOLVE
    if (t.nvrtcVersion(&t.major, &t.minor) != CUDAG__NVRTC_SUCCESS) {
        load_code = CUDAG_ENOTSUP;
        snprintf(load_msg, sizeof load_msg, "NVRTC: nvrtcVersion failed");
        return;
    }
    if (located)
        find_include_dirs(path, t.include_dir, sizeof t.include_dir,
                          t.cccl_dir, sizeof t.cccl_dir);
    /* Never closed: the table points into the library for good. */
    real = t;
}

int cudag__nvrtc(const cudag__rtc **out, cudag_error *err)
{
    *out = NULL;
#ifdef CUDAG_TESTING
    if (override) {
        *out = override;
        return CUDAG_OK;
    }
#endif
    pthread_once(&load_once, load);
    if (load_code != CUDAG_OK)
        return cudag__fail_at(err, load_code, CUDAG__NOPOS, "%s", load_msg);
    *out = &real;
    return CUDAG_OK;
}
