/*
 * cudag.h — build CUDA graphs from a DAG of kernels described in YAML or
 * through this C API, then instantiate and replay them.
 *
 * This is the only public header of libcudag.  Every object is an opaque
 * handle made by a create function and released by the matching destroy
 * function; destroy functions accept NULL.  Every function that can fail
 * returns a status (CUDAG_OK = 0, errors negative) and, when the caller
 * passes a cudag_error, fills it with the code, a message and the source
 * position of the problem.  On failure an out-pointer is set to NULL and
 * nothing is left for the caller to free.
 *
 * Threads: distinct handles may be used from distinct threads at once.  One
 * handle must not be used from two threads at the same time, except that a
 * cudag_graph may be read (checked, printed, instantiated) by several
 * threads while no thread modifies it.  See docs/api.md.
 */
#ifndef CUDAG_H
#define CUDAG_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(CUDAG_BUILDING) && defined(__GNUC__)
#define CUDAG_API __attribute__((visibility("default")))
#else
#define CUDAG_API
#endif

#define CUDAG_VERSION_MAJOR 0
#define CUDAG_VERSION_MINOR 1
#define CUDAG_VERSION_PATCH 0

/* The language version this library reads (the `cudag:` key of a file). */
#define CUDAG_FORMAT_VERSION 1

/*
 * Status codes.  One list feeds the enum and cudag_strerror(), so the two
 * cannot drift apart.
 */
#define CUDAG_STATUS_MAP(X)                                                   \
    X(OK, 0, "success")                                                       \
    X(EINVAL, -1, "invalid argument")                                         \
    X(ENOMEM, -2, "out of memory")                                            \
    X(EIO, -3, "cannot read file")                                            \
    X(ESYNTAX, -4, "YAML syntax error")                                       \
    X(EKEY, -5, "unexpected key or value")                                    \
    X(EUNKNOWN, -6, "unknown name")                                           \
    X(EDUP, -7, "duplicate name")                                             \
    X(ETYPE, -8, "type mismatch")                                             \
    X(EEXPR, -9, "bad expression")                                            \
    X(EOVERFLOW, -10, "integer overflow")                                     \
    X(ECYCLE, -11, "dependency cycle")                                        \
    X(ELIMIT, -12, "limit exceeded")                                          \
    X(ERANGE, -13, "value out of range")                                      \
    X(EEDGE, -14, "invalid edge")                                             \
    X(EARGS, -15, "kernel argument mismatch")                                 \
    X(EINCLUDE, -16, "include error")                                         \
    X(ECHECK, -17, "graph has errors")                                        \
    X(ENODRIVER, -18, "no CUDA driver found")                                 \
    X(ECUDA, -19, "CUDA driver error")                                        \
    X(ENOTSUP, -20, "not supported")                                          \
    X(ESTATE, -21, "operation not valid in this state")                       \
    X(EPDL, -22, "programmatic edge not safe on this device")                 \
    X(ETIMEOUT, -23, "replay did not finish in time; the context is lost")

typedef enum cudag_status {
#define CUDAG__ENUM(name, value, text) CUDAG_##name = value,
    CUDAG_STATUS_MAP(CUDAG__ENUM)
#undef CUDAG__ENUM
} cudag_status;

/* Returns a static, never-NULL description of a status code. */
CUDAG_API const char *cudag_strerror(int code);

/* Returns the status code's name ("CUDAG_EUNKNOWN"), static, never NULL. */
CUDAG_API const char *cudag_status_name(int code);

/* Returns "MAJOR.MINOR.PATCH" of the library actually linked; static. */
CUDAG_API const char *cudag_version_string(void);

typedef enum cudag_severity {
    CUDAG_SEV_ERROR = 0,
    CUDAG_SEV_WARNING = 1,
    CUDAG_SEV_NOTE = 2
} cudag_severity;

/*
 * One diagnostic.  Lines and columns are 1-based; 0 means "no position"
 * (an error that does not come from a file, such as a failed allocation).
 * A column counts characters, not bytes: every UTF-8 encoded character
 * (code point) before the position on its line counts one, a tab counts
 * one, as in YAML parsers' marks.  So "é: 1" has the 1 at column 4, byte 5;
 * to place a caret, skip column - 1 characters of the line.
 * The struct owns its strings (fixed arrays), so it may be copied freely and
 * outlives the call that filled it.  `file` always holds the whole name: the
 * loader refuses (CUDAG_ELIMIT) a file name of CUDAG_PATH_MAX bytes or more,
 * which the system would not open either.  `message` may be cut at 1023
 * bytes.  Print it as
 *     file:line:column: error: message
 * (cudag_error_format() does exactly that).  The layout is part of the ABI
 * (bindings mirror it): file[4096] since soversion 1, file[512] before.
 */
#define CUDAG_PATH_MAX 4096     /* bytes in a file name, its NUL included */

typedef struct cudag_error {
    int code;               /* a cudag_status */
    int severity;           /* a cudag_severity */
    int line;
    int column;             /* in characters, see above */
    int count;              /* errors reported by the call that filled it */
    int cuda_result;        /* CUresult of a failed driver call, else 0 */
    char file[CUDAG_PATH_MAX];  /* "" when the problem has no file */
    char message[1024];
} cudag_error;

/*
 * Writes "file:line:col: error: message" (fields left out where missing)
 * into buf, truncating to size.  Returns the length it would have needed,
 * like snprintf.
 */
CUDAG_API int cudag_error_format(const cudag_error *e, char *buf, size_t size);

/*
 * Receives every diagnostic as it is found: errors, warnings and notes.  The
 * pointer is valid only during the call.
 */
typedef void (*cudag_diag_fn)(void *user, const cudag_error *diag);

/* Flags for cudag_options.flags and cudag_exec_options.flags. */
enum {
    CUDAG_NO_PDL = 1u << 0,     /* build programmatic/launch-order edges as full edges */
    CUDAG_STRICT = 1u << 1,     /* unsafe programmatic edges are errors, not warnings */
    CUDAG_WERROR = 1u << 2,     /* every warning counts as an error */
    CUDAG_NVTX = 1u << 3,       /* emit NVTX ranges around library stages */
    CUDAG_NO_CHECK = 1u << 4,   /* load only; the caller calls cudag_check() */
    CUDAG_NO_CACHE = 1u << 5,   /* compile source modules without the cache */
    /* cudag_exec_options only: instantiate every CUDA graph of the exec for
     * device launch (CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH).  The host's
     * launch call then costs a few µs whatever the graph's shape; without
     * it, a graph of many branches costs the host about 0.3 µs per node per
     * launch, and the GPU waits for it.  Instantiate takes longer (up to 5×
     * for a 10 000-node tree).  The driver accepts only kernel, memset,
     * memcpy and child-graph nodes in such a graph: instantiating one with
     * another kind fails with CUDAG_ECUDA naming the node. */
    CUDAG_DEVICE_LAUNCH = 1u << 6,
    /* cudag_exec_options only: build the exec's own graph with its branches
     * serialized into one chain in topological order (what capturing the
     * launches on one stream records), as CUDAG_REPLAY_GRAPH_SERIAL does
     * beside the declared graph; a programmatic edge between consecutive
     * nodes stays programmatic.  The results are the same; this measures
     * what the parallel branches buy. */
    CUDAG_SERIALIZE = 1u << 7
};

/*
 * Options for loading and checking.  Zero-initialise, set .size to
 * sizeof(cudag_options) (so later versions can grow the struct), then set
 * what you need.  A NULL options pointer means all defaults.
 */
typedef struct cudag_options {
    size_t size;
    /* NULL-terminated "NAME=VALUE" strings; override the file's vars. */
    const char *const *defines;
    /* NULL-terminated directories searched for includes after the
     * including file's own directory and before the shipped kernels'
     * (beside the library, else <prefix>/share/cudag). */
    const char *const *include_dirs;
    cudag_diag_fn diag;
    void *diag_user;
    unsigned max_errors;        /* stop after this many errors; 0 = 50 */
    unsigned flags;
} cudag_options;

/* ------------------------------------------------------------------ */
/* Types                                                               */

typedef enum cudag_type {
    CUDAG_TYPE_NONE = 0,
    CUDAG_TYPE_I8, CUDAG_TYPE_U8, CUDAG_TYPE_I16, CUDAG_TYPE_U16,
    CUDAG_TYPE_I32, CUDAG_TYPE_U32, CUDAG_TYPE_I64, CUDAG_TYPE_U64,
    CUDAG_TYPE_F16, CUDAG_TYPE_BF16, CUDAG_TYPE_F32, CUDAG_TYPE_F64,
    CUDAG_TYPE_PTR,             /* kernel parameters only: a device pointer */
    CUDAG_TYPE_COND,            /* kernel parameters only: a condition
                                   (CUgraphConditionalHandle, 8 bytes) */
    CUDAG_TYPE_COUNT_
} cudag_type;

/* "i32", "bf16", "ptr", "cond", …; NULL for an invalid value. */
CUDAG_API const char *cudag_type_name(cudag_type t);
/* Size in bytes (8 for a pointer); 0 for an invalid value. */
CUDAG_API size_t cudag_type_size(cudag_type t);

typedef enum cudag_edge_kind {
    CUDAG_EDGE_FULL = 0,          /* downstream starts after upstream completes */
    CUDAG_EDGE_PROGRAMMATIC = 1,  /* PDL: downstream may start at upstream's trigger */
    CUDAG_EDGE_LAUNCH_ORDER = 2   /* downstream may start once upstream has started */
} cudag_edge_kind;

/* "full", "programmatic", "launch_order"; NULL for an invalid value. */
CUDAG_API const char *cudag_edge_kind_name(cudag_edge_kind k);

typedef enum cudag_node_kind {
    CUDAG_NODE_KERNEL = 0,
    CUDAG_NODE_MEMSET = 1,
    CUDAG_NODE_MEMCPY = 2,
    CUDAG_NODE_CONDITIONAL = 3,   /* while, if/else or switch: body graphs the
                                     device runs as a condition decides */
    CUDAG_NODE_GEMM = 4,        /* a cuBLASLt matrix multiply */
    CUDAG_NODE_CAPTURE = 5,     /* the program's work, recorded on a stream */
    CUDAG_NODE_EVENT_RECORD = 6,/* records the program's CUevent */
    CUDAG_NODE_EVENT_WAIT = 7,  /* waits for the program's CUevent */
    CUDAG_NODE_HOST = 8,        /* calls a host function */
    CUDAG_NODE_CHILD = 9        /* another graph file, as a child graph */
} cudag_node_kind;

/* The conditional nodes, valued as the driver's CUgraphConditionalNodeType. */
typedef enum cudag_cond_type {
    CUDAG_COND_IF = 0,            /* body 0 when the condition is non-zero,
                                     body 1 (else, optional) when it is 0 */
    CUDAG_COND_WHILE = 1,         /* body 0 again and again while non-zero */
    CUDAG_COND_SWITCH = 2         /* body n when the condition is n; none
                                     when it is past the last */
} cudag_cond_type;

/* A condition without a default value (cudag_add_condition). */
#define CUDAG_COND_NO_DEFAULT (-1)

/* ------------------------------------------------------------------ */
/* Graphs: loading, building, checking                                 */

typedef struct cudag_graph cudag_graph;

/*
 * Parses, lowers and checks a YAML graph file.  On success *out owns
 * everything and is released with cudag_graph_destroy().  On error *out is
 * NULL, err holds the first error (err->count the number of errors), every
 * diagnostic went to opts->diag, and nothing is allocated.
 */
CUDAG_API int cudag_load_file(const char *path, const cudag_options *opts,
                              cudag_graph **out, cudag_error *err);

/*
 * Same as cudag_load_file() for YAML text in memory.  `name` is the file name
 * used in diagnostics and the directory relative includes and module paths
 * are resolved from (NULL: "<string>" in the current directory).  The text
 * is copied; it need not outlive the call.
 */
CUDAG_API int cudag_load_string(const char *text, size_t len,
                                const char *name, const cudag_options *opts,
                                cudag_graph **out, cudag_error *err);

/* Creates an empty graph to fill with the builder functions below. */
CUDAG_API int cudag_graph_create(const char *name, cudag_graph **out,
                                 cudag_error *err);

/* Frees the graph and everything it owns.  Accepts NULL.  Every cudag_exec
 * made from the graph must be destroyed first. */
CUDAG_API void cudag_graph_destroy(cudag_graph *g);

/*
 * Builder.  Each call validates what it can on its own (names, sizes,
 * known referents) and leaves the graph unchanged on error.  Checks that
 * need the whole graph (cycles, arguments against signatures, limits) run in
 * cudag_check().  Strings are copied.
 */
CUDAG_API int cudag_add_var(cudag_graph *g, const char *name, int64_t value,
                            cudag_error *err);

/* A kernel binary (fatbin, cubin or PTX); the path is used as given and the
 * file is read by the driver at instantiation.  CUDA source goes through
 * cudag_add_module_source(). */
CUDAG_API int cudag_add_module(cudag_graph *g, const char *name,
                               const char *path, cudag_error *err);

/*
 * A module of CUDA C++ source held in memory, compiled with NVRTC when the
 * graph is instantiated (for the exact device, through the compile cache;
 * see docs/kernels-own.md).  `text` is NUL-terminated and copied; `options`
 * is a NULL-terminated list of NVRTC options ("-DTILE=128", "-Iinclude",
 * "-std=c++20"), may be NULL, and is copied.  Diagnostics name the file
 * "<name>.cu".  The kernels the source declares are read at once, so
 * cudag_add_kernel() can name any extern "C" or plain kernel of it without
 * a signature, and cudag_check() checks the arguments against it.  Errors:
 * CUDAG_EDUP, CUDAG_ETYPE (not text), CUDAG_ELIMIT (over 16 MiB),
 * CUDAG_ENOMEM; the graph is then unchanged.  NVRTC is needed only at
 * instantiation.
 */
CUDAG_API int cudag_add_module_source(cudag_graph *g, const char *name,
                                      const char *text,
                                      const char *const *options,
                                      cudag_error *err);

typedef struct cudag_param {
    const char *name;           /* may be NULL: "p0", "p1", … */
    cudag_type type;
} cudag_param;

/* A kernel signature.  `symbol` NULL means the same as `name`.  `pdl` says the
 * loaded code waits with griddepcontrol.wait before reading upstream data. */
CUDAG_API int cudag_add_signature(cudag_graph *g, const char *name,
                                  const char *module, const char *symbol,
                                  const cudag_param *params, size_t nparams,
                                  int pdl, cudag_error *err);

/* What cudag_add_signature_handle() is given. */
typedef enum cudag_handle_kind {
    CUDAG_HANDLE_FUNCTION = 1,  /* a CUfunction */
    CUDAG_HANDLE_KERNEL = 2     /* a CUkernel (context-independent) */
} cudag_handle_kind;

/*
 * A kernel signature whose code the program loaded itself: a CUfunction or
 * CUkernel (passed as void*, so this header needs no cuda.h) from its own
 * modules, PTX from CUDA.jl or Triton, and so on.  The handle is borrowed
 * and must stay loaded while any exec of the graph lives; a CUfunction must
 * belong to the context the graph is instantiated in.  Arguments are
 * checked against params as for any signature; at instantiation the
 * parameter sizes are confirmed with cuFuncGetParamInfo.  `pdl` says the
 * code waits (griddepcontrol.wait) before reading upstream data.  Errors:
 * CUDAG_EINVAL (a NULL handle or an unknown kind), those of
 * cudag_add_signature().
 */
CUDAG_API int cudag_add_signature_handle(cudag_graph *g, const char *name,
                                         void *handle,
                                         cudag_handle_kind kind,
                                         const cudag_param *params,
                                         size_t nparams, int pdl,
                                         cudag_error *err);

typedef enum cudag_init_kind {
    CUDAG_INIT_NONE = 0,        /* contents undefined (poisoned by `cudag run`) */
    CUDAG_INIT_ZERO,
    CUDAG_INIT_CONST,           /* every element = value */
    CUDAG_INIT_IOTA,            /* element i = i (converted to the type) */
    CUDAG_INIT_RANDOM           /* uniform in [lo, hi), seeded */
} cudag_init_kind;

typedef struct cudag_init {
    cudag_init_kind kind;
    double value;               /* CONST */
    double lo, hi;              /* RANDOM: lo < hi; both 0 means [-1, 1),
                                   any other empty range is CUDAG_ERANGE */
    uint64_t seed;              /* RANDOM */
} cudag_init;

CUDAG_API int cudag_add_buffer(cudag_graph *g, const char *name,
                               cudag_type type, uint64_t count,
                               const cudag_init *init, cudag_error *err);

typedef enum cudag_arg_kind {
    CUDAG_ARG_BUFFER = 0,       /* device pointer: buffer + offset elements */
    CUDAG_ARG_INT = 1,
    CUDAG_ARG_FLOAT = 2,
    CUDAG_ARG_NULL = 3,         /* a null device pointer */
    CUDAG_ARG_COND = 4          /* a condition, for a cond parameter */
} cudag_arg_kind;

typedef struct cudag_arg {
    cudag_arg_kind kind;
    const char *buffer;         /* BUFFER: the buffer; COND: the condition */
    uint64_t offset;            /* BUFFER, in elements of the buffer's type */
    int64_t i;                  /* INT: must be >= 0 for unsigned params and
                                   fit the parameter's type */
    double f;                   /* FLOAT */
} cudag_arg;

static inline cudag_arg cudag_arg_buffer(const char *buffer, uint64_t offset)
{
    cudag_arg a = {CUDAG_ARG_BUFFER, buffer, offset, 0, 0.0};
    return a;
}
static inline cudag_arg cudag_arg_int(int64_t v)
{
    cudag_arg a = {CUDAG_ARG_INT, NULL, 0, v, 0.0};
    return a;
}
static inline cudag_arg cudag_arg_float(double v)
{
    cudag_arg a = {CUDAG_ARG_FLOAT, NULL, 0, 0, v};
    return a;
}

/* The condition `name` for a cond parameter: the kernel may set it
 * (cudaGraphSetConditional) for the conditional node that reads it. */
static inline cudag_arg cudag_arg_cond(const char *name)
{
    cudag_arg a = {CUDAG_ARG_COND, name, 0, 0, 0.0};
    return a;
}

typedef struct cudag_dim3 { uint32_t x, y, z; } cudag_dim3;

CUDAG_API int cudag_add_kernel(cudag_graph *g, const char *name,
                               const char *signature, cudag_dim3 grid,
                               cudag_dim3 block, uint32_t shared_bytes,
                               const cudag_arg *args, size_t nargs,
                               cudag_error *err);

/*
 * Launches kernel node `node` (added with cudag_add_kernel; in a body, its
 * name in the body) as thread-block clusters of cluster.x × .y × .z blocks
 * (CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION on its graph node), as the YAML
 * key `cluster:` does; {0, 0, 0} takes the cluster away.  cudag_check
 * refuses a dimension that does not divide the grid's and more than 16
 * blocks; more than 8 (non-portable) makes the build opt the function in
 * (CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED); a device below
 * compute capability 9.0 is refused at instantiate.  Errors: CUDAG_EINVAL
 * (NULL graph, bad name, a node of another kind), CUDAG_EUNKNOWN (no such
 * node).  The graph must be checked again.
 */
CUDAG_API int cudag_set_kernel_cluster(cudag_graph *g, const char *node,
                                       cudag_dim3 cluster, cudag_error *err);

/*
 * Gives kernel node `node` a launch priority (CU_LAUNCH_ATTRIBUTE_PRIORITY
 * on its graph node; lower numbers run sooner, and the driver clamps the
 * value to the device's range, 0 to -5 on an H100), as the YAML key
 * `priority:` does.  A graph with any node priority is instantiated with
 * CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY, without which the driver
 * ignores them.  Errors as cudag_set_kernel_cluster.
 */
CUDAG_API int cudag_set_kernel_priority(cudag_graph *g, const char *node,
                                        int priority, cudag_error *err);

/* How a kernel uses the buffer behind a pointer parameter (docs/language.md,
 * "Access modes"), as `ptr.read`, `ptr.write` and `ptr.rw` declare it in a
 * YAML file.  The race check and `order: program` read it. */
typedef enum cudag_access {
    CUDAG_ACCESS_UNKNOWN = 0,     /* nothing said: it may read and write */
    CUDAG_ACCESS_READ = 1,        /* reads only */
    CUDAG_ACCESS_WRITE = 2,       /* writes only */
    CUDAG_ACCESS_READ_WRITE = 3   /* reads and writes */
} cudag_access;

/*
 * Says how kernels of signature `signature` use pointer parameter `param`
 * (0-based): what a parameter added by cudag_add_signature() has no way to
 * say, and a `const T *` in source says by itself.  Without it a pointer
 * parameter may read and write, so two kernels writing different buffers
 * through it look like they race on each.  Errors: CUDAG_EINVAL (NULL graph,
 * an invalid mode, a parameter that is not a pointer), CUDAG_EUNKNOWN (no
 * such signature), CUDAG_ERANGE (no such parameter), CUDAG_ENOMEM; the
 * graph is then unchanged.  The graph must be checked again.
 */
CUDAG_API int cudag_set_param_access(cudag_graph *g, const char *signature,
                                     uint32_t param, cudag_access access,
                                     cudag_error *err);

/*
 * Says that kernel node `node` touches only `count` elements of its buffer
 * argument `arg` (0-based), from the argument's offset, as `BUF + OFF:
 * COUNT` does in a YAML file (docs/language.md, "Extents"); 0 takes the
 * extent away (to the buffer's end, the default).  cudag_check refuses an
 * extent past the buffer's end.  Errors: CUDAG_EINVAL (NULL graph, bad name,
 * a node of another kind, an argument that is not a buffer), CUDAG_EUNKNOWN
 * (no such node), CUDAG_ERANGE (no such argument).  The graph must be
 * checked again.
 */
CUDAG_API int cudag_set_kernel_arg_count(cudag_graph *g, const char *node,
                                         uint32_t arg, uint64_t count,
                                         cudag_error *err);

/* Sets `count` elements of `buffer` from `offset` to `value` (converted to
 * the buffer's type) before each replay reaches this node. */
CUDAG_API int cudag_add_memset(cudag_graph *g, const char *name,
                               const char *buffer, uint64_t offset,
                               uint64_t count, double value, cudag_error *err);

/* Copies `count` elements; both buffers must have the same element size. */
CUDAG_API int cudag_add_memcpy(cudag_graph *g, const char *name,
                               const char *dst, uint64_t dst_offset,
                               const char *src, uint64_t src_offset,
                               uint64_t count, cudag_error *err);

/* ---- gemm nodes: D = alpha·op(A)·op(B) + beta·C through cuBLASLt ---- */

typedef enum cudag_epilogue {
    CUDAG_EPILOGUE_NONE = 0,
    CUDAG_EPILOGUE_RELU = 1,    /* max(0, x) after the bias */
    CUDAG_EPILOGUE_GELU = 2     /* GELU (tanh approximation) after the bias */
} cudag_epilogue;

/* One matrix (or the bias vector) of a gemm: a buffer and where in it. */
typedef struct cudag_gemm_operand {
    const char *buffer;         /* NULL: absent (c: d itself; bias: none) */
    uint64_t offset;            /* elements of the buffer's type */
    int64_t ld;                 /* elements from one row to the next; 0:
                                   the row length (rows packed) */
    int64_t stride;             /* elements from one batch to the next; < 0:
                                   one matrix's span (packed); 0 repeats
                                   the same matrix (not for d) */
} cudag_gemm_operand;

/*
 * A gemm node, row-major as C and PyTorch store matrices:
 *     D[m×n] = alpha · op(A)[m×k] · op(B)[k×n] + beta · C[m×n]  (+ bias[n]),
 * then the epilogue.  A is stored m×k (trans_a: k×m), B k×n (trans_b: n×k,
 * as a PyTorch Linear weight), C and D m×n; batch matrices one stride apart.
 * A and B are f32, f16 or bf16 alike, accumulated in f32; D (and C) is of
 * their type or f32; the bias (n elements) of D's type.  Zero-initialise,
 * set .size = sizeof(cudag_gemm), then fill in; alpha and beta are used as
 * given (set alpha = 1).
 */
typedef struct cudag_gemm {
    size_t size;
    int64_t m, n, k;
    int64_t batch;              /* 0 or 1: one matrix product */
    int trans_a, trans_b;
    cudag_gemm_operand a, b, c, d, bias;
    double alpha, beta;
    cudag_epilogue epilogue;
} cudag_gemm;

/* Adds a gemm node.  Buffers must exist; shapes, types and overlaps are
 * checked by cudag_check() (docs/language.md, "Gemm nodes"). */
CUDAG_API int cudag_add_gemm(cudag_graph *g, const char *name,
                             const cudag_gemm *gemm, cudag_error *err);

/* ---- nodes only the C API makes: the program's own work, its events, host
 * functions (docs/api.md, "The program's own work in the graph") ---- */

/*
 * Records the program's own work: fn(user, stream) issues work on `stream`
 * (a CUstream, as void*): kernel launches, library calls (cuBLAS, cuDNN,
 * NCCL, …), async copies and memsets, or work on streams forked from it with
 * events and joined back.  Returns 0, or any other value to fail.  cudag
 * calls it when the graph is instantiated (and again each time the graph is
 * built anew: cudag_exec_set_var, `cudag bench`), with the exec's context
 * current and `stream` being captured; what it issued becomes one
 * child-graph node, which joins the graph's edges like any node.  The work
 * is recorded, not run: pointers and scalars are captured as they are then.
 * A capture cannot hold a call that waits for the device or allocates
 * (cuStreamSynchronize, cuCtxSynchronize, a cuMemcpy without Async,
 * cuMemAlloc, cudaMalloc, an event query…): the instantiation fails naming
 * the node.
 */
typedef int (*cudag_capture_fn)(void *user, void *stream);

CUDAG_API int cudag_add_capture(cudag_graph *g, const char *name,
                                cudag_capture_fn fn, void *user,
                                cudag_error *err);

/* Records `event` (a CUevent, as void*, the program's; it must outlive every
 * exec of the graph) when every node before this one has finished, so that
 * the program's other streams can wait for that point of each replay. */
CUDAG_API int cudag_add_event_record(cudag_graph *g, const char *name,
                                     void *event, cudag_error *err);

/* Waits, before the nodes after this one, for the last record of `event`
 * (a CUevent, as void*) on the program's other streams. */
CUDAG_API int cudag_add_event_wait(cudag_graph *g, const char *name,
                                   void *event, cudag_error *err);

/* Calls fn(user) on a driver thread when every node before this one has
 * finished; the nodes after it start when it returns.  fn must not call the
 * CUDA API (the driver's rule for host nodes). */
typedef void (*cudag_host_fn)(void *user);

CUDAG_API int cudag_add_host(cudag_graph *g, const char *name,
                             cudag_host_fn fn, void *user, cudag_error *err);

CUDAG_API int cudag_add_edge(cudag_graph *g, const char *from, const char *to,
                             cudag_edge_kind kind, cudag_error *err);

/*
 * Declares condition `name` of root graph g: the value a conditional node
 * reads, set on the device by kernels that take it as a cond argument.
 * default_value (0 to 4294967295) is assigned by the driver at the start of
 * every launch; CUDAG_COND_NO_DEFAULT leaves the value undefined at each
 * launch's start, so a kernel must set it before its node runs.  A
 * condition may not have the name of a buffer or a variable.  Errors:
 * CUDAG_EDUP, CUDAG_ERANGE, CUDAG_EINVAL (g is a body: conditions belong to
 * the root).
 */
CUDAG_API int cudag_add_condition(cudag_graph *g, const char *name,
                                  int64_t default_value, cudag_error *err);

/*
 * Adds conditional node `name` to g (a root or a body) reading condition
 * `cond`: CUDAG_COND_WHILE takes 1 body, CUDAG_COND_IF 1 (then) or 2 (then,
 * else), CUDAG_COND_SWITCH 1 to 4096 (the cases).  bodies[0..nbodies)
 * receive the body graphs, empty, to fill with the builder calls (nodes and
 * edges; buffers, kernels and conditions are the root's).  A body belongs
 * to g: it lives until g's root is destroyed, cudag_graph_destroy ignores
 * it, and the names of its nodes start with its prefix ("loop.",
 * "check.then.", "route.case[2].": cudag_add_kernel(body, "step", …) adds
 * "loop.step").  Bodies nest at most 16 deep.  On error g is unchanged and
 * bodies[] is all NULL.
 */
CUDAG_API int cudag_add_conditional(cudag_graph *g, const char *name,
                                    cudag_cond_type type, const char *cond,
                                    size_t nbodies, cudag_graph **bodies,
                                    cudag_error *err);

/*
 * Runs every check on the whole graph (names, cycles, edges, arguments,
 * limits) and reports each problem to opts->diag.  Returns CUDAG_OK, or the
 * first error's code with err holding it and the count.  A graph that
 * passed stays valid until it is modified.  Loading a file checks it already
 * (unless CUDAG_NO_CHECK).
 */
CUDAG_API int cudag_check(cudag_graph *g, const cudag_options *opts,
                          cudag_error *err);

/* ------------------------------------------------------------------ */
/* Introspection: what a graph declares, for programs that size their own
 * memory or check what they bind (valid on any graph, checked or not).
 *
 * Objects are numbered 0 … count-1 in the order they were declared.  Every
 * call that takes an index reports an index that is not below its count
 * (any index, for a NULL graph) in one way, by its return value alone:
 * calls that return a name return NULL, calls that return a status return
 * CUDAG_ERANGE; neither writes through its out-pointers then.  Out-pointers
 * may be NULL for what the caller does not need.  Lookups by name return
 * the index, or -1 for a name the graph does not have.  Returned strings
 * live as long as the graph.                                          */

CUDAG_API size_t cudag_graph_node_count(const cudag_graph *g);
CUDAG_API size_t cudag_graph_edge_count(const cudag_graph *g);
CUDAG_API size_t cudag_graph_buffer_count(const cudag_graph *g);
CUDAG_API size_t cudag_graph_var_count(const cudag_graph *g);
CUDAG_API const char *cudag_graph_name(const cudag_graph *g);

/* Node i's full name ("layer[3].norm"). */
CUDAG_API const char *cudag_graph_node_name(const cudag_graph *g, size_t i);
/* Node i's kind into *kind. */
CUDAG_API int cudag_graph_node_kind(const cudag_graph *g, size_t i,
                                    cudag_node_kind *kind);
/* "kernel", "memset", "memcpy"; NULL for an invalid value. */
CUDAG_API const char *cudag_node_kind_name(cudag_node_kind k);
/* Finds a node by its full name. */
CUDAG_API long cudag_graph_find_node(const cudag_graph *g, const char *name);

/* Edge i's ends (node indices) and kind. */
CUDAG_API int cudag_graph_edge(const cudag_graph *g, size_t i, size_t *from,
                               size_t *to, cudag_edge_kind *kind);

CUDAG_API const char *cudag_graph_buffer_name(const cudag_graph *g, size_t i);
CUDAG_API long cudag_graph_find_buffer(const cudag_graph *g, const char *name);
/* Buffer i's element type and element count (its size in bytes is
 * count × cudag_type_size(type)), as declared after every -D define. */
CUDAG_API int cudag_graph_buffer(const cudag_graph *g, size_t i,
                                 cudag_type *type, uint64_t *count);

/* A variable's value.  `type` tells which member holds it: CUDAG_TYPE_I64
 * for an integer (in `i`), CUDAG_TYPE_F64 for a floating-point value (in
 * `f`); the other member is 0. */
typedef struct cudag_value {
    cudag_type type;
    int64_t i;
    double f;
} cudag_value;

CUDAG_API const char *cudag_graph_var_name(const cudag_graph *g, size_t i);
CUDAG_API long cudag_graph_find_var(const cudag_graph *g, const char *name);
/* Variable i's value in this graph (after every -D define), into *value. */
CUDAG_API int cudag_graph_var(const cudag_graph *g, size_t i,
                              cudag_value *value);

/* Flags for cudag_dot(). */
enum {
    CUDAG_DOT_NO_CRITICAL = 1u << 0,    /* do not highlight the critical path */
    CUDAG_DOT_NO_CLUSTERS = 1u << 1     /* do not group repeated nodes */
};

/*
 * Writes the checked graph in Graphviz DOT into a new NUL-terminated string
 * (*text, freed with cudag_free()).  Returns CUDAG_ESTATE if the graph has
 * not passed cudag_check().
 */
CUDAG_API int cudag_dot(const cudag_graph *g, unsigned flags, char **text,
                        cudag_error *err);

/* The shape of a checked graph, as `cudag plan` prints it. */
typedef struct cudag_plan_info {
    size_t nodes;
    size_t kernel_nodes, memset_nodes, memcpy_nodes;
    size_t edges[3];            /* by cudag_edge_kind */
    size_t depth;               /* nodes on the longest path */
    size_t width;               /* most nodes on one level of the ASAP schedule */
    uint64_t buffer_bytes;      /* total size of every declared buffer */
    size_t conditional_nodes;
    size_t bodies;              /* sub-graphs (conditional bodies) */
    /* The kinds added after the conditional nodes, in kind order. */
    size_t gemm_nodes, capture_nodes, event_record_nodes, event_wait_nodes,
        host_nodes;
    size_t child_nodes;         /* child graphs from files (also in bodies) */
} cudag_plan_info;

/*
 * Fills *info and, if text is not NULL, writes a human-readable plan (summary
 * and the level-by-level topological schedule) into a new string freed with
 * cudag_free().  CUDAG_ESTATE if the graph has not passed cudag_check().
 */
CUDAG_API int cudag_plan(const cudag_graph *g, cudag_plan_info *info,
                         char **text, cudag_error *err);

/*
 * The access sets of a checked graph (docs/language.md, "Access sets"), as
 * `cudag plan --json` shows them: a JSON array with one object per node of
 * the tree (the graph, then its bodies and child graphs, depth first),
 *   {"node": NAME, "access": [{"buffer": B, "mode": "read" | "write" |
 *    "read-write", "bytes": [LO, HI], "extent": "exact" | "to the end"
 *    [, "by": INNER_NODE]}, ...]}
 * into a new string *json freed with cudag_free().  CUDAG_ESTATE if the
 * graph has not passed cudag_check(); CUDAG_EINVAL for a body.
 */
CUDAG_API int cudag_plan_access(const cudag_graph *g, char **json,
                                cudag_error *err);

/* Frees memory the library handed out (cudag_dot, cudag_plan text). */
CUDAG_API void cudag_free(void *p);

/* ------------------------------------------------------------------ */
/* GPU: instantiate and replay                                         */

typedef struct cudag_exec cudag_exec;

/*
 * Options for instantiation.  Zero-initialise and set .size.  context and
 * stream are a CUcontext and a CUstream passed as void*, so this header does
 * not need cuda.h; NULL means the device's primary context and a stream the
 * exec creates and owns.
 */
typedef struct cudag_exec_options {
    size_t size;
    int device;                 /* ordinal, used when context is NULL */
    void *context;              /* CUcontext, borrowed */
    void *stream;               /* CUstream, borrowed */
    unsigned flags;             /* CUDAG_NO_PDL, CUDAG_STRICT, CUDAG_NVTX,
                                   CUDAG_NO_CACHE, CUDAG_DEVICE_LAUNCH,
                                   CUDAG_SERIALIZE */
    cudag_diag_fn diag;         /* warnings (downgraded edges, …) */
    void *diag_user;
    const char *const *include_dirs; /* unused here; reserved */
    /* Milliseconds every wait of the exec for its replays (cudag_exec_sync,
     * cudag_exec_read and _write, the timings) waits at most; 0 waits
     * forever.  A wait that runs out returns CUDAG_ETIMEOUT and the exec is
     * lost: see cudag_exec_sync. */
    unsigned timeout_ms;
} cudag_exec_options;

/*
 * Loads the CUDA driver and retains the primary context of device `device`
 * (an ordinal), the context every exec made without one in its options
 * uses, until a matching cudag_device_release.  Without it the context is
 * created by the first such exec and destroyed with the last; a program
 * that makes and destroys execs one after another keeps it alive this way,
 * and one that measures can pay for the driver and context apart from its
 * graphs.  Calls nest (the driver counts them).  Errors: CUDAG_ENODRIVER,
 * CUDAG_EINVAL (no such device: the message gives the machine's count),
 * CUDAG_ECUDA.
 */
CUDAG_API int cudag_device_retain(int device, cudag_error *err);

/* Undoes one cudag_device_retain of `device`.  Same errors. */
CUDAG_API int cudag_device_release(int device, cudag_error *err);

/*
 * Loads the driver and the graph's modules, allocates and initialises its
 * buffers (except those bound with cudag_bind_buffer), builds the CUDA graph
 * and instantiates it.  The graph must have passed cudag_check() and must
 * outlive the exec; the exec does not modify it.  On error *out is NULL and
 * every resource acquired so far is released.  Without a driver this returns
 * CUDAG_ENODRIVER with "no CUDA driver found (libcuda.so.1): …".
 */
CUDAG_API int cudag_instantiate(const cudag_graph *g,
                                const cudag_exec_options *opts,
                                cudag_exec **out, cudag_error *err);

/* Synchronises its stream, then releases everything the exec owns.  Accepts
 * NULL.  Bound buffers, a borrowed context and a borrowed stream stay. */
CUDAG_API void cudag_exec_destroy(cudag_exec *x);

/*
 * Binds the host program's device memory (a CUdeviceptr) to a buffer before
 * instantiation; the exec will neither allocate, initialise nor free it.
 * The memory must hold the buffer's size in bytes.
 */
CUDAG_API int cudag_bind_buffer(cudag_graph *g, const char *buffer,
                                uint64_t devptr, cudag_error *err);

/* Launches the instantiated graph `times` times on the exec's stream. */
CUDAG_API int cudag_exec_launch(cudag_exec *x, unsigned times,
                                cudag_error *err);

/*
 * Waits for every launch so far; reports asynchronous kernel faults.  With
 * a timeout in the exec's options (timeout_ms), polls instead and gives up
 * when the launches have not finished in time (a `while` node whose
 * condition never clears, a kernel that never returns): CUDAG_ETIMEOUT,
 * positioned at the graph's first `while` node, whose message names every
 * `while` node of the graph (file:line:col) as the ones that may still be
 * looping (the driver cannot tell which node runs) and says that the
 * context is lost.  The driver cannot stop a graph that runs: the exec is
 * then lost, every later call on it fails with CUDAG_ESTATE, and
 * cudag_exec_destroy frees only its host memory (it does not wait; its
 * device memory, modules and stream stay with the context).  The context
 * stays busy until the process exits, which is the only way to get the
 * device back: the library never exits, the program must.
 */
CUDAG_API int cudag_exec_sync(cudag_exec *x, cudag_error *err);

/* The CUstream the exec launches on (as void*). */
CUDAG_API void *cudag_exec_stream(const cudag_exec *x);

/* A buffer's device pointer and size in bytes. */
CUDAG_API int cudag_exec_buffer(const cudag_exec *x, const char *buffer,
                                uint64_t *devptr, uint64_t *bytes,
                                cudag_error *err);

/* Synchronous copies between host memory and a whole buffer; `bytes` must
 * equal the buffer's size. */
CUDAG_API int cudag_exec_read(cudag_exec *x, const char *buffer, void *host,
                              size_t bytes, cudag_error *err);
CUDAG_API int cudag_exec_write(cudag_exec *x, const char *buffer,
                               const void *host, size_t bytes,
                               cudag_error *err);

/*
 * Changes argument `index` of kernel node `node` in the instantiated graph
 * (cuGraphExecKernelNodeSetParams); later launches use it.  The argument
 * must fit the signature.  No re-instantiation.
 */
CUDAG_API int cudag_exec_set_arg(cudag_exec *x, const char *node,
                                 unsigned index, const cudag_arg *arg,
                                 cudag_error *err);

/* Points every node that uses `buffer` at new device memory (a CUdeviceptr of
 * at least the buffer's size).  No re-instantiation. */
CUDAG_API int cudag_exec_rebind_buffer(cudag_exec *x, const char *buffer,
                                       uint64_t devptr, cudag_error *err);

/*
 * Gives variable `name` a new value for a graph loaded from YAML: lowers the
 * file again, and updates the instantiated graph in place with
 * cuGraphExecUpdate.  Changes that alter the topology, a kernel, or a buffer's
 * size fail with the reason and the node; a value outside the variable's
 * bounds, or outside those of a variable computed from it, fails with
 * CUDAG_ERANGE at the bound (`B: {value: 1, max: 16}`); the exec is then
 * unchanged.  A floating-point variable (`eps: 1e-5`) takes the value as a
 * double.
 */
CUDAG_API int cudag_exec_set_var(cudag_exec *x, const char *name,
                                 int64_t value, cudag_error *err);

/*
 * The same for a floating-point variable: every f32/f64 argument computed
 * from it changes with one call.  CUDAG_EINVAL for a value that is not
 * finite; CUDAG_ETYPE (the exec unchanged) for an integer variable, which
 * takes cudag_exec_set_var.
 */
CUDAG_API int cudag_exec_set_var_float(cudag_exec *x, const char *name,
                                       double value, cudag_error *err);

/*
 * Sets the value condition `name` starts with at every later launch of the
 * exec (the driver's default value, CU_GRAPH_COND_ASSIGN_DEFAULT, turned on
 * if the condition had none; 0 to 4294967295).  The driver keeps no value
 * from one launch to the next: without a default a condition is undefined
 * when a launch starts.  This rebuilds the CUDA graph and updates the exec
 * in place (cuGraphExecUpdate): it costs about a build, so it is for
 * changing a setting between runs, not for each launch — for a value that
 * changes every launch, have a kernel set the condition from a buffer you
 * write.  Launches already queued keep the old value.  Errors:
 * CUDAG_EUNKNOWN, CUDAG_ERANGE, CUDAG_ECUDA (the exec is then unchanged).
 */
CUDAG_API int cudag_exec_set_condition(cudag_exec *x, const char *name,
                                       int64_t value, cudag_error *err);

/* Host-side time of each stage of cudag_instantiate, in nanoseconds. */
typedef struct cudag_exec_stats {
    uint64_t driver_ns;         /* driver load, device and context */
    uint64_t load_ns;           /* modules and functions */
    uint64_t alloc_ns;          /* buffer allocation and initialisation */
    uint64_t build_ns;          /* cuGraphCreate … cuGraphAddDependencies */
    uint64_t instantiate_ns;    /* cuGraphInstantiateWithParams + upload */
    unsigned downgraded_edges;  /* programmatic edges built as full edges */
} cudag_exec_stats;

CUDAG_API int cudag_exec_get_stats(const cudag_exec *x, cudag_exec_stats *st);

/*
 * Removes every entry of the compile cache of source modules
 * ($CUDAG_CACHE_DIR, else $XDG_CACHE_HOME/cudag, else ~/.cache/cudag) and
 * nothing else in that directory; *removed (may be NULL) counts them.  A
 * missing directory is an empty cache.  Errors: CUDAG_EIO naming the file,
 * CUDAG_EINVAL when no directory can be named (no HOME).
 */
CUDAG_API int cudag_cache_clean(unsigned *removed, cudag_error *err);

/* The name of the exec's device (cuDeviceGetName); lives as long as the
 * exec.  "" for NULL. */
CUDAG_API const char *cudag_exec_device_name(const cudag_exec *x);

/* The compute capability of the exec's device (9.0 for an H100) into
 * *major and *minor; either may be NULL.  CUDAG_EINVAL for a NULL exec,
 * nothing written then. */
CUDAG_API int cudag_exec_device_cc(const cudag_exec *x, int *major,
                                   int *minor);

/* ------------------------------------------------------------------ */
/* Other ways to replay the same work, to compare them                 */

/*
 * The same nodes, arguments and buffers as the instantiated graph, run on
 * the exec's stream in one of these ways (what `cudag bench` compares):
 *   STREAM       every node as one launch (cuLaunchKernelEx,
 *                cuMemsetD*Async, cuMemcpyDtoDAsync) in topological order;
 *   STREAM_PDL   the same, with programmatic stream serialization on each
 *                kernel that a programmatic or launch-order edge (as built)
 *                ends at;
 *   GRAPH_FULL   a second CUDA graph of the nodes with every edge full;
 *   GRAPH        the exec's own graph, as cudag_exec_launch runs it;
 *   GRAPH_SERIAL a graph of the nodes as one chain in topological order (what
 *                capturing the stream launches records): consecutive nodes
 *                keep the kind of an edge written between them, other links
 *                are full.
 * The values are ABI: new ways are appended.
 */
typedef enum cudag_replay {
    CUDAG_REPLAY_STREAM = 0,
    CUDAG_REPLAY_STREAM_PDL = 1,
    CUDAG_REPLAY_GRAPH_FULL = 2,
    CUDAG_REPLAY_GRAPH = 3,
    CUDAG_REPLAY_GRAPH_SERIAL = 4,
    CUDAG_REPLAY_COUNT_
} cudag_replay;

/* "stream launches", "stream launches + PDL attribute", "graph, every edge
 * full", "graph as declared", "graph, branches serialized"; NULL for a value
 * that names no way.  Static. */
CUDAG_API const char *cudag_replay_name(cudag_replay how);

/*
 * Makes what replaying `how` needs, so that the first replay or timing pays
 * nothing: for GRAPH_FULL and GRAPH_SERIAL the CUDA graph, built and
 * instantiated with an upload on the exec's stream; for STREAM_PDL the kinds
 * the edges were built with.  The exec keeps it until it is destroyed or
 * changed (cudag_exec_set_arg, cudag_exec_rebind_buffer, cudag_exec_set_var,
 * cudag_exec_set_condition drop it; the next replay makes it again).  Doing
 * it twice does nothing.
 * Errors: CUDAG_EINVAL (NULL exec, bad `how`), CUDAG_ENOTSUP (a stream way
 * for a graph with a node that runs only inside a graph, such as a
 * conditional node; the message names it), CUDAG_ENOMEM, CUDAG_ECUDA naming the call and node; the exec is then
 * as it was.
 */
CUDAG_API int cudag_exec_prepare(cudag_exec *x, cudag_replay how,
                                 cudag_error *err);

/*
 * Releases what cudag_exec_prepare made for every way (the CUDA graphs of
 * GRAPH_FULL and GRAPH_SERIAL, instantiated, and the edge kinds); a later
 * replay or timing of such a way makes it again.  The exec's own graph is
 * untouched.  A program that compared the ways and goes on with the exec
 * alone gets that memory back.  Errors: CUDAG_EINVAL (NULL exec),
 * CUDAG_ECUDA (its context could not be made current).
 */
CUDAG_API int cudag_exec_release_replays(cudag_exec *x, cudag_error *err);

/*
 * Runs the work `times` times on the exec's stream in the way `how` says,
 * preparing it first if needed (cudag_exec_prepare), and returns without
 * waiting; cudag_exec_sync waits.  CUDAG_REPLAY_GRAPH is cudag_exec_launch.
 * A failed launch names the call and, for stream launches, the node.
 */
CUDAG_API int cudag_exec_replay(cudag_exec *x, cudag_replay how,
                                unsigned times, cudag_error *err);

/*
 * Times replays of `how`: prepares it if needed, replays it `warmup` times
 * and waits, then replays it `iters` times, each between two CUDA events
 * (made on the first call, kept by the exec) and waited for, writing replay
 * i's GPU time in milliseconds to ms[i] (ms holds iters floats, owned by
 * the caller).  Inside the timed loop it makes only the driver calls of the
 * replay itself and of the events: record, replay, record, synchronize,
 * elapsed time.
 * With CUDAG_NVTX in the exec's flags the timing is one NVTX range, "cudag
 * GRAPH: time WAY".  Errors as for cudag_exec_replay, plus CUDAG_EINVAL for
 * a NULL ms with iters > 0; ms is then partly written.
 */
CUDAG_API int cudag_exec_time(cudag_exec *x, cudag_replay how,
                              unsigned warmup, unsigned iters, float *ms,
                              cudag_error *err);

/*
 * Times replays of `how` as cudag_exec_time does, with each timed replay
 * held behind a gate until it is queued whole: a host function
 * (cuLaunchHostFunc) ahead of the first event holds the stream, and the
 * call opens it once the replay and the second event are queued.  The times
 * are then the device's alone.  Ungated, a replay whose launch call takes
 * the host longer than the device takes to run it (a tree or a random DAG of
 * thousands of nodes: the driver spends about 0.3 µs of CPU per node there)
 * is timed at the host's pace, which moves with the machine's load; gated,
 * it is not.  Stream launches lose their launch gaps the same way.  The
 * driver calls in the timed loop: host function, record, replay, record,
 * synchronize, elapsed time.  With CUDAG_NVTX the timing is one NVTX range,
 * "cudag GRAPH: time WAY gated".  Errors as for cudag_exec_time, plus
 * CUDAG_ELIMIT when the host took over 2 s to queue one replay (the gate
 * then lets the device start: a replay larger than the driver's launch
 * queue waits for the device, so it cannot be timed this way); ms is then
 * partly written.  Every gate is open and the stream idle when it returns.
 */
CUDAG_API int cudag_exec_time_gated(cudag_exec *x, cudag_replay how,
                                    unsigned warmup, unsigned iters,
                                    float *ms, cudag_error *err);

/*
 * Times back-to-back replays of `how`, what `cudag run` reports: prepares it
 * if needed, replays it `warmup` times and waits, then queues `iters`
 * replays with nothing waited for between them, one CUDA event recorded
 * before the first and one after each, so replay i's time (ms[i], in
 * milliseconds; ms holds iters floats, owned by the caller) is the time
 * between the events around it and includes any gap while the host queues
 * the next.  Each timed replay is made as cudag_exec_replay makes one (the
 * exec's context pushed and popped around it): inside the loop the driver
 * calls are record, push, the replay's own calls, pop; the wait and the
 * elapsed times come after the last record.  The iters + 1 events are made
 * for the call and destroyed before it returns.  With CUDAG_NVTX in the
 * exec's flags the timing is one NVTX range, "cudag GRAPH: time WAY back to
 * back".  Errors as for cudag_exec_time, plus CUDAG_ENOMEM (no room for the
 * events' handles); ms is then partly written and no event is left.
 */
CUDAG_API int cudag_exec_time_back_to_back(cudag_exec *x, cudag_replay how,
                                           unsigned warmup, unsigned iters,
                                           float *ms, cudag_error *err);

/* ------------------------------------------------------------------ */
/* Where each module's code came from                                  */

typedef enum cudag_module_origin {
    CUDAG_MODULE_UNUSED = 0,    /* no node launches a kernel of it: not loaded */
    CUDAG_MODULE_FILE = 1,      /* a fatbin, cubin or PTX file the driver loaded */
    CUDAG_MODULE_COMPILED = 2,  /* CUDA source compiled with NVRTC (and then
                                   written to the compile cache unless
                                   CUDAG_NO_CACHE) */
    CUDAG_MODULE_CACHED = 3     /* CUDA source whose compiled code was read
                                   from the compile cache: NVRTC not run */
} cudag_module_origin;

typedef struct cudag_module_stats {
    const char *name;           /* the module's name in the graph; lives as
                                   long as the exec */
    cudag_module_origin origin;
    uint64_t load_ns;           /* host time for it at instantiation: the
                                   compile or the cache read, then the
                                   driver's load (part of
                                   cudag_exec_stats.load_ns) */
} cudag_module_stats;

/* The number of modules of the exec's graph (numbered 0 to n − 1 in the
 * order the graph declares them); 0 for NULL. */
CUDAG_API size_t cudag_exec_module_count(const cudag_exec *x);

/*
 * How module i's code reached the device when x was instantiated: whether a
 * source module was compiled or came from the compile cache, and how long
 * it took.  Errors: CUDAG_EINVAL for a NULL x or st, CUDAG_ERANGE for i not
 * below cudag_exec_module_count(x); *st is then unchanged.
 */
CUDAG_API int cudag_exec_module_stats(const cudag_exec *x, size_t i,
                                      cudag_module_stats *st);

#ifdef __cplusplus
}
#endif
#endif /* CUDAG_H */
