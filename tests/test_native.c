/*
 * test_native.c: the native trace reader — every field of a good fixture, identical
 * jobs at every chunk size plain and gzip, each bad fixture with its exact diagnostic
 * (tests/fixtures/bad_native_*.csv paired with .expected; the others are test_traces'),
 * --skip-bad-rows counting,
 * unknown columns reported, and allocation failures on open.
 */
#include "models/catalog.h"
#include "base/alloc.h"
#include "traces/trace.h"

#include "check.h"

#include <dirent.h>
#include <zlib.h>

static model_catalog *cat;
static sim_intern *tenants, *models;

static trace_options opts(const char *format, bool skip)
{
    trace_options o = {.format = format,
                       .skip_bad_rows = skip,
                       .tenants = tenants,
                       .models = models,
                       .gpu_types = model_catalog_names(cat)};
    return o;
}

/* All jobs of a file rendered as text; NULL (and *d) on error. */
static char *render(const char *path, size_t chunk, sim_diag *d, uint64_t *skipped)
{
    trace_options o = opts("native", skipped != NULL);
    trace_reader *r;
    if (trace_reader_open(&r, path, &o, d) != SIM_OK)
        return NULL;
    if (chunk)
        trace_reader_set_chunk(r, chunk);
    size_t cap = 1 << 14, n = 0;
    char *out = calloc(cap, 1);
    job_spec j;
    int st;
    while ((st = trace_reader_next(r, &j, d)) == 1)
        n += (size_t)snprintf(out + n, cap - n,
                              "%s t=%lld w=%.3f g=%u m=%u tm=%u r=%u ten=%s q=%s name=%s line=%llu\n",
                              j.id, (long long)j.submit_us, j.work_s, j.num_gpus, j.gpu_milli,
                              j.true_milli, j.replicas, sim_intern_name(tenants, j.tenant),
                              sim_qos_name(j.qos), j.name, (unsigned long long)j.line);
    if (skipped)
        *skipped = trace_reader_skipped(r);
    trace_reader_close(r);
    if (st < 0) {
        free(out);
        return NULL;
    }
    return out;
}

static void test_good(void)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/tests/fixtures/good_native_quoted.csv", SIM_SOURCE_DIR);
    sim_diag d;
    char *a = render(path, 0, &d, NULL);
    CHECK_STR(a, "j1 t=0 w=3600.000 g=1 m=500 tm=500 r=0 ten=alice q=LS name= line=2\n"
                 "j2 t=12500000 w=7200.000 g=8 m=1000 tm=1000 r=0 ten=bob q=BE name= line=3\n"
                 "j,3 t=20000000 w=10.000 g=0 m=0 tm=0 r=0 ten=team \"x\" q= name= line=4\n"
                 "j4 t=20000000 w=1.250 g=2 m=1000 tm=1000 r=0 ten=alice q= name= line=5\n");
    /* Chunk invariance, plain and gzip. */
    size_t len = 0;
    char *raw = check_slurp(path, &len);
    gzFile g = gzopen("native_good.csv.gz", "wb");
    gzwrite(g, raw, (unsigned)len);
    gzclose(g);
    int bad = 0;
    for (size_t c = 1; c <= len + 1; c++) {
        char *p = render(path, c, &d, NULL);
        char *z = render("native_good.csv.gz", c, &d, NULL);
        bad += !p || !z || strcmp(p, a) || strcmp(z, a);
        free(p);
        free(z);
    }
    CHECK(bad == 0);
    free(raw);
    free(a);
}

static void test_bad_fixtures(void)
{
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/tests/fixtures", SIM_SOURCE_DIR);
    DIR *dp = opendir(dir);
    CHECK(dp != NULL);
    if (!dp)
        return;
    struct dirent *de;
    int seen = 0;
    while ((de = readdir(dp))) {
        size_t n = strlen(de->d_name);
        if (strncmp(de->d_name, "bad_native_", 11) != 0 || n < 5 ||
            strcmp(de->d_name + n - 4, ".csv") != 0)
            continue;
        char path[2048], exp_path[2048];
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        snprintf(exp_path, sizeof exp_path, "%s/%.*s.expected", dir, (int)(n - 4), de->d_name);
        /* Fixtures without a .expected file belong to test_traces' table. */
        char *expected = check_slurp(exp_path, NULL);
        if (!expected)
            continue;
        expected[strcspn(expected, "\n")] = '\0';
        sim_diag d = {0};
        char *out = render(path, 0, &d, NULL);
        CHECK(out == NULL);
        char msg[2048], want[4096];
        sim_diag_format(&d, msg, sizeof msg);
        snprintf(want, sizeof want, "%s%s", path, expected);
        CHECK_STR(msg, want);
        /* The same diagnostic at every chunk size. */
        int diff = 0;
        for (size_t c = 1; c < 64; c += 7) {
            sim_diag d2 = {0};
            char *o2 = render(path, c, &d2, NULL);
            char m2[2048];
            diff += o2 != NULL || strcmp(sim_diag_format(&d2, m2, sizeof m2), msg) != 0;
            free(o2);
        }
        CHECK(diff == 0);
        free(out);
        free(expected);
        seen++;
    }
    closedir(dp);
    CHECK(seen >= 13);
}

static void test_skip_and_unknown(void)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/tests/fixtures/bad_native_gpu_milli.csv", SIM_SOURCE_DIR);
    sim_diag d;
    uint64_t skipped = 0;
    char *out = render(path, 0, &d, &skipped);
    CHECK(out != NULL);
    CHECK_EQ_I64(skipped, 1);
    CHECK(out && strncmp(out, "j1 ", 3) == 0 && !strstr(out, "j2 "));
    free(out);
    FILE *f = fopen("native_extra.csv", "w");
    fputs("job_id,submit_time,duration,num_gpus,tenat,notes\nj1,0,5,1,x,y\n", f);
    fclose(f);
    trace_options o = opts(NULL, false);
    trace_reader *r;
    CHECK(trace_reader_open(&r, "native_extra.csv", &o, &d) == SIM_OK);
    CHECK_STR(trace_reader_ignored_columns(r), "tenat, notes");
    trace_reader_close(r);
    CHECK(trace_reader_open(&r, "native_extra.csv", &(trace_options){.format = "nosuch",
        .tenants = tenants, .models = models, .gpu_types = model_catalog_names(cat)}, &d) ==
          SIM_EINVAL);
    CHECK(strstr(d.msg, "unknown trace format 'nosuch'") != NULL);
}

static void test_alloc_failures(void)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/tests/fixtures/good_native_quoted.csv", SIM_SOURCE_DIR);
    int64_t base = sim_alloc_live();
    int failed = 0;
    for (uint64_t k = 1; k < 40; k++) {
        sim_intern *t2 = sim_intern_create(false), *m2 = sim_intern_create(false);
        int64_t before = sim_alloc_live();
        sim_alloc_fail_after(k);
        trace_options o = {.tenants = t2, .models = m2, .gpu_types = model_catalog_names(cat)};
        trace_reader *r;
        sim_diag d;
        int st = trace_reader_open(&r, path, &o, &d);
        job_spec j;
        if (st == SIM_OK) {
            while ((st = trace_reader_next(r, &j, &d)) == 1)
                ;
            trace_reader_close(r);
        }
        sim_alloc_fail_after(0);
        failed += st == SIM_ENOMEM;
        CHECK(st == SIM_ENOMEM || st == 0);
        /* Interned names may remain in the tables; the reader itself leaks nothing. */
        sim_intern_destroy(t2);
        sim_intern_destroy(m2);
        (void)before;
        CHECK_EQ_I64(sim_alloc_live(), base);
    }
    CHECK(failed > 0);
}

int main(void)
{
    sim_diag d;
    char path[1024];
    snprintf(path, sizeof path, "%s/models/data/gpus.csv", SIM_SOURCE_DIR);
    if (model_catalog_load(&cat, path, &d) != SIM_OK) {
        fprintf(stderr, "cannot load the catalog: %s\n", d.msg);
        return 1;
    }
    tenants = sim_intern_create(false);
    models = sim_intern_create(false);
    test_good();
    test_bad_fixtures();
    test_skip_and_unknown();
    test_alloc_failures();
    sim_intern_destroy(tenants);
    sim_intern_destroy(models);
    model_catalog_destroy(cat);
    return check_done();
}
