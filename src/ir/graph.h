/* graph.h — the graph every stage after parsing works on: variables, modules,
 * kernel signatures, buffers, nodes and edges, flat arrays owned by one
 * cudag_graph.  The YAML front end (front/) and the C builder (graph.c) both
 * produce it; nothing from here on knows about YAML. */
#ifndef CUDAG_IR_H
#define CUDAG_IR_H

#include "cudag.h"
#include "base/alloc.h"
#include "base/diag.h"
#include "base/map.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Limits that protect a process loading untrusted files (docs/security.md).
 * Each one has a test and a precise error. */
#define CUDAG__MAX_FILE_BYTES (64u << 20)       /* one YAML file */
#define CUDAG__MAX_DEPTH 64u                    /* YAML nesting */
#define CUDAG__MAX_EXPANDED (4u << 20)          /* YAML nodes after aliases */
#define CUDAG__MAX_LOWERED (64u << 20)          /* YAML nodes lowered, each
                                                   copy of a repetition again */
#define CUDAG__MAX_INCLUDE_DEPTH 16u
#define CUDAG__MAX_FILES 256u                   /* files one graph may include */
#define CUDAG__MAX_FULL_NAME 1024u              /* bytes in a node's full name */
#define CUDAG__MAX_NODES (1u << 20)
#define CUDAG__MAX_EDGES (8u << 20)
#define CUDAG__MAX_BUFFERS 65536u
#define CUDAG__MAX_VARS 65536u
#define CUDAG__MAX_ARGS 256u                    /* params of one kernel */
#define CUDAG__MAX_EXPR_DEPTH 64u
#define CUDAG__MAX_EXPR_LEN 4096u
#define CUDAG__MAX_REPEAT_DEPTH 8u
#define CUDAG__MAX_BUFFER_BYTES (UINT64_C(1) << 46)  /* 64 TiB: absurd */
#define CUDAG__MAX_PARAM_BYTES 32764u           /* CUDA kernel parameter space */
#define CUDAG__MAX_CONDS 65536u                 /* conditions of one graph */
#define CUDAG__MAX_SUB_DEPTH 16u                /* sub-graphs nested in sub-graphs */
#define CUDAG__MAX_SUBS_PER_NODE 4096u          /* bodies of one node (switch cases) */

/* Hardware limits the checker enforces without a device (compute 7.0+). */
#define CUDAG__MAX_BLOCK_THREADS 1024u
#define CUDAG__MAX_BLOCK_X 1024u
#define CUDAG__MAX_BLOCK_Y 1024u
#define CUDAG__MAX_BLOCK_Z 64u
#define CUDAG__MAX_GRID_X 2147483647u
#define CUDAG__MAX_GRID_Y 65535u
#define CUDAG__MAX_GRID_Z 65535u
#define CUDAG__MAX_SMEM (227u * 1024u)          /* Hopper's opt-in maximum */
/* Blocks in a thread-block cluster: 8 is portable; Hopper allows 16 once a
 * function opts in (CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED),
 * which the build does for a node that asks for more than 8. */
#define CUDAG__MAX_CLUSTER_PORTABLE 8u
#define CUDAG__MAX_CLUSTER 16u

#define CUDAG__NONE UINT32_MAX                  /* "no index" */

typedef struct cudag__var {
    const char *name;
    int64_t value;              /* an integer variable's value */
    double f;                   /* a floating-point one's (is_float) */
    bool is_float;              /* written with a '.' or an exponent, or
                                   made from a floating-point variable */
    cudag__pos pos;
    bool overridden;            /* set by a -D define */
} cudag__var;

struct cudag__src_decls;
struct cudag__code_info;

typedef struct cudag__module {
    const char *name;
    const char *path;           /* as resolved (relative to its file's dir);
                                   "<name>.cu" for a source held in memory */
    cudag__pos pos;
    cudag__pos path_pos;        /* where the path is written */
    /* What code/module.c read on the CPU.  kind is a cudag__code_kind, OTHER
     * for a module whose file was not read (the C API's cudag_add_module:
     * the driver judges it at instantiation). */
    int kind;
    const char *text;           /* CUDA source: its text, NUL-terminated */
    size_t len;
    const char *dir;            /* its directory (quoted includes); NULL
                                   for a source held in memory */
    const char **options;       /* NULL-terminated NVRTC options, or NULL */
    const char *std;            /* "c++17", or NULL */
    struct cudag__src_decls *decls;    /* source: its kernels */
    struct cudag__code_info *code;     /* fatbin, cubin, PTX: entry points */
} cudag__module;

/* How a signature's code is found. */
typedef enum cudag__handle_kind {
    CUDAG__HANDLE_NONE = 0,     /* a module's symbol */
    CUDAG__HANDLE_FUNCTION,     /* a CUfunction of the program's */
    CUDAG__HANDLE_KERNEL        /* a CUkernel of the program's */
} cudag__handle_kind;

typedef struct cudag__sig {
    const char *name;
    const char *symbol;         /* the entry point in the module */
    uint32_t module;            /* index into graph->modules; CUDAG__NONE
                                   for a program's own handle */
    uint32_t nparams;
    cudag_type *types;
    const char **pnames;
    /* Per parameter: whether its declaration named it (pnames holds "p3"
     * for one that is not: a list of types in `kernels:`, an unnamed
     * parameter in source or in cudag_declare_kernel).  NULL: none did. */
    const bool *pnamed;
    /* Per parameter, for a pointer read from source: the element type its
     * buffer must have, NONE where any will do (void*, a declared ptr).
     * NULL when no parameter is typed. */
    cudag_type *pointee;
    /* Per parameter: how the kernel uses a pointer's buffer (CUDAG__ACC_*
     * of accset.h: `const T *` in source, `ptr.read` declared), 0 where
     * nothing says (it may read and write).  NULL when none is known. */
    uint8_t *access;
    bool pdl;                   /* the code waits before reading upstream data:
                                   declared, or seen in its code */
    /* What the CPU could see of the code: 1 it executes griddepcontrol.wait,
     * -1 it never does, 0 unknown (machine code, a declaration only): a
     * zeroed signature knows nothing. */
    int waits;
    /* A source module's name expression, lowered by NVRTC into the symbol at
     * instantiation (a template instance, a C++ name); NULL when the
     * symbol is the name itself. */
    const char *expr;
    cudag__handle_kind handle_kind;
    void *handle;               /* the program's CUfunction or CUkernel */
    cudag__pos pos;
} cudag__sig;

typedef struct cudag__buffer {
    const char *name;
    cudag_type type;
    uint64_t count;             /* elements */
    cudag_init init;
    cudag__pos pos;
    cudag__pos count_pos;
    cudag__pos init_pos;        /* of `init` (or `range`), where written */
    uint64_t bound;             /* host program's CUdeviceptr, 0 = allocate */
    uint32_t uses;              /* set by the checker */
} cudag__buffer;

/* A condition (`conditions:`): a value a conditional node reads and kernels
 * set on the device (CUgraphConditionalHandle). */
typedef struct cudag__cond {
    const char *name;
    cudag__pos pos;
    bool has_default;           /* the driver sets it at every launch */
    uint32_t value;             /* the default */
    cudag__pos default_pos;
} cudag__cond;

typedef struct cudag__arg {
    cudag_arg_kind kind;
    uint32_t buffer;            /* BUFFER: index into graph->buffers;
                                   COND: index into graph->conds */
    uint64_t offset;            /* BUFFER: elements */
    uint64_t count;             /* BUFFER: elements the kernel may touch from
                                   offset (`x + o: n`); 0 = to the end */
    int64_t i;                  /* INT */
    double f;                   /* FLOAT */
    cudag__pos pos;
} cudag__arg;

typedef struct cudag__kernel {
    uint32_t sig;               /* index into graph->sigs */
    int64_t grid[3], block[3];  /* as evaluated; the checker bounds them */
    int64_t smem;
    uint32_t nargs;
    cudag__arg *args;
    cudag__pos sig_pos, grid_pos, block_pos, smem_pos, args_pos;
    /* Launch attributes: thread-block cluster dimensions ({0, 0, 0}: none,
     * launched without the attribute) and the node's priority (when
     * has_priority; lower is sooner, clamped by the driver to the device's
     * range). */
    int64_t cluster[3];
    int64_t priority;
    bool has_priority;
    cudag__pos cluster_pos, priority_pos;
} cudag__kernel;

typedef struct cudag__memset {
    uint32_t buffer;
    uint64_t offset, count;     /* elements of the buffer */
    double value;
    cudag__pos value_pos;
} cudag__memset;

typedef struct cudag__memcpy {
    uint32_t dst, src;
    uint64_t dst_offset, src_offset, count;   /* elements */
} cudag__memcpy;

/* The operands of a gemm node, in this order in cudag__gemm.op[]. */
enum { CUDAG__GEMM_A, CUDAG__GEMM_B, CUDAG__GEMM_C, CUDAG__GEMM_D,
       CUDAG__GEMM_BIAS, CUDAG__GEMM_NOPS };

typedef struct cudag__operand {
    uint32_t buffer;            /* CUDAG__NONE: absent */
    uint64_t offset;            /* elements */
    int64_t ld;                 /* elements between rows; 0: packed */
    int64_t stride;             /* elements between batches; < 0: packed */
    cudag__pos pos, ld_pos, stride_pos;
} cudag__operand;

/* D = alpha·op(A)·op(B) + beta·C (+ bias), row-major (cudag_gemm). */
typedef struct cudag__gemm {
    int64_t m, n, k, batch;
    bool trans_a, trans_b;
    cudag_epilogue epilogue;
    double alpha, beta;
    cudag__operand op[CUDAG__GEMM_NOPS];
    cudag__pos shape_pos, batch_pos, epilogue_pos;
    cudag__pos k_pos;           /* of `k:`, blamed when only a and b overflow */
} cudag__gemm;

/* The C API's kinds: the program's callback and its argument, or event. */
typedef struct cudag__callback {
    cudag_capture_fn capture;   /* capture nodes */
    cudag_host_fn host;         /* host nodes */
    void *user;
    void *event;                /* event nodes: a CUevent */
} cudag__callback;

/* A conditional node (kinds/cond.c): while, if (then, else) or switch. */
typedef struct cudag__conditional {
    cudag_cond_type type;
    uint32_t cond;              /* index into graph->conds */
    uint32_t nbodies;           /* while 1, if 1 or 2, switch its cases */
    cudag_graph **bodies;       /* sub-graphs of the node's graph (subs) */
    cudag__pos cond_pos;        /* where the condition is named */
} cudag__conditional;

/* A child-graph node (kinds/child.c): another graph file's nodes. */
typedef struct cudag__child {
    cudag_graph *sub;           /* a sub-graph of the node's graph (subs) */
    const char *file;           /* the file, as the node names it */
} cudag__child;

typedef struct cudag__node {
    const char *name;           /* full name: "layer[3].norm" */
    cudag_node_kind kind;
    cudag__pos pos;             /* the node's key in the file */
    uint32_t group;             /* innermost repetition group, or CUDAG__NONE */
    union {
        cudag__kernel k;
        cudag__memset set;
        cudag__memcpy cpy;
        cudag__gemm mm;
        cudag__callback cb;
        cudag__conditional cnd;
        cudag__child ch;
    } u;
} cudag__node;

typedef struct cudag__edge {
    uint32_t from, to;          /* node indices */
    cudag_edge_kind kind;
    cudag__pos pos;             /* where the edge was written */
    /* An edge `order: program` inferred (order.c), 0 for a written one:
     * the hazard (CUDAG__HAZARD_*) and the first bytes that need it; for
     * a condition set before its conditional node reads it, why_buffer is
     * CUDAG__NONE and why_lo the condition. */
    uint8_t inferred;
    bool why_unknown;           /* an extent ran to the buffer's end */
    uint32_t why_buffer;
    uint64_t why_lo, why_hi;
} cudag__edge;

/* Why an inferred edge exists (cudag__edge.inferred). */
enum {
    CUDAG__HAZARD_RAW = 1,      /* read after write */
    CUDAG__HAZARD_WAR = 2,      /* write after read */
    CUDAG__HAZARD_WAW = 3       /* write after write */
};

/* A graph's `order:` (the root's; its bodies and child graphs follow it). */
enum {
    CUDAG__ORDER_EDGES = 0,     /* only the edges written */
    CUDAG__ORDER_PROGRAM = 1    /* as if in written order (order.c) */
};

/* One instance of a repeated group ("layer[3]"), for DOT clusters. */
typedef struct cudag__group {
    const char *name;
    uint32_t parent;            /* enclosing group or CUDAG__NONE */
} cudag__group;

/* What the checker derives; valid while graph->checked. */
typedef struct cudag__topo {
    uint32_t *order;            /* nodes in a deterministic topological order */
    uint32_t *level;            /* per node: longest path from a root, 0-based */
    uint32_t *out_start;        /* CSR over edges sorted by (from, to) */
    uint32_t *out_edge;         /* edge indices, per node from out_start[n] */
    uint32_t *in_start;
    uint32_t *in_edge;
    uint32_t depth;             /* levels */
    /* A root graph's whole tree (itself and every sub-graph, depth first:
     * a graph, then the sub-graphs of its nodes in node order), numbered
     * flat: tree[i] starts at node tree[i]->node_base and edge
     * tree[i]->edge_base; tree_node[k] is node k of that numbering.  NULL
     * in a sub-graph's topology. */
    cudag_graph **tree;
    const cudag__node **tree_node;
    uint32_t ntree, tree_nodes, tree_edges;
} cudag__topo;

/*
 * A graph: a root (loaded or created) or a sub-graph, the graph a node holds
 * (a conditional node's body; kind.h, "Sub-graphs").  A sub-graph has nodes,
 * edges, groups and node names of its own; everything else (variables,
 * modules, kernels, buffers, conditions and the arena) is its root's, which
 * it mirrors (graph.c) and never frees.  A graph owns its
 * sub-graphs (subs) and frees them with itself.
 */
struct cudag_graph {
    cudag__arena arena;         /* names, strings, arrays of fixed size; a
                                   sub-graph's forwards to its root's */
    const char *name;
    /* Growable arrays; each freed by cudag_graph_destroy (the shared ones
     * only by the root). */
    cudag__var *vars;       uint32_t nvars, cvars;
    cudag__module *modules; uint32_t nmodules, cmodules;
    cudag__sig *sigs;       uint32_t nsigs, csigs;
    cudag__buffer *buffers; uint32_t nbuffers, cbuffers;
    cudag__node *nodes;     uint32_t nnodes, cnodes;
    cudag__edge *edges;     uint32_t nedges, cedges;
    cudag__group *groups;   uint32_t ngroups, cgroups;
    cudag__cond *conds;     uint32_t nconds, cconds;
    /* Name → index, one map per namespace. */
    cudag__map var_map, module_map, sig_map, buffer_map, node_map, cond_map;
    /* The tree of sub-graphs.  A root has parent NULL, root itself, depth 0
     * and prefix "".  A sub-graph is slot `slot` of node `owner` of parent;
     * its nodes' full names start with prefix ("loop.", "check.then."). */
    cudag_graph *parent, *root;
    uint32_t owner, slot, depth;
    const char *prefix;
    cudag_graph **subs;     uint32_t nsubs, csubs;
    /* Where this graph's nodes and edges start in its root's flat
     * numbering (topo.tree); valid while the root is checked. */
    uint32_t node_base, edge_base;
    /* The source, kept so cudag_exec_set_var can lower it again; NULL for a
     * graph built through the C API.  A graph lowered again from another's
     * source borrows it (source_borrowed) and records the variable values
     * given since (overrides, "NAME=VALUE" in the arena). */
    struct cudag__source *source;
    /* Frees source (set with it by the front end, which owns its type, so
     * that this layer frees a graph without knowing what a source is). */
    void (*source_free)(struct cudag__source *s);
    bool source_borrowed;
    const char **overrides;
    uint32_t noverrides;
    bool checked;
    uint8_t order;              /* CUDAG__ORDER_*; a root's */
    cudag__topo topo;
};

/* ---- graph.c: shared by the builder and the front end ---------------- */

/* Allocates an empty graph; NULL on OOM. */
cudag_graph *cudag__graph_new(const char *name);

/* Each adds one object, copying `name` into the arena and registering it in
 * its map.  They return CUDAG_EDUP (with the earlier position in the message),
 * CUDAG_ELIMIT or CUDAG_ENOMEM through err and leave the graph unchanged.  On
 * success *out (if not NULL) points at the zeroed new element for the caller
 * to fill; the pointer is valid until the next add of the same kind. */
int cudag__add_var(cudag_graph *g, const char *name, cudag__pos pos,
                   cudag__var **out, cudag_error *err);
int cudag__add_module(cudag_graph *g, const char *name, cudag__pos pos,
                      cudag__module **out, cudag_error *err);
int cudag__add_sig(cudag_graph *g, const char *name, cudag__pos pos,
                   cudag__sig **out, cudag_error *err);
int cudag__add_buffer(cudag_graph *g, const char *name, cudag__pos pos,
                      cudag__buffer **out, cudag_error *err);
int cudag__add_node(cudag_graph *g, const char *name, cudag__pos pos,
                    cudag__node **out, cudag_error *err);
int cudag__add_edge(cudag_graph *g, uint32_t from, uint32_t to,
                    cudag_edge_kind kind, cudag__pos pos, cudag_error *err);
int cudag__add_group(cudag_graph *g, const char *name, uint32_t parent,
                     uint32_t *out, cudag_error *err);

int cudag__add_cond(cudag_graph *g, const char *name, cudag__pos pos,
                    cudag__cond **out, cudag_error *err);

/* Creates sub-graph `slot` of node `owner` of g, named `name`, whose
 * nodes' full names start with `prefix` (both copied), appended to g->subs.
 * CUDAG_ELIMIT past CUDAG__MAX_SUB_DEPTH; CUDAG_ENOMEM.  On error g is
 * unchanged. */
int cudag__subgraph_new(cudag_graph *g, uint32_t owner, uint32_t slot,
                        const char *name, const char *prefix,
                        cudag_graph **out, cudag_error *err);

/* Frees g's sub-graphs from index `keep` on (a builder call's undo). */
void cudag__subgraph_drop(cudag_graph *g, uint32_t keep);

/* cudag_add_signature() with the module by index (CUDAG__NONE: the code is
 * a handle of the program's, set by the caller). */
int cudag__add_signature(cudag_graph *g, const char *name, uint32_t module,
                         const char *symbol, const cudag_param *params,
                         size_t nparams, int pdl, cudag_error *err);

/* Lookups: index or CUDAG__NONE. */
uint32_t cudag__find_var(const cudag_graph *g, const char *name);
uint32_t cudag__find_module(const cudag_graph *g, const char *name);
uint32_t cudag__find_sig(const cudag_graph *g, const char *name);
uint32_t cudag__find_buffer(const cudag_graph *g, const char *name);
uint32_t cudag__find_node(const cudag_graph *g, const char *name);
uint32_t cudag__find_cond(const cudag_graph *g, const char *name);

/* The graph of g's tree (root and sub-graphs) that has a node with the full
 * name `name`, with *node its index; NULL when none has.  Walks the tree. */
const cudag_graph *cudag__tree_find(const cudag_graph *g, const char *name,
                                    uint32_t *node);

/* Node k of a checked root's flat numbering (topo.tree). */
static inline const cudag__node *cudag__tree_node(const cudag_graph *g,
                                                  uint32_t k)
{
    return g->topo.tree_node ? g->topo.tree_node[k] : &g->nodes[k];
}

/* The nodes, edges and graphs of g's tree in its flat numbering: g's own
 * when g is not checked or has no sub-graphs. */
static inline uint32_t cudag__tree_nnodes(const cudag_graph *g)
{
    return g->topo.tree ? g->topo.tree_nodes : g->nnodes;
}
static inline uint32_t cudag__tree_nedges(const cudag_graph *g)
{
    return g->topo.tree ? g->topo.tree_edges : g->nedges;
}
static inline uint32_t cudag__tree_ngraphs(const cudag_graph *g)
{
    return g->topo.tree ? g->topo.ntree : 1;
}
/* Graph i of the flat numbering (0 is g). */
static inline const cudag_graph *cudag__tree_graph(const cudag_graph *g,
                                                   uint32_t i)
{
    return g->topo.tree ? g->topo.tree[i] : g;
}

/* True when a is b or lies inside b (a sub-graph of b's, at any depth). */
bool cudag__graph_within(const cudag_graph *a, const cudag_graph *b);

/* The error for a public call that needs a root graph given a sub-graph
 * ("fn: graph 'loop' is a body of graph 'g': <what> 'g'"): CUDAG_EINVAL
 * through err.  CUDAG_OK for a root. */
int cudag__need_root(const cudag_graph *g, const char *fn, const char *what,
                     cudag_error *err);

/* Frees what t points to and zeroes it; accepts a zeroed t. */
void cudag__topo_free(cudag__topo *t);

/* Marks the graph modified: drops what the checker derived. */
void cudag__graph_touch(cudag_graph *g);

/* Byte size of a buffer (count × element size), checked by the checker not
 * to overflow; callers after the check may rely on it. */
uint64_t cudag__buffer_bytes(const cudag__buffer *b);

/* The builder API's common start of a cudag_add_<kind>(): clears err and
 * refuses a NULL graph or an invalid node name, naming the public call fn.
 * In a body, *name becomes the node's full name (the body's prefix, then
 * the name), in the arena. */
int cudag__builder_start(cudag_graph *g, const char **name, const char *fn,
                         cudag_error *err);

/* The start of a builder call for a kind whose node holds the program's
 * callback or event (`what`, given or NULL): cudag__builder_start, then
 * CUDAG_EINVAL when it is NULL, then the new node in *out (its kind and
 * body for the caller to fill). */
int cudag__builder_callback(cudag_graph *g, const char *name, const char *fn,
                            bool given, const char *what, cudag__node **out,
                            cudag_error *err);

/* The index of buffer `buf` that builder node `node` names, or CUDAG__NONE
 * with *rc = CUDAG_EUNKNOWN reported through err. */
uint32_t cudag__builder_buffer(cudag_graph *g, const char *node,
                               const char *buf, int *rc, cudag_error *err);

/* The index of buffer `name` for public call fn on graph g, or CUDAG__NONE
 * with *rc = CUDAG_EUNKNOWN ("fn: graph 'G' has no buffer 'name'"). */
uint32_t cudag__need_buffer(const cudag_graph *g, const char *name,
                            const char *fn, int *rc, cudag_error *err);

/* ---- check.c --------------------------------------------------------- */

/* Runs every whole-graph check, reporting into d; fills g->topo and sets
 * g->checked when there is no error. */
int cudag__check(cudag_graph *g, cudag__diag *d);

#endif /* CUDAG_IR_H */
