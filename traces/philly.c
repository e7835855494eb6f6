/*
 * philly.c: Microsoft Philly traces (Jeon et al., "Analysis of Large-Scale Multi-Tenant
 * GPU Clusters for DNN Training Workloads", ATC'19; github.com/msr-fiddle/philly-traces),
 * in two layouts detected by content:
 *  - the derived CSV timestamp,duration,num_gpus,gpu_time,cluster (Pollux artifact):
 *    one job per row, id = the row's line number, duration in seconds, VC -> tenant;
 *  - the published cluster_job_log JSON: an array of jobs {jobid, vc, user, status,
 *    submitted_time, attempts: [{start_time, end_time, detail: [{ip, gpus: [...]}]}]},
 *    parsed one job object at a time with json-c's incremental tokener.
 * Neither is in submit order, so the reader is in_memory (trace.c sorts); timestamps
 * become seconds since midnight of the earliest submission's day. Option tenant=vc|user.
 */
#include "traces/trace_int.h"

#include "base/alloc.h"

#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

#define JCHUNK (64u * 1024u)

static const char *const philly_options[] = {"tenant", NULL};

enum { P_TS, P_DUR, P_GPUS, P_GPUTIME, P_CLUSTER, P_COLS };

typedef struct philly_state {
    bool json;
    bool tenant_user;
    char id[24];
    /* JSON layout: a chunk of the input (r->in, read raw), and where the next byte is. */
    unsigned char *chunk;
    size_t pos, end;
    bool eof;
    long line;
    bool after_cr; /* the last byte passed was a CR: a LF next ends no new line */
    int phase; /* 0: before '[', 1: element or ']', 2: ',' or ']', 3: after ']', 4: dead */
    bool need_element; /* after ',' an element must follow */
    json_tokener *tok;
    /* The text of the element being parsed (json-c keeps the last of duplicate keys
     * silently, so they are looked for in the text), and the scratch of that search. */
    char *elem;
    size_t elem_len, elem_cap;
    struct jkey *keys;
    size_t keys_cap;
} philly_state;

/* A key of an object in the element's text: offset and length (without the quotes). */
typedef struct jkey {
    const char *text; /* the element's text */
    uint32_t off, len;
} jkey;

/* ---- CSV layout ---------------------------------------------------------------- */

static int csv_row(trace_reader *r, const csvin_row *row, job_spec *j, sim_diag *d)
{
    philly_state *s = r->state;
    const csvin *in = r->in;
    const int32_t *c = r->col;
    int st;
    uint64_t u;
    double gpu_time;
    r->submit_col = c[P_TS];
    if ((st = trace__timestamp(r, row, c[P_TS], "timestamp", &j->submit_us, d)) ||
        (st = csvin_double(in, row, c[P_DUR], "duration", 0, SIM_TIME_LIMIT_S, &j->work_s, d)) ||
        (st = csvin_u64(in, row, c[P_GPUS], "num_gpus", 0, 65536, &u, d)) ||
        (c[P_GPUTIME] >= 0 &&
         (st = csvin_double(in, row, c[P_GPUTIME], "gpu_time", 0, 1e18, &gpu_time, d))))
        return st;
    snprintf(s->id, sizeof s->id, "%ld", row->line);
    memcpy(j->id, s->id, strlen(s->id) + 1);
    j->num_gpus = (uint32_t)u;
    j->gpu_milli = j->true_milli = j->num_gpus ? SIM_MILLI_GPU : 0;
    if ((st = trace__intern(r, r->opt.tenants, row, c[P_CLUSTER], &j->tenant, d)))
        return st;
    return 1;
}

/* ---- JSON layout --------------------------------------------------------------- */

static int jfill(trace_reader *r, sim_diag *d)
{
    philly_state *s = r->state;
    unsigned want = r->chunk && r->chunk < JCHUNK ? (unsigned)r->chunk : JCHUNK;
    /* The input the CSV layer opened (and looked into to tell the layouts apart), byte-order
     * mark dropped: a stream cannot be opened twice. */
    long n = csvin_read_raw(r->in, s->chunk, want, d);
    if (n < 0)
        return (int)n;
    if (n == 0)
        s->eof = true;
    s->pos = 0;
    s->end = (size_t)n;
    return SIM_OK;
}

/* Count the lines of the text passed: a line ends at a LF, a CRLF or a lone CR (as the
 * CSV layout counts them). */
static void pass_byte(philly_state *s, unsigned char b)
{
    if (b == '\r' || (b == '\n' && !s->after_cr))
        s->line++;
    s->after_cr = b == '\r';
}

/* Skip white space; *c = next byte (not consumed), or -1 at the end. */
static int jpeek(trace_reader *r, int *c, sim_diag *d)
{
    philly_state *s = r->state;
    for (;;) {
        if (s->pos == s->end) {
            if (s->eof) {
                *c = -1;
                return SIM_OK;
            }
            int st = jfill(r, d);
            if (st != SIM_OK)
                return st;
            continue;
        }
        unsigned char b = s->chunk[s->pos];
        if (b != ' ' && b != '\t' && b != '\r' && b != '\n') {
            *c = b;
            return SIM_OK;
        }
        pass_byte(s, b);
        s->pos++;
    }
}

static void jquote(json_object *v, char *buf, size_t size)
{
    const char *txt = json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN);
    csvin_quote(txt, strlen(txt), buf, size);
}

static int jerror(trace_reader *r, long line, const char *field, const char *what, json_object *v,
                  sim_diag *d)
{
    char q[200];
    if (!v)
        return sim_diag_set(d, SIM_EPARSE, r->path, line, 0,
                            "field '%s': expected %s, got nothing (no such member)", field, what);
    jquote(v, q, sizeof q);
    return sim_diag_set(d, SIM_EPARSE, r->path, line, 0, "field '%s': expected %s, got %s", field,
                        what, q);
}

/* A string member or NULL when absent, null or "None" (Python's null in the dump). */
static const char *jstr(json_object *o, const char *key, json_object **v)
{
    *v = NULL;
    if (!json_object_object_get_ex(o, key, v) || !*v || json_object_is_type(*v, json_type_null))
        return NULL;
    if (!json_object_is_type(*v, json_type_string))
        return "";
    const char *s = json_object_get_string(*v);
    return strcmp(s, "None") == 0 ? NULL : s;
}

static int jtime(trace_reader *r, long line, json_object *o, const char *key, bool required,
                 sim_time *out, bool *present, sim_diag *d)
{
    json_object *v;
    const char *s = jstr(o, key, &v);
    int64_t sec;
    *present = false;
    if (!s && !required)
        return SIM_OK;
    if (!s || !trace_parse_timestamp(s, strlen(s), &sec) ||
        (v && !json_object_is_type(v, json_type_string)))
        return jerror(r, line, key, "a time like 2017-10-09 07:01:55 (YYYY-MM-DD HH:MM:SS)", v, d);
    *out = (sim_time)sec * SIM_US_PER_S;
    *present = true;
    return SIM_OK;
}

static int jintern(trace_reader *r, long line, json_object *o, const char *key, uint32_t *out,
                   sim_diag *d)
{
    json_object *v;
    const char *s = jstr(o, key, &v);
    *out = 0;
    if (v && !json_object_is_type(v, json_type_string) && !json_object_is_type(v, json_type_null))
        return jerror(r, line, key, "a string", v, d);
    if (!s || !*s)
        return SIM_OK;
    uint32_t id = sim_intern_add(r->opt.tenants, s, strlen(s), 0);
    if (id == SIM_INTERN_NONE)
        return sim_diag_set(d, SIM_ENOMEM, r->path, line, 0, "out of memory");
    *out = id;
    return SIM_OK;
}

/* The member name under which a string of v holds a NUL character (\u0000, which a C
 * string would cut short), or NULL when none does. */
static const char *jnul(json_object *v, const char *key)
{
    if (json_object_is_type(v, json_type_string))
        return strlen(json_object_get_string(v)) != (size_t)json_object_get_string_len(v) ? key
                                                                                          : NULL;
    if (json_object_is_type(v, json_type_array)) {
        for (size_t i = 0; i < json_object_array_length(v); i++) {
            json_object *e = json_object_array_get_idx(v, i);
            const char *k = e ? jnul(e, key) : NULL;
            if (k)
                return k;
        }
    } else if (json_object_is_type(v, json_type_object)) {
        json_object_object_foreach(v, k, m)
        {
            const char *bad = m ? jnul(m, k) : NULL;
            if (bad)
                return bad;
        }
    }
    return NULL;
}

/* Map one job object; 1 = a job, 0 = ignored (no complete attempt with GPUs). */
static int json_job(trace_reader *r, json_object *o, long line, job_spec *j, sim_diag *d)
{
    philly_state *s = r->state;
    json_object *v;
    int st;
    bool present;
    if (!json_object_is_type(o, json_type_object))
        return jerror(r, line, "job", "a job object {\"jobid\": ...}", o, d);
    const char *nul = jnul(o, "job");
    if (nul)
        return sim_diag_set(d, SIM_EPARSE, r->path, line, 0,
                            "field '%s': a string holds a NUL character (\\u0000)", nul);
    const char *id = jstr(o, "jobid", &v);
    if (!id || !v || !json_object_is_type(v, json_type_string) || !*id ||
        strlen(id) >= SIM_ID_MAX)
        return jerror(r, line, "jobid", "a job id of 1..63 bytes", v, d);
    memcpy(j->id, id, strlen(id) + 1);
    /* A job whose submission was not logged ("None" or null, like the attempt times the
     * dump also loses) has no arrival to replay: not a job, as one never scheduled. A
     * record without the member at all is not of this schema: an error. */
    if (json_object_object_get_ex(o, "submitted_time", &v) && !jstr(o, "submitted_time", &v)) {
        r->n_ignored++;
        return 0;
    }
    if ((st = jtime(r, line, o, "submitted_time", true, &j->submit_us, &present, d)) ||
        (st = jintern(r, line, o, s->tenant_user ? "user" : "vc", &j->tenant, d)))
        return st;
    r->rebase_day = true;
    json_object *att;
    if (!json_object_object_get_ex(o, "attempts", &att) || !att ||
        json_object_is_type(att, json_type_null)) {
        r->n_ignored++;
        return 0;
    }
    if (!json_object_is_type(att, json_type_array))
        return jerror(r, line, "attempts", "an array of attempts", att, d);
    size_t na = json_object_array_length(att);
    double work = 0;
    uint32_t gpus = 0, replicas = 0;
    bool complete = false;
    for (size_t a = 0; a < na; a++) {
        json_object *at = json_object_array_get_idx(att, a);
        if (!at || !json_object_is_type(at, json_type_object))
            return jerror(r, line, "attempts", "attempt objects", at, d);
        sim_time t0 = 0, t1 = 0;
        bool h0, h1;
        if ((st = jtime(r, line, at, "start_time", false, &t0, &h0, d)) ||
            (st = jtime(r, line, at, "end_time", false, &t1, &h1, d)))
            return st;
        if (h0 && h1) {
            if (t1 < t0)
                return sim_diag_set(d, SIM_EPARSE, r->path, line, 0,
                                    "job '%s': attempt %zu ends before it starts", j->id, a + 1);
            work += (double)(t1 - t0) / 1e6;
        }
        json_object *det;
        if (!json_object_object_get_ex(at, "detail", &det) || !det ||
            json_object_is_type(det, json_type_null))
            continue;
        if (!json_object_is_type(det, json_type_array))
            return jerror(r, line, "detail", "an array of machines", det, d);
        uint32_t g = 0, machines = 0, per = 0;
        bool equal = true;
        for (size_t m = 0; m < json_object_array_length(det); m++) {
            json_object *mo = json_object_array_get_idx(det, m), *gl;
            if (!mo || !json_object_is_type(mo, json_type_object) ||
                !json_object_object_get_ex(mo, "gpus", &gl) || !gl ||
                !json_object_is_type(gl, json_type_array))
                return jerror(r, line, "detail", "machines {\"ip\": ..., \"gpus\": [...]}", mo, d);
            uint32_t n = (uint32_t)json_object_array_length(gl);
            if (n == 0)
                continue;
            if (machines && n != per)
                equal = false;
            per = n;
            machines++;
            g += n;
        }
        /* The last attempt that held GPUs gives the job's shape. */
        if (g) {
            gpus = g;
            replicas = equal ? machines : 0;
        }
        /* A job ran when one attempt has both times and GPUs: times on one attempt and
         * GPUs on another do not make it one. */
        if (g && h0 && h1)
            complete = true;
    }
    if (work > SIM_TIME_LIMIT_S)
        return sim_diag_set(d, SIM_EPARSE, r->path, line, 0,
                            "job '%s': its attempts last %.0f s in all, more than the limit of "
                            "1e+10 s",
                            j->id, work);
    if (!complete || gpus == 0 || gpus > 65536) {
        r->n_ignored++;
        return 0;
    }
    j->work_s = work;
    j->num_gpus = gpus;
    j->replicas = replicas;
    j->gpu_milli = j->true_milli = SIM_MILLI_GPU;
    return 1;
}

/* Next byte that is not white space must be one of `want` (consumed); else a parse
 * error saying `what` was expected. */
static int jexpect(trace_reader *r, const char *want, const char *what, int *got, sim_diag *d)
{
    philly_state *s = r->state;
    int st = jpeek(r, got, d);
    if (st != SIM_OK)
        return st;
    if (*got >= 0 && strchr(want, *got)) {
        s->pos++;
        return SIM_OK;
    }
    char q[32];
    if (*got < 0)
        snprintf(q, sizeof q, "the end of the file");
    else if (*got >= 0x20 && *got < 0x7F)
        snprintf(q, sizeof q, "'%c'", *got);
    else
        snprintf(q, sizeof q, "byte 0x%02X", (unsigned)*got);
    return sim_diag_set(d, SIM_EPARSE, r->path, s->line, 0, "malformed JSON: expected %s, got %s",
                        what, q);
}

static int by_key(const void *a, const void *b)
{
    const jkey *x = a, *y = b;
    uint32_t n = x->len < y->len ? x->len : y->len;
    int c = memcmp(x->text + x->off, y->text + y->off, n);
    if (c)
        return c;
    if (x->len != y->len)
        return x->len < y->len ? -1 : 1;
    return (x->off > y->off) - (x->off < y->off);
}

static long line_at(const char *text, uint32_t off, long start_line)
{
    long line = start_line;
    for (uint32_t i = 0; i < off; i++)
        line += text[i] == '\r' || (text[i] == '\n' && !(i && text[i - 1] == '\r'));
    return line;
}

/* Keys keys[from..n) of one object: sorted (by text, then position), equal neighbours
 * are a key given twice. O(k log k) for k keys. */
static int object_dups(trace_reader *r, size_t from, size_t n, long start_line, sim_diag *d)
{
    philly_state *s = r->state;
    if (n - from < 2)
        return SIM_OK;
    jkey *k = s->keys + from;
    qsort(k, n - from, sizeof *k, by_key);
    for (size_t i = 1; i < n - from; i++) {
        if (k[i].len != k[i - 1].len ||
            memcmp(s->elem + k[i].off, s->elem + k[i - 1].off, k[i].len))
            continue;
        char q[64];
        csvin_quote(s->elem + k[i].off, k[i].len, q, sizeof q);
        q[strlen(q) - 1] = '\0';
        return sim_diag_set(d, SIM_EPARSE, r->path, line_at(s->elem, k[i].off, start_line), 0,
                            "malformed JSON: key '%s' given twice in one object (first on line "
                            "%ld)",
                            q + 1, line_at(s->elem, k[i - 1].off, start_line));
    }
    return SIM_OK;
}

/* Look for a key given twice in one object of the element's text (json-c has checked
 * the syntax). Keys are compared as written: escapes are not decoded. */
static int json_dup_keys(trace_reader *r, long start_line, sim_diag *d)
{
    philly_state *s = r->state;
    /* Each frame: the first key of its object in s->keys, or SIZE_MAX for an array. */
    size_t frame[64], depth = 0, n = 0;
    bool want_key = false;
    for (size_t i = 0; i < s->elem_len; i++) {
        char c = s->elem[i];
        if (c == '"') {
            size_t start = ++i;
            while (i < s->elem_len && s->elem[i] != '"')
                i += s->elem[i] == '\\' ? 2 : 1;
            if (want_key && depth && frame[depth - 1] != SIZE_MAX) {
                if (n == s->keys_cap) {
                    size_t ncap = s->keys_cap ? s->keys_cap * 2 : 64;
                    jkey *nk = sim_reallocarray(s->keys, ncap, sizeof *nk);
                    if (!nk)
                        return sim_diag_set(d, SIM_ENOMEM, r->path, start_line, 0, "out of memory");
                    s->keys = nk;
                    s->keys_cap = ncap;
                }
                s->keys[n++] = (jkey){s->elem, (uint32_t)start, (uint32_t)(i - start)};
            }
            want_key = false;
        } else if (c == '{' || c == '[') {
            /* Deeper nesting than the search follows is not a job's: json-c's own depth
             * limit applies to it. */
            if (depth == sizeof frame / sizeof frame[0])
                return SIM_OK;
            frame[depth++] = c == '{' ? n : SIZE_MAX;
            want_key = c == '{';
        } else if (c == ',') {
            want_key = depth && frame[depth - 1] != SIZE_MAX;
        } else if ((c == '}' || c == ']') && depth) {
            size_t from = frame[--depth];
            if (from != SIZE_MAX) {
                int st = object_dups(r, from, n, start_line, d);
                if (st != SIM_OK)
                    return st;
                n = from;
            }
        }
    }
    return SIM_OK;
}

/* An error inside the job object that began on start_line: cited there, as every JSON
 * diagnostic is, with the line where the parser stopped when that is another. */
static int elem_error(trace_reader *r, long start_line, const char *what, sim_diag *d)
{
    const philly_state *s = r->state;
    if (s->line == start_line)
        return sim_diag_set(d, SIM_EPARSE, r->path, start_line, 0, "%s", what);
    return sim_diag_set(d, SIM_EPARSE, r->path, start_line, 0, "%s (on line %ld)", what, s->line);
}

static int json_element(trace_reader *r, json_object **obj, long *start_line, sim_diag *d)
{
    philly_state *s = r->state;
    json_tokener_reset(s->tok);
    *start_line = s->line;
    s->elem_len = 0;
    size_t bytes = 0;
    for (;;) {
        if (s->pos == s->end) {
            if (s->eof)
                return elem_error(r, *start_line,
                                  "malformed JSON: the file ends inside a job object", d);
            int st = jfill(r, d);
            if (st != SIM_OK)
                return st;
            continue;
        }
        size_t avail = s->end - s->pos;
        const unsigned char *p = s->chunk + s->pos;
        const unsigned char *nul = memchr(p, '\0', avail);
        size_t n = nul ? (size_t)(nul - p) : avail;
        if (n == 0)
            return elem_error(r, *start_line, "NUL byte in the JSON text", d);
        json_object *o = json_tokener_parse_ex(s->tok, (const char *)p, (int)n);
        enum json_tokener_error e = json_tokener_get_error(s->tok);
        size_t used = e == json_tokener_continue ? n : json_tokener_get_parse_end(s->tok);
        if (s->elem_len + used > s->elem_cap) {
            size_t ncap = s->elem_cap ? s->elem_cap : 4096;
            while (ncap < s->elem_len + used)
                ncap *= 2;
            char *ne = sim_reallocarray(s->elem, ncap, 1);
            if (!ne) {
                json_object_put(o);
                return sim_diag_set(d, SIM_ENOMEM, r->path, s->line, 0, "out of memory");
            }
            s->elem = ne;
            s->elem_cap = ncap;
        }
        memcpy(s->elem + s->elem_len, p, used);
        s->elem_len += used;
        for (size_t i = 0; i < used; i++)
            pass_byte(s, p[i]);
        s->pos += used;
        bytes += used;
        if (e == json_tokener_success) {
            *obj = o;
            return SIM_OK;
        }
        if (e != json_tokener_continue) {
            char what[160];
            snprintf(what, sizeof what, "malformed JSON: %s", json_tokener_error_desc(e));
            return elem_error(r, *start_line, what, d);
        }
        if (bytes > CSVIN_MAX_ROW)
            return sim_diag_set(d, SIM_EPARSE, r->path, *start_line, 0,
                                "a job object longer than %u bytes", CSVIN_MAX_ROW);
    }
}

/* After a syntax error the position in the text is lost: the rest of the file is
 * unreadable, so the error stops the read even when bad records are skipped (skipping
 * it would silently drop every later job). */
static int json_dead(trace_reader *r, int st, sim_diag *d)
{
    philly_state *s = r->state;
    s->phase = 4;
    r->fatal = true;
    if (st == SIM_EPARSE && r->opt.skip_bad_rows && d) {
        size_t n = strlen(d->msg);
        snprintf(d->msg + n, sizeof d->msg - n,
                 " (--skip-bad-rows cannot skip it: the JSON cannot be resumed after a syntax "
                 "error)");
    }
    return st;
}

static int json_next(trace_reader *r, job_spec *j, sim_diag *d)
{
    philly_state *s = r->state;
    int st, c;
    for (;;) {
        if (s->phase == 4)
            return 0;
        if (s->phase == 3) {
            if ((st = jpeek(r, &c, d)) != SIM_OK)
                return json_dead(r, st, d);
            if (c >= 0)
                return json_dead(r,
                                 sim_diag_set(d, SIM_EPARSE, r->path, s->line, 0,
                                              "malformed JSON: text after the closing ']'"),
                                 d);
            return 0;
        }
        if (s->phase == 0) {
            if ((st = jexpect(r, "[", "'[' (an array of job objects)", &c, d)) != SIM_OK)
                return json_dead(r, st, d);
            s->phase = 1;
            continue;
        }
        if (s->phase == 2) {
            if ((st = jexpect(r, ",]", "',' or ']'", &c, d)) != SIM_OK)
                return json_dead(r, st, d);
            s->phase = c == ',' ? 1 : 3;
            s->need_element = c == ',';
            continue;
        }
        if ((st = jpeek(r, &c, d)) != SIM_OK)
            return json_dead(r, st, d);
        if (c == ']' && !s->need_element) {
            s->pos++;
            s->phase = 3;
            continue;
        }
        if (c != '{')
            return json_dead(r, jexpect(r, "{", "a job object", &c, d), d);
        json_object *o = NULL;
        long line;
        if ((st = json_element(r, &o, &line, d)) != SIM_OK)
            return json_dead(r, st, d);
        s->phase = 2;
        r->rows++;
        trace__job_defaults(j);
        /* A key given twice spoils this record only: the syntax is intact. */
        st = json_dup_keys(r, line, d);
        if (st == SIM_OK)
            st = json_job(r, o, line, j, d);
        json_object_put(o);
        if (st == 1) {
            j->line = (uint64_t)line;
            return 1;
        }
        if (st < 0)
            return st;
    }
}

/* ---- Both ---------------------------------------------------------------------- */

static int philly_next(trace_reader *r, job_spec *j, sim_diag *d)
{
    philly_state *s = r->state;
    if (s->json)
        return json_next(r, j, d);
    for (;;) {
        csvin_row row;
        int st = csvin_next(r->in, &row, d);
        if (st <= 0) {
            if (st == SIM_EPARSE)
                r->rows++;
            return st;
        }
        r->rows++;
        trace__job_defaults(j);
        st = csvin_row_width(r->in, &row, r->n_header, d);
        if (st == SIM_OK)
            st = csv_row(r, &row, j, d);
        if (st == 1)
            j->line = (uint64_t)row.line;
        if (st != 0)
            return st;
    }
}

static int philly_open(trace_reader *r, sim_diag *d)
{
    philly_state *s = sim_calloc(1, sizeof *s);
    if (!s)
        return sim_diag_set(d, SIM_ENOMEM, r->path, 0, 0, "out of memory");
    r->state = s;
    const char *t = trace__opt(r, "tenant");
    if (t && strcmp(t, "vc") != 0 && strcmp(t, "user") != 0)
        return sim_diag_set(d, SIM_EINVAL, NULL, 0, 0,
                            "--trace-opt tenant=%s: expected vc or user", t);
    s->tenant_user = t && strcmp(t, "user") == 0;
    int c;
    int st = csvin_peek(r->in, &c, d);
    if (st != SIM_OK)
        return st;
    s->json = c == '[' || c == '{';
    if (!s->json) {
        if (s->tenant_user)
            return sim_diag_set(d, SIM_EINVAL, NULL, 0, 0,
                                "--trace-opt tenant=user: the derived Philly CSV has no user "
                                "column (only the VC, 'cluster')");
        static const char *const names[P_COLS] = {"timestamp", "duration", "num_gpus",
                                                  "gpu_time", "cluster"};
        static const bool required[P_COLS] = {true, true, true, false, false};
        return trace__map_header(r, names, required, P_COLS,
                                 "timestamp,duration,num_gpus,gpu_time,cluster", d);
    }
    s->chunk = sim_malloc(JCHUNK);
    s->tok = json_tokener_new_ex(64);
    if (!s->chunk || !s->tok)
        return sim_diag_set(d, SIM_ENOMEM, r->path, 0, 0, "out of memory");
    json_tokener_set_flags(s->tok, JSON_TOKENER_STRICT | JSON_TOKENER_ALLOW_TRAILING_CHARS |
                                       JSON_TOKENER_VALIDATE_UTF8);
    s->line = csvin_line(r->in);
    return SIM_OK;
}

static void philly_close(trace_reader *r)
{
    philly_state *s = r->state;
    if (!s)
        return;
    sim_free(s->elem);
    sim_free(s->keys);
    if (s->tok)
        json_tokener_free(s->tok);
    sim_free(s->chunk);
    sim_free(s);
    r->state = NULL;
}

const trace_format trace_format_philly = {
    .name = "philly",
    .summary = "Philly: derived CSV timestamp,duration,num_gpus,gpu_time,cluster, or the "
               "cluster_job_log JSON",
    .delim = ',',
    .open = philly_open,
    .next = philly_next,
    .close = philly_close,
    .in_memory = true,
    .options = philly_options,
};
