/*
 * test_sweep.c: `clustersim sweep`. The grid's expansion (cross product minus
 * exclusions, hand-counted), stable cell names, the cells' command lines, errors of bad
 * grid files at their line and column; then the command: every cell's row in sweep.csv,
 * resume (complete cells are not run again, a truncated summary.json is redone, same
 * CSV), a failing cell that does not stop the others, and pack cells.
 */
#include "study/grid.h"
#include "study/proc.h"

#include "check.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define OUT "sweep_out"

static size_t lines_with(const char *path, const char *needle)
{
    char *s = check_slurp(path, NULL);
    size_t n = 0;
    for (char *p = s; p && (p = strstr(p, needle)); p++)
        n++;
    free(s);
    return n;
}

/* Write OUT/name with the given text. */
static bool write_grid(const char *name, const char *text)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", OUT, name);
    FILE *f = fopen(path, "w");
    bool ok = f && fputs(text, f) >= 0;
    return f && fclose(f) == 0 && ok;
}

/* clustersim sweep OUT/grid --out OUT/out [extra], its output in OUT/log; its status. */
static int sweep(const char *grid_name, const char *out, const char *extra, const char *log)
{
    return check_sh("%s sweep %s/%s --out %s/%s %s > %s/%s 2>&1", SIM_BINARY, OUT, grid_name, OUT,
                    out, extra, OUT, log);
}

static int parse(const char *text, grid *g, sim_diag *d)
{
    return grid_parse(text, strlen(text), "g.json", g, d);
}

/* Cell c's command line, its words joined by spaces into line; whether argv ended in
 * NULL. */
static bool cell_line(const grid *g, const grid_cell *c, char *line, size_t size)
{
    char *argv[GRID_CELL_ARGV], seed[24];
    size_t n = grid_cell_argv(g, c, "clustersim", "dir", seed, argv);
    line[0] = '\0';
    for (size_t k = 0; k < n; k++)
        snprintf(line + strlen(line), size - strlen(line), "%s%s", k ? " " : "", argv[k]);
    return argv[n] == NULL;
}

static void test_expansion(void)
{
    /* 2 traces x 1 cluster x 3 policy variants x 2 horizons x 2 seeds = 24; excluded:
     * fifo at 2d (2 traces x 2 seeds = 4) and trace b's seed 2 (3 variants x 2 horizons
     * = 6), one cell in both: 9. */
    char text[2048];
    snprintf(text, sizeof text,
             "{\"traces\": [{\"path\": \"%s/a.csv\"}, {\"path\": \"%s/b.csv\"}],\n"
             " \"clusters\": [\"4xV100M32:8\"],\n"
             " \"policies\": [\"fifo\", {\"name\": \"binpack\", \"options\": {\"backfill\": "
             "[true, false]}}],\n"
             " \"options\": {\"horizon\": [\"1d\", \"2d\"]},\n"
             " \"seeds\": \"1..2\",\n"
             " \"exclude\": [{\"policy\": \"fifo\", \"horizon\": \"2d\"}, {\"trace\": \"b\", "
             "\"seed\": 2}]}\n",
             OUT, OUT);
    grid g;
    sim_diag d = {0};
    CHECK_EQ_I64(parse(text, &g, &d), SIM_OK);
    if (d.msg[0])
        fprintf(stderr, "  %s:%ld:%d: %s\n", d.file, d.line, d.column, d.msg);
    CHECK_EQ_I64(g.n_cells, 15);
    CHECK_EQ_I64(g.n_excluded, 9);
    CHECK_EQ_I64(g.n_policies, 3);
    if (g.n_cells == 15) {
        CHECK_STR(g.cells[0].name, "a_4xV100M32-8_fifo_horizon-1d_s1");
        CHECK_STR(g.cells[1].name, "a_4xV100M32-8_fifo_horizon-1d_s2");
        CHECK_STR(g.cells[2].name, "a_4xV100M32-8_binpack_backfill-true_horizon-1d_s1");
        CHECK_STR(g.cells[14].name, "b_4xV100M32-8_binpack_backfill-false_horizon-2d_s1");
        /* Names are unique. */
        size_t dup = 0;
        for (size_t i = 0; i < g.n_cells; i++)
            for (size_t k = 0; k < i; k++)
                dup += !strcmp(g.cells[i].name, g.cells[k].name);
        CHECK_EQ_I64(dup, 0);
        /* No excluded cell is there. */
        size_t bad = 0;
        for (size_t i = 0; i < g.n_cells; i++) {
            const grid_cell *c = &g.cells[i];
            bad += g.policies[c->policy].policy[0] == 'f' && c->value[0] == 1;
            bad += c->trace == 1 && c->seed == 2;
        }
        CHECK_EQ_I64(bad, 0);
        char line[2048];
        bool ended = cell_line(&g, &g.cells[3], line, sizeof line);
        char want[1024];
        snprintf(want, sizeof want,
                 "clustersim run --trace %s/a.csv --cluster 4xV100M32:8 --policy binpack "
                 "--policy-opt backfill=true --horizon 1d --seed 2 --out dir --quiet",
                 OUT);
        CHECK_STR(line, want);
        CHECK(ended);
        char cfg[256];
        grid_cell_config(&g, &g.cells[3], SIZE_MAX, cfg, sizeof cfg);
        CHECK_STR(cfg, "a horizon=1d");
    }
    /* Another horizon value keeps the names of the cells that were there. */
    grid g2;
    char *at = strstr(text, "\"2d\"]");
    char text2[2100];
    snprintf(text2, sizeof text2, "%.*s\"2d\", \"3d\"]%s", (int)(at - text), text, at + 5);
    CHECK_EQ_I64(parse(text2, &g2, &d), SIM_OK);
    size_t found = 0;
    for (size_t i = 0; i < g.n_cells; i++)
        for (size_t k = 0; k < g2.n_cells; k++)
            found += !strcmp(g.cells[i].name, g2.cells[k].name);
    CHECK_EQ_I64(found, g.n_cells);
    CHECK_EQ_I64(g2.n_cells,
                 15 + 2 * 3 * 2 - 3); /* 3d: 2 traces x 3 variants x 2 seeds, minus b's seed 2 */
    grid_free(&g);
    grid_free(&g2);

    /* A name longer than GRID_NAME_MAX is cut and ends in a hash of the whole name, so
     * two long names that differ at the end stay apart. */
    char longtext[2048], name1[GRID_NAME_MAX + 1] = "";
    for (int k = 0; k < 2; k++) {
        snprintf(longtext, sizeof longtext,
                 "{\"traces\": [{\"path\": \"%s/a.csv\", \"name\": \"%0250d\"}],\n"
                 " \"clusters\": [\"4xV100M32:8\"], \"policies\": [\"fifo\"], \"seeds\": %d}\n",
                 OUT, k, k + 1);
        grid gl;
        CHECK_EQ_I64(parse(longtext, &gl, &d), SIM_OK);
        if (gl.n_cells == 1) {
            size_t len = strlen(gl.cells[0].name);
            CHECK_EQ_I64(len, GRID_NAME_MAX);
            CHECK(gl.cells[0].name[len - 17] == '-');
            if (k == 0)
                snprintf(name1, sizeof name1, "%s", gl.cells[0].name);
            else
                CHECK(strcmp(name1, gl.cells[0].name) != 0);
        }
        grid_free(&gl);
    }
}

typedef struct bad_case {
    const char *text;
    long line;
    int column;
    const char *msg;
} bad_case;

/* A trace given as an object: its name, format, options (each a --trace-opt) and
 * skip-bad-rows reach every cell's command line; two traces of one name are refused, and
 * so are options that are not an object of scalars. */
static void test_trace_objects(void)
{
    CHECK(write_grid("tw1.csv", "job_id,submit_time,duration,num_gpus\na,0,10,1\n"));
    mkdir(OUT "/d1", 0755);
    mkdir(OUT "/d2", 0755);
    CHECK(write_grid("d1/x.csv", "job_id,submit_time,duration,num_gpus\na,0,10,1\n"));
    CHECK(write_grid("d2/x.csv", "job_id,submit_time,duration,num_gpus\na,0,10,1\n"));
    grid g;
    sim_diag d = {0};
    CHECK_EQ_I64(
        parse("{\"traces\": [{\"path\": \"" OUT "/tw1.csv\", \"name\": \"w\", \"format\": "
              "\"pollux\", \"options\": {\"profiles\": \"p/traces\", \"min_replicas\": 2}, "
              "\"skip-bad-rows\": true}],\n"
              " \"clusters\": [\"16xT4:4\"], \"policies\": [\"optimus\"]}\n",
              &g, &d),
        SIM_OK);
    if (d.msg[0])
        fprintf(stderr, "  %s:%ld:%d: %s\n", d.file, d.line, d.column, d.msg);
    CHECK_EQ_I64(g.n_cells, 1);
    if (g.n_cells == 1) {
        CHECK_STR(g.cells[0].name, "w_16xT4-4_optimus_s1");
        char line[2048];
        CHECK(cell_line(&g, &g.cells[0], line, sizeof line));
        CHECK_STR(line, "clustersim run --trace " OUT "/tw1.csv --format pollux --skip-bad-rows "
                        "--trace-opt profiles=p/traces --trace-opt min_replicas=2 --cluster "
                        "16xT4:4 --policy optimus --seed 1 --out dir --quiet");
    }
    grid_free(&g);
    static const char *const bad[][2] = {
        {"{\"traces\": [{\"path\": \"" OUT "/d1/x.csv\"}, {\"path\": \"" OUT "/d2/x.csv\"}], "
         "\"clusters\": [\"1xT4:1\"], \"policies\": [\"fifo\"]}",
         "grid: two traces are named 'x' (give one a \"name\")"},
        {"{\"traces\": [{\"path\": \"" OUT "/tw1.csv\", \"options\": [1]}], \"clusters\": "
         "[\"1xT4:1\"], \"policies\": [\"fifo\"]}",
         "grid: a trace's \"options\" must be an object {\"KEY\": VALUE}, got array"},
        {"{\"traces\": [{\"path\": \"" OUT "/tw1.csv\", \"options\": {\"k\": [1, 2]}}], "
         "\"clusters\": [\"1xT4:1\"], \"policies\": [\"fifo\"]}",
         "grid: trace option 'k' must be a string, number or boolean, got array"},
        {"{\"traces\": [{\"name\": \"x\"}], \"clusters\": [\"1xT4:1\"], \"policies\": [\"fifo\"]}",
         "grid: a trace needs \"path\""},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        sim_diag e = {0};
        grid gb;
        CHECK_EQ_I64(parse(bad[k][0], &gb, &e), SIM_EPARSE);
        if (strcmp(e.msg, bad[k][1]) != 0)
            fprintf(stderr, "  case %zu: %s\n", k, e.msg);
        CHECK_STR(e.msg, bad[k][1]);
    }
}

static void test_bad_grids(void)
{
    static const bad_case cases[] = {
        {"{\n \"traces\": [\"" OUT "/a.csv\"],\n \"clusters\": [\"4xV100M32:8\"],\n"
         " \"policies\": [\"fifo\", \"nosuch\"]\n}",
         4, 23, "unknown policy 'nosuch'"},
        {"{\n \"traces\": [\"" OUT "/a.csv\", \"" OUT "/missing.csv\"]\n}", 2, 32,
         "trace file '" OUT "/missing.csv' cannot be read"},
        {"{\n \"traces\": [\"" OUT "/a.csv\"],\n \"clusters\": [\"4xV100M32:8\"],\n"
         " \"policies\": [{\"name\": \"binpack\",\n   \"options\": {\"bogus\": 1}}]\n}",
         5, 25, "policy 'binpack' has no option 'bogus'"},
        {"{\n \"traces\": [\"" OUT "/a.csv\"],\n \"clusters\": [\"4xV100M32:8\"],\n"
         " \"policies\": [{\"name\": \"hetero\",\n   \"options\": {\"trail\": \"t.csv\"}}]\n}",
         5, 25, "option 'trail' of policy 'hetero' names a file the policy writes"},
        {"{\n \"traces\": [\"" OUT "/a.csv\"],\n \"clusters\": [\"4xV100M32:8\"],\n"
         " \"policies\": [\"fifo\"],\n \"options\": {\"nope\": 3}\n}",
         5, 22, "unknown option 'nope' for `clustersim run` cells"},
        {"{\n \"traces\": [\"" OUT "/a.csv\"],\n \"clusters\": [\"4xV100M32:8\"],\n"
         " \"policies\": [\"fifo\"],\n \"exclude\": [{\"flavour\": 3}]\n}",
         5, 26, "exclusion names an unknown axis 'flavour'"},
        {"{\n \"traces\": [\"" OUT "/a.csv\"],\n \"clusters\": [\"4xV100M32:8\"]\n"
         " \"policies\": [\"fifo\"]\n}",
         4, 2, "bad JSON"},
        {"{\n \"traces\": [\"" OUT "/a.csv\"],\n \"clusters\": [\"4xV100M32:8\"],\n"
         " \"policies\": [\"fifo\"],\n \"axes\": 1\n}",
         5, 10, "unknown member 'axes'"},
        {"{\n \"traces\": [\"" OUT "/a.csv\"],\n \"clusters\": [\"4xV100M32:8\"],\n"
         " \"policies\": [\"fifo\"],\n \"seeds\": \"1..2\",\n \"exclude\": [{\"seed\": 9}]\n}",
         6, 23, "'9' is not a value of 'seed'"},
        {"{\n \"command\": \"pack\",\n \"traces\": [\"" OUT "/a.csv\"],\n"
         " \"clusters\": [\"4xV100M32:8\"],\n \"policies\": [\"fgd\"],\n"
         " \"options\": {\"horizon\": \"1d\"}\n}",
         6, 25, "unknown option 'horizon' for `clustersim pack` cells"},
        {"{\n \"traces\": [\"" OUT "/a.csv\"],\n \"clusters\": [\"4xV100M32:8\"],\n"
         " \"policies\": [\"fifo\"],\n \"exclude\": [{\"policy\": \"fifo\"}]\n}",
         5, 13, "the exclusions leave no cell to run"},
        /* An empty list is there, at its value, not missing at the document. */
        {"{\n \"traces\": [],\n \"clusters\": [\"4xV100M32:8\"],\n \"policies\": [\"fifo\"]\n}", 2,
         12, "grid: 'traces' is empty: give at least one trace"},
        {"{\n \"traces\": [\"" OUT "/a.csv\"],\n \"clusters\": [],\n \"policies\": [\"fifo\"]\n}",
         3, 14, "grid: 'clusters' is empty: give at least one cluster"},
        {"{\n \"traces\": [\"" OUT "/a.csv\"],\n \"clusters\": [\"4xV100M32:8\"],\n"
         " \"policies\": []\n}",
         4, 14, "grid: 'policies' is empty: give at least one policy"},
        {"{\n \"clusters\": [\"4xV100M32:8\"],\n \"policies\": [\"fifo\"]\n}", 1, 1,
         "grid: 'traces' is missing: give at least one trace"},
        /* A report metric no cell writes: the report's table of it would be missing. */
        {"{\n \"traces\": [\"" OUT "/a.csv\"],\n \"clusters\": [\"4xV100M32:8\"],\n"
         " \"policies\": [\"fifo\"],\n \"report\": {\"metrics\": [\"jct_s.mean\", "
         "\"nosuch.metric\"]}\n}",
         5, 39,
         "grid: unknown metric 'nosuch.metric' for `clustersim run` cells (known: cluster.*, "
         "jobs.*, jobs_not_arrived, jct_s.*, wait_s.*, makespan_s, job_groups.*"},
        {"{\n \"traces\": [\"" OUT "/a.csv\"],\n \"clusters\": [\"4xV100M32:8\"],\n"
         " \"policies\": [\"fifo\"],\n \"report\": {\"metrics\": [\"jct_s.avg\"]}\n}",
         5, 25,
         "grid: unknown metric 'jct_s.avg' (known: jct_s.count, jct_s.mean, jct_s.median, "
         "jct_s.p95, jct_s.p99, jct_s.max)"},
        {"{\n \"traces\": [\"" OUT "/a.csv\"],\n \"clusters\": [\"4xV100M32:8\"],\n"
         " \"policies\": [\"fifo\"],\n \"report\": {\"metrics\": [\"tenants.done\"]}\n}",
         5, 25, "grid: unknown metric 'tenants.done' (known: tenants.NAME.done, "},
        {"{\n \"command\": \"pack\",\n \"traces\": [\"" OUT "/a.csv\"],\n"
         " \"clusters\": [\"4xV100M32:8\"],\n \"policies\": [\"fgd\"],\n"
         " \"report\": {\"metrics\": [\"jct_s.mean\"]}\n}",
         6, 25,
         "grid: unknown metric 'jct_s.mean' for `clustersim pack` cells (known: demand_pct, "
         "alloc, frag_amount, frag_ratio, failed)"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        grid g;
        sim_diag d = {0};
        int st = parse(cases[k].text, &g, &d);
        CHECK_EQ_I64(st, SIM_EPARSE);
        CHECK_STR(d.file, "g.json");
        CHECK_EQ_I64(d.line, cases[k].line);
        CHECK_EQ_I64(d.column, cases[k].column);
        CHECK(strstr(d.msg, cases[k].msg) != NULL);
        if (!strstr(d.msg, cases[k].msg) || d.line != cases[k].line || d.column != cases[k].column)
            fprintf(stderr, "  case %zu: %s:%ld:%d: %s\n", k, d.file, d.line, d.column, d.msg);
        CHECK_EQ_I64(g.n_cells, 0);
        grid_free(&g);
    }
    /* The command: status 2 and file:line:column before any cell runs. */
    CHECK_EQ_I64(
        check_sh("printf '{\\n \"traces\": [\"%s/a.csv\"],\\n \"clusters\": [\"4xV100M32:8\"],"
                 "\\n \"policies\": [\"nosuch\"]\\n}\\n' > %s/bad.json",
                 OUT, OUT),
        0);
    CHECK_EQ_I64(sweep("bad.json", "bad", "", "bad.txt"), 2);
    CHECK(check_file_has(OUT "/bad.txt", "clustersim: " OUT "/bad.json:4:15: error: grid: unknown "
                                         "policy 'nosuch'"));
    struct stat sb;
    CHECK(stat(OUT "/bad/cells", &sb) != 0);
}

/* A grid with trace a.csv, cluster 4xV100M32:8 and the given members after them. */
#define G1_OPEN "{\"traces\": [\"" OUT "/a.csv\"], \"clusters\": [\"4xV100M32:8\"], "
#define G1(rest) G1_OPEN rest "}"

/* Inputs the reader once took wrongly: a crash (no seed at all), a silent cut (a long
 * seed list, a long option value), two cells sharing one directory, a member given
 * twice, an escaped member name whose errors had no position. */
static void test_grid_edges(void)
{
    static const bad_case cases[] = {
        /* No seed: the cross product was divided by zero. */
        {G1("\"policies\": [\"fifo\"], \"seeds\": \"\""), 1, 93, "'seeds' is empty"},
        {G1("\"policies\": [\"fifo\"], \"seeds\": []"), 1, 93, "'seeds' is an empty list"},
        {G1("\"policies\": [\"fifo\"], \"seeds\": \"1,2,\""), 1, 93, "a comma ends \"1,2,\""},
        {G1("\"policies\": [\"fifo\"], \"seeds\": \"99999999999999999999\""), 1, 93,
         "a seed is at most"},
        /* Two values that appear alike in cell names. */
        {G1("\"policies\": [\"fifo\"], \"options\": {\"failures\": [\"" OUT "/a.csv\", \"" OUT
            "/d/a.csv\"]}"),
         1, 128, "values '" OUT "/a.csv' and '" OUT "/d/a.csv' both appear as 'a'"},
        {G1("\"policies\": [{\"name\": \"las\", \"options\": {\"thresholds\": [\"10,20\", "
            "\"10-20\"]}}]"),
         1, 74,
         "policy variants 'las thresholds=10,20' and 'las thresholds=10-20' both appear "
         "as 'las_thresholds-10-20'"},
        /* Parts of a name that run together: a_b + c and a + b_c. */
        {"{\"traces\": [{\"path\": \"" OUT "/a.csv\", \"name\": \"a_b\"}, {\"path\": \"" OUT
         "/b.csv\", \"name\": \"a\"}], \"clusters\": [{\"spec\": \"4xT4:8\", \"name\": \"c\"}, "
         "{\"spec\": \"2xT4:8\", \"name\": \"b_c\"}], \"policies\": [\"fifo\"]}",
         1, 1, "two cells get the same name 'a_b_c_fifo_s1'"},
        /* json-c kept the last of two members silently. */
        {G1("\"policies\": [\"fifo\"],\n \"seeds\": 1, \"seeds\": 2"), 2, 14,
         "member \"seeds\" is given twice in one object (first at line 2, column 2)"},
        {G1("\"policies\": [\"fi\\u0000fo\"]"), 1, 78, "a string holds a NUL character"},
        /* An escaped member name: the error is where the value is. */
        {"{\"tr\\u0061ces\": [\"" OUT "/a.csv\"], \"clusters\": [\"4xV100M32:8\"],\n"
         " \"policies\": [{\"name\": \"binpack\", \"options\": {\"b\\u006fgus\": 1}}]}",
         2, 61, "policy 'binpack' has no option 'bogus'"},
        /* A value longer than the reader keeps was cut silently. */
        {G1("\"policies\": [{\"name\": \"las\", \"options\": {\"thresholds\": "
            "\"1111111111111111111111111111111111111111111111111111111111111111111111111111111111"
            "11111111111111111111111111111111111111111111111111\"}}]"),
         1, 117, "expected a string, number or boolean, got a string longer than 127 bytes"},
        /* Single quotes: not JSON. json-c takes them around a member name even when
         * strict, and the position scanner, reading on to a double quote, looped. */
        {G1("\"policies\": ['fifo']"), 1, 75, "bad JSON"},
        {G1("\"policies\": [\"fifo\"], \"exclude\": [{'seed\": 1}, {\"x': 1}]"), 1, 97,
         "bad JSON: a member name in single quotes"},
        /* Numbers json-c reads as another value without a word: 2^64 as 2^64 - 1, a
         * seed beyond -2^63, 1e400 as inf, 1e-400 as 0. */
        {G1("\"policies\": [\"fifo\"], \"seeds\": 18446744073709551616"), 1, 93,
         "a number out of range"},
        {G1("\"policies\": [\"fifo\"], \"options\": {\"horizon\": [1, -9223372036854775809]}"), 1,
         111, "a number out of range"},
        {G1("\"policies\": [\"fifo\"], \"options\": {\"horizon\": 1e400}"), 1, 107,
         "a number out of range"},
        {G1("\"policies\": [{\"name\": \"las\", \"options\": {\"thresholds\": 1e-400}}]"), 1, 117,
         "a number out of range"},
    };
    CHECK_EQ_I64(check_sh("mkdir -p %s/d && cp %s/a.csv %s/d/a.csv", OUT, OUT, OUT), 0);
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        grid g;
        sim_diag d = {0};
        int st = parse(cases[k].text, &g, &d);
        CHECK_EQ_I64(st, SIM_EPARSE);
        CHECK_EQ_I64(d.line, cases[k].line);
        CHECK_EQ_I64(d.column, cases[k].column);
        CHECK(strstr(d.msg, cases[k].msg) != NULL);
        if (!strstr(d.msg, cases[k].msg) || d.line != cases[k].line || d.column != cases[k].column)
            fprintf(stderr, "  case %zu: %s:%ld:%d: %s\n", k, d.file, d.line, d.column, d.msg);
        CHECK_EQ_I64(g.n_cells, 0);
        grid_free(&g);
    }
    /* Integers past 2^63 - 1 keep their value (they were written as 2^63 - 1). */
    {
        grid g;
        sim_diag d = {0};
        CHECK_EQ_I64(parse(G1("\"policies\": [\"fifo\"], \"seeds\": 18446744073709551615, "
                              "\"options\": {\"horizon\": [9223372036854775808, 0.5]}"),
                           &g, &d),
                     SIM_OK);
        CHECK_EQ_I64(g.n_cells, 2);
        if (g.n_cells == 2) {
            CHECK_EQ_I64(g.cells[0].seed == UINT64_MAX, 1);
            CHECK_STR(g.axes[0].values[0], "9223372036854775808");
            CHECK_STR(g.axes[0].values[1], "0.5");
        }
        grid_free(&g);
    }
    /* 1,200 seeds in a list: every one is kept (the text it was read through held about
     * 800 and cut the last number short). */
    char *text = malloc(16384);
    if (!text)
        return;
    size_t n = (size_t)snprintf(text, 16384, G1_OPEN "\"policies\": [\"fifo\"], \"seeds\": [");
    for (int sd = 1000; sd < 2200; sd++)
        n += (size_t)snprintf(text + n, 16384 - n, "%s%d", sd > 1000 ? ", " : "", sd);
    snprintf(text + n, 16384 - n, "]}");
    grid g;
    sim_diag d = {0};
    CHECK_EQ_I64(parse(text, &g, &d), SIM_OK);
    if (d.msg[0])
        fprintf(stderr, "  %s:%ld:%d: %s\n", d.file, d.line, d.column, d.msg);
    CHECK_EQ_I64(g.n_seeds, 1200);
    CHECK_EQ_I64(g.n_cells, 1200);
    if (g.n_seeds == 1200)
        CHECK_EQ_I64(g.seeds[1199], 2199);
    grid_free(&g);
    /* More than 1,000,000 cells (10,000 seeds x 101 horizons) is refused before any cell
     * is made. */
    n = (size_t)snprintf(text, 16384,
                         G1_OPEN "\"policies\": [\"fifo\"], \"seeds\": \"0..9999\", \"options\": "
                                 "{\"horizon\": [");
    for (int h = 1; h <= 101; h++)
        n += (size_t)snprintf(text + n, 16384 - n, "%s%d", h > 1 ? ", " : "", h);
    snprintf(text + n, 16384 - n, "]}}");
    CHECK_EQ_I64(parse(text, &g, &d), SIM_EPARSE);
    CHECK(strstr(d.msg, "more than 1000000 cells") != NULL);
    if (!strstr(d.msg, "more than 1000000 cells"))
        fprintf(stderr, "  %s:%ld:%d: %s\n", d.file, d.line, d.column, d.msg);
    grid_free(&g);
    free(text);
}

/* Modification time in nanoseconds, -1 when missing. */
static long long mtime_of(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 ? (long long)sb.st_mtim.tv_sec * 1000000000LL + sb.st_mtim.tv_nsec
                                : -1;
}

/* A grid of fifo and binpack on trace a.csv with the given options and seeds. */
static bool fifo_binpack_grid(const char *name, const char *options, const char *seeds)
{
    char text[1024];
    snprintf(text, sizeof text,
             "{\"traces\": [\"%s/a.csv\"], \"clusters\": [\"4xV100M32:8\"],\n"
             " \"policies\": [\"fifo\", \"binpack\"],\n \"options\": {%s}, \"seeds\": %s}\n",
             OUT, options, seeds);
    return write_grid(name, text);
}

static void test_run_and_resume(void)
{
    CHECK(fifo_binpack_grid("g.json", "\"restart-penalty\": [10, 60]", "[1, 2]"));
    CHECK_EQ_I64(sweep("g.json", "run", "--jobs 2 --no-figures", "run1.txt"), 0);
    CHECK_EQ_I64(lines_with(OUT "/run/sweep.csv", ",ok,"), 8);
    CHECK(check_file_has(OUT "/run/sweep.csv", "cell,trace,cluster,policy,variant,restart-penalty,"
                                               "seed,status,error,cluster.nodes"));
    CHECK(check_file_has(OUT "/run/report.md", "### jct_s.mean"));
    /* Every metric the cells wrote is one a grid's report may name. */
    char *csv = check_slurp(OUT "/run/sweep.csv", NULL);
    const char *names = csv ? strstr(csv, ",error,") : NULL;
    if (names) {
        static char text[16384];
        size_t n = (size_t)snprintf(
            text, sizeof text, G1_OPEN "\"policies\": [\"fifo\"], \"report\": {\"metrics\": [");
        const char *p = names + 7;
        for (int k = 0; *p && *p != '\n' && n < sizeof text - 64; k++) {
            size_t len = strcspn(p, ",\n");
            n += (size_t)snprintf(text + n, sizeof text - n, "%s\"%.*s\"", k ? ", " : "", (int)len,
                                  p);
            p += len + (p[len] == ',');
        }
        snprintf(text + n, sizeof text - n, "]}}");
        grid g;
        sim_diag d = {0};
        CHECK_EQ_I64(parse(text, &g, &d), SIM_OK);
        if (d.msg[0])
            fprintf(stderr, "  %s:%ld:%d: %s\n", d.file, d.line, d.column, d.msg);
        CHECK(g.n_metrics > 30);
        grid_free(&g);
    }
    CHECK(names != NULL);
    free(csv);
    /* Members named after tenants, qos classes and probes, and those of some runs only. */
    {
        grid g;
        sim_diag d = {0};
        CHECK_EQ_I64(parse(G1_OPEN
                           "\"policies\": [\"fifo\"], \"report\": {\"metrics\": ["
                           "\"tenants.a.b.done\", \"by_qos.ls.jct_p95\", \"probes.x_mean\", "
                           "\"quota_metrics.tenants.t.above_quota\", "
                           "\"quota_metrics.jain_mean\", \"stalled_at_s\", "
                           "\"elastic.cpu_util_allocated\", \"online.shortfall_periods\", "
                           "\"job_groups.p99_s\"]}}",
                           &g, &d),
                     SIM_OK);
        if (d.msg[0])
            fprintf(stderr, "  %s:%ld:%d: %s\n", d.file, d.line, d.column, d.msg);
        CHECK_EQ_I64(g.n_metrics, 9);
        grid_free(&g);
    }
    /* Metrics equal in every cell are in sweep.csv but get no table. */
    char *report = check_slurp(OUT "/run/report.md", NULL);
    CHECK(report && !strstr(report, "### cluster.gpus"));
    free(report);
    CHECK(check_file_has(OUT "/run/report.md", "| configuration | fifo | binpack |"));
    /* The header's factors multiply to the cells. */
    CHECK(check_file_has(OUT "/run/report.md",
                         "`clustersim run` cells, 1 trace x 1 cluster x 2 policy variants x 2 "
                         "option combinations (restart-penalty 2) x 2 seeds = 8 cells; 8 "
                         "complete, 0 failed."));
    CHECK(check_file_has(OUT "/run1.txt", "8 cells, 0 complete already, 8 to run"));
    CHECK(check_sh("cp %s/run/sweep.csv %s/first.csv", OUT, OUT) == 0);

    /* Resume: nothing to run; then a truncated summary.json is redone, the rest kept. */
    const char *c1 = OUT "/run/cells/a_4xV100M32-8_fifo_restart-penalty-10_s1/summary.json";
    const char *c2 = OUT "/run/cells/a_4xV100M32-8_binpack_restart-penalty-60_s2/summary.json";
    long long t2 = mtime_of(c2);
    CHECK(t2 > 0);
    CHECK_EQ_I64(sweep("g.json", "run", "--no-figures", "run2.txt"), 0);
    CHECK(check_file_has(OUT "/run2.txt", "8 cells, 8 complete already, 0 to run"));
    CHECK_EQ_I64(check_sh("truncate -s 40 %s", c1), 0);
    CHECK_EQ_I64(sweep("g.json", "run", "--no-figures", "run3.txt"), 0);
    CHECK(check_file_has(OUT "/run3.txt", "8 cells, 7 complete already, 1 to run"));
    CHECK(check_file_has(c1, "\"makespan_s\"")); /* written anew */
    CHECK_EQ_I64(mtime_of(c2), t2);              /* not run again */
    CHECK_EQ_I64(check_sh("cmp -s %s/first.csv %s/run/sweep.csv", OUT, OUT), 0);
    /* A half-written cell (outputs but no summary.json) is redone too. */
    CHECK_EQ_I64(check_sh("rm %s && %s sweep %s/g.json --out %s/run --list | grep -c 'to run' > "
                          "%s/list.txt",
                          c2, SIM_BINARY, OUT, OUT, OUT),
                 0);
    CHECK(check_file_has(OUT "/list.txt", "1"));
}

/* The grid's size names factors that multiply to the cross product (the option factor
 * counts value combinations, 2 x 3 = 6, not the 2 axes), then the exclusions: fifo
 * with restart-penalty 60 is 3 x 2 seeds = 6 of the 2 x 6 x 2 = 24 combinations. */
static void test_size_text(void)
{
    CHECK(write_grid("s.json", "{\"traces\": [\"" OUT "/a.csv\"], \"clusters\": "
                               "[\"4xV100M32:8\"],\n \"policies\": [\"fifo\", \"binpack\"],\n"
                               " \"options\": {\"restart-penalty\": [0, 60], "
                               "\"checkpoint-interval\": [\"1h\", \"2h\", \"3h\"]},\n"
                               " \"exclude\": [{\"policy\": \"fifo\", \"restart-penalty\": 60}],"
                               " \"seeds\": \"1..2\"}\n"));
    CHECK_EQ_I64(check_sh("%s sweep %s/s.json --check > %s/size.txt 2>&1", SIM_BINARY, OUT, OUT),
                 0);
    CHECK(check_file_has(OUT "/size.txt",
                         OUT "/s.json: 18 cells (`clustersim run`: 1 trace x 1 cluster x 2 "
                             "policy variants x 6 option combinations (restart-penalty 2 x "
                             "checkpoint-interval 3) x 2 seeds = 24 combinations, 6 excluded: "
                             "18 cells)\n"));
    CHECK(fifo_binpack_grid("s1.json", "", "1"));
    CHECK_EQ_I64(check_sh("%s sweep %s/s1.json --check > %s/size1.txt 2>&1", SIM_BINARY, OUT, OUT),
                 0);
    CHECK(check_file_has(OUT "/size1.txt",
                         OUT "/s1.json: 2 cells (`clustersim run`: 1 trace x 1 "
                             "cluster x 2 policy variants x 1 seed = 2 cells)\n"));
    /* Both: --check used to win without a word. */
    CHECK_EQ_I64(
        check_sh("%s sweep %s/s1.json --check --list > %s/both.txt 2>&1", SIM_BINARY, OUT, OUT), 2);
    CHECK(check_file_has(OUT "/both.txt", "clustersim: error: --check and --list are two ways to "
                                          "look at a grid: give one"));
}

/* A cell with no job done has no JCT or wait: its summary.json has null there, which
 * sweep.csv leaves empty and the report shows as n/a beside the other policy's value
 * (fifo finishes nothing of tests/fixtures/compare_empty_dist.csv in 1 h, binpack two
 * jobs of 100 and 300 s). With fifo alone every cell is null: the column is still
 * there. */
static void test_null_metrics(void)
{
    CHECK(write_grid("e.json", "{\"traces\": [\"" SIM_SOURCE_DIR
                               "/tests/fixtures/compare_empty_dist.csv\"],\n"
                               " \"clusters\": [\"1xT4:8\"], \"policies\": [\"fifo\", "
                               "\"binpack\"],\n \"options\": {\"horizon\": \"1h\"}}\n"));
    CHECK_EQ_I64(sweep("e.json", "empty", "--jobs 2 --no-figures", "empty.txt"), 0);
    char *csv = check_slurp(OUT "/empty/sweep.csv", NULL);
    /* The columns jct_s.count .. jct_s.max of each row. */
    const char *cols = csv ? strstr(csv, ",jct_s.count,jct_s.mean,jct_s.median,jct_s.p95,"
                                         "jct_s.p99,jct_s.max,wait_s.count,wait_s.mean,")
                           : NULL;
    CHECK(cols != NULL);
    size_t before = 0;
    for (const char *c = csv; cols && c < cols; c++)
        before += *c == ',';
    for (const char *row = csv ? strchr(csv, '\n') : NULL; row && row[1];
         row = strchr(row + 1, '\n')) {
        const char *f = row + 1;
        for (size_t k = 0; k <= before && f; k++)
            f = strchr(f, ',') ? strchr(f, ',') + 1 : NULL;
        bool fifo = strstr(row + 1, "_fifo_") && strstr(row + 1, "_fifo_") < strchr(row + 1, ',');
        if (fifo)
            CHECK(f && !strncmp(f, "0,,,,,,0,,", 10));
        else
            CHECK(f && !strncmp(f, "2,200,", 6));
    }
    free(csv);
    CHECK(check_file_has(OUT "/empty/report.md", "### jct_s.mean\n\n| configuration | fifo | "
                                                 "binpack |\n| --- | ---: | ---: |\n"
                                                 "| compare_empty_dist 1xT4-8 | n/a | 200 |\n"));
    CHECK(write_grid("e1.json", "{\"traces\": [\"" SIM_SOURCE_DIR
                                "/tests/fixtures/compare_empty_dist.csv\"],\n"
                                " \"clusters\": [\"1xT4:8\"], \"policies\": [\"fifo\"],\n"
                                " \"options\": {\"horizon\": \"1h\"}}\n"));
    CHECK_EQ_I64(sweep("e1.json", "empty1", "--no-figures", "empty1.txt"), 0);
    CHECK(check_file_has(OUT "/empty1/sweep.csv", ",jct_s.count,jct_s.mean,jct_s.median,"));
    CHECK(check_file_has(OUT "/empty1/sweep.csv", ",ok,,1,8,4,0,0,4,0,0,,,,,,0,,,,,,"));
}

/* A grid with more policy variants than one table holds (17): 10 thresholds x 2 starve
 * values = 20 las variants. Every variant has its column, in a second table with the
 * same rows; the figures draw 16 lines (one palette colour each) and the report names
 * the variants they leave out. */
static void test_many_variants(void)
{
    CHECK(write_grid("v.json", "{\"traces\": [\"" OUT "/a.csv\"], \"clusters\": "
                               "[\"4xV100M32:8\"],\n \"policies\": [{\"name\": \"las\", "
                               "\"options\": {\"thresholds\": [\"101\", \"102\", \"103\", "
                               "\"104\", \"105\", \"106\", \"107\", \"108\", \"109\", "
                               "\"110\"], \"starve\": [0, 2]}}],\n \"options\": "
                               "{\"restart-penalty\": [0, 60]},\n \"report\": {\"metrics\": "
                               "[\"jct_s.mean\"]}}\n"));
    CHECK_EQ_I64(sweep("v.json", "variants", "--jobs 2", "variants.txt"), 0);
    char *md = check_slurp(OUT "/variants/report.md", NULL);
    char *html = check_slurp(OUT "/variants/report.html", NULL);
    for (int starve = 0; starve <= 2; starve += 2)
        for (int t = 101; t <= 110; t++) {
            char cell[64];
            snprintf(cell, sizeof cell, "| las thresholds=%d starve=%d |", t, starve);
            CHECK(md && strstr(md, cell));
            snprintf(cell, sizeof cell, ">las thresholds=%d starve=%d<", t, starve);
            CHECK(html && strstr(html, cell));
        }
    CHECK(md && strstr(md, "Policy variants 1 to 17 of 20:\n\n| configuration | las "
                           "thresholds=101 starve=0 |"));
    CHECK(md && strstr(md, "Policy variants 18 to 20 of 20:\n\n| configuration | las "
                           "thresholds=108 starve=2 | las thresholds=109 starve=2 | las "
                           "thresholds=110 starve=2 |\n| --- | ---: | ---: | ---: |\n"
                           "| restart-penalty=0 | "));
    size_t rows = 0;
    for (const char *p = md; p && (p = strstr(p, "\n| restart-penalty=60 | ")); p++)
        rows++;
    CHECK_EQ_I64(rows, 2);
    if (check_system("command -v gnuplot >/dev/null 2>&1") == 0) {
        CHECK(md && strstr(md, "Each figure draws the first 16 of the 20 policy variants; it "
                               "leaves out variants 17 to 20 (`las thresholds=107 starve=2` to "
                               "`las thresholds=110 starve=2`), whose values are in the tables "
                               "above."));
        CHECK(check_file_has(OUT "/variants/figures/data/fig01.vars.gp", "n = 16\n"));
    }
    free(md);
    free(html);
}

/* More figures due than a report draws: the first 48 (SWEEP_MAX_FIGURES) are drawn; the
 * report says that the others' values are in the tables. Two numeric axes of 5 values
 * and 5 metrics: 5 x (5 + 5) = 50 figures due. */
static void test_figure_cap(void)
{
    if (check_system("command -v gnuplot >/dev/null 2>&1") != 0) {
        printf("test_figure_cap: gnuplot is not installed, skipped\n");
        return;
    }
    CHECK(write_grid("cap.json",
                     "{\"traces\": [\"" OUT "/a.csv\"], \"clusters\": [\"4xV100M32:8\"],\n"
                     " \"policies\": [\"fifo\"],\n \"options\": {\"restart-penalty\": [0, 1, "
                     "2, 3, 4], \"sample-interval\": [100, 200, 300, 400, 500]},\n \"report\": "
                     "{\"metrics\": [\"jct_s.mean\", \"wait_s.mean\", \"makespan_s\", "
                     "\"preemptions\", \"events\"]}}\n"));
    CHECK_EQ_I64(sweep("cap.json", "cap", "--jobs 2", "cap.txt"), 0);
    char *md = check_slurp(OUT "/cap/report.md", NULL);
    CHECK(md && strstr(md, "A report draws at most 48 figures: these are the first; the values "
                           "of the further configurations and metrics are in the tables above."));
    size_t figs = 0;
    for (const char *p = md; p && (p = strstr(p, "](figures/fig")); p++)
        figs++;
    CHECK_EQ_I64(figs, 48);
    free(md);
}

static void test_failing_cell(void)
{
    /* pack takes --demand 1..1000: the cells with 2000 fail (pack cells have no check
     * before the sweep), the others complete. */
    CHECK(write_grid("f.json",
                     "{\"command\": \"pack\", \"traces\": [\"" OUT "/a.csv\"],\n"
                     " \"clusters\": [\"4xV100M32:8\"], \"policies\": [\"fgd\", \"binpack\"],\n"
                     " \"options\": {\"demand\": [50, 2000]}, \"seeds\": \"1..2\"}\n"));
    CHECK_EQ_I64(sweep("f.json", "fail", "--jobs 2 --no-figures", "fail.txt"), 1);
    CHECK_EQ_I64(lines_with(OUT "/fail/sweep.csv", ",ok,"), 4);
    CHECK_EQ_I64(lines_with(OUT "/fail/sweep.csv", ",failed,\"exit status 2: clustersim: "
                                                   "error:"),
                 4);
    CHECK(check_file_has(OUT "/fail.txt", "clustersim: cell a_4xV100M32-8_fgd_demand-2000_s1 "
                                          "failed: exit status 2"));
    CHECK(check_file_has(OUT "/fail/report.md", "## Failed cells"));
    CHECK(check_file_has(OUT "/fail.txt", "sweep: 4 of 8 cells complete, 4 failed"));
    /* Run cells are checked first: a bad option value or cluster stops the sweep before
     * any cell runs. */
    CHECK(fifo_binpack_grid("h.json", "\"horizon\": [\"1d\", \"xyz\"]", "\"1..2\""));
    CHECK_EQ_I64(sweep("h.json", "checked", "--no-figures", "checked.txt"), 2);
    CHECK(check_file_has(OUT "/checked.txt", "clustersim: " OUT "/h.json: error: cell "
                                             "a_4xV100M32-8_fifo_horizon-xyz_s1 cannot run: "
                                             "clustersim: error: option --horizon: expected a "
                                             "duration"));
    CHECK_EQ_I64(check_sh("ls %s/checked/cells/*/summary.json 2>/dev/null | grep -q .", OUT), 1);
    /* --check makes the same checks, its logs in a temporary folder it removes. */
    CHECK_EQ_I64(check_sh("mkdir -p %s/tmpdir && TMPDIR=%s/tmpdir %s sweep %s/h.json --check > "
                          "%s/hcheck.txt 2>&1",
                          OUT, OUT, SIM_BINARY, OUT, OUT),
                 2);
    CHECK(check_file_has(OUT "/hcheck.txt", "clustersim: " OUT "/h.json: error: cell "
                                            "a_4xV100M32-8_fifo_horizon-xyz_s1 cannot run: "
                                            "clustersim: error: option --horizon: expected a "
                                            "duration"));
    CHECK_EQ_I64(check_sh("rmdir %s/tmpdir", OUT), 0); /* empty: nothing left behind */
}

static void test_pack_cells(void)
{
    CHECK(write_grid("p.json",
                     "{\"command\": \"pack\", \"traces\": [\"" OUT "/a.csv\"],\n"
                     " \"clusters\": [\"4xV100M32:8\"], \"policies\": [\"fgd\", \"binpack\"],\n"
                     " \"options\": {\"demand\": [50, 100]}, \"seeds\": \"1..2\",\n"
                     " \"report\": {\"metrics\": [\"alloc\"]}}\n"));
    CHECK_EQ_I64(sweep("p.json", "pack", "--jobs 2", "pack.txt"), 0);
    CHECK(check_file_has(OUT "/pack/sweep.csv", "status,error,demand_pct,alloc,frag_amount,"
                                                "frag_ratio,failed\n"));
    CHECK_EQ_I64(lines_with(OUT "/pack/sweep.csv", ",ok,"), 8);
    CHECK(check_file_has(OUT "/pack/cells/a_4xV100M32-8_fgd_demand-100_s1/summary.json",
                         "\"demand_pct\": 100,"));
    CHECK(check_file_has(OUT "/pack/report.md", "### alloc"));
    /* demand is a numeric axis: alloc against it, one line per policy. */
    if (check_system("command -v gnuplot >/dev/null 2>&1") == 0) {
        CHECK(check_file_has(OUT "/pack/report.md",
                             "![alloc against demand (a 4xV100M32-8)](figures/fig01.png)"));
        struct stat sb;
        CHECK(stat(OUT "/pack/figures/fig01.png", &sb) == 0 && sb.st_size > 1000);
        CHECK(stat(OUT "/pack/figures/fig01.svg", &sb) == 0 && sb.st_size > 1000);
        /* Its data: per policy, demand, mean and interval half-width. */
        CHECK(check_file_has(OUT "/pack/figures/data/fig01.dat", "# fgd\n50 "));
        /* Again (the cells are complete: only the results are written) with the data on a
         * device and the SVG through a symlink: gnuplot draws from its own copy of the
         * data, the device and the link stay, and no scratch file is left. */
        if (check_sh("rm -f %s/pack/figures/data/fig01.dat && mknod %s/pack/figures/data/fig01.dat "
                     "c 1 3 2>/dev/null",
                     OUT, OUT) == 0) {
            CHECK_EQ_I64(check_sh("rm -f %s/pack/figures/fig01.svg && ln -s ../../fig01_kept.svg "
                                  "%s/pack/figures/fig01.svg",
                                  OUT, OUT),
                         0);
            CHECK_EQ_I64(sweep("p.json", "pack", "--jobs 2", "pack2.txt"), 0);
            CHECK(check_file_has(OUT "/pack/report.md",
                                 "![alloc against demand (a 4xV100M32-8)](figures/fig01.png)"));
            CHECK(lstat(OUT "/pack/figures/data/fig01.dat", &sb) == 0 && S_ISCHR(sb.st_mode));
            CHECK(lstat(OUT "/pack/figures/fig01.svg", &sb) == 0 && S_ISLNK(sb.st_mode));
            CHECK(stat(OUT "/fig01_kept.svg", &sb) == 0 && sb.st_size > 1000);
            CHECK_EQ_I64(check_sh("ls -a %s/pack/figures %s/pack/figures/data | grep -Eq "
                                  "'^\\.fig[0-9]+\\.[0-9]+\\.|\\.tmp\\.'",
                                  OUT, OUT),
                         1);
        }
    } else {
        printf("note: gnuplot is not installed, the figures are not checked\n");
    }
    /* The same pack, run directly, gives the same allocation. */
    CHECK_EQ_I64(check_sh("%s pack --trace %s/a.csv --cluster 4xV100M32:8 --policies fgd --seeds 1 "
                          "--demand 100 --no-figure --out %s/direct > /dev/null 2>&1",
                          SIM_BINARY, OUT, OUT),
                 0);
    char *csv = check_slurp(OUT "/direct/pack.csv", NULL);
    char *last = csv ? strrchr(csv, '\n') : NULL;
    while (last && last > csv && last[-1] != '\n')
        last--;
    if (csv && last) {
        char alloc[32] = "";
        /* policy,demand_pct,seeds,alloc_mean,... */
        sscanf(last, "%*[^,],%*[^,],%*[^,],%31[^,]", alloc);
        char want[64];
        snprintf(want, sizeof want, "\"alloc\": %s,", alloc);
        CHECK(check_file_has(OUT "/pack/cells/a_4xV100M32-8_fgd_demand-100_s1/summary.json", want));
    } else {
        CHECK(!"pack.csv of the direct run is missing");
    }
    free(csv);
}

/* A program that cannot be executed: the child says why in its log, with write(2) alone
 * (it runs between fork and exec), and exits with STUDY_PROC_NOT_STARTED. */
static void test_exec_failure(void)
{
    char *const missing[] = {OUT "/no-such-program", NULL};
    char *const plain[] = {OUT "/a.csv", NULL}; /* not executable */
    study_proc p[2] = {{.argv = missing, .log_path = OUT "/exec0.log"},
                       {.argv = plain, .log_path = OUT "/exec1.log"}};
    CHECK_EQ_I64(study_procs_run(p, 2, 2, NULL, NULL), 0);
    CHECK_EQ_I64(p[0].exit_status, STUDY_PROC_NOT_STARTED);
    CHECK_EQ_I64(p[1].exit_status, STUDY_PROC_NOT_STARTED);
    CHECK(check_file_has(OUT "/exec0.log", "clustersim: error: cannot run '" OUT
                                           "/no-such-program': No such file or directory\n"));
    CHECK(check_file_has(OUT "/exec1.log",
                         "clustersim: error: cannot run '" OUT "/a.csv': Permission denied\n"));
}

int main(void)
{
    setenv("CLUSTERSIM_DATA", SIM_SOURCE_DIR, 1);
    CHECK_EQ_I64(check_sh("rm -rf %s && mkdir -p %s", OUT, OUT), 0);
    CHECK_EQ_I64(check_sh("%s trace gen --out %s/a.csv --jobs 40 --seed 3 >/dev/null 2>&1 && "
                          "cp %s/a.csv %s/b.csv",
                          SIM_BINARY, OUT, OUT, OUT),
                 0);
    test_expansion();
    test_trace_objects();
    test_exec_failure();
    test_bad_grids();
    test_grid_edges();
    test_run_and_resume();
    test_size_text();
    test_null_metrics();
    test_many_variants();
    test_figure_cap();
    test_failing_cell();
    test_pack_cells();
    return check_done();
}
