/*
 * cmd_model_samples.c: `clustersim model gen samples` — labelled samples drawn from the
 * model zoo, the training data of the demand predictors.
 */
#include "cli/cli.h"

#include "models/catalog.h"
#include "models/predictor.h"
#include "models/zoo.h"
#include "base/alloc.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

int cmd_model_gen_samples(int argc, char **argv)
{
    const char *out = NULL, *catalog = NULL, *types = NULL;
    uint64_t samples = 20000, seed = 1;
    for (int i = 0; i < argc; i++) {
        const char *v;
        int m;
        if (cli_flag(argv, i, "--help") || cli_flag(argv, i, "-h")) {
            printf(
                "usage: clustersim model gen samples --out FILE [--samples N] [--seed N]\n"
                "       [--gpu-types A|B|...] [--catalog FILE]\n"
                "Writes N synthetic labelled samples (source=synthetic) drawn from the model\n"
                "zoo on the given GPU types (default: every catalog type not marked assumed).\n");
            return 0;
        }
#define OPT(name) ((m = cli_opt(argc, argv, &i, name, &v)) != 0)
        if (OPT("--out")) {
            if (m < 0)
                return 2;
            out = v;
        } else if (OPT("--samples")) {
            if (m < 0 || !cli_u64("--samples", v, 1, 100000000, &samples))
                return 2;
        } else if (OPT("--seed")) {
            if (m < 0 || !cli_u64("--seed", v, 0, UINT64_MAX, &seed))
                return 2;
        } else if (OPT("--gpu-types")) {
            if (m < 0)
                return 2;
            types = v;
        } else if (OPT("--catalog")) {
            if (m < 0)
                return 2;
            catalog = v;
        } else {
            return cli_usage_error("unknown option '%s' for 'clustersim model gen samples'",
                                   argv[i]);
        }
#undef OPT
    }
    if (!out)
        return cli_usage_error("clustersim model gen samples needs --out FILE");
    /* study_out_open joins a directory and a name. */
    char dir[1024];
    const char *slash = strrchr(out, '/'), *name = slash ? slash + 1 : out;
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash == out ? 1 : slash - out) : 1,
             slash ? out : ".");
    if (!*name)
        return cli_usage_error("option --out: '%s' names a directory, not a file", out);
    sim_diag d = {0};
    model_catalog *cat = NULL;
    model_zoo *zoo = NULL;
    gsl_rng *rng = NULL;
    study_outfile of = {0};
    int st = model_catalog_load(&cat, catalog ? catalog : model_catalog_default_path(), &d);
    if (st != SIM_OK)
        return cli_fail(st, &d);
    uint64_t mask = 0;
    const sim_intern *names = model_catalog_names(cat);
    if (types) {
        const char *s = types;
        while (*s) {
            const char *bar = strchr(s, '|');
            size_t len = bar ? (size_t)(bar - s) : strlen(s);
            uint32_t t = sim_intern_find(names, s, len);
            if (t == SIM_INTERN_NONE || t == 0 || t >= SIM_MAX_GPU_TYPES) {
                char known[1024];
                sim_intern_list(names, ", ", known, sizeof known);
                model_catalog_destroy(cat);
                return cli_usage_error("option --gpu-types: unknown GPU type '%.*s' (known: %s)",
                                       (int)len, s, known);
            }
            mask |= UINT64_C(1) << t;
            s += len + (bar ? 1 : 0);
        }
    } else {
        for (uint16_t t = 1; t < model_catalog_count(cat) && t < SIM_MAX_GPU_TYPES; t++)
            if (!model_catalog_type(cat, t)->assumed)
                mask |= UINT64_C(1) << t;
    }
    if (mask == 0) {
        st = sim_diag_set(&d, SIM_EINVAL, NULL, 0, 0, "no GPU type to sample (give --gpu-types)");
        goto out;
    }
    if ((st = model_zoo_create(&zoo, cat, &d)) != SIM_OK)
        goto out;
    rng = gsl_rng_alloc(gsl_rng_mt19937);
    if (!rng) {
        st = SIM_ENOMEM;
        goto out;
    }
    gsl_rng_set(rng, seed);
    if (!study_out_open(&of, dir, name)) {
        st = SIM_EIO; /* study_out_open printed why */
        goto out;
    }
    st = model_dataset_write_header(of.f);
    for (uint64_t i = 0; i < samples && st == SIM_OK; i++) {
        model_sample s;
        if ((st = model_zoo_sample(zoo, rng, mask, &s)) == SIM_OK)
            st = model_dataset_write_row(of.f, &s);
    }
    if (st != SIM_OK)
        sim_diag_set(&d, st, out, 0, 0, "write failed");
    if (!study_out_close(&of, st == SIM_OK) && st == SIM_OK)
        st = SIM_EIO; /* study_out_close printed why */
    if (st == SIM_OK)
        fprintf(stderr, "clustersim: %s: %llu synthetic samples (model zoo, seed %llu)\n", out,
                (unsigned long long)samples, (unsigned long long)seed);
out:
    if (rng)
        gsl_rng_free(rng);
    model_zoo_destroy(zoo);
    model_catalog_destroy(cat);
    /* An output that cannot be created or written was reported already (d stays empty):
     * fail() then prints nothing more and exits 2. */
    return st == SIM_OK ? 0 : cli_fail(st, &d);
}
