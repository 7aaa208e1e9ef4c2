/* names.c — the status table, error values as text, and the names of the
 * public enumerations. */
#include "base/names.h"
#include "cudag.h"
#include "base/alloc.h"

#include <stdbool.h>
#include <stddef.h>


#include <stdio.h>
#include <string.h>

const char *cudag_strerror(int code)
{
    switch (code) {
#define CUDAG__TEXT(name, value, text) \
    case value:                        \
        return text;
        CUDAG_STATUS_MAP(CUDAG__TEXT)
#undef CUDAG__TEXT
    }
    return "unknown status";
}

const char *cudag_status_name(int code)
{
    switch (code) {
#define CUDAG__NAME(name, value, text) \
    case value:                        \
        return "CUDAG_" #name;
        CUDAG_STATUS_MAP(CUDAG__NAME)
#undef CUDAG__NAME
    }
    return "CUDAG_UNKNOWN";
}

const char *cudag_version_string(void)
{
#define CUDAG__STR2(x) #x
#define CUDAG__STR(x) CUDAG__STR2(x)
    return CUDAG__STR(CUDAG_VERSION_MAJOR) "." CUDAG__STR(
        CUDAG_VERSION_MINOR) "." CUDAG__STR(CUDAG_VERSION_PATCH);
}

int cudag_error_format(const cudag_error *e, char *buf, size_t size)
{
    static const char *const sev[] = {"error", "warning", "note"};
    const char *s = e->severity >= 0 && e->severity <= 2 ? sev[e->severity]
                                                         : "error";
    if (e->file[0] && e->line > 0)
        return snprintf(buf, size, "%s:%d:%d: %s: %s", e->file, e->line,
                        e->column, s, e->message);
    if (e->file[0])
        return snprintf(buf, size, "%s: %s: %s", e->file, s, e->message);
    return snprintf(buf, size, "%s: %s", s, e->message);
}

static const struct {
    const char *name;
    size_t size;
} types[CUDAG_TYPE_COUNT_] = {
    [CUDAG_TYPE_I8] = {"i8", 1},     [CUDAG_TYPE_U8] = {"u8", 1},
    [CUDAG_TYPE_I16] = {"i16", 2},   [CUDAG_TYPE_U16] = {"u16", 2},
    [CUDAG_TYPE_I32] = {"i32", 4},   [CUDAG_TYPE_U32] = {"u32", 4},
    [CUDAG_TYPE_I64] = {"i64", 8},   [CUDAG_TYPE_U64] = {"u64", 8},
    [CUDAG_TYPE_F16] = {"f16", 2},   [CUDAG_TYPE_BF16] = {"bf16", 2},
    [CUDAG_TYPE_F32] = {"f32", 4},   [CUDAG_TYPE_F64] = {"f64", 8},
    [CUDAG_TYPE_PTR] = {"ptr", 8},   [CUDAG_TYPE_COND] = {"cond", 8},
};

const char *cudag_type_name(cudag_type t)
{
    return t > CUDAG_TYPE_NONE && t < CUDAG_TYPE_COUNT_ ? types[t].name : NULL;
}

size_t cudag_type_size(cudag_type t)
{
    return t > CUDAG_TYPE_NONE && t < CUDAG_TYPE_COUNT_ ? types[t].size : 0;
}

cudag_type cudag__type_parse(const char *s, size_t n)
{
    for (int t = CUDAG_TYPE_NONE + 1; t < CUDAG_TYPE_COUNT_; t++)
        if (strlen(types[t].name) == n && memcmp(types[t].name, s, n) == 0)
            return (cudag_type)t;
    return CUDAG_TYPE_NONE;
}

bool cudag__is_elem_type(cudag_type t)
{
    return cudag_type_name(t) && t != CUDAG_TYPE_PTR && t != CUDAG_TYPE_COND;
}

const char *cudag_edge_kind_name(cudag_edge_kind k)
{
    switch (k) {
    case CUDAG_EDGE_FULL:
        return "full";
    case CUDAG_EDGE_PROGRAMMATIC:
        return "programmatic";
    case CUDAG_EDGE_LAUNCH_ORDER:
        return "launch_order";
    }
    return NULL;
}

void cudag_free(void *p) { cudag__free(p); }
