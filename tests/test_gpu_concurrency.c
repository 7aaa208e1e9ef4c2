/* test_gpu_concurrency.c — the graph runs concurrently where it should, and
 * only there.  util_stamp records %globaltimer before its
 * griddepcontrol.wait, after it, and at its end (after body_ns of spinning):
 *   - fork-join: the branches' [start, end] intervals overlap;
 *   - a programmatic (and a launch-order) edge: the downstream kernel starts
 *     before the upstream one ends, yet leaves its wait only after that end;
 *   - the same graph with CUDAG_NO_PDL: the downstream starts after the end.
 * Bodies are 200 µs against launch latencies of a few µs: behaviour, not
 * speed.  Timing-dependent claims must hold in most replays; ordering
 * guarantees must hold in every one. */
#include "gpu_common.h"

#define REPLAYS 20

typedef struct stamp {
    uint64_t start, waited, end, trigger;
} stamp;

static void read_stamps(cudag_exec *x, stamp *s, size_t n)
{
    cudag_error e;
    gpu_ok(cudag_exec_read(x, "st", s, n * sizeof *s, &e), &e, "read stamps");
    for (size_t i = 0; i < n; i++)
        if (!s[i].start || s[i].end < s[i].waited || s[i].waited < s[i].start)
            fail_msg("slot %zu was not written sanely: %llu %llu %llu", i,
                     (unsigned long long)s[i].start,
                     (unsigned long long)s[i].waited,
                     (unsigned long long)s[i].end);
}

static void replay(cudag_exec *x, size_t nstamps)
{
    cudag_error e;
    stamp zero[8];
    memset(zero, 0, sizeof zero);
    gpu_ok(cudag_exec_write(x, "st", zero, nstamps * sizeof(stamp), &e), &e,
           "clear stamps");
    gpu_ok(cudag_exec_launch(x, 1, &e), &e, "launch");
    gpu_ok(cudag_exec_sync(x, &e), &e, "sync");
}

static const char fork_yaml[] =
    "cudag: 1\n"
    "include: cudag_kernels.yaml\n"
    "vars: {B: 4, BODY: 200000}\n"
    "buffers: {st: {type: u64, count: 4*B, init: 0}}\n"
    "nodes:\n"
    "  root: {kernel: util_noop, grid: 1, block: 32}\n"
    "  br[i in B]:\n"
    "    kernel: util_stamp\n"
    "    grid: 1\n"
    "    block: 32\n"
    "    args: [st, i, BODY]\n"
    "    after: root\n"
    "  join:\n"
    "    kernel: util_noop\n"
    "    grid: 1\n"
    "    block: 32\n"
    "    after: [\"br[0]\", \"br[1]\", \"br[2]\", \"br[3]\"]\n";

static void fork_join_branches_overlap(void **state)
{
    (void)state;
    cudag_graph *g = gpu_load(fork_yaml);
    cudag_exec *x = gpu_instantiate(g, 0, NULL);
    int overlapped = 0;
    for (int r = 0; r < REPLAYS; r++) {
        replay(x, 4);
        stamp s[4];
        read_stamps(x, s, 4);
        uint64_t last_start = 0, first_end = UINT64_MAX;
        for (int i = 0; i < 4; i++) {
            if (s[i].start > last_start)
                last_start = s[i].start;
            if (s[i].end < first_end)
                first_end = s[i].end;
        }
        /* All four intervals share an instant, with 50 µs to spare. */
        if (last_start + 50000 < first_end)
            overlapped++;
        if (r == 0)
            printf("# fork-join: starts +%llu +%llu +%llu +%llu ns, shared "
                   "span %lld ns\n",
                   (unsigned long long)(s[0].start - s[0].start),
                   (unsigned long long)(s[1].start - s[0].start),
                   (unsigned long long)(s[2].start - s[0].start),
                   (unsigned long long)(s[3].start - s[0].start),
                   (long long)(first_end - last_start));
    }
    printf("# fork-join: all 4 branches overlapped in %d of %d replays\n",
           overlapped, REPLAYS);
    assert_true(overlapped >= REPLAYS * 3 / 4);
    cudag_exec_destroy(x);
    cudag_graph_destroy(g);
}

static const char chain_yaml[] =
    "cudag: 1\n"
    "include: cudag_kernels.yaml\n"
    "buffers: {st: {type: u64, count: 12, init: 0}}\n"
    "nodes:\n"
    "  a: {kernel: util_stamp, grid: 1, block: 32, args: [st, 0, 200000]}\n"
    "  b: {kernel: util_stamp, grid: 1, block: 32, args: [st, 1, 200000],\n"
    "      after: {a: programmatic}}\n"
    "  c: {kernel: util_stamp, grid: 1, block: 32, args: [st, 2, 50000],\n"
    "      after: {b: launch_order}}\n";

static void programmatic_edges_start_early_and_wait(void **state)
{
    (void)state;
    cudag_graph *g = gpu_load(chain_yaml);
    cudag_exec *x = gpu_instantiate(g, 0, NULL);
    if (x->gpu.cc_major < 9) {
        printf("# compute capability %d.%d: no PDL\n", x->gpu.cc_major,
               x->gpu.cc_minor);
        cudag_exec_destroy(x);
        cudag_graph_destroy(g);
        skip();
    }
    int early_b = 0, early_c = 0;
    for (int r = 0; r < REPLAYS; r++) {
        replay(x, 3);
        stamp s[3];
        read_stamps(x, s, 3);
        /* Started during the upstream's body, by a wide margin... */
        if (s[1].start + 50000 < s[0].end)
            early_b++;
        if (s[2].start + 50000 < s[1].end)
            early_c++;
        /* ...and left the wait only once the upstream had finished. */
        if (s[1].waited < s[0].end || s[2].waited < s[1].end)
            fail_msg("replay %d: a downstream kernel passed its wait before "
                     "the upstream ended (b waited %llu, a ended %llu; c "
                     "waited %llu, b ended %llu)",
                     r, (unsigned long long)s[1].waited,
                     (unsigned long long)s[0].end,
                     (unsigned long long)s[2].waited,
                     (unsigned long long)s[1].end);
        if (r == 0)
            printf("# programmatic: b started %lld ns before a ended; "
                   "launch_order: c started %lld ns before b ended\n",
                   (long long)(s[0].end - s[1].start),
                   (long long)(s[1].end - s[2].start));
    }
    printf("# early start: programmatic %d/%d, launch_order %d/%d replays\n",
           early_b, REPLAYS, early_c, REPLAYS);
    assert_true(early_b >= REPLAYS * 3 / 4);
    assert_true(early_c >= REPLAYS * 3 / 4);
    cudag_exec_destroy(x);

    /* The same graph with full edges: every start follows the end. */
    x = gpu_instantiate(g, CUDAG_NO_PDL, NULL);
    for (int r = 0; r < REPLAYS; r++) {
        replay(x, 3);
        stamp s[3];
        read_stamps(x, s, 3);
        if (s[1].start < s[0].end || s[2].start < s[1].end)
            fail_msg("--no-pdl replay %d: a kernel started before its "
                     "upstream ended",
                     r);
    }
    cudag_exec_destroy(x);
    cudag_graph_destroy(g);
}

int main(void)
{
    gpu_require();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fork_join_branches_overlap),
        cmocka_unit_test(programmatic_edges_start_early_and_wait),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
