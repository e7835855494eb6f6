/*
 * model_opts.c: the options the `clustersim model` throughput and interference commands
 * share: the catalog, the steps tables and the GPU types of the columns.
 */
#include "cli/cli.h"

#include "cli/model_cmds.h"
#include "base/alloc.h"

#include <stdio.h>
#include <string.h>

int cli_model_load_catalog(model_catalog **cat, const char *path)
{
    sim_diag d = {0};
    int st = model_catalog_load(cat, path ? path : model_catalog_default_path(), &d);
    if (st != SIM_OK)
        cli_print_diag(&d);
    return st;
}

/* Parse --catalog, --steps FILE (repeatable) and --types; 1 = consumed, 0 = not ours,
 * -1 = error (printed). */
int cli_tp_opt(int argc, char **argv, int *i, tp_opts *o)
{
    const char *v;
    int m;
    if ((m = cli_opt(argc, argv, i, "--catalog", &v)) != 0) {
        o->catalog = v;
        return m;
    }
    if ((m = cli_opt(argc, argv, i, "--steps", &v)) != 0) {
        if (m < 0)
            return -1;
        if (o->n_tables >= MAX_TABLES) {
            cli_usage_error("at most %d --steps tables", MAX_TABLES);
            return -1;
        }
        o->tables[o->n_tables++] = v;
        return 1;
    }
    if ((m = cli_opt(argc, argv, i, "--types", &v)) != 0) {
        o->types = v;
        return m;
    }
    return 0;
}

int cli_tp_load(const tp_opts *o, model_catalog **cat, model_throughput **tp)
{
    *tp = NULL;
    int st = cli_model_load_catalog(cat, o->catalog);
    if (st != SIM_OK)
        return st;
    sim_diag d = {0};
    if (o->n_tables)
        st = model_throughput_create(tp, *cat, o->tables, o->n_tables, SIM_GPU_TYPE_NONE, &d);
    else
        st = model_throughput_create_default(tp, *cat, &d);
    if (st != SIM_OK) {
        cli_print_diag(&d);
        model_catalog_destroy(*cat);
        *cat = NULL;
    }
    return st;
}

/* Resolve a comma-separated list of type names; false with a printed error. */
bool cli_parse_types(const model_catalog *cat, const char *list, uint16_t *types, uint32_t *n)
{
    *n = 0;
    for (const char *p = list;;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        /* An empty name (an empty list, a comma too many) is a typo, never a type. */
        if (len == 0) {
            cli_usage_error("--types: expected GPU type names separated by commas, got '%s'", list);
            return false;
        }
        uint32_t id = sim_intern_find(model_catalog_names(cat), p, len);
        if (id == SIM_INTERN_NONE || id == 0) {
            char known[600];
            sim_intern_list(model_catalog_names(cat), ", ", known, sizeof known);
            cli_usage_error("--types: unknown GPU type '%.*s' (known: %s)", (int)len, p, known);
            return false;
        }
        for (uint32_t k = 0; k < *n; k++)
            if (types[k] == id) {
                cli_usage_error("--types: GPU type '%.*s' is named twice in '%s'", (int)len, p,
                                list);
                return false;
            }
        if (*n == SIM_MAX_GPU_TYPES) {
            cli_usage_error("--types: at most %d GPU types", SIM_MAX_GPU_TYPES);
            return false;
        }
        types[(*n)++] = (uint16_t)id;
        if (!comma)
            return true;
        p = comma + 1;
    }
}

const char cli_tp_usage[] =
    "  --catalog FILE   GPU catalog (default: the shipped models/data/gpus.csv)\n"
    "  --steps FILE     steps table job_type,scale_factor,gpu_type,steps_per_sec (repeatable;\n"
    "                   default: models/data/gavel_steps.csv and pollux_steps.csv)\n";
