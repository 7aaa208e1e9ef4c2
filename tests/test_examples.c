/* test_examples.c — every graph in graphs/ passes the checker with no
 * warning, plans, and its DOT renders with Graphviz (where installed). */
#include "common.h"

#include <dirent.h>
#include <string.h>

static int cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void examples_check_plan_and_render(void **state)
{
    (void)state;
    const char *dir = tsrc("graphs");
    DIR *d = opendir(dir);
    assert_non_null(d);
    char *names[256];
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < 256) {
        size_t l = strlen(e->d_name);
        if (l > 5 && strcmp(e->d_name + l - 5, ".yaml") == 0)
            names[n++] = strdup(e->d_name);
    }
    closedir(d);
    qsort(names, n, sizeof *names, cmp);
    assert_true(n >= 6);
    bool have_dot = system("command -v dot >/dev/null 2>&1") == 0;
    if (!have_dot)
        print_message("Graphviz 'dot' is not installed: DOT is not rendered\n");
    for (size_t i = 0; i < n; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        tdiag td;
        cudag_options o = topts(&td, NULL);
        cudag_graph *g;
        cudag_error err;
        int rc = cudag_load_file(path, &o, &g, &err);
        if (rc != CUDAG_OK || td.nwarn)
            print_error("%s:\n%s", names[i], td.text);
        assert_int_equal(rc, CUDAG_OK);
        assert_int_equal(td.nwarn, 0);
        assert_true(cudag_graph_node_count(g) > 0);
        cudag_plan_info info;
        assert_int_equal(cudag_plan(g, &info, NULL, &err), CUDAG_OK);
        /* The plan counts the bodies of conditional nodes too. */
        assert_true(info.nodes >= cudag_graph_node_count(g));
        assert_int_equal(info.bodies > 0, g->nsubs > 0);
        char *dot;
        assert_int_equal(cudag_dot(g, 0, &dot, &err), CUDAG_OK);
        if (have_dot) {
            FILE *p = popen("dot -Tsvg -o /dev/null", "w");
            assert_non_null(p);
            fputs(dot, p);
            int st = pclose(p);
            if (st != 0)
                print_error("%s: dot failed on:\n%s\n", names[i], dot);
            assert_int_equal(st, 0);
        }
        cudag_free(dot);
        cudag_graph_destroy(g);
        free(names[i]);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(examples_check_plan_and_render),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
