/* binary.c — reads kernel code files on the CPU: sniffs the kind, walks a
 * fatbin's images, a cubin's ELF sections (.nv.info.<kernel>: parameter
 * records) and PTX text (.entry parameter lists, bodies for
 * griddepcontrol.wait and calls).  Every offset is bounds-checked: the
 * bytes come from users' files. */
#include "code/binary.h"
#include "cudag.h"
#include "base/alloc.h"
#include "base/diag.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <string.h>

const char *cudag__code_kind_name(cudag__code_kind k)
{
    switch (k) {
    case CUDAG__CODE_FATBIN: return "fatbin";
    case CUDAG__CODE_CUBIN: return "cubin";
    case CUDAG__CODE_PTX: return "PTX";
    case CUDAG__CODE_SOURCE: return "CUDA source";
    case CUDAG__CODE_HOSTOBJ: return "host object file";
    default: return "unknown";
    }
}

static uint16_t rd16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t rd32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
           (uint32_t)p[3] << 24;
}
static uint64_t rd64(const uint8_t *p)
{
    return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32;
}

#define FATBIN_MAGIC 0xBA55ED50u
#define EM_CUDA 190

/* Valid UTF-8 without NUL bytes (overlong forms are not worth refusing). */
static bool is_text(const uint8_t *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        uint8_t c = s[i];
        size_t more = c < 0x80 ? 0 : (c & 0xE0) == 0xC0 ? 1
                    : (c & 0xF0) == 0xE0 ? 2 : (c & 0xF8) == 0xF0 ? 3 : 4;
        if (c == 0 || more == 4 || more >= n - i)
            return false;
        for (size_t j = 1; j <= more; j++)
            if ((s[i + j] & 0xC0) != 0x80)
                return false;
        i += more + 1;
    }
    return true;
}

/* True when the text has a line starting (after spaces) with directive. */
static bool has_directive(const char *s, size_t n, const char *directive)
{
    size_t dl = strlen(directive);
    for (size_t i = 0; i < n; i++) {
        if (i > 0 && s[i - 1] != '\n')
            continue;
        size_t j = i;
        while (j < n && (s[j] == ' ' || s[j] == '\t'))
            j++;
        if (j + dl <= n && memcmp(s + j, directive, dl) == 0 &&
            (j + dl == n || s[j + dl] == ' ' || s[j + dl] == '\t'))
            return true;
    }
    return false;
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

cudag__code_kind cudag__code_sniff(const void *data, size_t len,
                                   const char *path)
{
    const uint8_t *b = data;
    if (len >= 16 && rd32(b) == FATBIN_MAGIC)
        return CUDAG__CODE_FATBIN;
    if (len >= 64 && memcmp(b, "\177ELF", 4) == 0)
        return b[4] == 2 && rd16(b + 18) == EM_CUDA ? CUDAG__CODE_CUBIN
                                                    : CUDAG__CODE_HOSTOBJ;
    if (len == 0 || !is_text(b, len))
        return CUDAG__CODE_OTHER;
    const char *s = data;
    if (has_directive(s, len, ".version") && has_directive(s, len, ".target"))
        return CUDAG__CODE_PTX;
    if (!path)
        return CUDAG__CODE_SOURCE;
    static const char *const exts[] = {".cu", ".cuh", ".cuda", ".h", ".hpp",
                                       ".cpp", ".cc", ".cxx"};
    for (size_t i = 0; i < sizeof exts / sizeof exts[0]; i++)
        if (ends_with(path, exts[i]))
            return CUDAG__CODE_SOURCE;
    return CUDAG__CODE_OTHER;
}

/* ---- collecting entries ------------------------------------------------- */

typedef struct collect {
    cudag__arena *a;
    cudag__code_entry *e;
    uint32_t n, cap;
    bool oom;
} collect;

/* The entry called name[0..len), added (unknown parameters, unknown waits)
 * when new. */
static cudag__code_entry *entry(collect *c, const char *name, size_t len)
{
    for (uint32_t i = 0; i < c->n; i++)
        if (strlen(c->e[i].name) == len && memcmp(c->e[i].name, name, len) == 0)
            return &c->e[i];
    cudag__code_entry *e =
        cudag__vec_push((void **)&c->e, &c->n, &c->cap, sizeof *e);
    if (!e) {
        c->oom = true;
        return NULL;
    }
    e->name = cudag__arena_strndup(c->a, name, len);
    if (!e->name) {
        c->n--;
        c->oom = true;
        return NULL;
    }
    e->nparams = CUDAG__CODE_UNKNOWN;
    e->waits = -1;
    return e;
}

/* ---- cubin --------------------------------------------------------------- */

#define EIATTR_KPARAM_INFO 0x17

/* Reads the parameter records of one .nv.info.<kernel> section. */
static void read_nv_info(collect *c, cudag__code_entry *e, const uint8_t *p,
                         size_t n)
{
    uint32_t count = 0, sizes[256] = {0};
    for (size_t i = 0; i + 4 <= n;) {
        uint8_t fmt = p[i], attr = p[i + 1];
        size_t vlen = 0;
        if (fmt == 4)           /* EIFMT_SVAL: a u16 size, then the value */
            vlen = rd16(p + i + 2);
        else if (fmt < 1 || fmt > 3)
            return;             /* unknown record format: give up */
        if (i + 4 + vlen > n)
            return;
        const uint8_t *v = p + i + 4;
        if (fmt == 4 && attr == EIATTR_KPARAM_INFO && vlen >= 12) {
            uint32_t ord = rd16(v + 4);
            if (ord >= 256)
                return;
            sizes[ord] = rd32(v + 8) >> 18 & 0x3fff;
            if (ord + 1 > count)
                count = ord + 1;
        }
        i += 4 + vlen;
    }
    /* Every record was read: the toolchain writes one KPARAM_INFO per
     * parameter, so none means none. */
    if (e->nparams != CUDAG__CODE_UNKNOWN)
        return;                 /* another image said it first */
    e->sizes = cudag__arena_alloc(c->a, (count + 1) * sizeof *e->sizes);
    if (!e->sizes) {
        c->oom = true;
        return;
    }
    memcpy(e->sizes, sizes, count * sizeof *sizes);
    e->nparams = count;
}

/* Walks a 64-bit little-endian ELF image's sections; false when it is not
 * one that can be read. */
static bool read_elf(collect *c, const uint8_t *b, size_t len)
{
    if (len < 64 || memcmp(b, "\177ELF", 4) != 0 || b[4] != 2 || b[5] != 1)
        return false;
    uint64_t shoff = rd64(b + 0x28);
    uint16_t shentsize = rd16(b + 0x3a), shnum = rd16(b + 0x3c),
             shstrndx = rd16(b + 0x3e);
    if (shentsize < 64 || shstrndx >= shnum || shoff > len ||
        (uint64_t)shnum * shentsize > len - shoff)
        return false;
    const uint8_t *sh = b + shoff;
    const uint8_t *strs = sh + (size_t)shstrndx * shentsize;
    uint64_t stroff = rd64(strs + 0x18), strsize = rd64(strs + 0x20);
    if (stroff > len || strsize > len - stroff)
        return false;
    static const char prefix[] = ".nv.info.";
    for (uint16_t i = 0; i < shnum && !c->oom; i++) {
        const uint8_t *s = sh + (size_t)i * shentsize;
        uint32_t name = rd32(s);
        uint64_t off = rd64(s + 0x18), size = rd64(s + 0x20);
        if (name >= strsize || off > len || size > len - off)
            continue;
        const char *nm = (const char *)b + stroff + name;
        size_t nmax = strsize - name;
        size_t nl = strnlen(nm, nmax);
        if (nl == nmax || nl <= sizeof prefix - 1 ||
            memcmp(nm, prefix, sizeof prefix - 1) != 0)
            continue;
        cudag__code_entry *e =
            entry(c, nm + sizeof prefix - 1, nl - (sizeof prefix - 1));
        if (e)
            read_nv_info(c, e, b + off, (size_t)size);
    }
    return true;
}

/* ---- PTX ------------------------------------------------------------------ */

typedef struct ptx_lex {
    const char *s;
    size_t n, i;
} ptx_lex;

/* The next token: an identifier or directive ([.%$A-Za-z0-9_]+, with dots
 * inside), a number, or one punctuation character.  Comments are skipped.
 * Returns its length (0 at the end) and its start in *at. */
static size_t ptx_next(ptx_lex *p, const char **at)
{
    const char *s = p->s;
    for (;;) {
        while (p->i < p->n && (s[p->i] == ' ' || s[p->i] == '\t' ||
                               s[p->i] == '\n' || s[p->i] == '\r'))
            p->i++;
        if (p->i + 1 < p->n && s[p->i] == '/' && s[p->i + 1] == '/') {
            while (p->i < p->n && s[p->i] != '\n')
                p->i++;
        } else if (p->i + 1 < p->n && s[p->i] == '/' && s[p->i + 1] == '*') {
            p->i += 2;
            while (p->i + 1 < p->n && !(s[p->i] == '*' && s[p->i + 1] == '/'))
                p->i++;
            p->i = p->i + 2 < p->n ? p->i + 2 : p->n;
        } else {
            break;
        }
    }
    if (p->i >= p->n)
        return 0;
    *at = s + p->i;
    size_t st = p->i;
    char c = s[p->i];
    if (c == '"') {
        p->i++;
        while (p->i < p->n && s[p->i] != '"' && s[p->i] != '\n')
            p->i++;
        if (p->i < p->n && s[p->i] == '"')
            p->i++;
        return p->i - st;
    }
    bool word = false;
    while (p->i < p->n) {
        c = s[p->i];
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
            (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '%' ||
            c == '$') {
            p->i++;
            word = true;
        } else {
            break;
        }
    }
    if (!word)
        p->i++;
    return p->i - st;
}

static bool is(const char *t, size_t n, const char *w)
{
    return strlen(w) == n && memcmp(t, w, n) == 0;
}

static uint32_t ptx_type_bytes(const char *t, size_t n)
{
    /* .u64 .s32 .f16 .b8 .f16x2 .bf16 .pred … */
    if (n < 3 || t[0] != '.')
        return 0;
    if (is(t, n, ".pred"))
        return 1;
    size_t i = 1;
    while (i < n && t[i] >= 'a' && t[i] <= 'z')
        i++;
    if (i == 1 || i >= n)
        return 0;
    uint32_t bits = 0;
    for (; i < n && t[i] >= '0' && t[i] <= '9'; i++)
        bits = bits * 10 + (uint32_t)(t[i] - '0');
    if (i + 2 == n && t[i] == 'x' && t[i + 1] >= '0' && t[i + 1] <= '9')
        bits *= (uint32_t)(t[i + 1] - '0');
    else if (i != n)
        return 0;
    return bits % 8 || bits == 0 || bits > 1024 ? 0 : bits / 8;
}

/* One function of the PTX (.entry or .func) for the wait analysis. */
typedef struct ptx_fn {
    const char *name;
    size_t len;
    size_t body, end;           /* offsets of its body in the text */
    int entry;                  /* index into the collected entries, or -1 */
    bool waits;
} ptx_fn;

/* Reads a parameter list: at '(' (already consumed) up to ')'.  Fills sizes
 * when not NULL; returns the count, or UNKNOWN when unreadable. */
static uint32_t ptx_params(ptx_lex *p, uint32_t *sizes, uint32_t max)
{
    uint32_t n = 0, cur = 0, mult = 1;
    bool inparam = false;
    const char *t;
    size_t l;
    while ((l = ptx_next(p, &t)) != 0) {
        if (is(t, l, ")") || is(t, l, ",")) {
            if (inparam) {
                if (n < max && sizes)
                    sizes[n] = cur * mult;
                n++;
            }
            if (is(t, l, ")"))
                return n;
            inparam = false;
            cur = 0;
            mult = 1;
        } else if (is(t, l, ".param") || is(t, l, ".reg")) {
            inparam = true;
        } else if (is(t, l, "[")) {
            const char *num;
            size_t nl = ptx_next(p, &num);
            uint32_t v = 0;
            for (size_t i = 0; i < nl && num[i] >= '0' && num[i] <= '9'; i++)
                v = v * 10 + (uint32_t)(num[i] - '0');
            mult = v ? v : 1;
        } else if (t[0] == '.' && !is(t, l, ".ptr") && !is(t, l, ".align") &&
                   !is(t, l, ".global") && !is(t, l, ".shared") &&
                   !is(t, l, ".const") && !is(t, l, ".local")) {
            uint32_t b = ptx_type_bytes(t, l);
            if (b)
                cur = b;
        }
    }
    return CUDAG__CODE_UNKNOWN;
}

/* The .entry and .func definitions of PTX text s (those with a body), into
 * *fns (cudag__free'd by the caller); each .entry also into c with its
 * parameter sizes.  c->oom on OOM. */
static void ptx_entries(collect *c, const char *s, size_t len, ptx_fn **fns_out,
                        uint32_t *nfn_out)
{
    ptx_lex p = {s, len, 0};
    ptx_fn *fns = NULL;
    uint32_t nfn = 0, cfn = 0;
    const char *t;
    size_t l;
    while ((l = ptx_next(&p, &t)) != 0 && !c->oom) {
        bool is_entry = is(t, l, ".entry"), is_func = is(t, l, ".func");
        if (!is_entry && !is_func)
            continue;
        const char *name;
        size_t nl = ptx_next(&p, &name);
        if (is_func && nl == 1 && name[0] == '(') {
            /* .func (.param .b32 ret) name(…): the return values first. */
            ptx_params(&p, NULL, 0);
            nl = ptx_next(&p, &name);
        }
        if (nl == 0 || name[0] == '(' || name[0] == ';')
            continue;
        uint32_t sizes[256];
        uint32_t np = 0;
        size_t save = p.i;
        const char *q;
        size_t ql = ptx_next(&p, &q);
        if (ql == 1 && q[0] == '(')
            np = ptx_params(&p, sizes, 256);
        else
            p.i = save;
        /* Performance directives, then the body or ';' (a declaration). */
        size_t body = 0, end = 0;
        while ((ql = ptx_next(&p, &q)) != 0) {
            if (is(q, ql, ";"))
                break;
            if (is(q, ql, "{")) {
                body = p.i;
                int depth = 1;
                while (depth > 0 && (ql = ptx_next(&p, &q)) != 0)
                    depth += is(q, ql, "{") - is(q, ql, "}");
                end = p.i;
                break;
            }
        }
        if (!body)
            continue;
        ptx_fn *f = cudag__vec_push((void **)&fns, &nfn, &cfn, sizeof *f);
        if (!f) {
            c->oom = true;
            break;
        }
        f->name = name;
        f->len = nl;
        f->body = body;
        f->end = end;
        f->entry = -1;
        if (is_entry) {
            cudag__code_entry *e = entry(c, name, nl);
            if (!e)
                break;
            f->entry = (int)(e - c->e);
            if (np != CUDAG__CODE_UNKNOWN && np <= 256) {
                e->sizes = cudag__arena_alloc(c->a, (np + 1) * sizeof *e->sizes);
                if (!e->sizes) {
                    c->oom = true;
                    break;
                }
                memcpy(e->sizes, sizes, np * sizeof *sizes);
                e->nparams = np;
            }
        }
    }
    *fns_out = fns;
    *nfn_out = nfn;
}

/* Marks the functions of fns that wait: a body with the instruction, or one
 * that calls a function that waits (to a fixed point). */
static void ptx_waits(collect *c, const char *s, ptx_fn *fns, uint32_t nfn)
{
    const char *t;
    size_t l;
    for (uint32_t i = 0; i < nfn; i++) {
        ptx_lex b = {s, fns[i].end, fns[i].body};
        while (!fns[i].waits && (l = ptx_next(&b, &t)) != 0)
            fns[i].waits = is(t, l, "griddepcontrol.wait");
    }
    for (bool changed = true; changed && !c->oom;) {
        changed = false;
        for (uint32_t i = 0; i < nfn; i++) {
            if (fns[i].waits)
                continue;
            ptx_lex b = {s, fns[i].end, fns[i].body};
            bool call = false;
            while (!fns[i].waits && (l = ptx_next(&b, &t)) != 0) {
                if (l >= 4 && memcmp(t, "call", 4) == 0 &&
                    (l == 4 || t[4] == '.')) {
                    call = true;
                    continue;
                }
                if (is(t, l, ";"))
                    call = false;
                if (!call)
                    continue;
                for (uint32_t j = 0; j < nfn; j++)
                    if (fns[j].waits && fns[j].len == l &&
                        memcmp(fns[j].name, t, l) == 0)
                        fns[i].waits = changed = true;
            }
        }
    }
}

/* PTX text s: its entries, their parameter sizes and whether they wait. */
static void read_ptx(collect *c, const char *s, size_t len)
{
    ptx_fn *fns = NULL;
    uint32_t nfn = 0;
    ptx_entries(c, s, len, &fns, &nfn);
    ptx_waits(c, s, fns, nfn);
    for (uint32_t i = 0; i < nfn && !c->oom; i++)
        if (fns[i].entry >= 0)
            c->e[fns[i].entry].waits = fns[i].waits;
    cudag__free(fns);
}

/* ---- fatbin --------------------------------------------------------------- */

#define FATBIN_KIND_PTX 1
#define FATBIN_KIND_ELF 2
#define FATBIN_COMPRESSED (0x2000u | 0x8000u)   /* LZ4, zstd */

/* Walks the images of a fatbin; *any: some image could be read. */
static void read_fatbin(collect *c, const uint8_t *b, size_t len, bool *any,
                        bool *skipped)
{
    for (size_t off = 0; off + 16 <= len && rd32(b + off) == FATBIN_MAGIC;) {
        uint16_t hsize = rd16(b + off + 6);
        uint64_t fsize = rd64(b + off + 8);
        if (hsize < 16 || hsize > len - off || fsize > len - off - hsize)
            return;
        size_t e = off + hsize, end = off + hsize + (size_t)fsize;
        while (e + 64 <= end && !c->oom) {
            uint16_t kind = rd16(b + e);
            uint32_t ehsize = rd32(b + e + 4);
            uint64_t psize = rd64(b + e + 8);
            uint64_t flags = rd64(b + e + 40);
            uint64_t raw = rd64(b + e + 56);
            if (ehsize < 64 || ehsize > end - e || psize > end - e - ehsize)
                return;
            const uint8_t *pl = b + e + ehsize;
            if ((flags & FATBIN_COMPRESSED) || raw != 0) {
                *skipped = true;
            } else if (kind == FATBIN_KIND_ELF) {
                *any |= read_elf(c, pl, (size_t)psize);
            } else if (kind == FATBIN_KIND_PTX) {
                read_ptx(c, (const char *)pl, strnlen((const char *)pl, psize));
                *any = true;
            }
            e += ehsize + (size_t)psize;
        }
        off = end;
    }
}

int cudag__code_read(cudag__arena *a, const void *data, size_t len,
                     cudag__code_info *out, cudag_error *err)
{
    memset(out, 0, sizeof *out);
    collect c = {a, NULL, 0, 0, false};
    out->kind = cudag__code_sniff(data, len, NULL);
    bool any = false, skipped = false;
    switch (out->kind) {
    case CUDAG__CODE_FATBIN:
        read_fatbin(&c, data, len, &any, &skipped);
        break;
    case CUDAG__CODE_CUBIN:
        any = read_elf(&c, data, len);
        break;
    case CUDAG__CODE_PTX:
        read_ptx(&c, data, len);
        any = true;
        break;
    default:
        break;
    }
    if (!c.oom && c.n) {
        out->e = cudag__arena_alloc(a, c.n * sizeof *out->e);
        if (out->e)
            memcpy(out->e, c.e, c.n * sizeof *out->e);
        else
            c.oom = true;
    }
    cudag__free(c.e);
    if (c.oom) {
        memset(out, 0, sizeof *out);
        return cudag__fail_at(err, CUDAG_ENOMEM, CUDAG__NOPOS,
                              "out of memory reading kernel code");
    }
    out->n = c.n;
    /* A fatbin whose machine code was read is complete even when its PTX was
     * compressed: every image holds the same entry points. */
    out->complete = any && (out->kind != CUDAG__CODE_FATBIN || c.n > 0 ||
                            !skipped);
    return CUDAG_OK;
}

const cudag__code_entry *cudag__code_find(const cudag__code_info *c,
                                          const char *name)
{
    for (uint32_t i = 0; c && i < c->n; i++)
        if (strcmp(c->e[i].name, name) == 0)
            return &c->e[i];
    return NULL;
}
