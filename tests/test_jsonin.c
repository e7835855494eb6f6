/*
 * test_jsonin.c: the strict JSON reader (study/jsonin.c) — values, escapes and lookups
 * on hand-written documents; every kind of malformed input with its exact diagnostic;
 * allocation failures at every step; and real summary.json / run.json files written
 * by `clustersim run` on a small trace whose figures are checked by hand.
 */
#include "study/jsonin.h"
#include "base/alloc.h"

#include "check.h"

#include <math.h>

static json_doc *parse(const char *text, sim_diag *d)
{
    json_doc *j = NULL;
    memset(d, 0, sizeof *d);
    int st = json_doc_parse(&j, text, strlen(text), "x.json", d);
    CHECK(st == SIM_OK || j == NULL);
    return j;
}

/* The one-line diagnostic for malformed text. */
static void check_bad(const char *text, const char *expected)
{
    sim_diag d;
    json_doc *j = parse(text, &d);
    CHECK(j == NULL);
    char buf[2048];
    CHECK_STR(sim_diag_format(&d, buf, sizeof buf), expected);
    json_doc_destroy(j);
}

static void test_values(void)
{
    sim_diag d;
    const char *text = "{\n  \"a\": {\"b\": -12.5e1, \"c\": [1, 2, {\"d\": true}]},\n"
                       "  \"s\": \"x\\\"y\\\\z\\/\\n\\u00e9\\ud83d\\ude00\",\n"
                       "  \"n\": null, \"f\": false, \"t\": true, \"z\": 0, \"e\": {},\n"
                       "  \"dotted.key\": 3\n}\n";
    json_doc *j = parse(text, &d);
    CHECK(j != NULL);
    if (!j)
        return;
    double x = 0;
    CHECK(json_doc_number(j, "a.b", &x));
    CHECK_NEAR(x, -125.0, 0);
    CHECK(json_doc_number(j, "z", &x) && x == 0);
    CHECK(json_doc_number(j, "n", &x) && isnan(x));
    CHECK(!json_doc_number(j, "f", &x));     /* a bool is not a number */
    CHECK(!json_doc_number(j, "a.c", &x));   /* nor is an array */
    CHECK(!json_doc_number(j, "a.nope", &x));
    CHECK(!json_doc_number(j, "s.x", &x));   /* a string has no members */
    CHECK_STR(json_doc_string(j, "s"), "x\"y\\z/\n\xc3\xa9\xf0\x9f\x98\x80");
    CHECK(json_doc_string(j, "a") == NULL);
    int32_t c = json_doc_find(j, "a.c");
    CHECK(c > 0);
    const json_node *cn = json_doc_node(j, (uint32_t)c);
    CHECK(cn && cn->type == JSON_ARRAY && cn->n_children == 3);
    /* Array elements follow their parent; the third is an object with member d. */
    int32_t third = -1, k = 0;
    for (uint32_t i = (uint32_t)c + 1; i < cn->end; i = json_doc_node(j, i)->end, k++)
        if (k == 2)
            third = (int32_t)i;
    CHECK(third > 0 && json_doc_node(j, (uint32_t)third)->type == JSON_OBJECT);
    int32_t dd = json_doc_member(j, third, "d");
    CHECK(dd > 0 && json_doc_node(j, (uint32_t)dd)->type == JSON_BOOL &&
          json_doc_node(j, (uint32_t)dd)->num == 1);
    CHECK(json_doc_node(j, (uint32_t)json_doc_find(j, "f"))->num == 0);
    CHECK(json_doc_find(j, "e") > 0 && json_doc_node(j, (uint32_t)json_doc_find(j, "e"))->n_children == 0);
    /* A key with a dot is reached by json_doc_member, not by a dotted path. */
    CHECK(json_doc_find(j, "dotted.key") < 0);
    int32_t dk = json_doc_member(j, 0, "dotted.key");
    CHECK(dk > 0 && json_doc_node(j, (uint32_t)dk)->num == 3);
    CHECK_EQ_I64(json_doc_node(j, (uint32_t)dk)->line, 5);
    CHECK_EQ_I64(json_doc_node(j, (uint32_t)dk)->column, 3);
    CHECK_EQ_I64(json_doc_node(j, 0)->n_children, 8);
    json_doc_destroy(j);

    /* Top-level scalars are documents too (RFC 8259). */
    j = parse("  42 ", &d);
    CHECK(j && json_doc_node(j, 0)->type == JSON_NUMBER && json_doc_node(j, 0)->num == 42);
    json_doc_destroy(j);
}

static void test_bad(void)
{
    check_bad("", "x.json:1:1: error: JSON: expected a value, got the end of the file");
    check_bad("{\"a\": 1,}",
              "x.json:1:9: error: JSON: expected '\"' to begin a member name, got \"}\"");
    check_bad("[1, 2,]", "x.json:1:7: error: JSON: expected a value (object, array, string, "
                         "number, true, false or null), got \"]\"");
    check_bad("{\"a\" 1}", "x.json:1:6: error: JSON: expected ':' after the member name, got \"1\"");
    check_bad("{\"a\": 1 \"b\": 2}",
              "x.json:1:9: error: JSON: expected ',' or '}', got \"\\\"\"");
    check_bad("[01]", "x.json:1:3: error: JSON: expected no leading zero ('.', 'e' or the end "
                      "of the number), got \"1\"");
    check_bad("[1.]", "x.json:1:4: error: JSON: expected a digit after the decimal point, got \"]\"");
    check_bad("[1e]", "x.json:1:4: error: JSON: expected a digit in the exponent, got \"]\"");
    check_bad("[-]", "x.json:1:3: error: JSON: expected a digit, got \"]\"");
    check_bad("[NaN]", "x.json:1:2: error: JSON: expected a value (object, array, string, number, "
                       "true, false or null), got \"N\"");
    check_bad("[1e999]",
              "x.json:1:2: error: JSON: expected a number within the range of a double, got \"1\"");
    check_bad("[tru]", "x.json:1:2: error: JSON: expected a value (object, array, string, number, "
                       "true, false or null), got \"t\"");
    check_bad("{\"a\": 1,\n \"b\": 2,\n \"a\": 3}",
              "x.json:3:2: error: JSON: expected a member name not used before in this object, "
              "got \"a\" again (first on line 1)");
    check_bad("{} x", "x.json:1:4: error: JSON: expected the end of the file after the top-level "
                      "value, got \"x\"");
    check_bad("\"abc", "x.json:1:5: error: JSON: expected '\"' to close the string, got the end "
                       "of the file");
    check_bad("[\"a\tb\"]", "x.json:1:4: error: JSON: expected a string character (control "
                            "characters must be escaped), got \"\\x09\"");
    check_bad("[\"\\q\"]", "x.json:1:4: error: JSON: expected an escape \\\" \\\\ \\/ \\b \\f \\n "
                           "\\r \\t or \\uXXXX, got \"q\"");
    check_bad("[\"\\u12G4\"]",
              "x.json:1:5: error: JSON: expected four hexadecimal digits after \\u, got \"1\"");
    check_bad("[\"\\ud800x\"]", "x.json:1:9: error: JSON: expected a low surrogate "
                                "\\uDC00..\\uDFFF after a high surrogate, got \"x\"");
    check_bad("[\"\\udc00\"]", "x.json:1:3: error: JSON: expected a high surrogate before a low "
                               "surrogate, got \"\\\\\"");
    check_bad("[\"\\u0000\"]",
              "x.json:1:3: error: JSON: expected a string without NUL characters, got \"\\\\\"");
    check_bad("[\"\xc3\x28\"]", "x.json:1:3: error: JSON: expected valid UTF-8, got \"\\xc3\"");
    check_bad("[\"\xed\xa0\x80\"]", "x.json:1:3: error: JSON: expected valid UTF-8, got \"\\xed\"");
    char deep[200];
    memset(deep, '[', 70);
    deep[70] = '\0';
    check_bad(deep, "x.json:1:66: error: JSON: expected at most 64 nested arrays and objects, "
                    "got \"[\"");
    /* Input need not be NUL-terminated: a number at the very end of the buffer. */
    json_doc *j = NULL;
    sim_diag d = {0};
    char num[3] = {'1', '2', '3'};
    CHECK(json_doc_parse(&j, num, 2, "x.json", &d) == SIM_OK);
    CHECK(j && json_doc_node(j, 0)->num == 12);
    json_doc_destroy(j);
    /* A missing file is an I/O error that names it. */
    CHECK(json_doc_load(&j, "no/such/summary.json", &d) == SIM_EIO);
    char buf[2048];
    CHECK_STR(sim_diag_format(&d, buf, sizeof buf),
              "no/such/summary.json: error: cannot open: No such file or directory");
}

static void test_faults(void)
{
    const char *text = "{\"a\": [1, 2, 3, {\"b\": \"c\"}], \"d\": {\"e\": 1, \"f\": 2}}";
    int64_t live = sim_alloc_live();
    int failures = 0, k;
    for (k = 1; k < 200; k++) {
        json_doc *j = NULL;
        sim_diag d = {0};
        sim_alloc_fail_after((uint64_t)k);
        int st = json_doc_parse(&j, text, strlen(text), "x.json", &d);
        sim_alloc_fail_after(0);
        if (st == SIM_OK) {
            json_doc_destroy(j);
            break;
        }
        CHECK_EQ_I64(st, SIM_ENOMEM);
        CHECK(j == NULL);
        failures++;
    }
    CHECK(failures >= 3); /* the document, its scratch, its arena, the node array */
    CHECK(k < 200);
    CHECK_EQ_I64(sim_alloc_live(), live);
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
             "--out jsonin_out --quiet 2>/dev/null",
             SIM_BINARY, SIM_SOURCE_DIR);
    CHECK_EQ_I64(check_system(cmd), 0);
    json_doc *j = NULL;
    sim_diag d = {0};
    CHECK(json_doc_load(&j, "jsonin_out/summary.json", &d) == SIM_OK);
    if (!j)
        return;
    double x = -1;
    CHECK_STR(json_doc_string(j, "policy"), "fifo");
    CHECK(json_doc_number(j, "jobs.arrived", &x) && x == 6);
    CHECK(json_doc_number(j, "jobs.done", &x) && x == 5);
    CHECK(json_doc_number(j, "jobs.rejected", &x) && x == 1);
    CHECK(json_doc_number(j, "jct_s.mean", &x));
    CHECK_NEAR(x, 338.0, 1e-9);
    CHECK(json_doc_number(j, "jct_s.max", &x));
    CHECK_NEAR(x, 770.0, 1e-9);
    CHECK(json_doc_number(j, "wait_s.mean", &x));
    CHECK_NEAR(x, 128.0, 1e-9);
    CHECK(json_doc_number(j, "makespan_s", &x));
    CHECK_NEAR(x, 800.0, 1e-9);
    CHECK(json_doc_number(j, "gpu_util.allocated", &x));
    CHECK_NEAR(x, 0.90625, 1e-5);
    CHECK(json_doc_number(j, "slo.violations", &x) && x == 2);
    CHECK(json_doc_number(j, "tenants.carol.jct_mean", &x));
    CHECK_NEAR(x, 770.0, 1e-9);
    CHECK(json_doc_number(j, "cluster.gpus", &x) && x == 2);
    json_doc_destroy(j);
    CHECK(json_doc_load(&j, "jsonin_out/run.json", &d) == SIM_OK);
    if (!j)
        return;
    CHECK_STR(json_doc_string(j, "policy"), "fifo");
    int32_t in = json_doc_find(j, "inputs");
    CHECK(in > 0 && json_doc_node(j, (uint32_t)in)->type == JSON_ARRAY);
    int32_t cmdn = json_doc_find(j, "command");
    CHECK(cmdn > 0 && json_doc_node(j, (uint32_t)cmdn)->n_children == 11);
    json_doc_destroy(j);
}

int main(void)
{
    test_values();
    test_bad();
    test_faults();
    test_real_outputs();
    return check_done();
}
