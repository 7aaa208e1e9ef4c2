/* test_dot.c — Graphviz output (src/show/dot.c): node labels and shapes, edge
 * styles by kind, the critical path, clusters for repetition groups, name
 * escaping, rendering with `dot -Tsvg` where Graphviz is installed, and
 * allocation failures. */
#include "common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static cudag_graph *new_graph(void)
{
    static const cudag_param scale[] = {{"x", CUDAG_TYPE_PTR},
                                        {"y", CUDAG_TYPE_PTR},
                                        {"a", CUDAG_TYPE_F32},
                                        {"n", CUDAG_TYPE_I64}};
    cudag_graph *g = NULL;
    cudag_error e;
    assert_int_equal(cudag_graph_create("g", &g, &e), CUDAG_OK);
    assert_int_equal(cudag_add_module(g, "m", "m.fatbin", &e), CUDAG_OK);
    assert_int_equal(cudag_add_signature(g, "scale_f32", "m", NULL, scale, 4,
                                         1, &e),
                     CUDAG_OK);
    assert_int_equal(cudag_add_signature(g, "nop", "m", NULL, NULL, 0, 1, &e),
                     CUDAG_OK);
    return g;
}

static char *dot(const cudag_graph *g, unsigned flags)
{
    char *text = NULL;
    cudag_error e;
    int rc = cudag_dot(g, flags, &text, &e);
    if (rc)
        print_error("%s\n", e.message);
    assert_int_equal(rc, CUDAG_OK);
    assert_non_null(text);
    return text;
}

/* The line of `text` that starts (after indentation) with `prefix`, copied
 * into a static buffer; fails the test if there is none. */
static const char *line_of(const char *text, const char *prefix)
{
    static char buf[4096];
    for (const char *p = text; *p;) {
        const char *end = strchr(p, '\n');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        const char *s = p;
        while (*s == ' ')
            s++;
        if (strncmp(s, prefix, strlen(prefix)) == 0) {
            snprintf(buf, sizeof buf, "%.*s", (int)(n - (size_t)(s - p)), s);
            return buf;
        }
        p += n + (end ? 1 : 0);
    }
    print_error("no line starting with '%s' in:\n%s\n", prefix, text);
    fail();
    return NULL;
}

static bool have_dot(void)
{
    return system("command -v dot >/dev/null 2>&1") == 0;
}

/* Renders DOT text with Graphviz and fails if dot rejects it.  Without dot
 * on PATH it says so and returns: the other assertions of the calling test
 * still count, and dot_renders_with_graphviz reports the skip. */
static void render(const char *text)
{
    if (!have_dot()) {
        print_message("dot (Graphviz) is not on PATH: not rendering\n");
        return;
    }
    char path[] = "/tmp/cudag_test_dot_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    assert_non_null(f);
    assert_true(fputs(text, f) >= 0);
    assert_int_equal(fclose(f), 0);
    char cmd[256];
    snprintf(cmd, sizeof cmd,
             "dot -Tsvg '%s' -o '%s.svg' 2>'%s.err' && grep -q '</svg>' "
             "'%s.svg'",
             path, path, path, path);
    int rc = system(cmd);
    if (rc != 0) {
        snprintf(cmd, sizeof cmd, "cat '%s.err' >&2", path);
        if (system(cmd) != 0)
            print_error("(no dot error output)\n");
        print_error("dot -Tsvg failed on:\n%s\n", text);
    }
    snprintf(cmd, sizeof cmd, "rm -f '%s' '%s.svg' '%s.err'", path, path, path);
    if (system(cmd) != 0)
        print_error("could not remove %s*\n", path);
    assert_int_equal(rc, 0);
}

/* A small graph with every node and edge kind:
 *   n0 zero (memset x) -> n1 a -PDL-> n2 b -order-> n3 c -> n4 save (memcpy)
 * and a short branch a -> n5 side -> c. */
static cudag_graph *mixed(void)
{
    cudag_graph *g = new_graph();
    cudag_error e;
    assert_int_equal(cudag_add_buffer(g, "x", CUDAG_TYPE_F32, 4096, NULL, &e),
                     CUDAG_OK);
    assert_int_equal(cudag_add_buffer(g, "y", CUDAG_TYPE_F32, 4096, NULL, &e),
                     CUDAG_OK);
    assert_int_equal(cudag_add_memset(g, "zero", "x", 0, 4096, 0.0, &e),
                     CUDAG_OK);
    cudag_arg a[] = {cudag_arg_buffer("x", 0), cudag_arg_buffer("y", 0),
                     cudag_arg_float(2.0), cudag_arg_int(4096)};
    assert_int_equal(cudag_add_kernel(g, "a", "scale_f32",
                                      (cudag_dim3){16, 1, 1}, TB256, 0, a, 4,
                                      &e),
                     CUDAG_OK);
    assert_int_equal(cudag_add_kernel(g, "b", "scale_f32",
                                      (cudag_dim3){16, 4, 1},
                                      (cudag_dim3){32, 8, 1}, 1024, a, 4, &e),
                     CUDAG_OK);
    assert_int_equal(cudag_add_kernel(g, "c", "scale_f32",
                                      (cudag_dim3){2, 3, 4}, TB256, 0, a, 4,
                                      &e),
                     CUDAG_OK);
    assert_int_equal(cudag_add_memcpy(g, "save", "y", 16, "x", 0, 100, &e),
                     CUDAG_OK);
    tnop(g, "side");
    tedge(g, "zero", "a", CUDAG_EDGE_FULL);
    tedge(g, "a", "b", CUDAG_EDGE_PROGRAMMATIC);
    tedge(g, "b", "c", CUDAG_EDGE_LAUNCH_ORDER);
    tedge(g, "c", "save", CUDAG_EDGE_FULL);
    tedge(g, "a", "side", CUDAG_EDGE_FULL);
    tedge(g, "side", "c", CUDAG_EDGE_FULL);
    tcheck_ok(g);
    return g;
}

static void dot_requires_checked_graph(void **state)
{
    (void)state;
    cudag_graph *g = new_graph();
    tnop(g, "a");
    char *text = (char *)1;
    cudag_error e;
    assert_int_equal(cudag_dot(g, 0, &text, &e), CUDAG_ESTATE);
    assert_null(text);
    assert_string_equal(e.message,
                        "cudag_dot: graph 'g' has not passed cudag_check()");
    assert_int_equal(cudag_dot(NULL, 0, &text, &e), CUDAG_EINVAL);
    assert_int_equal(cudag_dot(g, 0, NULL, &e), CUDAG_EINVAL);
    cudag_graph_destroy(g);
}

static void dot_writes_nodes_and_edge_styles(void **state)
{
    (void)state;
    cudag_graph *g = mixed();
    char *text = dot(g, CUDAG_DOT_NO_CRITICAL);
    assert_true(strncmp(text, "digraph \"g\" {\n", 14) == 0);
    assert_string_equal(line_of(text, "n0 ["),
                        "n0 [label=\"zero\\nmemset x[0..4096) = 0\", "
                        "shape=parallelogram, style=filled, "
                        "fillcolor=lightyellow];");
    assert_string_equal(line_of(text, "n1 ["),
                        "n1 [label=\"a\\nscale_f32\\ngrid 16  block 256\"];");
    assert_string_equal(line_of(text, "n2 ["),
                        "n2 [label=\"b\\nscale_f32\\ngrid 16x4  block "
                        "32x8\\nsmem 1024\"];");
    assert_string_equal(line_of(text, "n3 ["),
                        "n3 [label=\"c\\nscale_f32\\ngrid 2x3x4  block "
                        "256\"];");
    assert_string_equal(line_of(text, "n4 ["),
                        "n4 [label=\"save\\nmemcpy x[0..100) -> "
                        "y[16..116)\", shape=cds, style=filled, "
                        "fillcolor=lightcyan];");
    assert_string_equal(line_of(text, "n0 -> n1"), "n0 -> n1;");
    assert_string_equal(line_of(text, "n1 -> n2"),
                        "n1 -> n2 [style=\"bold,dashed\", color=blue, "
                        "fontcolor=blue, label=\"PDL\"];");
    assert_string_equal(line_of(text, "n2 -> n3"),
                        "n2 -> n3 [style=dotted, color=darkgreen, "
                        "fontcolor=darkgreen, label=\"order\"];");
    /* No highlighting asked for: nothing red, no critical entry in the
     * legend, which still shows the three edge kinds. */
    assert_null(strstr(text, "red"));
    assert_non_null(strstr(text, "subgraph \"cluster_legend\""));
    assert_non_null(strstr(text, "legend_a1 -> legend_b1 [style=\"bold,"
                                 "dashed\", color=blue"));
    assert_non_null(strstr(text, "legend_a2 -> legend_b2 [style=dotted"));
    render(text);
    cudag_free(text);
    cudag_graph_destroy(g);
}

static void dot_counts_in_the_title_agree_in_number(void **state)
{
    (void)state;
    cudag_graph *g = new_graph();
    tnop(g, "only");
    tcheck_ok(g);
    char *text = dot(g, 0);
    assert_string_equal(line_of(text, "graph ["),
                        "graph [label=\"g\\n1 node, 0 edges, 1 level\", "
                        "labelloc=t, fontname=\"Helvetica\"];");
    cudag_free(text);
    tnop(g, "next");
    tedge(g, "only", "next", CUDAG_EDGE_FULL);
    tcheck_ok(g);
    text = dot(g, 0);
    assert_string_equal(line_of(text, "graph ["),
                        "graph [label=\"g\\n2 nodes, 1 edge, 2 levels\", "
                        "labelloc=t, fontname=\"Helvetica\"];");
    cudag_free(text);
    cudag_graph_destroy(g);
}

static void dot_highlights_critical_path(void **state)
{
    (void)state;
    cudag_graph *g = mixed();
    char *text = dot(g, 0);
    /* The longest path: zero -> a -> b -> c -> save and zero -> a -> side ->
     * c -> save are equally long (5 nodes); the lower-index predecessor of c
     * (b, index 2, before side, index 5) wins. */
    assert_non_null(strstr(line_of(text, "n0 ["), "color=red, penwidth=2.5"));
    assert_non_null(strstr(line_of(text, "n2 ["), "color=red, penwidth=2.5"));
    assert_non_null(strstr(line_of(text, "n4 ["), "color=red, penwidth=2.5"));
    assert_null(strstr(line_of(text, "n5 ["), "red"));
    assert_string_equal(line_of(text, "n0 -> n1"),
                        "n0 -> n1 [color=red, penwidth=2.5];");
    assert_string_equal(line_of(text, "n1 -> n2"),
                        "n1 -> n2 [style=\"bold,dashed\", color=blue, "
                        "fontcolor=blue, label=\"PDL\", color=red, "
                        "penwidth=2.5];");
    assert_string_equal(line_of(text, "n1 -> n5"), "n1 -> n5;");
    assert_string_equal(line_of(text, "n5 -> n3"), "n5 -> n3;");
    assert_non_null(strstr(text, "label=\"critical path\""));
    render(text);
    cudag_free(text);
    cudag_graph_destroy(g);
}

/* Groups as the YAML front end makes them for
 *   layer[i in 0..2]: { norm, add, sub[j in 0..2]: { mul } }
 * (only the IR's group fields matter here). */
static cudag_graph *grouped(void)
{
    cudag_graph *g = new_graph();
    cudag_error e;
    char name[64];
    uint32_t layer, sub;
    tnop(g, "first");
    for (int i = 0; i < 2; i++) {
        snprintf(name, sizeof name, "layer[%d]", i);
        assert_int_equal(cudag__add_group(g, name, CUDAG__NONE, &layer, &e),
                         CUDAG_OK);
        snprintf(name, sizeof name, "layer[%d].norm", i);
        tnop(g, name);
        g->nodes[g->nnodes - 1].group = layer;
        snprintf(name, sizeof name, "layer[%d].add", i);
        tnop(g, name);
        g->nodes[g->nnodes - 1].group = layer;
        for (int j = 0; j < 2; j++) {
            snprintf(name, sizeof name, "layer[%d].sub[%d]", i, j);
            assert_int_equal(cudag__add_group(g, name, layer, &sub, &e),
                             CUDAG_OK);
            snprintf(name, sizeof name, "layer[%d].sub[%d].mul", i, j);
            tnop(g, name);
            g->nodes[g->nnodes - 1].group = sub;
        }
    }
    /* Chain everything in index order. */
    for (uint32_t i = 1; i < g->nnodes; i++)
        assert_int_equal(cudag__add_edge(g, i - 1, i, CUDAG_EDGE_FULL,
                                         CUDAG__NOPOS, &e),
                         CUDAG_OK);
    tcheck_ok(g);
    return g;
}

static void dot_nests_group_clusters(void **state)
{
    (void)state;
    cudag_graph *g = grouped();
    char *text = dot(g, 0);
    /* Groups: 0 layer[0], 1 layer[0].sub[0], 2 layer[0].sub[1], 3 layer[1],
     * …; nodes: 0 first, 1 layer[0].norm, 2 .add, 3 .sub[0].mul, … */
    const char *want =
        "  subgraph \"cluster_0\" {\n"
        "    label=\"layer[0]\"; style=\"rounded,dashed\"; color=gray50; "
        "fontcolor=gray30;\n"
        "    n1;\n"
        "    n2;\n"
        "    subgraph \"cluster_1\" {\n"
        "      label=\"layer[0].sub[0]\"; style=\"rounded,dashed\"; "
        "color=gray50; fontcolor=gray30;\n"
        "      n3;\n"
        "    }\n"
        "    subgraph \"cluster_2\" {\n"
        "      label=\"layer[0].sub[1]\"; style=\"rounded,dashed\"; "
        "color=gray50; fontcolor=gray30;\n"
        "      n4;\n"
        "    }\n"
        "  }\n"
        "  subgraph \"cluster_3\" {\n";
    if (!strstr(text, want))
        print_error("expected:\n%s\nin:\n%s\n", want, text);
    assert_non_null(strstr(text, want));
    assert_non_null(strstr(line_of(text, "n1 ["),
                           "label=\"layer[0].norm\\nnop\\n"));
    render(text);
    cudag_free(text);

    text = dot(g, CUDAG_DOT_NO_CLUSTERS);
    assert_null(strstr(text, "cluster_0"));
    assert_non_null(strstr(text, "cluster_legend"));
    render(text);
    cudag_free(text);
    cudag_graph_destroy(g);
}

static void dot_escapes_names(void **state)
{
    /* A graph loaded from a file is named after it, which may hold any
     * character; DOT must stay well-formed. */
    (void)state;
    cudag_graph *g = new_graph();
    tnop(g, "a");
    tcheck_ok(g);
    g->name = "my \"odd\" graph\\v2\n";
    char *text = dot(g, 0);
    const char *want = "digraph \"my \\\"odd\\\" graph\\\\v2\" {\n";
    assert_true(strncmp(text, want, strlen(want)) == 0);
    render(text);
    cudag_free(text);
    cudag_graph_destroy(g);
}

static void dot_renders_large_wavefront(void **state)
{
    /* A 20 x 20 wavefront (each cell after its upper and left neighbours),
     * with programmatic edges along the rows. */
    (void)state;
    cudag_graph *g = new_graph();
    char name[64], other[64];
    for (int i = 0; i < 20; i++)
        for (int j = 0; j < 20; j++) {
            snprintf(name, sizeof name, "cell[%d].col[%d]", i, j);
            tnop(g, name);
            if (i > 0) {
                snprintf(other, sizeof other, "cell[%d].col[%d]", i - 1, j);
                tedge(g, other, name, CUDAG_EDGE_FULL);
            }
            if (j > 0) {
                snprintf(other, sizeof other, "cell[%d].col[%d]", i, j - 1);
                tedge(g, other, name, CUDAG_EDGE_PROGRAMMATIC);
            }
        }
    tcheck_ok(g);
    char *text = dot(g, 0);
    /* The critical path has 39 nodes and 38 edges. */
    size_t red = 0;
    for (const char *p = text; (p = strstr(p, "color=red")); p++)
        red++;
    assert_int_equal(red, 39 + 38 + 2 /* legend: color and fontcolor */);
    render(text);
    cudag_free(text);
    cudag_graph_destroy(g);
}

static void dot_renders_with_graphviz(void **state)
{
    /* Every shape above, once more, as one test that is skipped (not
     * passed) where Graphviz is missing, so that a CI without it shows. */
    (void)state;
    if (!have_dot()) {
        print_message("dot (Graphviz) is not on PATH: skipping\n");
        skip();
    }
    cudag_graph *g[2] = {mixed(), grouped()};
    for (int i = 0; i < 2; i++)
        for (unsigned flags = 0; flags < 4; flags++) {
            char *text = dot(g[i], flags);
            render(text);
            cudag_free(text);
        }
    cudag_graph_destroy(g[0]);
    cudag_graph_destroy(g[1]);
}

static void dot_survives_oom(void **state)
{
    (void)state;
    cudag_graph *g = grouped();
    char *text = NULL;
    cudag_error e;
    long n;
    for (n = 1;; n++) {
        long live = cudag__alloc_live();
        cudag__alloc_fail_after(n);
        int rc = cudag_dot(g, 0, &text, &e);
        long made = cudag__alloc_fail_after(-1);
        if (rc == CUDAG_ENOMEM) {
            assert_int_equal(cudag__alloc_live(), live);
            assert_null(text);
            assert_string_equal(e.message, "out of memory writing DOT");
            continue;
        }
        assert_int_equal(rc, CUDAG_OK);
        assert_true(made < n);
        break;
    }
    assert_true(n > 3);
    cudag_free(text);
    cudag_graph_destroy(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(dot_requires_checked_graph),
        cmocka_unit_test(dot_writes_nodes_and_edge_styles),
        cmocka_unit_test(dot_counts_in_the_title_agree_in_number),
        cmocka_unit_test(dot_highlights_critical_path),
        cmocka_unit_test(dot_nests_group_clusters),
        cmocka_unit_test(dot_escapes_names),
        cmocka_unit_test(dot_renders_large_wavefront),
        cmocka_unit_test(dot_renders_with_graphviz),
        cmocka_unit_test(dot_survives_oom),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
