/* compile.c — the compile step of source modules: the cache key, a cache
 * hit read back, otherwise one NVRTC program (built-in headers, name
 * expressions, options for the exact device) whose cubin, PTX and lowered
 * names are kept and cached, and whose log becomes positioned errors. */
#include "code/compile.h"
#include "cudag.h"
#include "base/alloc.h"
#include "base/diag.h"
#include "lib/nvrtc.h"
#include "code/cache.h"
#include "code/decls.h"
#include "code/headers.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "pdl_cuh.h"            /* generated: cudag__pdl_cuh_text */
#include "cond_cuh.h"           /* generated: cudag__cond_cuh_text */

void cudag__compile_arch(int major, int minor, char *buf, size_t size)
{
    /* From Hopper on, the "a" targets unlock the architecture's own
     * instructions (wgmma, setmaxnreg, …); the code then runs only on that
     * exact architecture, which is the one being compiled for. */
    snprintf(buf, size, "sm_%d%d%s", major, minor, major >= 9 ? "a" : "");
}

const cudag__src_text *cudag__builtin_headers(uint32_t *n)
{
    static const cudag__src_text builtins[] = {
        {"cudag/pdl.cuh", cudag__pdl_cuh_text, sizeof cudag__pdl_cuh_text - 1},
        {"cudag/cond.cuh", cudag__cond_cuh_text,
         sizeof cudag__cond_cuh_text - 1},
    };
    *n = sizeof builtins / sizeof builtins[0];
    return builtins;
}

void cudag__compiled_free(cudag__compiled *c)
{
    cudag__free(c->block);
    cudag__free(c->lowered);
    memset(c, 0, sizeof *c);
}

/* ---- the cached form -------------------------------------------------------- */

/* Payload: "CGP1", the number of names, cubin length, PTX length, then the
 * cubin, the PTX and a NUL, and each lowered name with its NUL. */
#define PAYLOAD_HEAD 24

static void put32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }
static void put64(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); }

/* Points out's fields into block (taking it) when it is a well-formed
 * payload for nexprs names; otherwise returns false and leaves block to the
 * caller. */
static bool unpack(void *block, size_t len, uint32_t nexprs,
                   cudag__compiled *out, bool *oom)
{
    const uint8_t *b = block;
    uint32_t n;
    uint64_t cl, pl;
    *oom = false;
    if (len < PAYLOAD_HEAD || memcmp(b, "CGP1", 4) != 0)
        return false;
    memcpy(&n, b + 4, 4);
    memcpy(&cl, b + 8, 8);
    memcpy(&pl, b + 16, 8);
    if (n != nexprs || cl > len - PAYLOAD_HEAD ||
        pl + 1 > len - PAYLOAD_HEAD - cl || b[PAYLOAD_HEAD + cl + pl] != '\0')
        return false;
    const char **lowered = cudag__calloc(nexprs + 1, sizeof *lowered);
    if (!lowered) {
        *oom = true;
        return false;
    }
    size_t o = PAYLOAD_HEAD + cl + pl + 1;
    for (uint32_t i = 0; i < nexprs; i++) {
        const char *s = (const char *)b + o;
        size_t l = o < len ? strnlen(s, len - o) : len;
        if (o >= len || l == len - o || l == 0) {
            cudag__free(lowered);
            return false;
        }
        lowered[i] = s;
        o += l + 1;
    }
    if (o != len) {
        cudag__free(lowered);
        return false;
    }
    out->block = block;
    out->cubin = (uint8_t *)block + PAYLOAD_HEAD;
    out->cubin_len = cl;
    out->ptx = (char *)block + PAYLOAD_HEAD + cl;
    out->ptx_len = strnlen(out->ptx, pl);   /* NVRTC's size counts a NUL */
    out->lowered = lowered;
    return true;
}

/* ---- the key ------------------------------------------------------------------ */

/* Identifies the NVRTC that would compile, without opening it: its path,
 * size and modification time (a new toolkit or wheel changes them).  Falls
 * back on the opened library's version when it is found only by the
 * dynamic linker's search. */
static int nvrtc_identity(char *buf, size_t size, cudag_error *err)
{
    char path[512];
    struct stat st;
    if (cudag__nvrtc_locate(path, sizeof path) && stat(path, &st) == 0) {
        snprintf(buf, size, "%s|%lld|%lld.%09ld", path, (long long)st.st_size,
                 (long long)st.st_mtim.tv_sec, (long)st.st_mtim.tv_nsec);
        return CUDAG_OK;
    }
    const cudag__rtc *rtc;
    int rc = cudag__nvrtc(&rtc, err);
    if (rc != CUDAG_OK)
        return rc;
    snprintf(buf, size, "%s|%d.%d", CUDAG__NVRTC_SONAME, rtc->major,
             rtc->minor);
    return CUDAG_OK;
}

static void make_key(const cudag__compile_req *q, const char *arch,
                     const char *id, const cudag__src_text *texts,
                     uint32_t ntexts, char key[33])
{
    cudag__hash h;
    cudag__hash_init(&h);
    static const char version[] = "cudag-compile-1";
    cudag__hash_part(&h, version, sizeof version);
    cudag__hash_part(&h, id, strlen(id));
    cudag__hash_part(&h, arch, strlen(arch));
    cudag__hash_part(&h, q->std ? q->std : "", q->std ? strlen(q->std) : 0);
    for (size_t i = 0; q->options && q->options[i]; i++)
        cudag__hash_part(&h, q->options[i], strlen(q->options[i]));
    cudag__hash_part(&h, "", 0);
    for (uint32_t i = 0; i < q->nexprs; i++)
        cudag__hash_part(&h, q->exprs[i], strlen(q->exprs[i]));
    cudag__hash_part(&h, "", 0);
    /* The main text by content only (the same source compiles the same
     * wherever it lies); headers by where they were found too, since
     * another header of the same name elsewhere is another input. */
    cudag__hash_part(&h, q->text, q->len);
    for (uint32_t i = 1; i < ntexts; i++) {
        cudag__hash_part(&h, texts[i].path, strlen(texts[i].path));
        cudag__hash_part(&h, texts[i].text, texts[i].len);
    }
    cudag__hash_hex(&h, key);
}

/* ---- NVRTC's log ---------------------------------------------------------------- */

/* The path to show for a file named in the log: the main file, a header
 * found while gathering (the log names it as it was included), or the
 * name itself. */
static const char *shown_path(const cudag__compile_req *q,
                              const cudag__src_text *texts, uint32_t ntexts,
                              const char *name, size_t len)
{
    if (strlen(q->path) == len && memcmp(q->path, name, len) == 0)
        return q->path;
    for (uint32_t i = 1; i < ntexts; i++) {
        size_t pl = strlen(texts[i].path);
        if (pl >= len && memcmp(texts[i].path + pl - len, name, len) == 0 &&
            (pl == len || texts[i].path[pl - len - 1] == '/'))
            return texts[i].path;
    }
    return NULL;
}

/* Reports each "FILE(LINE): error: MESSAGE" of the log, with the column
 * from the caret line NVRTC prints two lines below; returns how many. */
static unsigned report_log(const cudag__compile_req *q,
                           const cudag__src_text *texts, uint32_t ntexts,
                           cudag__arena *a, const char *log, cudag__diag *d)
{
    unsigned n = 0;
    const char *p = log;
    while (*p) {
        const char *eol = strchr(p, '\n');
        size_t ll = eol ? (size_t)(eol - p) : strlen(p);
        const char *paren = NULL;
        for (const char *s = p; s + 2 < p + ll; s++)
            if (s[0] == '(' && s[1] >= '0' && s[1] <= '9') {
                paren = s;
                break;
            }
        unsigned long line = 0;
        const char *after = NULL;
        if (paren) {
            char *end;
            line = strtoul(paren + 1, &end, 10);
            if (end < p + ll && *end == ')' && end + 2 < p + ll &&
                end[1] == ':' && end[2] == ' ')
                after = end + 3;
        }
        static const char *const sevs[] = {"catastrophic error: ", "error: "};
        const char *msg = NULL;
        for (size_t i = 0; after && i < 2 && !msg; i++)
            if (strncmp(after, sevs[i], strlen(sevs[i])) == 0)
                msg = after + strlen(sevs[i]);
        if (msg) {
            size_t ml = (size_t)(p + ll - msg);
            /* The caret two lines down gives the column; the echoed source
             * line is indented by two spaces. */
            uint32_t col = 1;
            const char *l2 = eol ? strchr(eol + 1, '\n') : NULL;
            if (l2) {
                const char *c = l2 + 1;
                size_t sp = strspn(c, " ");
                if (c[sp] == '^' && sp >= 2)
                    col = (uint32_t)(sp - 1);
            }
            size_t fl = (size_t)(paren - p);
            const char *file = shown_path(q, texts, ntexts, p, fl);
            bool names = fl == 13 && memcmp(p, "__nv_name_map", 13) == 0;
            if (!file && !names)
                file = cudag__arena_strndup(a, p, fl);
            cudag__pos pos = names ? q->pos
                             : (cudag__pos){file, (uint32_t)line, col};
            if (!names && !file)
                pos = q->pos;
            cudag__report(d, CUDAG_SEV_ERROR, CUDAG_ESYNTAX, pos, "%s%.*s",
                          names ? "a kernel's symbol is not a name NVRTC can "
                                  "resolve: "
                                : "",
                          (int)ml, msg);
            n++;
        }
        p += ll + (eol != NULL);
    }
    return n;
}

/* ---- compiling ------------------------------------------------------------------ */

typedef struct program {
    const cudag__rtc *rtc;
    cudag__nvrtc_program prog;
    cudag__diag *d;
    const cudag__compile_req *q;
} program;

/* Reports a failed NVRTC call at the module and returns the code. */
static int rtc_fail(program *pg, cudag__nvrtc_result r, const char *call)
{
    const char *why = pg->rtc->nvrtcGetErrorString
                          ? pg->rtc->nvrtcGetErrorString(r)
                          : NULL;
    return cudag__report(pg->d, CUDAG_SEV_ERROR,
                         r == 1 /* NVRTC_ERROR_OUT_OF_MEMORY */
                             ? CUDAG_ENOMEM : CUDAG_ENOTSUP,
                         pg->q->pos, "module '%s': %s failed: %s",
                         pg->q->module, call, why ? why : "unknown NVRTC error");
}

/* NVRTC's options for q at arch, in a: the architecture, line info, the
 * standard, the module's directory, the user's options, the toolkit's
 * include directories.  Returns their count, or -1 on OOM (reported). */
static int build_options(program *pg, const char *arch, cudag__arena *a,
                         const char ***out)
{
    const cudag__compile_req *q = pg->q;
    const cudag__rtc *rtc = pg->rtc;
    size_t nopt = 0;
    while (q->options && q->options[nopt])
        nopt++;
    const char **opts = cudag__arena_alloc(a, (nopt + 7) * sizeof *opts);
    const char *archopt = cudag__arena_printf(a, "--gpu-architecture=%s", arch);
    const char *stdopt = q->std ? cudag__arena_printf(a, "-std=%s", q->std) : "";
    const char *diropt = q->dir ? cudag__arena_printf(a, "-I%s", q->dir) : "";
    const char *incopt = rtc->include_dir[0]
                             ? cudag__arena_printf(a, "-I%s", rtc->include_dir)
                             : "";
    const char *ccclopt = rtc->cccl_dir[0]
                              ? cudag__arena_printf(a, "-I%s", rtc->cccl_dir)
                              : "";
    if (!opts || !archopt || !stdopt || !diropt || !incopt || !ccclopt) {
        cudag__report(pg->d, CUDAG_SEV_ERROR, CUDAG_ENOMEM, q->pos,
                      "out of memory");
        return -1;
    }
    int no = 0;
    opts[no++] = archopt;
    opts[no++] = "-lineinfo";
    if (*stdopt)
        opts[no++] = stdopt;
    if (*diropt)
        opts[no++] = diropt;
    /* The user's options come before the toolkit's directories, so that
     * their -I wins for a header of the same name; then include/ and
     * include/cccl in nvcc's order (its nvcc.profile: -I include, then
     * -isystem include/cccl), so that a module sees every header nvcc
     * would: <cooperative_groups.h> needs <cuda/std/…> from CCCL. */
    for (size_t i = 0; i < nopt; i++)
        opts[no++] = q->options[i];
    if (*incopt)
        opts[no++] = incopt;
    if (*ccclopt)
        opts[no++] = ccclopt;
    *out = opts;
    return no;
}

/* A compilation that failed (cr): NVRTC's log as positioned diagnostics,
 * or one error that says why when the log says nothing. */
static int compile_failed(program *pg, const char *arch,
                          const cudag__src_text *texts, uint32_t ntexts,
                          cudag__arena *a, cudag__nvrtc_result cr)
{
    const cudag__compile_req *q = pg->q;
    const cudag__rtc *rtc = pg->rtc;
    cudag__nvrtc_result r;
    size_t ls = 0;
    if ((r = rtc->nvrtcGetProgramLogSize(pg->prog, &ls)) !=
        CUDAG__NVRTC_SUCCESS)
        return rtc_fail(pg, r, "nvrtcGetProgramLogSize");
    char *log = cudag__arena_alloc(a, ls + 1);
    if (!log)
        return cudag__report(pg->d, CUDAG_SEV_ERROR, CUDAG_ENOMEM, q->pos,
                             "out of memory");
    if ((r = rtc->nvrtcGetProgramLog(pg->prog, log)) != CUDAG__NVRTC_SUCCESS)
        return rtc_fail(pg, r, "nvrtcGetProgramLog");
    log[ls] = '\0';
    unsigned n = report_log(q, texts, ntexts, a, log, pg->d);
    /* Options NVRTC refuses (an architecture it does not know, a
     * misspelt flag) come with a log of one line, or none. */
    if (n == 0 && cr != CUDAG__NVRTC_COMPILATION) {
        const char *why = rtc->nvrtcGetErrorString(cr);
        log[strcspn(log, "\n")] = '\0';
        return cudag__report(pg->d, CUDAG_SEV_ERROR,
                             cr == 1 ? CUDAG_ENOMEM : CUDAG_ENOTSUP,
                             q->pos,
                             "module '%s': NVRTC %d.%d cannot compile for "
                             "%s: %s%s%s",
                             q->module, rtc->major, rtc->minor, arch,
                             why ? why : "unknown NVRTC error",
                             *log ? ": " : "", log);
    }
    if (n == 0)
        cudag__report(pg->d, CUDAG_SEV_ERROR, CUDAG_ESYNTAX, q->pos,
                      "module '%s' does not compile: %.600s", q->module,
                      log);
    cudag__report(pg->d, CUDAG_SEV_NOTE, CUDAG_OK, q->pos,
                  "in module '%s' (%s), compiled by NVRTC %d.%d for %s",
                  q->module, q->path, rtc->major, rtc->minor, arch);
    return CUDAG_ESYNTAX;
}

/* The compiled program's cubin, PTX and lowered names, into one payload
 * (cudag__free) of *plen bytes: the cache's file as it is stored. */
static int fetch_output(program *pg, cudag__arena *a, void **payload,
                        size_t *plen)
{
    const cudag__compile_req *q = pg->q;
    const cudag__rtc *rtc = pg->rtc;
    cudag__nvrtc_result r;
    size_t cl = 0, pl = 0;
    if ((r = rtc->nvrtcGetCUBINSize(pg->prog, &cl)) != CUDAG__NVRTC_SUCCESS)
        return rtc_fail(pg, r, "nvrtcGetCUBINSize");
    if ((r = rtc->nvrtcGetPTXSize(pg->prog, &pl)) != CUDAG__NVRTC_SUCCESS)
        return rtc_fail(pg, r, "nvrtcGetPTXSize");
    const char **low = cudag__arena_alloc(a, (q->nexprs + 1) * sizeof *low);
    if (!low)
        return cudag__report(pg->d, CUDAG_SEV_ERROR, CUDAG_ENOMEM, q->pos,
                             "out of memory");
    size_t names = 0;
    for (uint32_t i = 0; i < q->nexprs; i++) {
        if ((r = rtc->nvrtcGetLoweredName(pg->prog, q->exprs[i], &low[i])) !=
            CUDAG__NVRTC_SUCCESS || !low[i] || !*low[i])
            return cudag__report(pg->d, CUDAG_SEV_ERROR, CUDAG_EUNKNOWN, q->pos,
                                 "module '%s': NVRTC cannot lower the name "
                                 "'%s'",
                                 q->module, q->exprs[i]);
        names += strlen(low[i]) + 1;
    }
    /* pl counts PTX's NUL; the payload stores one after it anyway. */
    size_t total = PAYLOAD_HEAD + cl + pl + 1 + names;
    uint8_t *b = cudag__malloc(total);
    if (!b)
        return cudag__report(pg->d, CUDAG_SEV_ERROR, CUDAG_ENOMEM, q->pos,
                             "out of memory");
    memcpy(b, "CGP1", 4);
    put32(b + 4, q->nexprs);
    put64(b + 8, cl);
    put64(b + 16, pl);
    if ((r = rtc->nvrtcGetCUBIN(pg->prog, (char *)b + PAYLOAD_HEAD)) !=
        CUDAG__NVRTC_SUCCESS) {
        cudag__free(b);
        return rtc_fail(pg, r, "nvrtcGetCUBIN");
    }
    if ((r = rtc->nvrtcGetPTX(pg->prog, (char *)b + PAYLOAD_HEAD + cl)) !=
        CUDAG__NVRTC_SUCCESS) {
        cudag__free(b);
        return rtc_fail(pg, r, "nvrtcGetPTX");
    }
    b[PAYLOAD_HEAD + cl + pl] = '\0';
    size_t o = PAYLOAD_HEAD + cl + pl + 1;
    for (uint32_t i = 0; i < q->nexprs; i++) {
        size_t l = strlen(low[i]) + 1;
        memcpy(b + o, low[i], l);
        o += l;
    }
    *payload = b;
    *plen = total;
    return CUDAG_OK;
}

/* Runs NVRTC and packs the payload into *payload (cudag__malloc'd). */
static int run_nvrtc(program *pg, const char *arch,
                     const cudag__src_text *texts, uint32_t ntexts,
                     cudag__arena *a, void **payload, size_t *plen)
{
    const cudag__compile_req *q = pg->q;
    const cudag__rtc *rtc = pg->rtc;
    *payload = NULL;
    uint32_t nb;
    const cudag__src_text *bi = cudag__builtin_headers(&nb);
    const char *hnames[4], *htexts[4];
    for (uint32_t i = 0; i < nb && i < 4; i++) {
        hnames[i] = bi[i].path;
        htexts[i] = bi[i].text;
    }
    /* NVRTC wants the text NUL-terminated; module texts are (they live in
     * the graph's arena or came through the C API as a copy). */
    cudag__nvrtc_result r =
        rtc->nvrtcCreateProgram(&pg->prog, q->text, q->path, (int)nb,
                                htexts, hnames);
    if (r != CUDAG__NVRTC_SUCCESS) {
        pg->prog = NULL;
        return rtc_fail(pg, r, "nvrtcCreateProgram");
    }
    for (uint32_t i = 0; i < q->nexprs; i++)
        if ((r = rtc->nvrtcAddNameExpression(pg->prog, q->exprs[i])) !=
            CUDAG__NVRTC_SUCCESS)
            return rtc_fail(pg, r, "nvrtcAddNameExpression");
    const char **opts;
    int no = build_options(pg, arch, a, &opts);
    if (no < 0)
        return CUDAG_ENOMEM;
    cudag__nvrtc_result cr = rtc->nvrtcCompileProgram(pg->prog, no, opts);
    if (cr != CUDAG__NVRTC_SUCCESS)
        return compile_failed(pg, arch, texts, ntexts, a, cr);
    return fetch_output(pg, a, payload, plen);
}

int cudag__compile(const cudag__compile_req *q, cudag__compiled *out,
                   cudag__diag *d)
{
    memset(out, 0, sizeof *out);
    char arch[32], id[700], key[33], dir[4096];
    cudag__compile_arch(q->cc_major, q->cc_minor, arch, sizeof arch);
    cudag__arena a;
    memset(&a, 0, sizeof a);
    cudag_error e;
    cudag__error_clear(&e);
    cudag__src_text main = {q->path, q->text, q->len}, *texts = NULL;
    uint32_t ntexts = 0, nb;
    const cudag__src_text *bi = cudag__builtin_headers(&nb);
    void *payload = NULL;
    size_t plen = 0;
    program pg = {NULL, NULL, d, q};
    int rc = cudag__src_gather(&a, &main, q->dir, q->options, NULL, bi, nb,
                               &texts, &ntexts, &e);
    if (rc == CUDAG_OK)
        rc = nvrtc_identity(id, sizeof id, &e);
    if (rc != CUDAG_OK) {
        if (e.line == 0)
            cudag__report(d, CUDAG_SEV_ERROR, rc, q->pos, "module '%s': %s",
                          q->module, e.message);
        else
            cudag__report(d, CUDAG_SEV_ERROR, rc,
                          (cudag__pos){q->path, (uint32_t)e.line,
                                       (uint32_t)e.column},
                          "%s", e.message);
        goto done;
    }
    make_key(q, arch, id, texts, ntexts, key);
    bool use_cache = !q->no_cache;
    if (use_cache && q->cache_dir)
        snprintf(dir, sizeof dir, "%s", q->cache_dir);
    else if (use_cache)
        use_cache = cudag__cache_dir(dir, sizeof dir);
    if (use_cache) {
        int gr = cudag__cache_get(dir, key, &payload, &plen);
        if (gr == CUDAG_OK) {
            bool oom;
            if (unpack(payload, plen, q->nexprs, out, &oom)) {
                out->cached = true;
                payload = NULL;
                goto done;
            }
            cudag__free(payload);
            payload = NULL;
            if (oom) {
                rc = cudag__report(d, CUDAG_SEV_ERROR, CUDAG_ENOMEM, q->pos,
                                   "out of memory");
                goto done;
            }
        } else if (gr == CUDAG_ENOMEM) {
            rc = cudag__report(d, CUDAG_SEV_ERROR, CUDAG_ENOMEM, q->pos,
                               "out of memory");
            goto done;
        }
        /* Missing, truncated or garbage: compiled again and replaced. */
    }
    if ((rc = cudag__nvrtc(&pg.rtc, &e)) != CUDAG_OK) {
        cudag__report(d, CUDAG_SEV_ERROR, rc, q->pos, "module '%s': %s",
                      q->module, e.message);
        goto done;
    }
    rc = run_nvrtc(&pg, arch, texts, ntexts, &a, &payload, &plen);
    if (rc != CUDAG_OK)
        goto done;
    bool oom;
    if (!unpack(payload, plen, q->nexprs, out, &oom)) {
        rc = cudag__report(d, CUDAG_SEV_ERROR, CUDAG_ENOMEM, q->pos,
                           "out of memory");
        goto done;
    }
    if (use_cache && cudag__cache_put(dir, key, payload, plen, &e) != CUDAG_OK &&
        !(q->cache_warned && *q->cache_warned)) {
        /* Once per caller: every module would say the same. */
        if (q->cache_warned)
            *q->cache_warned = true;
        rc = cudag__report(d, CUDAG_SEV_WARNING, CUDAG_EIO, q->pos,
                           "%s; compiling every time (--no-cache silences "
                           "this)",
                           e.message);
        if (rc != CUDAG_OK)     /* a warning made an error */
            goto done;
    }
    payload = NULL;     /* out holds it */
done:
    if (pg.prog && pg.rtc->nvrtcDestroyProgram(&pg.prog) != CUDAG__NVRTC_SUCCESS &&
        rc == CUDAG_OK)
        rc = cudag__report(d, CUDAG_SEV_ERROR, CUDAG_ENOTSUP, q->pos,
                           "module '%s': nvrtcDestroyProgram failed", q->module);
    cudag__free(payload);
    cudag__arena_free(&a);
    if (rc != CUDAG_OK)
        cudag__compiled_free(out);
    return rc;
}
