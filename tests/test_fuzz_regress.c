/*
 * test_fuzz_regress.c: replays every input the fuzzers found (tests/fuzz/regress/<format>/)
 * through its reader, exactly as the libFuzzer target does (tests/fuzz/fuzz_one.h). Each
 * of them once crashed or hung a reader; a regression crashes this test or trips its
 * ctest timeout. Also checks that skipping bad rows resumes at the next line.
 */
#include "fuzz/fuzz_file_one.h"
#include "fuzz/fuzz_one.h"

#include "check.h"

#include <dirent.h>

#define FIX SIM_SOURCE_DIR "/tests/fixtures/"

/* The parsers that are not trace readers (fuzz_file_one.h). */
static bool is_file_kind(const char *kind)
{
    static const char *const kinds[] = {"cluster_spec", "quota", "failures",
                                        "calibrate",    "model", "policy_opt"};
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (strcmp(kind, kinds[i]) == 0)
            return true;
    return false;
}

static const char *option_for(const char *format)
{
    if (strcmp(format, "alibaba2020") == 0)
        return "tasks=" FIX "good_pai_tasks.csv";
    if (strcmp(format, "gavel") == 0)
        return "steps_table=" FIX "gavel_steps.csv";
    return "";
}

int main(void)
{
    const char *root = SIM_SOURCE_DIR "/tests/fuzz/regress";
    DIR *top = opendir(root);
    CHECK(top != NULL);
    int replayed = 0;
    struct dirent *e;
    while (top && (e = readdir(top))) {
        if (e->d_name[0] == '.')
            continue;
        char dir[1024];
        snprintf(dir, sizeof dir, "%s/%s", root, e->d_name);
        DIR *sub = opendir(dir);
        struct dirent *f;
        while (sub && (f = readdir(sub))) {
            if (f->d_name[0] == '.')
                continue;
            char path[2048];
            snprintf(path, sizeof path, "%s/%s", dir, f->d_name);
            size_t n = 0;
            char *data = check_slurp(path, &n);
            CHECK(data != NULL);
            if (data && is_file_kind(e->d_name))
                CHECK_EQ_I64(fuzz_file_one(e->d_name, (const uint8_t *)data, n), 0);
            else if (data)
                CHECK_EQ_I64(fuzz_one(e->d_name, option_for(e->d_name), (const uint8_t *)data, n),
                             0);
            free(data);
            replayed++;
        }
        if (sub)
            closedir(sub);
    }
    if (top)
        closedir(top);
    CHECK(replayed > 0);
    printf("replayed %d fuzzer inputs\n", replayed);

    /* A malformed quote in row 3 is skipped; rows 2 and 4 are read (the unfixed reader
     * returned the same error forever). */
    FILE *out = fopen("skip_quote.csv", "w");
    fputs("job_id,submit_time,duration,num_gpus\nj1,0,10,1\nj\"2,1,10,1\nj3,2,10,1\n", out);
    fclose(out);
    sim_diag d;
    sim_intern *t = sim_intern_create(false), *m = sim_intern_create(false);
    trace_options o = {.skip_bad_rows = true,
                       .tenants = t,
                       .models = m,
                       .gpu_types = model_catalog_names(fuzz_cat)};
    trace_reader *r = NULL;
    CHECK_EQ_I64(trace_reader_open(&r, "skip_quote.csv", &o, &d), SIM_OK);
    job_spec j;
    int n = 0;
    char ids[64] = "";
    while (r && trace_reader_next(r, &j, &d) == 1 && n < 10) {
        strncat(ids, j.id, sizeof ids - strlen(ids) - 1);
        n++;
    }
    CHECK_EQ_I64(n, 2);
    CHECK_STR(ids, "j1j3");
    CHECK_EQ_I64(r ? trace_reader_skipped(r) : 0, 1);
    trace_reader_close(r);
    sim_intern_destroy(t);
    sim_intern_destroy(m);
    remove("skip_quote.csv");
    model_catalog_destroy(fuzz_cat);
    return check_done();
}
