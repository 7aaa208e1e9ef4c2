/* find_kernels.c — a program that uses libcudag the way any other does, with
 * no include directory and no environment: it must find the shipped
 * manifest (`include: cudag_kernels.yaml`) beside the library it was linked
 * to, in a build tree or an install, as the cudag tool does.  It runs from
 * "/", so nothing is found relative to where it was started.
 *
 * Exit status: 0 when the graph loads and names the shipped kernel, 1 (with
 * the error) otherwise. */
#include <cudag.h>

#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const char graph[] =
    "cudag: 1\n"
    "include: cudag_kernels.yaml\n"
    "buffers: {x: {type: f32, count: 256}, y: {type: f32, count: 256}}\n"
    "nodes:\n"
    "  s: {kernel: scale_f32, grid: 1, block: 256, args: [x, y, 2.0, 256]}\n";

int main(void)
{
    if (chdir("/") != 0) {
        perror("find_kernels: chdir /");
        return 1;
    }
    cudag_graph *g;
    cudag_error err;
    if (cudag_load_string(graph, strlen(graph), "find_kernels.yaml", NULL, &g,
                          &err) != CUDAG_OK) {
        char line[2048];
        cudag_error_format(&err, line, sizeof line);
        fprintf(stderr, "find_kernels: %s\n", line);
        return 1;
    }
    printf("find_kernels: ok: the shipped manifest was found (%zu node)\n",
           cudag_graph_node_count(g));
    cudag_graph_destroy(g);
    return 0;
}
