/*
 * gavel_steps.h: tests derive a Gavel steps table (job_type,scale_factor,gpu_type,
 * steps_per_sec) from Gavel's measured isolated throughputs in ../shared/data, naming
 * the worker types as the catalog does (k80 -> K80, p100 -> P100, v100 -> V100M16).
 */
#ifndef TESTS_GAVEL_STEPS_H
#define TESTS_GAVEL_STEPS_H

#include "check.h"

/* Derive a steps table from Gavel's isolated throughputs (k80, p100, v100 rows). */
static inline bool derive_steps(const char *src, const char *dst)
{
    size_t n;
    char *data = check_slurp(src, &n);
    if (!data)
        return false;
    FILE *f = fopen(dst, "w");
    fputs("job_type,scale_factor,gpu_type,steps_per_sec\n", f);
    char *save = NULL;
    for (char *line = strtok_r(data, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char *c1 = strchr(line, ',');
        if (!c1)
            continue;
        *c1 = '\0';
        const char *type = !strcmp(line, "k80")    ? "K80"
                           : !strcmp(line, "p100") ? "P100"
                           : !strcmp(line, "v100") ? "V100M16"
                                                   : NULL;
        char *rest = c1 + 1;
        char *c3 = strrchr(rest, ','), *c2;
        if (!type || !c3)
            continue;
        *c3 = '\0';
        c2 = strrchr(rest, ',');
        if (!c2)
            continue;
        *c2 = '\0';
        fprintf(f, "\"%s\",%s,%s,%s\n", rest, c2 + 1, type, c3 + 1);
    }
    fclose(f);
    free(data);
    return true;
}

#endif
