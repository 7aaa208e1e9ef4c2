/* test_nvtx.c — the NVTX ranges a profiler shows, checked without a GPU or a
 * profiler: the fake driver of fake_driver.h stands in for libcuda, and this
 * program is its own NVTX "tool": NVTX 3 calls InitializeInjectionNvtx2_fnptr
 * (a weak global its headers define) at the first range when it is set,
 * which main() does before anything else; the tool records every range
 * pushed and popped. */
#include "common.h"
#include "cudag.h"
#include "ir/graph.h"
#include "gpu/exec.h"

#include <stdbool.h>
#include "fake_driver.h"

#include <string.h>

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpedantic"
#pragma GCC diagnostic ignored "-Wcast-align"
#pragma GCC diagnostic ignored "-Wstrict-prototypes"
#include <nvtx3/nvToolsExt.h>
#pragma GCC diagnostic pop

static char seen[64][128];
static int nseen, depth, max_depth;

static int NVTX_API push(const char *name)
{
    if (nseen < 64)
        snprintf(seen[nseen++], sizeof seen[0], "%s", name);
    if (++depth > max_depth)
        max_depth = depth;
    return depth;
}

static int NVTX_API pop(void) { return --depth; }

static int NVTX_API init(NvtxGetExportTableFunc_t get)
{
    const NvtxExportTableCallbacks *cb = get(NVTX_ETID_CALLBACKS);
    NvtxFunctionTable table = NULL;
    unsigned size = 0;
    if (!cb || !cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &table, &size) ||
        size <= NVTX_CBID_CORE_RangePop)
        return 0;
    *table[NVTX_CBID_CORE_RangePushA] = (NvtxFunctionPointer)push;
    *table[NVTX_CBID_CORE_RangePop] = (NvtxFunctionPointer)pop;
    return 1;
}


static bool has(const char *name)
{
    for (int i = 0; i < nseen; i++)
        if (strcmp(seen[i], name) == 0)
            return true;
    return false;
}

static cudag_exec *run(unsigned flags)
{
    static const char yaml[] =
        "cudag: 1\nname: demo\nmodules: {m: k.fatbin}\n"
        "kernels: {util_noop: {params: {}, pdl: true}}\n"
        "nodes:\n  a: {kernel: util_noop, grid: 1, block: 32}\n"
        "  b: {kernel: util_noop, grid: 1, block: 32, after: {a: programmatic}}\n";
    cudag_graph *g;
    cudag_error e;
    assert_int_equal(cudag_load_string(yaml, strlen(yaml), "n.yaml", NULL, &g, &e),
                     CUDAG_OK);
    cudag_exec_options o;
    memset(&o, 0, sizeof o);
    o.size = sizeof o;
    o.flags = flags;
    cudag_exec *x;
    assert_int_equal(cudag_instantiate(g, &o, &x, &e), CUDAG_OK);
    assert_int_equal(cudag_exec_launch(x, 3, &e), CUDAG_OK);
    assert_int_equal(cudag_exec_sync(x, &e), CUDAG_OK);
    cudag_exec_destroy(x);
    cudag_graph_destroy(g);
    return NULL;
}

static void nvtx_ranges_named_after_the_graph(void **state)
{
    (void)state;
    fake_reset();
    nseen = depth = max_depth = 0;
    run(CUDAG_NVTX);
    for (int i = 0; i < nseen; i++)
        print_message("# range: %s\n", seen[i]);
    assert_true(has("cudag demo: instantiate"));
    assert_true(has("cudag demo: load modules"));
    assert_true(has("cudag demo: allocate and initialise buffers"));
    assert_true(has("cudag demo: build CUgraph"));
    assert_true(has("cudag demo: instantiate and upload"));
    assert_true(has("cudag demo: launch"));
    /* Stages nest inside "instantiate"; every push is popped. */
    assert_int_equal(max_depth, 2);
    assert_int_equal(depth, 0);
}

static void nvtx_off_by_default(void **state)
{
    (void)state;
    fake_reset();
    nseen = depth = max_depth = 0;
    run(0);
    assert_int_equal(nseen, 0);
}

int main(void)
{
    InitializeInjectionNvtx2_fnptr = init;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(nvtx_ranges_named_after_the_graph),
        cmocka_unit_test(nvtx_off_by_default),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
