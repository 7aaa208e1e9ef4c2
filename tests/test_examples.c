/* test_examples.c — every graph in graphs/ passes the checker with no
 * warning, plans, and its DOT renders with Graphviz (where installed); the
 * Llama step's kernels picked by its shapes and head sizes, and the steps of
 * llama_generate.yaml's `while` body. */
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

/* The count of kernel nodes named kernel in a DOT text. */
static int launches(const char *dot, const char *kernel)
{
    char want[128];
    snprintf(want, sizeof want, "\\n%s\\n", kernel);
    int n = 0;
    for (const char *p = strstr(dot, want); p; p = strstr(p + 1, want))
        n++;
    return n;
}

/* Graph file `file` (under the source root) loaded with the
 * NULL-terminated defines d, which must load. */
static cudag_graph *load_ok(const char *file, const char *const *d)
{
    tdiag td;
    cudag_options o = topts(&td, d);
    cudag_graph *g;
    cudag_error err;
    int rc = cudag_load_file(tsrc(file), &o, &g, &err);
    if (rc != CUDAG_OK)
        print_error("%s\n", td.text);
    assert_int_equal(rc, CUDAG_OK);
    return g;
}

/* The DOT of file under d (load_ok); cudag_free it. */
static char *dot_of(const char *file, const char *const *d)
{
    cudag_graph *g = load_ok(file, d);
    char *dot;
    cudag_error err;
    assert_int_equal(cudag_dot(g, 0, &dot, &err), CUDAG_OK);
    cudag_graph_destroy(g);
    return dot;
}

/* The Llama step picks its GEMV kernels by the shapes (graphs/llama/step.yaml,
 * KB and KR): batch 1's or the batch ones by B, and at batch 1 with H >= 4096
 * (the 8B shapes) the output and down projections' kernel of two blocks per
 * SM; every layer's two projections take the one picked. */
static void llama_picks_its_kernels_by_shape(void **state)
{
    (void)state;
    static const struct {
        const char *d[8];
        int L;
        const char *qkv, *res;
    } cases[] = {
        {{NULL}, 16, "llama_qkv_bf16", "llama_res_bf16"},
        {{"B=8", NULL}, 16, "llama_qkv_batch_bf16", "llama_res_batch_bf16"},
        {{"L=32", "H=4096", "F=14336", "HD=128", "ROPE_FACTOR=8", NULL}, 32,
         "llama_qkv_bf16", "llama_res_m2_bf16"},
        {{"L=32", "H=4096", "F=14336", "HD=128", "ROPE_FACTOR=8", "B=8", NULL}, 32,
         "llama_qkv_batch_bf16", "llama_res_batch_bf16"},
        {{"L=32", "H=4096", "F=14336", "HD=128", "KR=0", NULL}, 32, "llama_qkv_bf16",
         "llama_res_bf16"},
    };
    static const char *const res[] = {"llama_res_bf16", "llama_res_batch_bf16",
                                      "llama_res_m2_bf16"};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *dot = dot_of("graphs/llama_decode.yaml", cases[i].d);
        assert_int_equal(launches(dot, cases[i].qkv), cases[i].L);
        for (size_t k = 0; k < sizeof res / sizeof res[0]; k++)
            assert_int_equal(launches(dot, res[k]),
                             strcmp(res[k], cases[i].res) ? 0 : 2 * cases[i].L);
        cudag_free(dot);
    }
}

/* The attention kernel follows the head size and the batch (step.yaml,
 * AK, A64, A128): heads of 1, 2, 4, 8 or 16 chunks of 8 elements take
 * llama_attn_bf16 at batch 1 and llama_attn_batch_bf16 past it (or at batch
 * 1 with the batch GEMVs, KB=1), heads of 64 the same two compiled for
 * them alone (llama_attn64_bf16, llama_attn_batch64_bf16), heads of 128 at
 * batch 1 llama_attn_bf16 compiled for them alone (llama_attn128_bf16,
 * A128: with blocks of two warps or more, as the graphs' are), every other
 * multiple of 8 up to 128 llama_attn_odd_bf16 (lane groups wider than a
 * row), in every layer of both Llama graphs; each kernel traps on another's
 * heads (a -D AK that picks one of those is refused at load: test_bounds). */
static void llama_picks_its_attention_by_head_size(void **state)
{
    (void)state;
    static const char *const files[] = {"graphs/llama_decode.yaml",
                                        "graphs/llama_generate.yaml"};
    static const char *const batches[] = {"B=1", "B=2", "B=11", "KB=1"};
    static const char *const names[] = {"llama_attn_bf16", "llama_attn_batch_bf16",
                                        "llama_attn_odd_bf16", "llama_attn64_bf16",
                                        "llama_attn_batch64_bf16", "llama_attn128_bf16"};
    for (size_t f = 0; f < 2; f++)
        for (size_t b = 0; b < sizeof batches / sizeof batches[0]; b++)
            for (int hd = 8; hd <= 128; hd += 8) {
                char hds[16];
                snprintf(hds, sizeof hds, "HD=%d", hd);
                const char *d[] = {"L=3", "NH=4", "NKV=2", hds, batches[b], NULL};
                char *dot = dot_of(files[f], d);
                const bool odd = 16 % (hd / 8) != 0;
                const size_t want = odd         ? 2
                                    : hd == 64  ? 3 + (b > 0)
                                    : hd == 128 ? (b > 0 ? 1 : 5)
                                                : (b > 0);
                for (size_t k = 0; k < sizeof names / sizeof names[0]; k++)
                    if (launches(dot, names[k]) != (k == want ? 3 : 0))
                        fail_msg("%s at HD %d, %s: %d %s, expected %s", files[f], hd,
                                 batches[b], launches(dot, names[k]), names[k],
                                 names[want]);
                cudag_free(dot);
            }
}

/* Grid `grid` in the label of every node of `dot` whose name ends in
 * `node` (".attn" matches each layer's), at least once. */
static void grids_are(const char *dot, const char *node, const char *grid)
{
    char want[256];
    snprintf(want, sizeof want, "%s\\n", node);
    int seen = 0;
    for (const char *p = strstr(dot, want); p; p = strstr(p + 1, want)) {
        const char *g = strstr(p, "\\ngrid ");
        assert_non_null(g);
        char got[64];
        assert_int_equal(sscanf(g + 7, "%63s", got), 1);
        if (strcmp(got, grid) != 0)
            fail_msg("%s: grid %s, expected %s", node, got, grid);
        seen++;
    }
    assert_true(seen > 0);
}

/* The grids sized by the GPU's SMs (SMS, 132 by default) follow -D SMS in
 * both Llama graphs: the attention's blocks per (kv head, sequence), two a
 * SM in all (at least one), gate/up's and the head's two a SM at batch 8,
 * the argmax's one a SM, at most its 63 tiles of 2 048 logits.  The
 * attention's block size follows -D AB. */
static void llama_grids_follow_the_sms(void **state)
{
    (void)state;
    static const struct {
        const char *d[4];
        const char *attn, *gu, *head, *argmax, *block;
        bool batch; /* the batch kernels */
    } cases[] = {
        {{NULL}, "33x8", "264", "8016", "63", "256", false},
        {{"B=8", NULL}, "4x8x8", "264", "264", "63x8", "256", true},
        {{"B=8", "SMS=114", NULL}, "3x8x8", "228", "228", "63x8", "256", true},
        {{"B=8", "SMS=20", NULL}, "1x8x8", "40", "40", "20x8", "256", true},
        {{"SMS=114", NULL}, "28x8", "228", "8016", "63", "256", false},
        {{"AB=64", NULL}, "33x8", "264", "8016", "63", "64", false},
    };
    static const char *const files[] = {"graphs/llama_decode.yaml",
                                        "graphs/llama_generate.yaml"};
    for (size_t f = 0; f < 2; f++)
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            char *dot = dot_of(files[f], cases[i].d);
            grids_are(dot, ".gu", cases[i].gu);
            grids_are(dot, "step.head", cases[i].head);
            grids_are(dot, "step.argmax", cases[i].argmax);
            /* every layer's attention: its grid and its block (AB); the
             * batch kernel past batch 1, both compiled for the heads of 64 */
            char attn[96];
            snprintf(attn, sizeof attn, "llama_attn%s64_bf16\\ngrid %s  block %s",
                     cases[i].batch ? "_batch" : "", cases[i].attn, cases[i].block);
            assert_int_equal(launches(dot, attn), 16);
            cudag_free(dot);
        }
}

/* graphs/llama_generate.yaml holds U steps a `while` iteration, each with its
 * emit after it by a full edge, and each step after an emit by a
 * programmatic one (U - 1 a body); the steps' own chains programmatic. */
static void llama_generate_holds_u_steps_a_body(void **state)
{
    (void)state;
    enum { L = 2 };
    for (int u = 1; u <= 4; u++)
        for (int b = 1; b <= 8; b += 7) {
            char ls[16], us[16], bs[16];
            snprintf(ls, sizeof ls, "L=%d", L);
            snprintf(us, sizeof us, "U=%d", u);
            snprintf(bs, sizeof bs, "B=%d", b);
            const char *d[] = {ls, us, bs, NULL};
            cudag_graph *g = load_ok("graphs/llama_generate.yaml", d);
            cudag_error err;
            cudag_plan_info info;
            assert_int_equal(cudag_plan(g, &info, NULL, &err), CUDAG_OK);
            /* the two resets into the loop, and each step into its emit */
            assert_int_equal(info.edges[CUDAG_EDGE_FULL], 2 + (size_t)u);
            /* a step's 5 L + 2 kernels in a chain, and an emit into the next */
            assert_int_equal(info.edges[CUDAG_EDGE_PROGRAMMATIC],
                             (size_t)u * (5 * L + 1) + (size_t)u - 1);
            assert_int_equal(info.edges[CUDAG_EDGE_LAUNCH_ORDER], 0);
            char *dot;
            assert_int_equal(cudag_dot(g, 0, &dot, &err), CUDAG_OK);
            assert_int_equal(launches(dot, "llama_emit_i32"), u);
            assert_int_equal(launches(dot, "llama_argmax_bf16"), u);
            assert_int_equal(launches(dot, b == 1 ? "llama_qkv_bf16" : "llama_qkv_batch_bf16"),
                             L * u);
            cudag_free(dot);
            cudag_graph_destroy(g);
        }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(examples_check_plan_and_render),
        cmocka_unit_test(llama_picks_its_kernels_by_shape),
        cmocka_unit_test(llama_picks_its_attention_by_head_size),
        cmocka_unit_test(llama_grids_follow_the_sms),
        cmocka_unit_test(llama_generate_holds_u_steps_a_body),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
