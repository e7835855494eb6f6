/*
 * failures.c: the node failure list reader (failures.h). Each row names a node of the
 * cluster and an outage [down_s, up_s); rows are handed to the caller in file order.
 */
#include "traces/failures.h"
#include "base/csvin.h"

#include <string.h>

int trace_failures_load(const char *path, const cluster_spec *cl, trace_failure_fn add, void *ctx,
                        sim_diag *d)
{
    csvin *in;
    int st = csvin_open(&in, path, ',', d);
    if (st != SIM_OK)
        return st;
    static const char *const names[] = {"node", "down_s", "up_s"};
    int32_t ix[3];
    csvin_row row;
    st = csvin_next(in, &row, d);
    if (st == 0)
        st = sim_diag_set(d, SIM_EPARSE, path, 1, 0,
                          "empty file: expected the header node,down_s,up_s");
    if (st < 0 || (st = csvin_map_header(in, &row, names, 3, ix, NULL, d)) != SIM_OK)
        goto out;
    for (int k = 0; k < 3; k++)
        if (ix[k] < 0) {
            st = sim_diag_set(d, SIM_EPARSE, path, row.line, 0,
                              "header lacks column '%s'; expected node,down_s,up_s", names[k]);
            goto out;
        }
    uint32_t width = row.n;
    while ((st = csvin_next(in, &row, d)) == 1) {
        if ((st = csvin_row_width(in, &row, width, d)) != SIM_OK)
            goto out;
        uint32_t node = UINT32_MAX;
        if ((uint32_t)ix[0] < row.n)
            for (uint32_t n = 0; n < cl->n_nodes; n++)
                if (strcmp(cl->nodes[n].name, row.f[ix[0]]) == 0) {
                    node = n;
                    break;
                }
        if (node == UINT32_MAX) {
            st = csvin_field_error(in, &row, ix[0], "node", "the name of a node of the cluster", d);
            goto out;
        }
        sim_time down, up;
        if ((st = csvin_seconds(in, &row, ix[1], "down_s", 0, SIM_TIME_LIMIT_S, &down, d)) ||
            (st = csvin_seconds(in, &row, ix[2], "up_s", 0, SIM_TIME_LIMIT_S, &up, d)))
            goto out;
        if (up <= down) {
            st = csvin_field_error(in, &row, ix[2], "up_s", "a time after down_s", d);
            goto out;
        }
        if ((st = add(ctx, node, down, up, d)) != SIM_OK)
            goto out;
    }
out:
    csvin_close(in);
    return st < 0 ? st : SIM_OK;
}
