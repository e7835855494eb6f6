/*
 * test_run_json.c: summary.json and run.json as `clustersim run` writes them are valid
 * JSON (read with json-c, as the report does) with the figures of a small trace checked
 * by hand.
 */
#include "check.h"

#include <json-c/json.h>
#include <math.h>

/* The value at a dotted path ("jct_s.mean"), or NULL when absent (or null). */
static json_object *find(json_object *o, const char *path)
{
    char key[128];
    while (o) {
        const char *dot = strchr(path, '.');
        size_t len = dot ? (size_t)(dot - path) : strlen(path);
        snprintf(key, sizeof key, "%.*s", (int)len, path);
        json_object *next = NULL;
        if (!json_object_is_type(o, json_type_object) ||
            !json_object_object_get_ex(o, key, &next))
            return NULL;
        o = next;
        if (!dot)
            break;
        path = dot + 1;
    }
    return o;
}

static bool number_at(json_object *j, const char *path, double *out)
{
    json_object *v = find(j, path);
    if (!v || !(json_object_is_type(v, json_type_double) || json_object_is_type(v, json_type_int)))
        return false;
    *out = json_object_get_double(v);
    return true;
}

static const char *string_at(json_object *j, const char *path)
{
    json_object *v = find(j, path);
    return v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

/* summary.json and run.json as `clustersim run` writes them. Hand-checked figures of
 * fifo on tests/fixtures/compare_trace.csv with two 1-GPU nodes: JCTs 100, 200, 390,
 * 230, 770 s (mean 338), waits 0, 0, 90, 180, 370 (mean 128), makespan 800 s,
 * allocated GPU-seconds 1450 of 1600 (0.90625); j6 asks for 4 GPUs and is rejected. */
static void test_real_outputs(void)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "%s run --trace %s/tests/fixtures/compare_trace.csv --cluster 2xT4:1 --policy fifo "
             "--out run_json_out --quiet 2>/dev/null",
             SIM_BINARY, SIM_SOURCE_DIR);
    CHECK_EQ_I64(check_system(cmd), 0);
    json_object *j = json_object_from_file("run_json_out/summary.json");
    CHECK(j != NULL);
    if (!j)
        return;
    double x = -1;
    CHECK_STR(string_at(j, "policy"), "fifo");
    CHECK(number_at(j, "jobs.arrived", &x) && x == 6);
    CHECK(number_at(j, "jobs.done", &x) && x == 5);
    CHECK(number_at(j, "jobs.rejected", &x) && x == 1);
    CHECK(number_at(j, "jct_s.mean", &x));
    CHECK_NEAR(x, 338.0, 1e-9);
    CHECK(number_at(j, "jct_s.max", &x));
    CHECK_NEAR(x, 770.0, 1e-9);
    CHECK(number_at(j, "wait_s.mean", &x));
    CHECK_NEAR(x, 128.0, 1e-9);
    CHECK(number_at(j, "makespan_s", &x));
    CHECK_NEAR(x, 800.0, 1e-9);
    CHECK(number_at(j, "gpu_util.allocated", &x));
    CHECK_NEAR(x, 0.90625, 1e-5);
    CHECK(number_at(j, "slo.violations", &x) && x == 2);
    CHECK(number_at(j, "tenants.carol.jct_mean", &x));
    CHECK_NEAR(x, 770.0, 1e-9);
    CHECK(number_at(j, "cluster.gpus", &x) && x == 2);
    json_object_put(j);
    j = json_object_from_file("run_json_out/run.json");
    CHECK(j != NULL);
    if (!j)
        return;
    CHECK_STR(string_at(j, "policy"), "fifo");
    json_object *in = find(j, "inputs");
    CHECK(in && json_object_is_type(in, json_type_array));
    json_object *cmdn = find(j, "command");
    CHECK(cmdn && json_object_is_type(cmdn, json_type_array) &&
          json_object_array_length(cmdn) == 11);
    json_object_put(j);
}

int main(void)
{
    test_real_outputs();
    return check_done();
}
