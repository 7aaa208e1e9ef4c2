/* test_kind_cond.c — conditional nodes (src/kinds/cond.c) and the sub-graph
 * mechanism under them (graph.c, nodes.c, check.c, build.c, exec/): the
 * YAML forms and their bodies, the C builder, the checks on conditions,
 * DOT and plan, and on the fake driver the CUgraph they become — loops,
 * branches and cases run as the device would, defaults at every launch,
 * cudag_exec_set_condition, --no-pdl inside bodies, the replay ways (stream
 * launches refused, variant graphs), a driver without conditional nodes,
 * and every driver call or allocation failing in turn. */
#include "common.h"
#include "cudag.h"
#include "base/alloc.h"
#include "lib/driver.h"
#include "ir/graph.h"
#include "gpu/exec.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "fake_driver.h"

#include <string.h>

/* The head every YAML test shares: the shipped kernels (cond_count_i32,
 * cond_lt_f32, cond_index_i32, scale_f32 run on the fake), a counter, a
 * vector, a case index. */
#define HEAD                                                                   \
    "cudag: 1\n"                                                               \
    "include: cudag_kernels.yaml\n"                                            \
    "vars: {N: 64, K: 5}\n"                                                    \
    "buffers:\n"                                                               \
    "  it: {type: i32, count: 1}\n"                                            \
    "  x: {type: f32, count: N, init: 1}\n"                                    \
    "  pick: {type: i32, count: 1, init: 1}\n"

/* A loop of K scalings of x by 0.5, counted in `it`. */
static const char *const LOOP =
    HEAD
    "conditions:\n"
    "  more: {default: 1}\n"
    "nodes:\n"
    "  reset: {memset: it, value: 0}\n"
    "  loop:\n"
    "    while: more\n"
    "    after: reset\n"
    "    body:\n"
    "      step: {kernel: scale_f32, grid: 1, block: 64, args: [x, x, 0.5, N]}\n"
    "      next:\n"
    "        kernel: cond_count_i32\n"
    "        grid: 1\n"
    "        block: 32\n"
    "        args: [it, K, more]\n"
    "        after: {step: programmatic}\n"
    "  pick_next: {memset: pick, value: 2, after: loop}\n";

static cudag_graph *load(const char *yaml)
{
    tdiag d;
    cudag_graph *g = NULL;
    int rc = tload(yaml, &d, &g);
    if (rc != CUDAG_OK)
        print_error("%s", d.text);
    assert_int_equal(rc, CUDAG_OK);
    return g;
}

/* Loading must fail, and the diagnostics contain `want`. */
static void load_fails(const char *yaml, const char *want)
{
    tdiag d;
    cudag_graph *g = (cudag_graph *)1;
    long live = cudag__alloc_live();
    assert_int_not_equal(tload(yaml, &d, &g), CUDAG_OK);
    assert_null(g);
    assert_int_equal(cudag__alloc_live(), live);
    assert_diag_contains(&d, want);
}

/* ---- YAML ---------------------------------------------------------------- */

static void cond_while_body_is_a_subgraph(void **state)
{
    (void)state;
    cudag_graph *g = load(LOOP);
    assert_true(g->checked);
    assert_int_equal(g->nconds, 1);
    assert_true(g->conds[0].has_default);
    assert_int_equal(g->conds[0].value, 1);
    uint32_t loop = cudag__find_node(g, "loop");
    assert_int_not_equal(loop, CUDAG__NONE);
    const cudag__node *n = &g->nodes[loop];
    assert_int_equal(n->kind, CUDAG_NODE_CONDITIONAL);
    assert_int_equal(n->u.cnd.type, CUDAG_COND_WHILE);
    assert_int_equal(n->u.cnd.nbodies, 1);
    cudag_graph *b = n->u.cnd.bodies[0];
    /* The body: its own nodes, names and edges, the root's tables. */
    assert_ptr_equal(b->parent, g);
    assert_ptr_equal(b->root, g);
    assert_int_equal(b->owner, loop);
    assert_string_equal(b->prefix, "loop.");
    assert_int_equal(b->nnodes, 2);
    assert_string_equal(b->nodes[0].name, "loop.step");
    assert_int_equal(b->nedges, 1);
    assert_int_equal(b->edges[0].kind, CUDAG_EDGE_PROGRAMMATIC);
    assert_ptr_equal(b->buffers, g->buffers);
    assert_int_equal(cudag__find_node(g, "loop.step"), CUDAG__NONE);
    assert_true(b->checked);
    assert_int_equal(b->topo.depth, 2);
    /* The flat numbering: the root's 3 nodes, then the body's 2. */
    assert_int_equal(g->topo.ntree, 2);
    assert_int_equal(g->topo.tree_nodes, 5);
    assert_int_equal(g->topo.tree_edges, 3);
    assert_int_equal(b->node_base, 3);
    assert_int_equal(b->edge_base, 2);
    assert_ptr_equal(cudag__tree_node(g, 4), &b->nodes[1]);
    uint32_t at;
    assert_ptr_equal(cudag__tree_find(g, "loop.next", &at), b);
    assert_int_equal(at, 1);
    /* Every buffer is used, one of them only in the body. */
    assert_true(g->buffers[cudag__find_buffer(g, "x")].uses > 0);
    cudag_graph_destroy(b);     /* a body is its graph's: nothing happens */
    assert_int_equal(b->nnodes, 2);
    cudag_graph_destroy(g);
}

static void cond_if_else_and_switch_name_their_bodies(void **state)
{
    (void)state;
    cudag_graph *g = load(
        HEAD
        "conditions:\n"
        "  ok: {}\n"
        "  which: {default: 0}\n"
        "nodes:\n"
        "  test: {kernel: cond_lt_f32, grid: 1, block: 32, args: [x, 0.5, ok]}\n"
        "  check:\n"
        "    if: ok\n"
        "    after: test\n"
        "    then:\n"
        "      a: {memset: x, value: 2}\n"
        "    else:\n"
        "      b: {memset: x, value: 3}\n"
        "      c: {memset: x, value: 4, after: b}\n"
        "  choose: {kernel: cond_index_i32, grid: 1, block: 32, args: [pick, which], after: check}\n"
        "  route:\n"
        "    switch: which\n"
        "    after: choose\n"
        "    cases:\n"
        "      - {}\n"
        "      - step[i in 0..3]: {memset: it, value: i, after: [\"step[i-1]\"]}\n"
        "      - inner:\n"
        "          a: {memset: it, value: 9}\n");
    const cudag__node *chk = &g->nodes[cudag__find_node(g, "check")];
    assert_int_equal(chk->u.cnd.type, CUDAG_COND_IF);
    assert_int_equal(chk->u.cnd.nbodies, 2);
    assert_string_equal(chk->u.cnd.bodies[0]->name, "check.then");
    assert_string_equal(chk->u.cnd.bodies[1]->nodes[1].name, "check.else.c");
    assert_int_equal(chk->u.cnd.bodies[1]->nedges, 1);
    const cudag__node *r = &g->nodes[cudag__find_node(g, "route")];
    assert_int_equal(r->u.cnd.type, CUDAG_COND_SWITCH);
    assert_int_equal(r->u.cnd.nbodies, 3);
    assert_int_equal(r->u.cnd.bodies[0]->nnodes, 0);
    const cudag_graph *c1 = r->u.cnd.bodies[1];
    assert_string_equal(c1->name, "route.case[1]");
    assert_int_equal(c1->nnodes, 3);
    assert_string_equal(c1->nodes[2].name, "route.case[1].step[2]");
    assert_int_equal(c1->nedges, 2);
    assert_int_equal(c1->topo.depth, 3);
    /* A group inside a case. */
    assert_string_equal(r->u.cnd.bodies[2]->nodes[0].name,
                        "route.case[2].inner.a");
    assert_int_equal(g->topo.ntree, 6);
    cudag_graph_destroy(g);
}

static void cond_nests_and_keeps_references_inside_bodies(void **state)
{
    (void)state;
    cudag_graph *g = load(
        HEAD
        "conditions:\n"
        "  outer: {default: 1}\n"
        "  inner: {default: 1}\n"
        "nodes:\n"
        "  reset: {memset: it, value: 0}\n"
        "  a:\n"
        "    while: outer\n"
        "    after: reset\n"
        "    body:\n"
        "      b:\n"
        "        if: inner\n"
        "        then:\n"
        "          c: {kernel: scale_f32, grid: 1, block: 64, args: [x, x, 2.0, N]}\n"
        "      d: {kernel: cond_count_i32, grid: 1, block: 32, args: [it, K, outer], after: b}\n"
        "      e: {kernel: cond_lt_f32, grid: 1, block: 32, args: [x, 100.0, inner], after: d}\n");
    const cudag__node *a = &g->nodes[cudag__find_node(g, "a")];
    const cudag_graph *body = a->u.cnd.bodies[0];
    const cudag_graph *then = body->nodes[0].u.cnd.bodies[0];
    assert_string_equal(then->nodes[0].name, "a.b.then.c");
    assert_int_equal(then->depth, 2);
    assert_ptr_equal(then->root, g);
    assert_int_equal(g->topo.ntree, 3);
    cudag_graph_destroy(g);

    /* References stay inside their body, with the reason. */
    load_fails(HEAD
               "conditions: {more: {default: 1}}\n"
               "nodes:\n"
               "  top: {memset: it, value: 0}\n"
               "  loop:\n"
               "    while: more\n"
               "    body:\n"
               "      s: {kernel: cond_count_i32, grid: 1, block: 32, args: [it, K, more], after: top}\n",
               "t.yaml:14:83: error: node 'top' is outside the body of "
               "'loop': edges stay within one body (an edge to the body "
               "goes to 'loop')");
    load_fails(HEAD
               "conditions: {more: {default: 1}}\n"
               "nodes:\n"
               "  loop:\n"
               "    while: more\n"
               "    body:\n"
               "      s: {kernel: cond_count_i32, grid: 1, block: 32, args: [it, K, more]}\n"
               "  after_s: {memset: it, value: 0, after: loop.s}\n",
               "t.yaml:14:42: error: node 'loop.s' is inside the body of "
               "'loop': edges stay within one body (connect to 'loop' "
               "instead)");
    load_fails(HEAD
               "conditions: {more: {default: 1}}\n"
               "nodes:\n"
               "  loop:\n"
               "    while: more\n"
               "    body:\n"
               "      s: {kernel: cond_count_i32, grid: 1, block: 32, args: [it, K, more], after: loop}\n",
               "t.yaml:13:83: error: node 'loop' runs this body, so nothing "
               "in the body can wait for it");
    load_fails(HEAD
               "conditions: {more: {default: 1}}\n"
               "nodes:\n"
               "  loop:\n"
               "    while: more\n"
               "    body:\n"
               "      s: {kernel: cond_count_i32, grid: 1, block: 32, args: [it, K, more]}\n"
               "  t: {memset: it, value: 0}\n"
               "edges: [t -> loop.s]\n",
               "t.yaml:15:14: error: node 'loop.s' is inside the body of "
               "'loop'");
}

/* Nesting is bounded: 16 bodies deep load, 17 do not (with the position of
 * the node that would go past), and 10 000 levels stop at the YAML depth
 * limit before anything is lowered. */
static char *nested(unsigned levels)
{
    size_t cap = 4096 + (size_t)levels * 40;
    char *s = malloc(cap);
    assert_non_null(s);
    int n = snprintf(s, cap, HEAD "conditions:\n  c: {default: 0}\nnodes:\n  ");
    for (unsigned i = 0; i < levels; i++)
        n += snprintf(s + n, cap - (size_t)n, "l%u: {while: c, body: {", i);
    n += snprintf(s + n, cap - (size_t)n,
                  "z: {kernel: cond_count_i32, grid: 1, block: 32, args: [it, "
                  "K, c]}");
    for (unsigned i = 0; i < levels; i++)
        n += snprintf(s + n, cap - (size_t)n, "}}");
    snprintf(s + n, cap - (size_t)n, "\n");
    return s;
}

static void cond_nesting_is_bounded(void **state)
{
    (void)state;
    /* Each level reads the same condition: one error per extra reader,
     * but the depth error comes first. */
    char *s = nested(CUDAG__MAX_SUB_DEPTH + 1);
    load_fails(s, "error: bodies nested deeper than 16");
    free(s);
    s = nested(10000);
    load_fails(s, "error: nesting deeper than 64 levels");
    free(s);
}

/* A switch is bounded in its cases (before any body is made), and the C
 * builder refuses a 17th level. */
static void cond_switch_cases_are_bounded(void **state)
{
    (void)state;
    size_t cap = 1u << 20;
    char *s = malloc(cap);
    assert_non_null(s);
    size_t n = (size_t)snprintf(s, cap, HEAD "conditions: {w: {default: 0}}\n"
                                "nodes:\n  route:\n    switch: w\n    cases: [");
    for (unsigned i = 0; i < 100000; i++)
        n += (size_t)snprintf(s + n, cap - n, "%s{}", i ? "," : "");
    snprintf(s + n, cap - n, "]\n");
    load_fails(s, "t.yaml:12:12: error: switch node 'route' has 100000 cases "
                  "(at most 4096)");
    free(s);
}

static void cond_yaml_mistakes_are_precise(void **state)
{
    (void)state;
    load_fails(HEAD "conditions: {more: {default: 1}}\nnodes:\n"
               "  l: {while: mores, body: {a: {memset: it, value: 0}}}\n",
               "t.yaml:10:14: error: unknown condition 'mores' (did you mean "
               "'more'?)");
    load_fails(HEAD "conditions: {more: {default: 1}}\nnodes:\n"
               "  l: {while: less, body: {a: {memset: it, value: 0}}}\n",
               "t.yaml:10:14: error: unknown condition 'less' (declare it "
               "under 'conditions')");
    load_fails(HEAD "conditions: {more: {default: 1}}\nnodes:\n"
               "  l: {while: more, then: {a: {memset: it, value: 0}}}\n",
               "t.yaml:10:20: error: 'then' belongs to an if node, not to a "
               "while node ('l' has a 'body')");
    load_fails(HEAD "conditions: {more: {default: 1}}\nnodes:\n"
               "  l: {while: more, if: more, body: {}}\n",
               "t.yaml:10:3: error: node 'l' has more than one of 'while', "
               "'if' and 'switch'");
    load_fails(HEAD "conditions: {more: {default: 1}}\nnodes:\n"
               "  l: {while: more}\n",
               "t.yaml:10:3: error: while node 'l' needs 'body'");
    load_fails(HEAD "conditions: {w: {default: 1}}\nnodes:\n"
               "  l: {switch: w, cases: []}\n",
               "t.yaml:10:25: error: switch node 'l' has no cases");
    load_fails(HEAD "conditions: {w: {default: -1}}\nnodes: {}\n",
               "t.yaml:8:27: error: condition 'w': default -1 is out of range "
               "(0 to 4294967295)");
    load_fails(HEAD "conditions: {x: {}}\nnodes: {}\n",
               "t.yaml:8:14: error: condition 'x' has the name of a buffer");
    load_fails(HEAD "conditions: {c: {defualt: 1}}\nnodes: {}\n",
               "t.yaml:8:18: error: unknown key 'defualt' in a condition (did "
               "you mean 'default'?)");
    load_fails(HEAD "conditions: {more: {default: 1}}\nnodes:\n"
               "  l: {while: more, body: {}}\n",
               "t.yaml:10:3: error: the body 'l' of while node 'l' has no "
               "nodes");
}

/* ---- checks -------------------------------------------------------------- */

static void cond_checks_who_reads_and_sets(void **state)
{
    (void)state;
    /* A while loop nothing ends. */
    load_fails(HEAD "conditions: {more: {default: 1}}\nnodes:\n"
               "  l: {while: more, body: {a: {memset: it, value: 0}}}\n",
               "t.yaml:10:14: error: no kernel sets condition 'more': while "
               "node 'l' would run its body forever (its default is 1)");
    /* No default, no setter: undefined. */
    load_fails(HEAD "conditions: {c: {}}\nnodes:\n"
               "  l: {if: c, then: {a: {memset: it, value: 0}}}\n",
               "t.yaml:10:11: error: condition 'c' has no default and no "
               "kernel sets it: its value is undefined when if node 'l' "
               "runs");
    /* Two readers. */
    load_fails(HEAD "conditions: {c: {default: 0}}\nnodes:\n"
               "  l: {if: c, then: {a: {memset: it, value: 0}}}\n"
               "  m: {if: c, then: {a: {memset: it, value: 0}}}\n",
               "t.yaml:11:11: error: node 'm': condition 'c' is already read "
               "by node 'l' (at t.yaml:10:11); each conditional node needs a "
               "condition of its own");
    /* A setter where the handle does not reach. */
    load_fails(HEAD "conditions: {c: {default: 1}, d: {default: 1}}\nnodes:\n"
               "  out: {kernel: cond_count_i32, grid: 1, block: 32, args: [it, K, d]}\n"
               "  l:\n"
               "    if: c\n"
               "    then:\n"
               "      w:\n"
               "        while: d\n"
               "        body: {s: {kernel: cond_count_i32, grid: 1, block: 32, args: [it, K, d]}}\n",
               "t.yaml:10:67: error: node 'out' sets condition 'd' outside "
               "the graph of while node 'l.then.w': a kernel that sets it "
               "must run beside that node or inside its bodies");
    /* Arguments: a condition only for a cond parameter, and the reverse. */
    load_fails(HEAD "conditions: {c: {default: 1}}\nnodes:\n"
               "  k: {kernel: cond_count_i32, grid: 1, block: 32, args: [it, K, x]}\n"
               "  l: {if: c, then: {a: {memset: it, value: 0}}}\n",
               "t.yaml:10:65: error: node 'k': argument 'c' (cond) must be a "
               "condition, got buffer 'x'");
    load_fails(HEAD "conditions: {c: {default: 1}}\nnodes:\n"
               "  k: {kernel: cond_count_i32, grid: 1, block: 32, args: [it, K, 3]}\n"
               "  l: {if: c, then: {a: {memset: it, value: 0}}}\n",
               "t.yaml:10:65: error: node 'k': argument 'c' (cond) must be a "
               "condition, got integer 3");
    load_fails(HEAD "conditions: {c: {default: 1}}\nnodes:\n"
               "  k: {kernel: cond_count_i32, grid: 1, block: 32, args: [c, K, c]}\n"
               "  l: {if: c, then: {a: {memset: it, value: 0}}}\n",
               "t.yaml:10:58: error: node 'k': argument 'counter' (ptr) must "
               "be a buffer or null, got condition 'c'");
    load_fails(HEAD "conditions: {c: {default: 1}}\nnodes:\n"
               "  k: {kernel: cond_count_i32, grid: 1, block: 32, args: [it, K, cc]}\n",
               "t.yaml:10:65: error: unknown condition 'cc' (did you mean "
               "'c'?)");
    /* A programmatic edge needs kernels at both ends. */
    load_fails(HEAD "conditions: {c: {default: 0}}\nnodes:\n"
               "  l: {if: c, then: {a: {memset: it, value: 0}}}\n"
               "  k: {kernel: scale_f32, grid: 1, block: 64, args: [x, x, 1.0, N], after: {l: programmatic}}\n",
               "programmatic edge l -> k: both ends must be kernel nodes "
               "('l' is a conditional node)");

    /* Warnings: an unused condition, a branch that never changes, a loop
     * whose body never ends it. */
    tdiag d;
    cudag_graph *g;
    assert_int_equal(
        tload(HEAD "conditions: {c: {default: 1}, u: {}, more: {default: 1}}\n"
              "nodes:\n"
              "  l: {if: c, then: {a: {memset: it, value: 0}}}\n"
              "  s: {kernel: cond_count_i32, grid: 1, block: 32, args: [it, K, more], after: l}\n"
              "  w: {while: more, after: s, body: {a: {memset: it, value: 0}}}\n",
              &d, &g),
        CUDAG_OK);
    assert_diag_contains(&d, "t.yaml:10:11: warning: no kernel sets condition "
                             "'c': if node 'l' always runs its then body "
                             "(its default is 1)");
    assert_diag_contains(&d, "t.yaml:8:31: warning: condition 'u' is never "
                             "used");
    assert_diag_contains(&d, "t.yaml:12:14: warning: no kernel in the body of "
                             "while node 'w' sets condition 'more': once the "
                             "body runs, it runs forever");
    assert_int_equal(d.nwarn, 5);   /* and the unused buffers x, pick */
    cudag_graph_destroy(g);
}

/* ---- the C builder --------------------------------------------------------- */

static const cudag_param P_SCALE[] = {
    {"x", CUDAG_TYPE_PTR}, {"y", CUDAG_TYPE_PTR}, {"a", CUDAG_TYPE_F32},
    {"n", CUDAG_TYPE_I64}};
static const cudag_param P_COUNT[] = {
    {"counter", CUDAG_TYPE_PTR}, {"k", CUDAG_TYPE_I64}, {"c", CUDAG_TYPE_COND}};
static const cudag_param P_INDEX[] = {{"x", CUDAG_TYPE_PTR},
                                      {"c", CUDAG_TYPE_COND}};
static const cudag_dim3 G1 = {1, 1, 1}, B32 = {32, 1, 1};

#define N 64

/* x (N floats, 1.0), it and pick (i32), the kernels, and conditions more
 * (default 1) and which (no default). */
static cudag_graph *api_graph(void)
{
    cudag_graph *g;
    cudag_error e;
    tok(cudag_graph_create("t", &g, &e), &e);
    tok(cudag_add_module(g, "m", "/dev/null", &e), &e);
    tok(cudag_add_signature(g, "scale_f32", "m", NULL, P_SCALE, 4, 1, &e), &e);
    tok(cudag_add_signature(g, "cond_count_i32", "m", NULL, P_COUNT, 3, 1, &e),
        &e);
    tok(cudag_add_signature(g, "cond_index_i32", "m", NULL, P_INDEX, 2, 1, &e),
        &e);
    cudag_init one = {CUDAG_INIT_CONST, 1.0, 0, 0, 0};
    tok(cudag_add_buffer(g, "x", CUDAG_TYPE_F32, N, &one, &e), &e);
    tok(cudag_add_buffer(g, "it", CUDAG_TYPE_I32, 1, NULL, &e), &e);
    cudag_init two = {CUDAG_INIT_CONST, 2.0, 0, 0, 0};
    tok(cudag_add_buffer(g, "pick", CUDAG_TYPE_I32, 1, &two, &e), &e);
    tok(cudag_add_condition(g, "more", 1, &e), &e);
    tok(cudag_add_condition(g, "which", CUDAG_COND_NO_DEFAULT, &e), &e);
    return g;
}

static void scale(cudag_graph *g, const char *name, double a)
{
    cudag_arg args[] = {cudag_arg_buffer("x", 0), cudag_arg_buffer("x", 0),
                        cudag_arg_float(a), cudag_arg_int(N)};
    cudag_error e;
    tok(cudag_add_kernel(g, name, "scale_f32", G1, B32, 0, args, 4, &e), &e);
}

/* reset (it = 0) -> loop: while more { step: x *= 0.5 -> next: count to k }
 * -> choose (which = pick) -> route: switch which { case 0: x *= 3; case 1:
 * x *= 5; case 2: x *= 7 }. */
static cudag_graph *api_loop(int64_t k)
{
    cudag_graph *g = api_graph();
    cudag_error e;
    tok(cudag_add_memset(g, "reset", "it", 0, 1, 0, &e), &e);
    cudag_graph *body[3];
    tok(cudag_add_conditional(g, "loop", CUDAG_COND_WHILE, "more", 1, body, &e),
        &e);
    scale(body[0], "step", 0.5);
    cudag_arg count[] = {cudag_arg_buffer("it", 0), cudag_arg_int(k),
                         cudag_arg_cond("more")};
    tok(cudag_add_kernel(body[0], "next", "cond_count_i32", G1, B32, 0, count,
                         3, &e),
        &e);
    tok(cudag_add_edge(body[0], "step", "next", CUDAG_EDGE_PROGRAMMATIC, &e),
        &e);
    tok(cudag_add_edge(g, "reset", "loop", CUDAG_EDGE_FULL, &e), &e);
    cudag_arg idx[] = {cudag_arg_buffer("pick", 0), cudag_arg_cond("which")};
    tok(cudag_add_kernel(g, "choose", "cond_index_i32", G1, B32, 0, idx, 2, &e),
        &e);
    tok(cudag_add_edge(g, "loop", "choose", CUDAG_EDGE_FULL, &e), &e);
    tok(cudag_add_conditional(g, "route", CUDAG_COND_SWITCH, "which", 3, body,
                              &e),
        &e);
    scale(body[0], "a", 3.0);
    scale(body[1], "a", 5.0);
    scale(body[2], "a", 7.0);
    tok(cudag_add_edge(g, "choose", "route", CUDAG_EDGE_FULL, &e), &e);
    tok(cudag_check(g, NULL, &e), &e);
    return g;
}

static void cond_builder_makes_the_same_tree(void **state)
{
    (void)state;
    cudag_graph *g = api_loop(4);
    const cudag__node *route = &g->nodes[cudag__find_node(g, "route")];
    assert_string_equal(route->u.cnd.bodies[2]->nodes[0].name,
                        "route.case[2].a");
    assert_int_equal(g->topo.tree_nodes, 9);
    assert_int_equal(cudag_graph_node_count(route->u.cnd.bodies[0]), 1);
    cudag_graph_destroy(g);
}

static void host_fn_unused(void *user) { (void)user; }

/* Event and host nodes have no place in a conditional body (the driver's
 * rule): the checker says so at the node, naming its owner, once each. */
static void cond_body_refuses_kinds_the_driver_refuses(void **state)
{
    (void)state;
    cudag_graph *g = api_graph();
    cudag_error e;
    cudag_graph *body[1];
    tok(cudag_add_conditional(g, "loop", CUDAG_COND_WHILE, "more", 1, body, &e),
        &e);
    cudag_arg count[] = {cudag_arg_buffer("it", 0), cudag_arg_int(3),
                         cudag_arg_cond("more")};
    tok(cudag_add_kernel(body[0], "next", "cond_count_i32", G1, B32, 0, count,
                         3, &e),
        &e);
    int event_stand_in;
    tok(cudag_add_event_record(body[0], "rec", &event_stand_in, &e), &e);
    tok(cudag_add_host(body[0], "call", host_fn_unused, NULL, &e), &e);
    tdiag d;
    memset(&d, 0, sizeof d);
    cudag_options o = topts(&d, NULL);
    assert_int_equal(cudag_check(g, &o, &e), CUDAG_EKEY);
    assert_int_equal(d.nerr, 2);
    assert_diag_contains(&d, "node 'loop.rec': an event_record node cannot be "
                             "in the body of 'loop' (the driver allows kernel, "
                             "memset, memcpy, child-graph and conditional "
                             "nodes there)");
    assert_diag_contains(&d, "node 'loop.call': a host node cannot be in the "
                             "body of 'loop'");
    cudag_graph_destroy(g);
}

static void cond_builder_refuses_what_is_wrong(void **state)
{
    (void)state;
    long live0 = cudag__alloc_live();
    cudag_graph *g = api_graph(), *body[2] = {(cudag_graph *)1,
                                               (cudag_graph *)1},
                *again[1];
    cudag_error e;
    long live = cudag__alloc_live();
    assert_int_equal(cudag_add_conditional(g, "l", CUDAG_COND_WHILE, "more", 2,
                                           body, &e),
                     CUDAG_EINVAL);
    assert_string_equal(e.message, "cudag_add_conditional: while node 'l' "
                                   "takes 1 body, not 2");
    assert_null(body[0]);
    assert_int_equal(cudag_add_conditional(g, "l", CUDAG_COND_SWITCH, "more",
                                           4097, NULL, &e),
                     CUDAG_EINVAL);
    assert_int_equal(cudag_add_conditional(g, "l", CUDAG_COND_IF, "nope", 1,
                                           body, &e),
                     CUDAG_EUNKNOWN);
    assert_string_equal(e.message, "node 'l': unknown condition 'nope'");
    assert_int_equal(cudag_add_conditional(g, "l", (cudag_cond_type)7, "more",
                                           1, body, &e),
                     CUDAG_EINVAL);
    assert_int_equal(g->nnodes, 0);
    assert_int_equal(g->nsubs, 0);
    assert_int_equal(cudag__alloc_live(), live);
    tok(cudag_add_conditional(g, "l", CUDAG_COND_IF, "more", 2, body, &e), &e);
    assert_int_equal(cudag_add_conditional(g, "l", CUDAG_COND_IF, "more", 1,
                                           again, &e),
                     CUDAG_EDUP);
    assert_null(again[0]);
    assert_int_equal(g->nsubs, 2);
    /* Buffers, kernels and conditions are the root's. */
    assert_int_equal(cudag_add_buffer(body[0], "y", CUDAG_TYPE_F32, 4, NULL,
                                      &e),
                     CUDAG_EINVAL);
    assert_string_equal(e.message, "cudag_add_buffer: graph 'l.then' is a "
                                   "body of graph 't': add it to graph 't'");
    assert_int_equal(cudag_add_condition(body[1], "z", 0, &e), CUDAG_EINVAL);
    assert_int_equal(cudag_add_condition(g, "z", 1LL << 32, &e), CUDAG_ERANGE);
    assert_int_equal(cudag_bind_buffer(body[0], "x", 64, &e), CUDAG_EINVAL);
    /* An edge stays inside its body. */
    scale(body[0], "a", 1.0);
    assert_int_equal(cudag_add_edge(body[0], "a", "l", CUDAG_EDGE_FULL, &e),
                     CUDAG_EUNKNOWN);
    assert_string_equal(e.message, "edge a -> l: unknown node 'l' in body "
                                   "'l.then'");
    /* A buffer added to the root later is seen by the bodies. */
    tok(cudag_add_buffer(g, "late", CUDAG_TYPE_F32, 4, NULL, &e), &e);
    assert_int_equal(body[1]->nbuffers, g->nbuffers);
    tok(cudag_add_memset(body[1], "b", "late", 0, 4, 0.0, &e), &e);
    /* A body is neither instantiated, drawn nor planned on its own. */
    cudag_exec *x = (cudag_exec *)1;
    assert_int_equal(cudag_instantiate(body[0], NULL, &x, &e), CUDAG_EINVAL);
    assert_null(x);
    char *text;
    assert_int_equal(cudag_dot(body[0], 0, &text, &e), CUDAG_EINVAL);
    assert_int_equal(cudag_plan(body[0], NULL, NULL, &e), CUDAG_EINVAL);
    /* Checking a body checks its tree. */
    tdiag d;
    cudag_options o = topts(&d, NULL);
    assert_int_equal(cudag_check(body[0], &o, &e), CUDAG_OK);
    assert_true(g->checked);
    assert_true(body[1]->checked);
    /* A change inside a body un-checks the root. */
    scale(body[0], "b", 1.0);
    assert_false(g->checked);

    /* 16 levels of bodies, not 17. */
    cudag_graph *at = g;
    unsigned depth = 0;
    int rc;
    char name[32];
    for (;; depth++) {
        cudag_graph *inner;
        snprintf(name, sizeof name, "d%u", depth);
        if ((rc = cudag_add_conditional(at, name, CUDAG_COND_IF, "more", 1,
                                        &inner, &e)) != CUDAG_OK)
            break;
        at = inner;
        assert_true(depth < 10000);
    }
    assert_int_equal(rc, CUDAG_ELIMIT);
    assert_int_equal(depth, CUDAG__MAX_SUB_DEPTH);
    assert_non_null(strstr(e.message, "bodies nested deeper than 16"));
    cudag_graph_destroy(g);
    assert_int_equal(cudag__alloc_live(), live0);
}

/* Every allocation of a builder call fails in turn: the graph is left as it
 * was, and nothing leaks. */
static void cond_builder_survives_oom(void **state)
{
    (void)state;
    for (long n = 1;; n++) {
        long live = cudag__alloc_live();
        cudag_graph *g = api_graph(), *body[3];
        cudag_error e;
        cudag__alloc_fail_after(n);
        int rc = cudag_add_conditional(g, "r", CUDAG_COND_SWITCH, "which", 3,
                                       body, &e);
        long made = cudag__alloc_fail_after(-1);
        if (rc != CUDAG_OK) {
            assert_int_equal(rc, CUDAG_ENOMEM);
            assert_int_equal(g->nnodes, 0);
            assert_int_equal(g->nsubs, 0);
            assert_null(body[0]);
        }
        cudag_graph_destroy(g);
        assert_int_equal(cudag__alloc_live(), live);
        if (made < n)
            break;
    }
}

/* ---- output ---------------------------------------------------------------- */

static void cond_dot_and_plan_show_bodies(void **state)
{
    (void)state;
    cudag_graph *g = load(LOOP);
    char *dot;
    cudag_error e;
    tok(cudag_dot(g, 0, &dot, &e), &e);
    assert_non_null(strstr(dot, "compound=true"));
    assert_non_null(strstr(dot, "n1 [label=\"loop\\nwhile more\", shape=hexagon"));
    assert_non_null(strstr(dot, "subgraph \"cluster_body_3\" {\n    label=\"loop: while more\";"));
    assert_non_null(strstr(dot, "    n3 [label=\"loop.step\\nscale_f32"));
    assert_non_null(strstr(dot, "n1 -> n3 [lhead=\"cluster_body_3\", style=dashed"));
    assert_non_null(strstr(dot, "n3 -> n4 [style=\"bold,dashed\""));
    cudag_free(dot);
    char *plan;
    cudag_plan_info pi;
    tok(cudag_plan(g, &pi, &plan, &e), &e);
    assert_int_equal(pi.nodes, 5);
    assert_int_equal(pi.kernel_nodes, 2);
    assert_int_equal(pi.conditional_nodes, 1);
    assert_int_equal(pi.bodies, 1);
    assert_int_equal(pi.depth, 3);
    assert_string_equal(plan,
                        "graph: t\n"
                        "nodes: 5 (2 kernel, 2 memset, 0 memcpy, 1 conditional, 0 gemm, 0 graph)\n"
                        "edges: 3 (2 full, 1 programmatic, 0 launch_order)\n"
                        "depth: 3\n"
                        "width: 1\n"
                        "buffers: 3 (264 bytes, 264 B)\n"
                        "schedule:\n"
                        "level 0: reset\n"
                        "level 1: loop\n"
                        "level 2: pick_next\n"
                        "body loop: runs again and again while condition "
                        "'more' is not 0; decided on the device\n"
                        "  level 0: loop.step\n"
                        "  level 1: loop.next\n");
    cudag_free(plan);
    cudag_graph_destroy(g);
}

/* ---- the CUgraph, on the fake driver --------------------------------------- */

static cudag_exec *instantiate(const cudag_graph *g, unsigned flags)
{
    cudag_exec_options o;
    memset(&o, 0, sizeof o);
    o.size = sizeof o;
    o.flags = flags;
    cudag_exec *x;
    cudag_error e;
    tok(cudag_instantiate(g, &o, &x, &e), &e);
    return x;
}

static void read_back(cudag_exec *x, int *it, float *x0)
{
    cudag_error e;
    tok(cudag_exec_read(x, "it", it, sizeof *it, &e), &e);
    float xs[N];
    tok(cudag_exec_read(x, "x", xs, sizeof xs, &e), &e);
    *x0 = xs[0];
}

static void cond_runs_loops_and_cases_on_the_driver(void **state)
{
    (void)state;
    fake_reset();
    cudag_graph *g = api_loop(4);
    cudag_exec *x = instantiate(g, 0);
    /* Two handles, each made in the graph that holds its node; the body's
     * counter kernel got the loop's handle. */
    assert_int_equal(F.conds[0].graph, F.last_graph);
    assert_int_equal(F.conds[0].flags, CU_GRAPH_COND_ASSIGN_DEFAULT);
    assert_int_equal(F.conds[0].dflt, 1);
    assert_int_equal(F.conds[1].flags, 0);
    const fake_node *loop = F.last_graph->nodes[1];
    assert_int_equal(loop->type, CU_GRAPH_NODE_TYPE_CONDITIONAL);
    assert_int_equal(loop->cnd.type, CU_GRAPH_COND_TYPE_WHILE);
    const fake_graph *body = (const fake_graph *)loop->body[0];
    assert_int_equal(body->nnodes, 2);
    assert_int_equal(body->nodes[1]->vals[2], FAKE_COND_BASE);
    assert_int_equal(body->edges[0].ed.type,
                     CU_GRAPH_DEPENDENCY_TYPE_PROGRAMMATIC);
    cudag_error e;
    tok(cudag_exec_launch(x, 1, &e), &e);
    int it;
    float x0;
    read_back(x, &it, &x0);
    /* 4 iterations of x *= 0.5, then case 2: x *= 7. */
    assert_int_equal(it, 4);
    assert_true(x0 == 1.0f / 16 * 7);
    assert_int_equal(F.body_runs, 5);
    /* The default applies again at the next launch. */
    tok(cudag_exec_launch(x, 1, &e), &e);
    read_back(x, &it, &x0);
    assert_int_equal(it, 4);
    assert_true(x0 == 49.0f / 256);
    /* A new starting value for later launches: 0 skips the loop's body. */
    tok(cudag_exec_set_condition(x, "more", 0, &e), &e);
    tok(cudag_exec_launch(x, 1, &e), &e);
    read_back(x, &it, &x0);
    assert_int_equal(it, 0);
    assert_true(x0 == 49.0f / 256 * 7);
    tok(cudag_exec_set_condition(x, "more", 1, &e), &e);
    tok(cudag_exec_launch(x, 1, &e), &e);
    read_back(x, &it, &x0);
    assert_int_equal(it, 4);
    /* Mistakes leave the exec as it was. */
    assert_int_equal(cudag_exec_set_condition(x, "nope", 1, &e),
                     CUDAG_EUNKNOWN);
    assert_int_equal(cudag_exec_set_condition(x, "more", -1, &e),
                     CUDAG_ERANGE);
    cudag_arg a = cudag_arg_cond("which");
    assert_int_equal(cudag_exec_set_arg(x, "loop.next", 2, &a, &e),
                     CUDAG_ENOTSUP);
    /* Body nodes are updated like any: by full name, or when a buffer
     * moves. */
    a = cudag_arg_int(2);
    tok(cudag_exec_set_arg(x, "loop.next", 1, &a, &e), &e);
    assert_int_equal(body->nodes[1]->vals[1], 2);
    static float other[N];
    tok(cudag_exec_rebind_buffer(x, "x", (uint64_t)(uintptr_t)other, &e), &e);
    assert_int_equal(body->nodes[0]->vals[0], (uint64_t)(uintptr_t)other);
    cudag_exec_destroy(x);
    cudag_graph_destroy(g);
    assert_int_equal(fake_live(), 0);
}

static void cond_yaml_if_else_on_the_driver(void **state)
{
    (void)state;
    fake_reset();
    cudag_graph *g = load(
        HEAD
        "conditions: {ok: {}}\n"
        "nodes:\n"
        "  test: {kernel: cond_lt_f32, grid: 1, block: 32, args: [x, 0.5, ok]}\n"
        "  check:\n"
        "    if: ok\n"
        "    after: test\n"
        "    then: {a: {memset: it, value: 11}}\n"
        "    else: {b: {memset: it, value: 22}}\n");
    cudag_exec *x = instantiate(g, 0);
    cudag_error e;
    tok(cudag_exec_launch(x, 1, &e), &e);
    int it;
    float x0;
    read_back(x, &it, &x0);
    assert_int_equal(it, 22);   /* x[0] = 1 is not < 0.5 */
    float small[N] = {0.25f};
    tok(cudag_exec_write(x, "x", small, sizeof small, &e), &e);
    tok(cudag_exec_launch(x, 1, &e), &e);
    read_back(x, &it, &x0);
    assert_int_equal(it, 11);
    cudag_exec_destroy(x);
    cudag_graph_destroy(g);
    assert_int_equal(fake_live(), 0);
}

/* --no-pdl (CUDAG_NO_PDL) builds a body's programmatic edges full too. */
static void cond_no_pdl_reaches_bodies(void **state)
{
    (void)state;
    fake_reset();
    cudag_graph *g = api_loop(2);
    cudag_exec *x = instantiate(g, CUDAG_NO_PDL);
    const fake_graph *body = (const fake_graph *)F.last_graph->nodes[1]->body[0];
    assert_int_equal(body->nedges, 1);
    assert_int_equal(body->edges[0].ed.type, 0);
    assert_int_equal(body->edges[0].ed.from_port, 0);
    cudag_exec_destroy(x);
    cudag_graph_destroy(g);
    assert_int_equal(fake_live(), 0);
}

/* The other ways to replay (replay.c): a body runs only inside a graph, so
 * the stream ways are refused naming the node; the two variant graphs run
 * the loop and the case like the exec's own, with the exec's starting
 * values, and cudag_exec_set_condition rebuilds them with the new one. */
static void cond_replays_as_graphs_only(void **state)
{
    (void)state;
    fake_reset();
    cudag_graph *g = api_loop(4);
    cudag_exec *x = instantiate(g, 0);
    cudag_error e;
    for (int how = CUDAG_REPLAY_STREAM; how <= CUDAG_REPLAY_STREAM_PDL; how++) {
        assert_int_equal(cudag_exec_prepare(x, (cudag_replay)how, &e),
                         CUDAG_ENOTSUP);
        assert_non_null(strstr(e.message, "node 'loop' is a conditional node, "
                                          "which runs only inside a graph"));
        assert_int_equal(cudag_exec_replay(x, (cudag_replay)how, 1, &e),
                         CUDAG_ENOTSUP);
    }
    assert_int_equal(F.nlaunched, 0);
    static float ones[N];
    for (int i = 0; i < N; i++)
        ones[i] = 1.0f;
    const cudag_replay graphs[] = {CUDAG_REPLAY_GRAPH_FULL, CUDAG_REPLAY_GRAPH,
                                   CUDAG_REPLAY_GRAPH_SERIAL};
    int it;
    float x0;
    for (size_t i = 0; i < sizeof graphs / sizeof *graphs; i++) {
        tok(cudag_exec_write(x, "x", ones, sizeof ones, &e), &e);
        tok(cudag_exec_replay(x, graphs[i], 1, &e), &e);
        tok(cudag_exec_sync(x, &e), &e);
        read_back(x, &it, &x0);
        assert_int_equal(it, 4);
        assert_true(x0 == 1.0f / 16 * 7);
    }
    tok(cudag_exec_set_condition(x, "more", 0, &e), &e);
    assert_null(x->serial.gexec);
    tok(cudag_exec_write(x, "x", ones, sizeof ones, &e), &e);
    tok(cudag_exec_replay(x, CUDAG_REPLAY_GRAPH_SERIAL, 1, &e), &e);
    tok(cudag_exec_sync(x, &e), &e);
    read_back(x, &it, &x0);
    assert_int_equal(it, 0);
    assert_true(x0 == 7.0f);
    cudag_exec_destroy(x);
    cudag_graph_destroy(g);
    assert_int_equal(fake_live(), 0);
}

/* A driver without conditional nodes, or too old for a kind of them: the
 * error names the node. */
static void cond_missing_driver_support_names_the_node(void **state)
{
    (void)state;
    fake_reset();
    cudag_graph *g = api_loop(2);
    cudag_exec *x = (cudag_exec *)1;
    cudag_error e;
    F.no_conditional = 1;
    assert_int_equal(cudag_instantiate(g, NULL, &x, &e), CUDAG_ECUDA);
    assert_null(x);
    assert_non_null(strstr(e.message, "cuGraphAddNode: while node 'loop' (the "
                                      "driver or device may lack conditional "
                                      "nodes)"));
    assert_int_equal(fake_live(), 0);
    fake_reset();
    F.version = 12040;
    assert_int_equal(cudag_instantiate(g, NULL, &x, &e), CUDAG_ENOTSUP);
    assert_string_equal(e.message, "node 'route': this CUDA driver (12.4) has "
                                   "no switch nodes (they need 12.8 or newer)");
    assert_int_equal(fake_live(), 0);
    cudag_graph_destroy(g);
}

/* Every driver call from instantiation to destruction fails in turn: the
 * failure is reported with the call's name, and nothing is left. */
static void cond_survives_every_driver_failure(void **state)
{
    (void)state;
    int failures = 0;
    bool handle = false, add = false;
    for (long n = 1;; n++) {
        fake_reset();
        cudag_graph *g = api_loop(3);
        fake_fail_at(n);
        cudag_exec *x = NULL;
        cudag_error e;
        char msg[1024] = "";
        int rc = cudag_instantiate(g, NULL, &x, &e);
        if (rc != CUDAG_OK)
            snprintf(msg, sizeof msg, "%s", e.message);
        if (x && rc == CUDAG_OK &&
            (rc = cudag_exec_set_condition(x, "more", 0, &e)) != CUDAG_OK)
            snprintf(msg, sizeof msg, "%s", e.message);
        if (x && rc == CUDAG_OK && (rc = cudag_exec_launch(x, 1, &e)) != CUDAG_OK)
            snprintf(msg, sizeof msg, "%s", e.message);
        long before = F.calls;
        const char *call = F.failed;
        cudag_exec_destroy(x);
        bool hit = call != NULL;
        if (hit && n <= before && rc != CUDAG_OK) {
            failures++;
            handle |= strcmp(call, "cuGraphConditionalHandleCreate") == 0;
            add |= strcmp(call, "cuGraphAddNode") == 0;
            if (!strstr(msg, call))
                print_error("call %ld (%s): message '%s'\n", n, call, msg);
            assert_non_null(strstr(msg, call));
        }
        int live = fake_live();
        if (hit && strcmp(call, "cuCtxPopCurrent") == 0)
            live -= F.pushed;
        if (live != 0)
            print_error("call %ld (%s) leaked %d objects\n", n, call, live);
        assert_int_equal(live, 0);
        cudag_graph_destroy(g);
        if (!hit)
            break;
        assert_true(n < 100000);
    }
    assert_true(handle && add);
    print_message("# %d failing driver calls, each reported and cleaned up\n",
                  failures);
    fake_reset();
}

static void cond_survives_every_allocation_failure(void **state)
{
    (void)state;
    for (long n = 1;; n++) {
        fake_reset();
        cudag_graph *g = api_loop(3);
        cudag_exec *x = NULL;
        cudag_error e;
        cudag__alloc_fail_after(n);
        int rc = cudag_instantiate(g, NULL, &x, &e);
        int rc2 = x ? cudag_exec_set_condition(x, "more", 2, &e) : CUDAG_OK;
        long made = cudag__alloc_fail_after(-1);
        if (rc != CUDAG_OK) {
            assert_int_equal(rc, CUDAG_ENOMEM);
            assert_null(x);
        }
        if (rc2 != CUDAG_OK)
            assert_int_equal(rc2, CUDAG_ENOMEM);
        cudag_exec_destroy(x);
        assert_int_equal(fake_live(), 0);
        cudag_graph_destroy(g);
        if (made < n)
            break;
    }
    fake_reset();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(cond_while_body_is_a_subgraph),
        cmocka_unit_test(cond_if_else_and_switch_name_their_bodies),
        cmocka_unit_test(cond_nests_and_keeps_references_inside_bodies),
        cmocka_unit_test(cond_nesting_is_bounded),
        cmocka_unit_test(cond_switch_cases_are_bounded),
        cmocka_unit_test(cond_yaml_mistakes_are_precise),
        cmocka_unit_test(cond_checks_who_reads_and_sets),
        cmocka_unit_test(cond_builder_makes_the_same_tree),
        cmocka_unit_test(cond_builder_refuses_what_is_wrong),
        cmocka_unit_test(cond_builder_survives_oom),
        cmocka_unit_test(cond_dot_and_plan_show_bodies),
        cmocka_unit_test(cond_runs_loops_and_cases_on_the_driver),
        cmocka_unit_test(cond_yaml_if_else_on_the_driver),
        cmocka_unit_test(cond_no_pdl_reaches_bodies),
        cmocka_unit_test(cond_replays_as_graphs_only),
        cmocka_unit_test(cond_missing_driver_support_names_the_node),
        cmocka_unit_test(cond_body_refuses_kinds_the_driver_refuses),
        cmocka_unit_test(cond_survives_every_driver_failure),
        cmocka_unit_test(cond_survives_every_allocation_failure),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    fake_finish();
    return rc;
}
