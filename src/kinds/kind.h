/* kind.h — node kinds behind one table.  Each kind (kernel, memset, memcpy,
 * conditional, gemm, capture, host, child graph; the two event kinds share
 * one) lives in one file, src/kinds/<name>.c, that fills one
 * cudag__kind_ops; the stages (front/nodes.c, check/, build/build.c,
 * exec/, show/) loop over nodes and call through cudag__kind(), never
 * switching on a node's kind.
 * docs/architecture.md shows where this sits in the pipeline. */
#ifndef CUDAG_KIND_H
#define CUDAG_KIND_H

#include "cudag.h"
#include "lib/driver.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct cudag__pos cudag__pos;
typedef struct cudag__sb cudag__sb;
typedef struct cudag__code cudag__code;
typedef struct cudag__gpu cudag__gpu;
typedef struct cudag__keep cudag__keep;
typedef struct cudag__launch cudag__launch;
typedef struct cudag__launches cudag__launches;
typedef struct cudag__accset cudag__accset;
typedef struct cudag__node cudag__node;
typedef struct cudag__edge cudag__edge;
typedef struct cudag__checker cudag__checker;
typedef struct cudag__lower cudag__lower;
typedef struct cudag__pending cudag__pending;

/* Called by edge_ends (below) for each node an edge reaches: node n of
 * graph h (the node's own graph, or a sub-graph built inline).  Returns false
 * to stop. */
typedef bool (*cudag__end_fn)(void *user, const cudag_graph *h, uint32_t n);

/* What the build stage hands a kind's build steps.  A field added here for a
 * new kind leaves the other kinds' code as it is. */
typedef struct cudag__build_ctx cudag__build_ctx;
struct cudag__build_ctx {
    const cudag__gpu *gpu;      /* its context is current */
    const cudag_graph *g;       /* checked; a sub-graph while one is built */
    cudag__code *code;          /* the loaded kernels; NULL when adding */
    const CUdeviceptr *bufs;    /* per buffer: its device address */
    const cudag__launches *l;   /* per node of g: launch descriptions; NULL
                                   while describing */
    cudag__keep **keep;         /* while adding: the built graph's list of
                                   what its nodes use (build.h); NULL
                                   otherwise */
    /* Per condition of the root: its handle once the graph that holds its
     * conditional node was created (kinds/cond.c's prepare step), which the
     * kernels that set it receive.  NULL while describing. */
    CUgraphConditionalHandle *handles;
    /* Per condition: the default value to build with (an exec's
     * cudag_exec_set_condition), CUDAG_COND_NO_DEFAULT for none, or NULL
     * for the declared ones. */
    const int64_t *starts;
    /* The build's own step for a sub-graph: adds the nodes and edges of
     * `sub` (a sub-graph of b->g) to `graph`, which the driver made for it,
     * recursing into its own sub-graphs.  Driver failures name the node. */
    int (*build_sub)(const cudag__build_ctx *b, const cudag_graph *sub,
                     CUgraph graph, cudag_error *err);
    /* Where the nodes of the whole tree get their driver handles (flat
     * numbering, ir/graph.h topo.tree). */
    CUgraphNode *tree_nodes;
};

/*
 * One node kind: its name, the YAML that selects it, and every step of a
 * node's life that depends on the kind.  The contract for a new kind's
 * author:
 *
 * - Write src/kinds/<name>.c holding every kind-specific step below, with a
 *   `const cudag__kind_ops cudag__kind_<name>` filled in; add its IR body to
 *   the union in cudag__node (ir/graph.h), its value to cudag_node_kind
 *   (cudag.h, appended: the values are ABI), and one line to the table in
 *   kinds/kind.c.  Tests: tests/test_kind_<name>.c or the stage suites, bad inputs
 *   in tests/data/bad/ with their exact messages, golden outputs
 *   regenerated (tests/golden/golden.py --update).
 * - A kind file calls only below itself (kinds/checker.c and the folders
 *   gpu/, yaml/, code/, ir/, lib/, base/; the driver through gpu->drv).  It never calls a stage: a step that needs one (a kind whose
 *   node holds a sub-graph builds it through the same front end, checker and
 *   build) gets it as a function pointer added to the context it is handed
 *   (cudag__build_ctx, cudag__checker, cudag__lower), so that no two files
 *   call each other (tests/layers checks it).
 * - Every step reports through the error value or diagnostic sink it is
 *   given, with the node's most precise position; none prints.  What a
 *   node holds lives in its graph's arena and goes with the graph: there is
 *   no per-node free.  A kind that needs more (a sub-graph of its own) adds
 *   it to a list its graph owns and frees, so that ir/graph.c, below
 *   the kinds, never calls up into one.
 * - A NULL step means "nothing to do" where the field says so.
 *
 * Sub-graphs.  A node may hold graphs of its own (a conditional node's
 * bodies; a child-graph node's file, kinds/child.c): cudag__subgraph_new
 * (ir/graph.c) makes each as a cudag_graph with its own nodes, edges and
 * names, sharing the root's variables (a child file binds its own over
 * them, yaml/lowering.h), modules, kernels, buffers, conditions and
 * arena, owned by the node's graph (g->subs) and freed with it.  Its
 * nodes' full names start with its prefix ("loop.").  The stages reach it through the kind:
 * - front end: the kind's read_yaml lowers a body map with lw->lower_sub
 *   (front/nodes.c: repetition, groups, `after`, references — which stay inside
 *   the sub-graph — and every kind again);
 * - checker: the kind's check calls c->check_sub, which checks the
 *   sub-graph's nodes (through their kinds), edges and cycles with the same
 *   sink and buffer counts;
 * - build: the kind's add creates the driver node, then fills each driver
 *   graph it got with b->build_sub (build/build.c), which recurses the same way;
 * - show/dot.c and show/plan.c walk g->subs themselves and ask the owning kind for a
 *   sub-graph's label (body_label).
 * A checked root numbers its whole tree flat (ir/graph.h, topo.tree): launch
 * descriptions, edge kinds and driver node handles are arrays over it, and
 * the exec steps (repoint, set_arg) take that flat index.
 */
typedef struct cudag__kind_ops {
    cudag_node_kind kind;
    /* The YAML key that selects the kind ("kernel") and the word messages
     * use ("a kernel node", "kernel, memset or memcpy"). */
    const char *name;
    const char *what;           /* "a kernel node": unknown keys are in it */
    /* Every key a body of this kind may have, its own name and "after"
     * included. */
    const char *const *keys;
    size_t nkeys;
    /* The YAML keys that select the kind when they are not just its name
     * ("while", "if", "switch" for a conditional node); NULL: `name`. */
    const char *const *select;
    size_t nselect;
    /* May the node be an end of a programmatic or launch-order edge?  (Its
     * driver node has the ports CU_GRAPH_KERNEL_NODE_PORT_*.) */
    bool pdl_end;
    /* For a kind that is not a pdl_end but runs kernels of its own (a
     * library's, in a child graph): why such an edge into or out of it is
     * built as a full edge.  The checker warns with it at the edge, where
     * otherwise the edge is an error; the build makes the edge full. */
    const char *pdl_full;
    /* For a kind whose node may be built inline, its nodes added to the
     * graph that holds it (a child graph with a programmatic edge): when
     * node n of h is built so, calls fn for each of its first nodes (last
     * false: those an edge into n then reaches) or its last ones, and
     * returns 1, or 0 as soon as fn returns false; -1, calling nothing,
     * when n is built as one node.  The stages ask cudag__edge_reach.
     * NULL: never built inline. */
    int (*edge_ends)(const cudag_graph *h, uint32_t n, bool last,
                     cudag__end_fn fn, void *user);
    /* May the node be inside a conditional body?  The driver allows
     * kernels, memsets, memcpys, empty nodes, child graphs and conditionals
     * there (CUDA_CONDITIONAL_NODE_PARAMS); the checker refuses the rest. */
    bool in_body;
    /* Where cudag_plan counts this kind: offsetof(cudag_plan_info, …). */
    size_t plan_count;

    /* ---- front end (nodes.c) ---- */
    /* NULL for a kind only the C API makes (capture, events, host): YAML
     * cannot name it, and its keys are unused.  Otherwise: lowers the body p->body (its keys already checked against `keys`)
     * into lw->g->nodes[p->node], whose name, position, group and kind are
     * set.  Reports every problem to lw (cudag__lerr) and leaves fields it
     * could not lower in a state the checker never sees (a graph with
     * lowering errors is not checked). */
    void (*read_yaml)(cudag__lower *lw, const cudag__pending *p);

    /* ---- checker (check.c) ---- */
    /* Checks node n of c->g against the graph's buffers and signatures
     * (ranges, types, launch limits), reporting through cudag__check_fail,
     * and counts each buffer it uses in c->uses[].  Reads only. */
    void (*check)(cudag__checker *c, const cudag__node *n);
    /* Whole-tree checks of what this kind's nodes share, once per checked
     * root after every node of its tree was checked (c->g is the root): the
     * conditional kind's conditions (one reader each, setters in reach,
     * defaults), with c->cond_scratch.  Reports through c.  NULL: nothing. */
    void (*check_tree)(cudag__checker *c);

    /* Why node n, as the graph knows it before any GPU, will not wait for
     * a programmatic edge into it (griddepcontrol.wait): a sentence into
     * why[cap], or why left empty when it will, or when only the loaded
     * code can tell.  Asked of pdl_end kinds; NULL: never says. */
    void (*pdl_check)(const cudag_graph *g, const cudag__node *n, char *why,
                      size_t cap);

    /* Appends to *s the bytes of each buffer node n of g may read and may
     * write (accset.h; src/check/access.c asks).  A kind that holds sub-graphs
     * adds theirs with s->add_graph.  Reads only; the graph is checked
     * without errors.  NULL: the node touches no buffer (or only ones the
     * graph cannot see: a capture's, a host callback's). */
    void (*access)(cudag__accset *s, const cudag_graph *g,
                   const cudag__node *n);

    /* ---- build (build.c) ---- */
    /* The signature whose code the node launches, and where the node names
     * it (*pos, or the node's position); CUDAG__NONE when the node runs no
     * kernel.  NULL for kinds that never do.  The build loads exactly the
     * code nodes name; exec updates refuse code that was not loaded. */
    uint32_t (*code)(const cudag__node *n, cudag__pos *pos);
    /* Parameter slots its launch description needs (cudag__launch.params);
     * NULL for none. */
    uint32_t (*launch_slots)(const cudag__node *n);
    /* Fills *L, whose params/vals/pbuf/poff point at launch_slots(n) slots,
     * from node n (b->l is NULL).  NULL when the kind has no launch
     * description.  On error, err names the node. */
    int (*describe)(const cudag__build_ctx *b, uint32_t n, cudag__launch *L,
                    cudag_error *err);
    /* Why the node's loaded code cannot be the downstream end of a
     * programmatic edge (a sentence into why[cap]), or leaves why empty
     * when it can.  Only asked of pdl_end kinds on a device that has PDL;
     * NULL: always can. */
    void (*pdl_wait)(const cudag__build_ctx *b, const cudag__node *n,
                     char *why, size_t cap);
    /* Called for each node of a graph before any of its nodes is added to
     * `graph` (the conditional node creates its condition's handle there,
     * so that the kernels added before it can take it).  NULL: nothing. */
    int (*prepare)(const cudag__build_ctx *b, uint32_t n, CUgraph graph,
                   cudag_error *err);
    /* Adds node n to `graph` with no dependencies (the build adds the
     * edges), its handle into *out.  Driver failures name the node and
     * carry its position. */
    int (*add)(const cudag__build_ctx *b, uint32_t n, CUgraph graph,
               CUgraphNode *out, cudag_error *err);

    /* ---- instantiated graph (exec/) ---- */
    /* May node n run forever (a while node: a wait that runs out names
     * it as one that may loop)?  NULL: never. */
    bool (*may_loop)(const cudag__node *n);
    /* n is the node's index in the tree's flat numbering (x->g->topo.tree;
     * cudag__tree_node(x->g, n) is the node).
     * Re-points node n of x at x->bufs[] after buffer `buf` moved, in the
     * instantiated graph; a node that does not use `buf` is left alone.
     * With err NULL it is a best-effort undo after another node failed.
     * NULL: the kind uses no buffer. */
    int (*repoint)(cudag_exec *x, uint32_t n, uint32_t buf, cudag_error *err);
    /* Sets argument `index` of node n of x to *a (a NULL a is refused) in
     * the instantiated graph, keeping the old value when the driver
     * refuses.  NULL: the kind has no arguments (cudag_exec_set_arg says
     * the node is not a kernel node). */
    int (*set_arg)(cudag_exec *x, uint32_t n, unsigned index,
                   const cudag_arg *a, cudag_error *err);
    /* Runs node n of x as one operation on x's stream, as it stands in the
     * instantiated graph (x->launch, x->bufs): the replays without a graph
     * (cudag_exec_replay, replay.c).  pdl: launch with programmatic stream
     * serialization (asked only of pdl_end kinds).  Called once per node and
     * replay while timing: only the driver call, nothing else.  Driver
     * failures name the node and carry its position.  NULL for a kind that
     * runs only inside a graph (a conditional body, a child graph): the
     * stream ways are then refused with CUDAG_ENOTSUP naming the node. */
    int (*launch)(const cudag_exec *x, uint32_t n, bool pdl, cudag_error *err);

    /* ---- output (dot.c) ---- */
    /* Appends what the node's DOT label shows after its name (escaped with
     * cudag__sb_dot_escape), without the closing quote. */
    void (*dot_label)(cudag__sb *b, const cudag_graph *g,
                      const cudag__node *n);
    /* The node's DOT attributes after its label (", shape=…"), or NULL for
     * the graph's default box; and its legend entry's label. */
    const char *dot_shape;
    const char *dot_legend;
    /* For a kind that holds sub-graphs: appends what sub-graph `slot` of
     * node n is (escaped for DOT when dot): its DOT cluster's label
     * ("while more"), or, for plan, a sentence on when it runs.  NULL for
     * kinds without sub-graphs. */
    void (*body_label)(cudag__sb *b, const cudag_graph *g,
                       const cudag__node *n, uint32_t slot, bool dot);
} cudag__kind_ops;

/* The ops of kind k, or NULL for a value that names no kind (a corrupted
 * IR: the checker reports it, later stages never see it). */
const cudag__kind_ops *cudag__kind(cudag_node_kind k);

/* The kinds in table order (the order of cudag_node_kind); *n their count. */
const cudag__kind_ops *const *cudag__kinds(size_t *n);

/* Calls fn for each node an edge into node n of h (last false) or out of
 * it (last true) joins as built: n itself, or, for a node built inline
 * (edge_ends), its first or last nodes, each in turn the same way.  False
 * as soon as fn returns false.  The checker checks a programmatic edge's
 * ends there, and the build adds each edge there. */
bool cudag__edge_reach(const cudag_graph *h, uint32_t n, bool last,
                       cudag__end_fn fn, void *user);

/* cudag__edge_reach for the ends of edge e of h that count for its kind:
 * side `to` (the edge's downstream end, else its upstream one) through a
 * child graph built inline for a programmatic edge, the node itself for
 * the others (a launch-order edge never reaches into a child). */
bool cudag__edge_side(const cudag_graph *h, const cudag__edge *e,
                      bool to, cudag__end_fn fn, void *user);

/* The kind's name; "kernel" for a value that names no kind. */
const char *cudag__node_kind_name(cudag_node_kind k);

/* The kinds, table order. */
extern const cudag__kind_ops cudag__kind_kernel;
extern const cudag__kind_ops cudag__kind_memset;
extern const cudag__kind_ops cudag__kind_memcpy;
extern const cudag__kind_ops cudag__kind_cond;
extern const cudag__kind_ops cudag__kind_gemm;
extern const cudag__kind_ops cudag__kind_capture;
extern const cudag__kind_ops cudag__kind_event_record;
extern const cudag__kind_ops cudag__kind_event_wait;
extern const cudag__kind_ops cudag__kind_host;
extern const cudag__kind_ops cudag__kind_child;

#endif /* CUDAG_KIND_H */
