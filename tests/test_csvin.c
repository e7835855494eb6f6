/*
 * test_csvin.c: the CSV input layer — fields, quotes, embedded newlines and their line
 * numbers, CRLF, BOM, blank lines, a missing final newline; identical rows at every
 * chunk size, plain and gzip; a truncated gzip stream; bad bytes; the number parsers;
 * decompression ahead on a thread against reading in place.
 */
#include "base/alloc.h"
#include "base/csvin.h"
#include "base/gzin.h"

#include "check.h"

#include <zlib.h>

static const char text[] = "\xEF\xBB\xBF"
                           "a,b,c\r\n"
                           "1, two ,\"th,ree\"\r\n"
                           "\n"
                           "\"multi\nline\",\"q\"\"uote\",\n"
                           "last,,x";

/* Rows of `path` read at the given chunk size, rendered as "line|f1|f2|...\n". */
static char *render(const char *path, size_t chunk)
{
    csvin *in;
    sim_diag d;
    if (csvin_open(&in, path, ',', &d) != SIM_OK)
        return NULL;
    if (chunk)
        csvin_set_chunk(in, chunk);
    size_t cap = 4096, n = 0;
    char *out = calloc(cap, 1);
    csvin_row row;
    int st;
    while ((st = csvin_next(in, &row, &d)) == 1) {
        n += (size_t)snprintf(out + n, cap - n, "%ld", row.line);
        for (uint32_t i = 0; i < row.n; i++)
            n += (size_t)snprintf(out + n, cap - n, "|%s", row.f[i]);
        n += (size_t)snprintf(out + n, cap - n, "\n");
    }
    csvin_close(in);
    if (st < 0) {
        free(out);
        return NULL;
    }
    return out;
}

static void write_file(const char *path, const char *data, size_t len, bool gz)
{
    if (gz) {
        gzFile g = gzopen(path, "wb");
        gzwrite(g, data, (unsigned)len);
        gzclose(g);
    } else {
        FILE *f = fopen(path, "wb");
        fwrite(data, 1, len, f);
        fclose(f);
    }
}

/* The pieces sizes from..to (0: the reader's own) for which reading the plain file or
 * its gzipped copy does not give `expect`; each is reported. */
static int chunks_differ(const char *plain, const char *gz, const char *expect, size_t from,
                         size_t to)
{
    int bad = 0;
    for (size_t chunk = from; chunk <= to; chunk++) {
        char *a = render(plain, chunk);
        char *b = render(gz, chunk);
        if (!a || !b || strcmp(a, expect) || strcmp(b, expect)) {
            bad++;
            fprintf(stderr, "chunk %zu differs:\n%s\n%s\n", chunk, a ? a : "?", b ? b : "?");
        }
        free(a);
        free(b);
    }
    return bad;
}

static void test_rows_and_chunks(void)
{
    const char *expect = "1|a|b|c\n2|1|two|th,ree\n4|multi\nline|q\"uote|\n6|last||x\n";
    write_file("csvin_plain.csv", text, sizeof text - 1, false);
    write_file("csvin_gz.csv.gz", text, sizeof text - 1, true);
    char *full = render("csvin_plain.csv", 0);
    CHECK_STR(full, expect);
    CHECK_EQ_I64(chunks_differ("csvin_plain.csv", "csvin_gz.csv.gz", expect, 1, sizeof text), 0);
    free(full);
}

/* Read a and b in step, row by row: the number of differences in their rows, final
 * status and (for an error) message; b starts reading ahead after `after` rows (< 0:
 * never; a thread that does not start counts as a difference, the comparison would prove
 * nothing). The rows read and the final status go to *rows and *status. */
static int read_in_step(csvin *a, csvin *b, sim_diag *da, sim_diag *db, int after, int *rows,
                        int *status)
{
    int diffs = 0, sa, sb;
    csvin_row ra, rb;
    *rows = 0;
    do {
        if (*rows == after && !csvin_read_ahead(b))
            diffs++;
        sa = csvin_next(a, &ra, da);
        sb = csvin_next(b, &rb, db);
        if (sa != sb) {
            diffs++;
            break;
        }
        if (sa != 1)
            break;
        (*rows)++;
        bool same = ra.line == rb.line && ra.n == rb.n;
        for (uint32_t i = 0; same && i < ra.n; i++)
            same = ra.len[i] == rb.len[i] && memcmp(ra.f[i], rb.f[i], ra.len[i] + 1) == 0;
        diffs += !same;
    } while (diffs == 0);
    if (diffs == 0 && sa < 0) {
        char ma[512], mb[512];
        sim_diag_format(da, ma, sizeof ma);
        sim_diag_format(db, mb, sizeof mb);
        diffs += strcmp(ma, mb) != 0;
    }
    *status = sa;
    return diffs;
}

/* Rows and the final status (with its message) of one read of `path` in lockstep with
 * another at chunk size 1: there a line is never whole in the buffer, so every row goes
 * through libcsv, while at the full chunk size plain lines take the fast path. */
static int compare_paths(const char *path, char delim)
{
    csvin *a, *b;
    sim_diag da, db;
    if (csvin_open(&a, path, delim, &da) != SIM_OK || csvin_open(&b, path, delim, &db) != SIM_OK)
        return -1;
    csvin_set_chunk(b, 1);
    int rows, sa;
    int diffs = read_in_step(a, b, &da, &db, -1, &rows, &sa);
    csvin_close(a);
    csvin_close(b);
    return diffs;
}

/* Random lines, mostly plain but with spaces, tabs, quotes, CR, blank lines, high and
 * control bytes in any place (or plain but for one such byte), comma- and
 * tab-delimited, short and longer than the sixteen bytes the fast path takes at a time:
 * the fast path must give what libcsv gives, rows and errors alike. */
static void test_fast_path(void)
{
    static const char alpha[] = "aaaab1.-_ ,,,\t\t\"\r\n\x80\x01\x7f";
    srand(7);
    int bad = 0;
    for (int file = 0; file < 800; file++) {
        char delim = file % 2 ? '\t' : ',';
        char data[8192];
        size_t n = 0;
        int lines = 1 + rand() % 20;
        for (int l = 0; l < lines; l++) {
            bool plain = rand() % 3 != 0;
            int len = rand() % (file % 4 < 2 ? 40 : 120);
            for (int k = 0; k < len; k++) {
                char c = alpha[rand() % (int)(sizeof alpha - 1)];
                if (plain && c != delim &&
                    (c == '"' || c == '\r' || c == '\n' || (unsigned char)c >= 0x80 || c == 1 ||
                     c == 0x7f || c == '\t'))
                    c = 'a';
                data[n++] = c;
            }
            /* A plain line but for one byte libcsv must see, at any place. */
            static const char one[] = "\"\r\x80\x01\x7f\t";
            if (plain && len > 0 && rand() % 3 == 0)
                data[n - 1 - (size_t)(rand() % len)] = one[rand() % (int)(sizeof one - 1)];
            data[n++] = '\n';
        }
        if (rand() % 4 == 0 && n > 0)
            n--; /* no final newline */
        write_file("csvin_fast.csv", data, n, false);
        int d = compare_paths("csvin_fast.csv", delim);
        if (d != 0) {
            bad++;
            fprintf(stderr, "file %d: fast path differs (%d)\n", file, d);
        }
    }
    CHECK(bad == 0);
}

static void expect_error(const char *data, size_t len, const char *expected)
{
    write_file("csvin_bad.csv", data, len, false);
    csvin *in;
    sim_diag d;
    CHECK(csvin_open(&in, "csvin_bad.csv", ',', &d) == SIM_OK);
    csvin_row row;
    int st;
    while ((st = csvin_next(in, &row, &d)) == 1)
        ;
    csvin_close(in);
    char buf[1024];
    CHECK(st < 0);
    CHECK_STR(sim_diag_format(&d, buf, sizeof buf), expected);
}

/* Lines that end in a lone CR (old Mac files) count as lines, as libcsv ends rows at
 * them; a CRLF counts once, also when its LF starts the next piece read and inside a
 * quoted field; a row skipped after an error resumes at the next CR. */
static void test_cr_lines(void)
{
    static const char cr[] = "a,b\rc,d\r\re,f\r\n\"m\rn\",o\r\n\"p\r\nq\",r\rg,h\n";
    const char *expect = "1|a|b\n2|c|d\n4|e|f\n5|m\rn|o\n7|p\r\nq|r\n9|g|h\n";
    write_file("csvin_cr.csv", cr, sizeof cr - 1, false);
    write_file("csvin_cr.csv.gz", cr, sizeof cr - 1, true);
    CHECK_EQ_I64(chunks_differ("csvin_cr.csv", "csvin_cr.csv.gz", expect, 0, sizeof cr), 0);
    expect_error("a,b\rc,d\re,\"f\"x\r", 16,
                 "csvin_bad.csv:3:2: error: malformed CSV: a quote inside an unquoted field, or "
                 "text after a closing quote");
    /* After the bad row, reading goes on at the next line. */
    static const char skip[] = "a,b\rc,\"d\"x,y\r\ne,f\rg,h\r";
    write_file("csvin_cr_skip.csv", skip, sizeof skip - 1, false);
    csvin *in;
    sim_diag d;
    CHECK(csvin_open(&in, "csvin_cr_skip.csv", ',', &d) == SIM_OK);
    csvin_row row;
    char got[256] = "";
    size_t n = 0;
    int st;
    while ((st = csvin_next(in, &row, &d)) != 0) {
        if (st == 1)
            n += (size_t)snprintf(got + n, sizeof got - n, "%ld|%s ", row.line, row.f[0]);
        else
            n += (size_t)snprintf(got + n, sizeof got - n, "E%ld ", d.line);
    }
    csvin_close(in);
    CHECK_STR(got, "1|a E2 3|e 4|g ");
}

static void test_bad_bytes(void)
{
    expect_error("a,b\nx,y\x00z\n", 11, "csvin_bad.csv:2:2: error: NUL byte in field");
    expect_error("a,b\nx,\xff\n", 8,
                 "csvin_bad.csv:2:2: error: invalid UTF-8 at byte 1 of the field");
    /* An overlong encoding of '/' is invalid too. */
    expect_error("a\n\xc0\xaf\n", 5,
                 "csvin_bad.csv:2:1: error: invalid UTF-8 at byte 1 of the field");
    expect_error("a,b\n\"x\n", 7,
                 "csvin_bad.csv:2:1: error: unterminated quoted field at the end of the file");
    size_t big = 70000;
    char *s = malloc(big + 8);
    memcpy(s, "a\n", 2);
    memset(s + 2, 'x', big);
    s[big + 2] = '\n';
    expect_error(s, big + 3, "csvin_bad.csv:2:1: error: field longer than 65536 bytes");
    free(s);
}

static void test_truncated_gzip(void)
{
    size_t n = 200000;
    char *s = malloc(n);
    for (size_t i = 0; i < n; i++)
        s[i] = (i % 40 == 39) ? '\n' : (char)('a' + (i * 7919) % 26);
    write_file("csvin_trunc.csv.gz", s, n, true);
    free(s);
    size_t len = 0;
    char *gz = check_slurp("csvin_trunc.csv.gz", &len);
    write_file("csvin_trunc.csv.gz", gz, len / 2, false);
    free(gz);
    csvin *in;
    sim_diag d;
    CHECK(csvin_open(&in, "csvin_trunc.csv.gz", ',', &d) == SIM_OK);
    csvin_row row;
    int st;
    while ((st = csvin_next(in, &row, &d)) == 1)
        ;
    csvin_close(in);
    CHECK_EQ_I64(st, SIM_EIO);
    /* Gzip damage has no line (zlib decompresses ahead of the lines read): its byte
     * offset in the file is exact. */
    char want[160], buf[512];
    snprintf(want, sizeof want,
             "csvin_trunc.csv.gz: error: truncated gzip stream: the file ends at byte offset "
             "%zu inside it",
             len / 2);
    CHECK_STR(sim_diag_format(&d, buf, sizeof buf), want);
}

/* Read every row of path; returns the status of the last read and the rows read. */
static int read_all(const char *path, sim_diag *d, int *rows)
{
    csvin *in;
    *rows = 0;
    int st = csvin_open(&in, path, ',', d);
    if (st != SIM_OK)
        return st;
    csvin_row row;
    while ((st = csvin_next(in, &row, d)) == 1)
        (*rows)++;
    csvin_close(in);
    return st;
}

static void test_gzip_damage(void)
{
    const char *t = "a,b\n1,2\n3,4\n";
    write_file("csvin_member.csv.gz", t, strlen(t), true);
    size_t len = 0;
    char *gz = check_slurp("csvin_member.csv.gz", &len);
    CHECK(gz != NULL && len > 20);
    if (!gz)
        return;
    char *two = malloc(2 * len + 16);
    sim_diag d;
    int rows;
    char want[200], buf[512];
    /* Two members one after the other, as gzip(1) concatenates them: both are read. */
    memcpy(two, gz, len);
    memcpy(two + len, gz, len);
    write_file("csvin_two.csv.gz", two, 2 * len, false);
    CHECK_EQ_I64(read_all("csvin_two.csv.gz", &d, &rows), 0);
    CHECK_EQ_I64(rows, 6);
    /* Junk after the stream is an error naming its offset (zlib ignored it). */
    memcpy(two + len, "junk\n", 5);
    write_file("csvin_junk.csv.gz", two, len + 5, false);
    CHECK_EQ_I64(read_all("csvin_junk.csv.gz", &d, &rows), SIM_EIO);
    snprintf(want, sizeof want,
             "csvin_junk.csv.gz: error: junk after the gzip stream at byte offset %zu (bytes "
             "that do not start another gzip member)",
             len);
    CHECK_STR(sim_diag_format(&d, buf, sizeof buf), want);
    /* A single stray byte too. */
    two[len] = 0x1f;
    write_file("csvin_junk1.csv.gz", two, len + 1, false);
    CHECK_EQ_I64(read_all("csvin_junk1.csv.gz", &d, &rows), SIM_EIO);
    /* A damaged CRC in the trailer: reported where the decompressor stopped, after the
     * CRC (zlib) or the whole trailer (ISA-L, which reads the CRC and length together),
     * not at line 1. */
    memcpy(two, gz, len);
    two[len - 8] ^= 0x55;
    write_file("csvin_crc.csv.gz", two, len, false);
    CHECK_EQ_I64(read_all("csvin_crc.csv.gz", &d, &rows), SIM_EIO);
#ifdef SIM_HAVE_ISAL
    snprintf(want, sizeof want,
             "csvin_crc.csv.gz: error: corrupt gzip stream at byte offset %zu (incorrect data "
             "or length check)",
             len);
#else
    snprintf(want, sizeof want,
             "csvin_crc.csv.gz: error: corrupt gzip stream at byte offset %zu (incorrect data "
             "check)",
             len - 4);
#endif
    CHECK_STR(sim_diag_format(&d, buf, sizeof buf), want);
    free(two);
    free(gz);
}

/* Two readers of path, both reading `chunk` bytes at a time; false when either cannot
 * open (nothing left open). */
static bool open_pair(const char *path, size_t chunk, csvin **a, csvin **b, sim_diag *da,
                      sim_diag *db)
{
    if (csvin_open(a, path, ',', da) != SIM_OK)
        return false;
    if (csvin_open(b, path, ',', db) != SIM_OK) {
        csvin_close(*a);
        return false;
    }
    csvin_set_chunk(*a, chunk);
    csvin_set_chunk(*b, chunk);
    return true;
}

/* The rows, gzip flag and final status (with its message, asked twice: an error is
 * final) of `path` read in place and decompressed ahead on a thread (started after
 * `after` rows): all the same. */
static int compare_ahead(const char *path, size_t chunk, int after)
{
    csvin *a, *b;
    sim_diag da, db;
    if (!open_pair(path, chunk, &a, &b, &da, &db))
        return -1;
    int rows, sa;
    int diffs = read_in_step(a, b, &da, &db, after, &rows, &sa);
    diffs += csvin_is_gzip(a) != csvin_is_gzip(b);
    /* Asked again, the error is the same. */
    csvin_row ra, rb;
    for (int again = 0; again < 2 && diffs == 0 && sa < 0; again++) {
        diffs += csvin_next(a, &ra, &da) != sa;
        diffs += csvin_next(b, &rb, &db) != sa;
        char ma[512], mb[512];
        sim_diag_format(&da, ma, sizeof ma);
        sim_diag_format(&db, mb, sizeof mb);
        diffs += again == 0 && strcmp(ma, mb) != 0;
    }
    csvin_close(a);
    csvin_close(b);
    if (diffs)
        fprintf(stderr, "%s (chunk %zu): read ahead differs after %d rows\n", path, chunk, rows);
    return diffs;
}

/* compare_ahead for a file whose damage may also make rows bad (a bad row is not
 * final: reading goes on after it): every row and every error the same, to the end or
 * an error that is final. */
static int compare_ahead_through(const char *path, size_t chunk)
{
    csvin *a, *b;
    sim_diag da, db;
    if (!open_pair(path, chunk, &a, &b, &da, &db))
        return -1;
    int rows, sa, diffs = 0, after = 0, rounds = 0;
    do {
        diffs += read_in_step(a, b, &da, &db, after, &rows, &sa);
        after = -1;
    } while (diffs == 0 && sa == SIM_EPARSE && da.line > 0 && ++rounds < 10000);
    csvin_close(a);
    csvin_close(b);
    if (diffs)
        fprintf(stderr, "%s (chunk %zu): read ahead differs\n", path, chunk);
    return diffs;
}

static void test_read_ahead(void)
{
    /* A trace of several blocks of the thread's output (256 KiB each), plain and gzip,
     * then the damaged and odd files of the tests above; and a reader closed before
     * the end, while the thread may still be filling blocks. */
    size_t n = 3u << 20;
    char *s = malloc(n);
    for (size_t i = 0; i < n; i++)
        s[i] = (i % 37 == 36) ? '\n' : (i % 37) % 6 == 5 ? ',' : (char)('a' + (i * 7919) % 26);
    write_file("csvin_big.csv", s, n, false);
    write_file("csvin_big.csv.gz", s, n, true);
    size_t len = 0;
    char *gz = check_slurp("csvin_big.csv.gz", &len);
    CHECK(gz != NULL);
    if (gz) {
        write_file("csvin_bigtrunc.csv.gz", gz, len / 2, false);
        gz[len / 3] ^= 0x5a;
        write_file("csvin_bigbad.csv.gz", gz, len, false);
    }
    free(gz);
    free(s);
    write_file("csvin_empty.csv", "", 0, false);
    const char *paths[] = {"csvin_big.csv",       "csvin_big.csv.gz",   "csvin_bigtrunc.csv.gz",
                           "csvin_bigbad.csv.gz", "csvin_plain.csv",    "csvin_gz.csv.gz",
                           "csvin_two.csv.gz",    "csvin_junk.csv.gz",  "csvin_junk1.csv.gz",
                           "csvin_crc.csv.gz",    "csvin_trunc.csv.gz", "csvin_empty.csv"};
    for (size_t i = 0; i < sizeof paths / sizeof *paths; i++) {
        CHECK_EQ_I64(compare_ahead(paths[i], 1u << 16, 0), 0);
        CHECK_EQ_I64(compare_ahead(paths[i], 1000, 0), 0);
        CHECK_EQ_I64(compare_ahead(paths[i], 1u << 16, 1), 0);
    }
    /* Damage at many places: what zlib inflated before it reaches the rows first, then
     * the error, however large the reads (in place 64 KiB, the thread 256 KiB). */
    gz = check_slurp("csvin_big.csv.gz", &len);
    CHECK(gz != NULL);
    int damaged_differ = 0;
    for (int t = 0; gz && t < 40; t++) {
        size_t at = 20 + (len - 40) * (size_t)t / 40 + (size_t)t * 7919 % 1000;
        gz[at] ^= 0x5a;
        gz[at + 1] ^= 0x33;
        write_file("csvin_damaged.csv.gz", gz, len, false);
        gz[at] ^= 0x5a;
        gz[at + 1] ^= 0x33;
        damaged_differ += compare_ahead("csvin_damaged.csv.gz", 1u << 16, 0) != 0;
        damaged_differ += compare_ahead("csvin_damaged.csv.gz", 1000, 0) != 0;
        /* Cut short there: zlib may still hold output when the input runs out (the
         * rest of a match), which comes before the error whatever the read size. */
        write_file("csvin_cut.csv.gz", gz, at, false);
        damaged_differ += compare_ahead("csvin_cut.csv.gz", 1u << 16, 0) != 0;
        damaged_differ += compare_ahead("csvin_cut.csv.gz", 1000, 0) != 0;
    }
    CHECK_EQ_I64(damaged_differ, 0);
    free(gz);
    /* Text that compresses less (distances and codes of every kind), damaged by a bit
     * at many places: the decompressor may hold output it decoded ahead when it meets
     * the damage (ISA-L does), which comes first, however large the reads. */
    n = 200000;
    s = malloc(n);
    uint64_t z = 99;
    for (size_t i = 0; i < n; i++) {
        z = z * UINT64_C(6364136223846793005) + UINT64_C(1442695040888963407);
        s[i] = i % 41 == 40 ? '\n' : (z >> 60) < 3 ? ',' : (char)('0' + (z >> 33) % 40);
    }
    write_file("csvin_mixed.csv.gz", s, n, true);
    free(s);
    gz = check_slurp("csvin_mixed.csv.gz", &len);
    CHECK(gz != NULL);
    damaged_differ = 0;
    for (int t = 0; gz && t < 100; t++) {
        size_t at = 20 + (len - 40) * (size_t)t / 100;
        unsigned char x = (unsigned char)(1u << (t % 8));
        gz[at] ^= x;
        write_file("csvin_damaged.csv.gz", gz, len, false);
        gz[at] ^= x;
        damaged_differ += compare_ahead_through("csvin_damaged.csv.gz", 1000) != 0;
    }
    CHECK_EQ_I64(damaged_differ, 0);
    free(gz);
    /* A read of no bytes gives 0 until the error was handed out, then repeats it, in
     * place and read ahead (also when the thread starts after it). */
    for (int k = 0; k < 2; k++) {
        sim_gzin *g;
        sim_diag d0, d1;
        CHECK(sim_gzin_open(&g, "csvin_bigbad.csv.gz", &d0) == SIM_OK);
        if (k == 1)
            CHECK(sim_gzin_ahead(g));
        static char sink[1 << 16];
        long got;
        CHECK_EQ_I64(sim_gzin_read(g, sink, 0, &d1), 0);
        while ((got = sim_gzin_read(g, sink, sizeof sink, &d0)) > 0)
            ;
        CHECK(got < 0);
        if (k == 0)
            CHECK(sim_gzin_ahead(g)); /* after the error: it stays the answer */
        CHECK_EQ_I64(sim_gzin_read(g, sink, 0, &d1), got);
        CHECK_EQ_I64(sim_gzin_read(g, sink, sizeof sink, &d1), got);
        char m0[512], m1[512];
        CHECK_STR(sim_diag_format(&d1, m1, sizeof m1), sim_diag_format(&d0, m0, sizeof m0));
        sim_gzin_close(g);
    }
    csvin *in;
    sim_diag d;
    CHECK(csvin_open(&in, "csvin_big.csv.gz", ',', &d) == SIM_OK);
    CHECK(csvin_read_ahead(in));
    csvin_row row;
    CHECK_EQ_I64(csvin_next(in, &row, &d), 1);
    CHECK(csvin_is_gzip(in));
    csvin_close(in);
}

static void test_header_and_fields(void)
{
    const char *hdr = "Name, gpu ,x\nn1,12,2.5\nn1,\" 12\",\"2.5 \"\nn2,,-7\n";
    write_file("csvin_hdr.csv", hdr, strlen(hdr), false);
    csvin *in;
    sim_diag d;
    CHECK(csvin_open(&in, "csvin_hdr.csv", ',', &d) == SIM_OK);
    csvin_row row;
    CHECK(csvin_next(in, &row, &d) == 1);
    static const char *const names[] = {"gpu", "name", "absent"};
    int32_t ix[3];
    bool unknown[8];
    CHECK(csvin_map_header(in, &row, names, 3, ix, unknown, &d) == SIM_OK);
    CHECK_EQ_I64(ix[0], 1);
    CHECK_EQ_I64(ix[1], 0);
    CHECK_EQ_I64(ix[2], -1);
    CHECK(unknown[2] && !unknown[0] && !unknown[1]);
    CHECK(csvin_next(in, &row, &d) == 1);
    uint64_t u;
    double x;
    sim_time t;
    CHECK(csvin_u64(in, &row, ix[0], "gpu", 0, 16, &u, &d) == SIM_OK && u == 12);
    CHECK(csvin_double(in, &row, 2, "x", 0, 10, &x, &d) == SIM_OK && x == 2.5);
    CHECK(csvin_seconds(in, &row, 2, "x", 0, 10, &t, &d) == SIM_OK && t == 2500000);
    CHECK(csvin_u64(in, &row, ix[0], "gpu", 0, 10, &u, &d) == SIM_EPARSE);
    char buf[512];
    CHECK_STR(sim_diag_format(&d, buf, sizeof buf),
              "csvin_hdr.csv:2:2: error: field 'gpu': expected an integer 0..10, got \"12\"");
    CHECK(csvin_next(in, &row, &d) == 1);
    CHECK(csvin_u64(in, &row, 1, "gpu", 0, 16, &u, &d) == SIM_EPARSE);
    CHECK_STR(sim_diag_format(&d, buf, sizeof buf),
              "csvin_hdr.csv:3:2: error: field 'gpu': expected an integer 0..16, got \" 12\" "
              "(a number with spaces around it)");
    CHECK(csvin_seconds(in, &row, 2, "x", 0, 10, &t, &d) == SIM_EPARSE);
    CHECK(csvin_row_width(in, &row, 2, &d) == SIM_EPARSE);
    CHECK_STR(sim_diag_format(&d, buf, sizeof buf),
              "csvin_hdr.csv:3:3: error: expected 2 fields, as in the header, got 3");
    CHECK(csvin_row_width(in, &row, 5, &d) == SIM_EPARSE);
    CHECK_STR(sim_diag_format(&d, buf, sizeof buf),
              "csvin_hdr.csv:3:4: error: expected 5 fields, as in the header, got 3");
    CHECK(csvin_next(in, &row, &d) == 1);
    CHECK(csvin_empty(&row, ix[0]));
    CHECK(csvin_empty(&row, ix[2]));
    CHECK(csvin_double(in, &row, 2, "x", 0, 10, &x, &d) == SIM_EPARSE);
    CHECK(csvin_next(in, &row, &d) == 0);
    csvin_close(in);
}

static void test_parsers(void)
{
    uint64_t u;
    int64_t i;
    double x;
    CHECK(csvin_parse_u64("18446744073709551615", 20, &u) && u == UINT64_MAX);
    CHECK(!csvin_parse_u64("18446744073709551616", 20, &u));
    CHECK(csvin_parse_u64("8.000", 5, &u) && u == 8);
    /* Spaces around a number are an error (libcsv already drops those of unquoted
     * fields; what is left was quoted, or comes from an option value). */
    CHECK(!csvin_parse_u64(" 8", 2, &u));
    CHECK(!csvin_parse_u64("8 ", 2, &u));
    CHECK(!csvin_parse_i64(" -8", 3, &i));
    CHECK(!csvin_parse_double("2.5 ", 4, &x));
    CHECK(!csvin_parse_double("\t2.5", 4, &x));
    CHECK(!csvin_parse_u64("8.5", 3, &u));
    CHECK(!csvin_parse_u64("", 0, &u));
    CHECK(!csvin_parse_u64("0x10", 4, &u));
    CHECK(csvin_parse_i64("-9223372036854775808", 20, &i) && i == INT64_MIN);
    CHECK(!csvin_parse_i64("-9223372036854775809", 20, &i));
    CHECK(csvin_parse_double("2.385e2", 7, &x) && x == 238.5);
    CHECK(!csvin_parse_double("nan", 3, &x));
    CHECK(!csvin_parse_double("inf", 3, &x));
    CHECK(!csvin_parse_double("1e999", 5, &x));
    CHECK(!csvin_parse_double("0x1p3", 5, &x));
    char q[64];
    csvin_quote("a\"b\x01", 4, q, sizeof q);
    CHECK_STR(q, "\"a\\\"b\\x01\"");
}

/* The decimal fast path gives exactly strtod's result; seconds are exact microseconds. */
static void test_decimal_paths(void)
{
    srand(2385);
    int bad = 0;
    for (int i = 0; i < 200000; i++) {
        char buf[64];
        int whole = rand() % 4, fracd = rand() % 18;
        size_t n = 0;
        if (rand() % 5 == 0)
            buf[n++] = rand() % 2 ? '-' : '+';
        for (int k = 0; k <= whole * 4; k++)
            buf[n++] = (char)('0' + rand() % 10);
        if (fracd) {
            buf[n++] = '.';
            for (int k = 0; k < fracd; k++)
                buf[n++] = (char)('0' + rand() % 10);
        }
        buf[n] = '\0';
        double fast, ref = strtod(buf, NULL);
        if (!csvin_parse_double(buf, n, &fast) || memcmp(&fast, &ref, sizeof ref) != 0) {
            if (bad++ < 5)
                fprintf(stderr, "decimal %s: %.17g vs strtod %.17g\n", buf, fast, ref);
        }
    }
    CHECK(bad == 0);
    /* Seconds with up to 6 decimals are read exactly, without binary rounding. */
    const char *row_text = "t\n0.000001,1234567.891011,16777217.1,0.1\n";
    write_file("csvin_secs.csv", row_text, strlen(row_text), false);
    csvin *in;
    sim_diag d;
    CHECK(csvin_open(&in, "csvin_secs.csv", ',', &d) == SIM_OK);
    csvin_row row;
    CHECK(csvin_next(in, &row, &d) == 1);
    CHECK(csvin_next(in, &row, &d) == 1);
    const sim_time want[4] = {1, INT64_C(1234567891011), INT64_C(16777217100000), 100000};
    for (int c = 0; c < 4; c++) {
        sim_time t = -1;
        CHECK(csvin_seconds(in, &row, c, "t", 0, 9e12, &t, &d) == SIM_OK);
        CHECK_EQ_I64(t, want[c]);
    }
    csvin_close(in);
    /* The bounds hold to the microsecond, past 2^53 microseconds too: 10^10 s + 1 us is
     * over a bound of 10^10 s, though it is 10^10 as a double. */
    const char *edge = "t\n10000000000,10000000000.000001,0.000001\n";
    write_file("csvin_edge.csv", edge, strlen(edge), false);
    CHECK(csvin_open(&in, "csvin_edge.csv", ',', &d) == SIM_OK);
    CHECK(csvin_next(in, &row, &d) == 1);
    CHECK(csvin_next(in, &row, &d) == 1);
    sim_time t = -1;
    CHECK(csvin_seconds(in, &row, 0, "t", 0, 1e10, &t, &d) == SIM_OK);
    CHECK_EQ_I64(t, INT64_C(10000000000000000));
    CHECK(csvin_seconds(in, &row, 1, "t", 0, 1e10, &t, &d) == SIM_EPARSE);
    char msg[256];
    CHECK_STR(sim_diag_format(&d, msg, sizeof msg),
              "csvin_edge.csv:2:2: error: field 't': expected a time in seconds in [0, 1e+10], "
              "got \"10000000000.000001\"");
    CHECK(csvin_seconds(in, &row, 2, "t", 0.000001, 1, &t, &d) == SIM_OK);
    CHECK_EQ_I64(t, 1);
    CHECK(csvin_seconds(in, &row, 2, "t", 0.000002, 1, &t, &d) == SIM_EPARSE);
    csvin_close(in);
}

static void test_open_errors(void)
{
    csvin *in;
    sim_diag d;
    char buf[512];
    CHECK(csvin_open(&in, "no/such/file.csv", ',', &d) == SIM_EIO);
    CHECK_STR(sim_diag_format(&d, buf, sizeof buf),
              "no/such/file.csv: error: cannot open: No such file or directory");
}

static void test_alloc_failures(void)
{
    write_file("csvin_plain.csv", text, sizeof text - 1, false);
    int64_t base = sim_alloc_live();
    int failures = 0;
    for (uint64_t k = 1; k < 20; k++) {
        sim_alloc_fail_after(k);
        csvin *in;
        sim_diag d;
        int st = csvin_open(&in, "csvin_plain.csv", ',', &d);
        if (st == SIM_OK) {
            csvin_row row;
            while ((st = csvin_next(in, &row, &d)) == 1)
                ;
            csvin_close(in);
        }
        sim_alloc_fail_after(0);
        if (st == SIM_ENOMEM)
            failures++;
        else
            CHECK(st == SIM_OK || st == 0);
        CHECK_EQ_I64(sim_alloc_live(), base);
    }
    CHECK(failures > 0);
}

int main(void)
{
    test_rows_and_chunks();
    test_cr_lines();
    test_fast_path();
    test_bad_bytes();
    test_truncated_gzip();
    test_gzip_damage();
    test_read_ahead();
    test_header_and_fields();
    test_parsers();
    test_decimal_paths();
    test_open_errors();
    test_alloc_failures();
    return check_done();
}
