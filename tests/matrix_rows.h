/* matrix_rows.h — the kernel-placement matrix that test_matrix.c (the fake
 * driver) and test_gpu_matrix.c (a GPU) both run: where a kernel stands
 * (the rows, graph text with the kernel's name as @K and the column's
 * modules and kernels as @HEAD) × where it comes from (the columns).
 *
 * Every row computes y from x with the kernel, f(y, a) = a·x + y for the
 * own kernels and a·x for the shipped scale_f32, a number of times the row's
 * reference (mx_apply) replays on the CPU.  Inside bodies the kernel ends a
 * programmatic edge (it waits: cudag_pdl_wait, or the shipped kernels').
 * Header-only: each suite gets its own copy. */
#ifndef CUDAG_TEST_MATRIX_ROWS_H
#define CUDAG_TEST_MATRIX_ROWS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MX_N 256

/* The buffers and conditions every row may use: x and y, a loop counter,
 * the value an `if` tests (p[0] < 0.5) and a switch's case. */
#define MX_COMMON                                                              \
    "vars: {N: 256, K: 3}\n"                                                   \
    "buffers:\n"                                                               \
    "  x: {type: f32, count: N}\n"                                             \
    "  y: {type: f32, count: N}\n"                                             \
    "  it: {type: i32, count: 1}\n"                                            \
    "  p: {type: f32, count: 1}\n"                                             \
    "  pick: {type: i32, count: 1}\n"                                          \
    "conditions:\n"                                                            \
    "  more: {default: 1}\n"                                                   \
    "  pos: {}\n"                                                              \
    "  which: {}\n"

/* One row.  child: the child graph file's text (written as layer.yaml
 * beside the graph), or NULL.  a[]: the factors the kernel applies, in
 * order, when p[0] < 0.5 and pick is 1 (the state each suite sets up). */
typedef struct mx_row {
    const char *name;
    const char *nodes;          /* the graph's nodes section */
    const char *child;
    double a[16];
    int na;
    int depth;                  /* how deep the kernel's nodes lie */
    int knodes;                 /* kernel nodes of the column's kernel */
} mx_row;

#define MX_WHILE_BODY(ind)                                                     \
    ind "step: {kernel: @K, grid: 2, block: 128, args: [x, y, 2, N]}\n"        \
    ind "step2:\n"                                                             \
    ind "  kernel: @K\n"                                                       \
    ind "  grid: 2\n"                                                          \
    ind "  block: 128\n"                                                       \
    ind "  args: [x, y, 1, N]\n"                                               \
    ind "  after: {step: programmatic}\n"                                      \
    ind "next:\n"                                                              \
    ind "  kernel: cond_count_i32\n"                                           \
    ind "  grid: 1\n"                                                          \
    ind "  block: 32\n"                                                        \
    ind "  args: [it, K, more]\n"                                              \
    ind "  after: {step2: programmatic}\n"

static const mx_row mx_rows[] = {
    {"top level",
     "nodes:\n"
     "  a: {kernel: @K, grid: 2, block: 128, args: [x, y, 2, N]}\n"
     "  b: {kernel: @K, grid: 2, block: 128, args: [x, y, 3, N],"
     " after: {a: programmatic}}\n",
     NULL, {2, 3}, 2, 0, 2},
    {"while body",
     "nodes:\n"
     "  reset: {memset: it, value: 0}\n"
     "  solve:\n"
     "    while: more\n"
     "    after: reset\n"
     "    body:\n" MX_WHILE_BODY("      "),
     NULL, {2, 1, 2, 1, 2, 1}, 6, 1, 2},
    {"if/else bodies",
     "nodes:\n"
     "  test: {kernel: cond_lt_f32, grid: 1, block: 32, args: [p, 0.5, pos]}\n"
     "  sign:\n"
     "    if: pos\n"
     "    after: test\n"
     "    then:\n"
     "      up: {kernel: @K, grid: 2, block: 128, args: [x, y, 2, N]}\n"
     "      up2: {kernel: @K, grid: 2, block: 128, args: [x, y, 5, N],"
     " after: {up: programmatic}}\n"
     "    else:\n"
     "      down: {kernel: @K, grid: 2, block: 128, args: [x, y, -1, N]}\n",
     NULL, {2, 5}, 2, 1, 3},
    {"switch cases",
     "nodes:\n"
     "  choose: {kernel: cond_index_i32, grid: 1, block: 32,"
     " args: [pick, which]}\n"
     "  route:\n"
     "    switch: which\n"
     "    after: choose\n"
     "    cases:\n"
     "      - {c0: {kernel: @K, grid: 2, block: 128, args: [x, y, 2, N]}}\n"
     "      - c1: {kernel: @K, grid: 2, block: 128, args: [x, y, 3, N]}\n"
     "        c1b: {kernel: @K, grid: 2, block: 128, args: [x, y, 4, N],"
     " after: {c1: programmatic}}\n"
     "      - {c2: {kernel: @K, grid: 2, block: 128, args: [x, y, 5, N]}}\n",
     NULL, {3, 4}, 2, 1, 4},
    {"child graph file, 3 uses",
     "nodes:\n"
     "  L0: {graph: layer.yaml, vars: {A: 1, M: N}}\n"
     "  L1: {graph: layer.yaml, vars: {A: 2, M: N}, after: L0}\n"
     "  L2: {graph: layer.yaml, vars: {A: 3, M: N}, after: L1}\n",
     "vars: {A: 1, M: 1}\n"
     "nodes:\n"
     "  lin: {kernel: @K, grid: 2, block: 128, args: [x, y, A, M]}\n"
     "  lin2: {kernel: @K, grid: 2, block: 128, args: [x, y, A + 1, M],"
     " after: {lin: programmatic}}\n",
     {1, 2, 2, 3, 3, 4}, 6, 1, 6},
    {"while inside a child graph file",
     "nodes:\n"
     "  reset: {memset: it, value: 0}\n"
     "  L: {graph: layer.yaml, vars: {M: N, J: K}, after: reset}\n",
     "vars: {M: 1, J: 1}\n"
     "nodes:\n"
     "  solve:\n"
     "    while: more\n"
     "    body:\n"
     "      step: {kernel: @K, grid: 2, block: 128, args: [x, y, 2, M]}\n"
     "      step2:\n"
     "        kernel: @K\n"
     "        grid: 2\n"
     "        block: 128\n"
     "        args: [x, y, 1, M]\n"
     "        after: {step: programmatic}\n"
     "      next:\n"
     "        kernel: cond_count_i32\n"
     "        grid: 1\n"
     "        block: 32\n"
     "        args: [it, J, more]\n"
     "        after: {step2: programmatic}\n",
     {2, 1, 2, 1, 2, 1}, 6, 2, 2},
    {"if inside a while body",
     "nodes:\n"
     "  reset: {memset: it, value: 0}\n"
     "  solve:\n"
     "    while: more\n"
     "    after: reset\n"
     "    body:\n"
     "      test: {kernel: cond_lt_f32, grid: 1, block: 32,"
     " args: [p, 0.5, pos]}\n"
     "      sign:\n"
     "        if: pos\n"
     "        after: test\n"
     "        then:\n"
     "          up: {kernel: @K, grid: 2, block: 128, args: [x, y, 2, N]}\n"
     "          up2: {kernel: @K, grid: 2, block: 128, args: [x, y, 1, N],"
     " after: {up: programmatic}}\n"
     "        else:\n"
     "          down: {kernel: @K, grid: 2, block: 128, args: [x, y, -1, N]}\n"
     "      next:\n"
     "        kernel: cond_count_i32\n"
     "        grid: 1\n"
     "        block: 32\n"
     "        args: [it, K, more]\n"
     "        after: sign\n",
     NULL, {2, 1, 2, 1, 2, 1}, 6, 2, 3},
};
#define MX_NROWS (sizeof mx_rows / sizeof mx_rows[0])

/* One column: the graph's head (with @SRC for the source tree), the
 * kernel's name, and whether it adds y (a·x + y) or replaces it (a·x). */
typedef struct mx_col {
    const char *name;
    const char *head;
    const char *kernel;
    int accumulates;
    int source;                 /* compiled by NVRTC at instantiation */
} mx_col;

static const mx_col mx_cols[] = {
    {"shipped library", "include: cudag_kernels.yaml\n", "scale_f32", 0, 0},
    {"own fatbin + kernels:",
     "include: cudag_kernels.yaml\n"
     "modules: {mine: @SRC/tests/data/modules/k.fatbin}\n"
     "kernels:\n"
     "  mx_axpy:\n"
     "    module: mine\n"
     "    params: {x: ptr, y: ptr, a: f32, n: i32}\n"
     "    pdl: true\n",
     "mx_axpy", 1, 0},
    {"own .cu", "include: cudag_kernels.yaml\n"
                "modules: {mine: @SRC/tests/data/matrix/mx.cu}\n",
     "mx_axpy", 1, 1},
    {"own .cu with CUDA's headers",
     "include: cudag_kernels.yaml\n"
     "modules: {mine: @SRC/tests/data/matrix/mx_cg.cu}\n",
     "mx_axpy_cg", 1, 1},
};
#define MX_NCOLS (sizeof mx_cols / sizeof mx_cols[0])

/* text with every @K replaced by kernel, @SRC by src and @HEAD by head;
 * malloc'd, NULL on OOM. */
static char *mx_subst(const char *text, const char *kernel, const char *src,
                      const char *head)
{
    size_t cap = strlen(text) * 2 + 4096, len = 0;
    char *out = malloc(cap);
    if (!out)
        return NULL;
    for (const char *s = text; *s;) {
        const char *rep = NULL;
        size_t skip = 0;
        if (strncmp(s, "@K", 2) == 0)
            rep = kernel, skip = 2;
        else if (strncmp(s, "@SRC", 4) == 0)
            rep = src, skip = 4;
        else if (strncmp(s, "@HEAD", 5) == 0)
            rep = head, skip = 5;
        size_t add = rep ? strlen(rep) : 1;
        if (len + add + 1 > cap) {
            cap = (len + add + 1) * 2;
            char *n = realloc(out, cap);
            if (!n) {
                free(out);
                return NULL;
            }
            out = n;
        }
        if (rep) {
            memcpy(out + len, rep, add);
            s += skip;
        } else {
            out[len] = *s++;
        }
        len += add;
    }
    out[len] = '\0';
    return out;
}

/* The whole graph text of a cell: "cudag: 1", the column's head, the
 * common buffers, the row's nodes.  malloc'd. */
static char *mx_graph(const mx_row *r, const mx_col *c, const char *src)
{
    char *head = mx_subst(c->head, c->kernel, src, "");
    if (!head)
        return NULL;
    size_t n = strlen(head) + strlen(MX_COMMON) + strlen(r->nodes) + 64;
    char *t = malloc(n);
    if (t)
        snprintf(t, n, "cudag: 1\n@HEAD" MX_COMMON "%s", r->nodes);
    char *out = t ? mx_subst(t, c->kernel, src, head) : NULL;
    free(t);
    free(head);
    return out;
}

/* The CPU reference: y after the row's kernels ran, from y0 and x. */
static void mx_apply(const mx_row *r, const mx_col *c, const float *x,
                     const float *y0, float *y, int n)
{
    for (int i = 0; i < n; i++) {
        float v = y0[i];
        for (int k = 0; k < r->na; k++)
            v = c->accumulates ? (float)r->a[k] * x[i] + v
                               : (float)r->a[k] * x[i];
        y[i] = v;
    }
}

/* Fails the test, printing err, unless rc is CUDAG_OK. */
static void mx_ok(int rc, const cudag_error *e)
{
    if (rc != CUDAG_OK)
        fail_msg("unexpected error %s: %s:%d:%d: %s", cudag_status_name(rc),
                 e->file, e->line, e->column, e->message);
}

/* ---- the C API's column: a CUfunction of the program's ---------------- */

static const cudag_dim3 G2 = {2, 1, 1}, B128 = {128, 1, 1}, G1 = {1, 1, 1},
                        B32 = {32, 1, 1};

static void kern(cudag_graph *g, const char *name, double a)
{
    cudag_arg args[] = {cudag_arg_buffer("x", 0), cudag_arg_buffer("y", 0),
                        cudag_arg_float(a), cudag_arg_int(MX_N)};
    cudag_error e;
    mx_ok(cudag_add_kernel(g, name, "mine", G2, B128, 0, args, 4, &e), &e);
}

static void counter(cudag_graph *g, const char *after, cudag_edge_kind kind)
{
    cudag_arg args[] = {cudag_arg_buffer("it", 0), cudag_arg_int(3),
                        cudag_arg_cond("more")};
    cudag_error e;
    mx_ok(cudag_add_kernel(g, "next", "cond_count_i32", G1, B32, 0, args, 3, &e),
       &e);
    mx_ok(cudag_add_edge(g, after, "next", kind, &e), &e);
}

static void pdl_pair(cudag_graph *g, const char *a, double fa, const char *b,
                     double fb)
{
    cudag_error e;
    kern(g, a, fa);
    kern(g, b, fb);
    mx_ok(cudag_add_edge(g, a, b, CUDAG_EDGE_PROGRAMMATIC, &e), &e);
}

/* The graph of row r (the rows the builder can express: no child graph
 * files, which come from YAML), the kernel a CUfunction handle. */
static cudag_graph *mx_api_row(size_t r, void *handle, const char *lib)
{
    cudag_graph *g, *b[3], *in[2];
    cudag_error e;
    mx_ok(cudag_graph_create("m", &g, &e), &e);
    mx_ok(cudag_add_module(g, "lib", lib, &e),
       &e);
    static const cudag_param cnt[] = {{"counter", CUDAG_TYPE_PTR},
                                      {"k", CUDAG_TYPE_I64},
                                      {"c", CUDAG_TYPE_COND}};
    static const cudag_param lt[] = {{"x", CUDAG_TYPE_PTR},
                                     {"t", CUDAG_TYPE_F32},
                                     {"c", CUDAG_TYPE_COND}};
    static const cudag_param idx[] = {{"x", CUDAG_TYPE_PTR},
                                      {"c", CUDAG_TYPE_COND}};
    mx_ok(cudag_add_signature(g, "cond_count_i32", "lib", NULL, cnt, 3, 1, &e), &e);
    mx_ok(cudag_add_signature(g, "cond_lt_f32", "lib", NULL, lt, 3, 1, &e), &e);
    mx_ok(cudag_add_signature(g, "cond_index_i32", "lib", NULL, idx, 2, 1, &e), &e);
    static const cudag_param axpy[] = {{"x", CUDAG_TYPE_PTR},
                                       {"y", CUDAG_TYPE_PTR},
                                       {"a", CUDAG_TYPE_F32},
                                       {"n", CUDAG_TYPE_I32}};
    mx_ok(cudag_add_signature_handle(g, "mine", handle,
                                  CUDAG_HANDLE_FUNCTION, axpy, 4, 1, &e),
       &e);
    mx_ok(cudag_add_buffer(g, "x", CUDAG_TYPE_F32, MX_N, NULL, &e), &e);
    mx_ok(cudag_add_buffer(g, "y", CUDAG_TYPE_F32, MX_N, NULL, &e), &e);
    mx_ok(cudag_add_buffer(g, "it", CUDAG_TYPE_I32, 1, NULL, &e), &e);
    mx_ok(cudag_add_buffer(g, "p", CUDAG_TYPE_F32, 1, NULL, &e), &e);
    mx_ok(cudag_add_buffer(g, "pick", CUDAG_TYPE_I32, 1, NULL, &e), &e);
    mx_ok(cudag_add_condition(g, "more", 1, &e), &e);
    mx_ok(cudag_add_condition(g, "pos", CUDAG_COND_NO_DEFAULT, &e), &e);
    mx_ok(cudag_add_condition(g, "which", CUDAG_COND_NO_DEFAULT, &e), &e);
    cudag_arg ltargs[] = {cudag_arg_buffer("p", 0), cudag_arg_float(0.5),
                          cudag_arg_cond("pos")};
    const char *name = mx_rows[r].name;
    if (strcmp(name, "top level") == 0) {
        pdl_pair(g, "a", 2, "b", 3);
    } else if (strcmp(name, "while body") == 0) {
        mx_ok(cudag_add_memset(g, "reset", "it", 0, 1, 0, &e), &e);
        mx_ok(cudag_add_conditional(g, "solve", CUDAG_COND_WHILE, "more", 1, b,
                                 &e),
           &e);
        mx_ok(cudag_add_edge(g, "reset", "solve", CUDAG_EDGE_FULL, &e), &e);
        pdl_pair(b[0], "step", 2, "step2", 1);
        counter(b[0], "step2", CUDAG_EDGE_PROGRAMMATIC);
    } else if (strcmp(name, "if/else bodies") == 0) {
        mx_ok(cudag_add_kernel(g, "test", "cond_lt_f32", G1, B32, 0, ltargs, 3,
                            &e),
           &e);
        mx_ok(cudag_add_conditional(g, "sign", CUDAG_COND_IF, "pos", 2, b, &e),
           &e);
        mx_ok(cudag_add_edge(g, "test", "sign", CUDAG_EDGE_FULL, &e), &e);
        pdl_pair(b[0], "up", 2, "up2", 5);
        kern(b[1], "down", -1);
    } else if (strcmp(name, "switch cases") == 0) {
        cudag_arg ia[] = {cudag_arg_buffer("pick", 0), cudag_arg_cond("which")};
        mx_ok(cudag_add_kernel(g, "choose", "cond_index_i32", G1, B32, 0, ia, 2,
                            &e),
           &e);
        mx_ok(cudag_add_conditional(g, "route", CUDAG_COND_SWITCH, "which", 3, b,
                                 &e),
           &e);
        mx_ok(cudag_add_edge(g, "choose", "route", CUDAG_EDGE_FULL, &e), &e);
        kern(b[0], "c0", 2);
        pdl_pair(b[1], "c1", 3, "c1b", 4);
        kern(b[2], "c2", 5);
    } else if (strcmp(name, "if inside a while body") == 0) {
        mx_ok(cudag_add_memset(g, "reset", "it", 0, 1, 0, &e), &e);
        mx_ok(cudag_add_conditional(g, "solve", CUDAG_COND_WHILE, "more", 1, b,
                                 &e),
           &e);
        mx_ok(cudag_add_edge(g, "reset", "solve", CUDAG_EDGE_FULL, &e), &e);
        mx_ok(cudag_add_kernel(b[0], "test", "cond_lt_f32", G1, B32, 0, ltargs,
                            3, &e),
           &e);
        mx_ok(cudag_add_conditional(b[0], "sign", CUDAG_COND_IF, "pos", 2, in,
                                 &e),
           &e);
        mx_ok(cudag_add_edge(b[0], "test", "sign", CUDAG_EDGE_FULL, &e), &e);
        pdl_pair(in[0], "up", 2, "up2", 1);
        kern(in[1], "down", -1);
        counter(b[0], "sign", CUDAG_EDGE_FULL);
    } else {
        cudag_graph_destroy(g);
        return NULL;            /* child graph files: YAML only */
    }
    mx_ok(cudag_check(g, NULL, &e), &e);
    return g;
}

#endif /* CUDAG_TEST_MATRIX_ROWS_H */
