/*
 * model_cmds.h: what the `clustersim model` commands share — the dispatcher's handlers
 * and the options of the throughput and interference commands (model_opts.c).
 */
#ifndef CLI_MODEL_CMDS_H
#define CLI_MODEL_CMDS_H

#include "models/catalog.h"
#include "models/throughput.h"

#include <stdbool.h>
#include <stdint.h>

#define MAX_TABLES 16

/* Options shared by the throughput commands. */
typedef struct tp_opts {
    const char *catalog;
    const char *tables[MAX_TABLES];
    uint32_t n_tables;
    const char *types; /* comma-separated column types, or NULL */
} tp_opts;

/* The help lines of those options. */
extern const char cli_tp_usage[];

/* Load the catalog (NULL = the shipped one); prints the error. */
int cli_model_load_catalog(model_catalog **cat, const char *path);
int cli_tp_opt(int argc, char **argv, int *i, tp_opts *o);
int cli_tp_load(const tp_opts *o, model_catalog **cat, model_throughput **tp);
bool cli_parse_types(const model_catalog *cat, const char *list, uint16_t *types, uint32_t *n);

int cli_model_derive_catalog(int argc, char **argv);
int cli_model_derive_gavel(int argc, char **argv);
int cli_model_derive_pollux(int argc, char **argv);
int cli_model_show_throughput(int argc, char **argv);
int cli_model_eval_throughput(int argc, char **argv);
int cli_model_show_interference(int argc, char **argv);
int cli_model_eval_interference(int argc, char **argv);

#endif
