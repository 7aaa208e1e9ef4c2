/* test_bad.c — every file in tests/data/bad/ is one class of mistake, and
 * its first line says exactly what cudag must report:
 *     # expect: LINE:COL: error: MESSAGE
 * Optional lines after it: "# define: NAME=VALUE", "# flags: werror",
 * "# flags: strict".
 * A "…" in MESSAGE stands for any text: the part of a message that depends
 * on the machine (the directories an include was searched in).
 * The test loads each file, compares the first diagnostic (without the file
 * name) to the expectation, checks that it is the only error (one mistake,
 * one error: what the mistake breaks further on says nothing more), and that
 * a failed load returns no graph and leaves nothing allocated.  CUDAG_BAD_PRINT=1 prints what each file
 * gets instead, for writing new cases. */
#include "common.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* True when got matches expect, where each "…" in expect matches any text. */
static bool matches(const char *got, const char *expect)
{
    static const char ellipsis[] = "…";
    const char *star = strstr(expect, ellipsis);
    if (!star)
        return strcmp(got, expect) == 0;
    size_t head = (size_t)(star - expect);
    if (strncmp(got, expect, head) != 0)
        return false;
    const char *rest = star + sizeof ellipsis - 1;
    for (const char *at = got + head;; at++) {
        if (matches(at, rest))
            return true;
        if (!*at)
            return false;
    }
}

static void read_header(const char *path, char *expect, size_t n,
                        const char **defines, char defbuf[][256],
                        unsigned *flags)
{
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char line[1024];
    int nd = 0;
    expect[0] = '\0';
    *flags = 0;
    while (fgets(line, sizeof line, f) && line[0] == '#') {
        line[strcspn(line, "\n")] = '\0';
        if (strncmp(line, "# expect: ", 10) == 0)
            snprintf(expect, n, "%s", line + 10);
        else if (strncmp(line, "# define: ", 10) == 0 && nd < 7 &&
                 strlen(line + 10) < 256) {
            memcpy(defbuf[nd], line + 10, strlen(line + 10) + 1);
            defines[nd] = defbuf[nd];
            nd++;
        } else if (strcmp(line, "# flags: werror") == 0)
            *flags |= CUDAG_WERROR;
        else if (strcmp(line, "# flags: strict") == 0)
            *flags |= CUDAG_STRICT;
    }
    defines[nd] = NULL;
    fclose(f);
}

static void bad_files_report_exact_errors(void **state)
{
    (void)state;
    const char *dir = tsrc("tests/data/bad");
    DIR *d = opendir(dir);
    assert_non_null(d);
    char *names[512];
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < 512) {
        size_t l = strlen(e->d_name);
        if (l > 5 && strcmp(e->d_name + l - 5, ".yaml") == 0)
            names[n++] = strdup(e->d_name);
    }
    closedir(d);
    qsort(names, n, sizeof *names, cmp_names);
    assert_true(n >= 60);
    bool print = getenv("CUDAG_BAD_PRINT") != NULL;
    int failures = 0;
    for (size_t i = 0; i < n; i++) {
        char path[4096], expect[1024], defbuf[8][256];
        const char *defines[8];
        unsigned flags;
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        read_header(path, expect, sizeof expect, defines, defbuf, &flags);
        tdiag td;
        cudag_options o = topts(&td, defines);
        o.flags |= flags;
        cudag_graph *g = (cudag_graph *)1;
        cudag_error err;
        long live = cudag__alloc_live();
        int rc = cudag_load_file(path, &o, &g, &err);
        char got[2048];
        cudag_error_format(&err, got, sizeof got);
        /* Compare without the directory, which depends on the checkout:
         * the top file's name goes, included files keep their relative
         * path. */
        char prefix[4200];
        snprintf(prefix, sizeof prefix, "%s/", dir);
        for (char *at; (at = strstr(got, prefix));)
            memmove(at, at + strlen(prefix), strlen(at + strlen(prefix)) + 1);
        const char *rest = got;
        size_t nl = strlen(names[i]);
        if (strncmp(got, names[i], nl) == 0 && got[nl] == ':')
            rest = got + nl + 1;
        if (print) {
            printf("%s\t%s\n", names[i], rest);
        } else if (rc == CUDAG_OK || g != NULL || !matches(rest, expect) ||
                   err.code != rc || td.nerr != 1 ||
                   cudag__alloc_live() != live) {
            print_error("%s:\n  expected: %s\n  got:      %s (rc %d, %d "
                        "errors, graph %p, leaked %ld)\n",
                        names[i], expect, rest, rc, td.nerr, (void *)g,
                        cudag__alloc_live() - live);
            failures++;
        }
        if (rc == CUDAG_OK)
            cudag_graph_destroy(g);
        free(names[i]);
    }
    assert_int_equal(failures, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(bad_files_report_exact_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
