/*
 * rate_opts.c: turns the run options --throughput, --interference and --ref-gpu-type
 * into the GPU models of models/rate.h. Both off means no rate model at all (the
 * summary then says "none").
 */
#include "study/study.h"

#include "models/rate.h"

#include <string.h>

#define MAX_STEPS_TABLES 8

int study_rate_setup(const run_args *a, const model_catalog *cat, const sim_intern *classes,
                     model_rate **out, sim_diag *d)
{
    *out = NULL;
    model_rate_config cfg = {.throughput = true, .interference = MODEL_INTERF_NONE};
    const char *tp = a->throughput ? a->throughput : "measured";
    char buf[2048];
    const char *tables[MAX_STEPS_TABLES];
    if (strcmp(tp, "none") == 0) {
        cfg.throughput = false;
    } else if (strcmp(tp, "measured") != 0) {
        /* A comma-separated list of steps tables. */
        if (strlen(tp) >= sizeof buf)
            return sim_diag_set(d, SIM_EINVAL, NULL, 0, 0, "--throughput: the list is too long");
        /* An empty name (an unset variable, a comma too many) names no table: strtok_r
         * would skip it, and an empty list would fall back to the measured tables. */
        size_t tp_len = strlen(tp);
        if (tp_len == 0 || tp[0] == ',' || tp[tp_len - 1] == ',' || strstr(tp, ",,"))
            return sim_diag_set(d, SIM_EINVAL, NULL, 0, 0,
                                "--throughput '%s': expected measured, none or steps tables "
                                "FILE[,FILE] (a file name is empty)",
                                tp);
        snprintf(buf, sizeof buf, "%s", tp);
        char *save = NULL;
        for (char *p = strtok_r(buf, ",", &save); p; p = strtok_r(NULL, ",", &save)) {
            if (cfg.n_steps == MAX_STEPS_TABLES)
                return sim_diag_set(d, SIM_EINVAL, NULL, 0, 0, "--throughput: at most %d tables",
                                    MAX_STEPS_TABLES);
            tables[cfg.n_steps++] = p;
        }
        cfg.steps = tables;
    }
    const char *inf = a->interference ? a->interference : "none";
    if (strcmp(inf, "measured") == 0) {
        cfg.interference = MODEL_INTERF_MEASURED;
    } else if (strcmp(inf, "model") == 0) {
        cfg.interference = MODEL_INTERF_MODEL;
    } else if (strcmp(inf, "none") != 0) {
        cfg.interference = MODEL_INTERF_CALIBRATED;
        cfg.contention = inf;
    }
    if (a->ref_gpu_type && strcmp(a->ref_gpu_type, "job") != 0) {
        uint32_t t =
            sim_intern_find(model_catalog_names(cat), a->ref_gpu_type, strlen(a->ref_gpu_type));
        if (t == SIM_INTERN_NONE || t == 0) {
            char known[600];
            sim_intern_list(model_catalog_names(cat), ", ", known, sizeof known);
            return sim_diag_set(d, SIM_EINVAL, NULL, 0, 0,
                                "--ref-gpu-type: unknown GPU type '%s' (known: %s)",
                                a->ref_gpu_type, known);
        }
        cfg.default_ref = (uint16_t)t;
    }
    if (!cfg.throughput && cfg.interference == MODEL_INTERF_NONE)
        return SIM_OK;
    return model_rate_create(out, cat, classes, &cfg, d);
}
