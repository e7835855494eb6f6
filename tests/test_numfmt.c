/*
 * test_numfmt.c: sim_fmt_fixed against printf("%.*f") on millions of doubles (random
 * magnitudes from 1e-12 to 1e13 and both signs, exact binary ties such as 0.0625 at 3
 * digits, decimals of 3 and 6 places and their neighbours one ulp away, integers,
 * zeros of both signs, subnormals) at every precision 0..9, and its refusal of what it
 * does not handle (not finite, too large), where sim_put_fixed falls back to printf;
 * sim_put_u64/sim_put_i64 against "%llu"/"%lld"; the row builder (base/line.h) against
 * printf and sim_csv_put_field on random rows, growing from empty to long fields.
 */
#include "base/line.h"
#include "base/numfmt.h"
#include "base/textout.h"

#include "check.h"

#include <float.h>
#include <gsl/gsl_rng.h>

static uint64_t mismatches, compared;

static void cmp_one(double x, unsigned d)
{
    char want[512], got[SIM_FMT_FIXED_MAX + 1];
    snprintf(want, sizeof want, "%.*f", (int)d, x);
    size_t n = sim_fmt_fixed(got, x, d);
    if (!n)
        return;
    got[n] = '\0';
    compared++;
    if (strcmp(want, got) != 0 && mismatches++ < 10)
        fprintf(stderr, "%.17g at %u digits: printf %s, sim_fmt_fixed %s\n", x, d, want, got);
}

static void cmp_all(double x)
{
    for (unsigned d = 0; d <= 9; d++) {
        cmp_one(x, d);
        cmp_one(-x, d);
    }
}

int main(void)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 31);
    /* Hand-checked values, including ties that round to even. */
    char b[SIM_FMT_FIXED_MAX + 1];
    size_t n = sim_fmt_fixed(b, 0.0625, 3);
    b[n] = '\0';
    CHECK_STR(b, "0.062");
    n = sim_fmt_fixed(b, 0.1875, 3);
    b[n] = '\0';
    CHECK_STR(b, "0.188");
    n = sim_fmt_fixed(b, 2.5, 0);
    b[n] = '\0';
    CHECK_STR(b, "2");
    n = sim_fmt_fixed(b, -0.0, 6);
    b[n] = '\0';
    CHECK_STR(b, "-0.000000");
    n = sim_fmt_fixed(b, -1e-9, 3);
    b[n] = '\0';
    CHECK_STR(b, "-0.000");
    n = sim_fmt_fixed(b, 1234.5678915, 6);
    b[n] = '\0';
    CHECK_STR(b, "1234.567892");
    /* What it leaves to printf. */
    CHECK_EQ_I64(sim_fmt_fixed(b, NAN, 3), 0);
    CHECK_EQ_I64(sim_fmt_fixed(b, INFINITY, 3), 0);
    CHECK_EQ_I64(sim_fmt_fixed(b, 1e300, 3), 0);
    CHECK_EQ_I64(sim_fmt_fixed(b, 2e13, 6), 0);
    CHECK_EQ_I64(sim_fmt_fixed(b, 1.0, 10), 0);
    /* Random magnitudes. */
    for (int i = 0; i < 300000; i++)
        cmp_all(pow(10.0, -12.0 + 25.0 * gsl_rng_uniform(r)) * (1 + gsl_rng_uniform(r)));
    /* Exact binary ties and their neighbours: k / 2^j. */
    for (int i = 0; i < 100000; i++) {
        double x =
            ldexp((double)gsl_rng_uniform_int(r, 1u << 30), -(int)gsl_rng_uniform_int(r, 40));
        cmp_all(x);
        cmp_all(nextafter(x, 0));
        cmp_all(nextafter(x, INFINITY));
    }
    /* Decimals of 3 and 6 places (what the outputs hold) and half-way decimals. */
    for (int i = 0; i < 100000; i++) {
        double k = (double)gsl_rng_uniform_int(r, 4000000000u);
        cmp_all(k / 1e3);
        cmp_all(k / 1e6);
        cmp_all((k + 0.5) / 1e3);
        cmp_all((k + 0.5) / 1e6);
        cmp_all(nextafter(k / 1e6, 0));
        cmp_all(k);
    }
    /* Subnormals and tiny values. */
    for (int i = 0; i < 1000; i++)
        cmp_all(ldexp(gsl_rng_uniform(r), -1060 + (int)gsl_rng_uniform_int(r, 60)));
    cmp_all(0.0);
    cmp_all(DBL_MIN);
    cmp_all(9007199254740993.0);
    cmp_all(18446744073.709551);
    CHECK_EQ_I64(mismatches, 0);
    CHECK(compared > 10000000);
    /* sim_fmt_u64 at every change of digit count (10^k - 1, 10^k, 10^k + 1) and at the
     * ends of the range: its digits are placed by their count. */
    uint64_t pow10 = 1;
    for (int k = 0; k <= 20; k++) {
        uint64_t us[] = {pow10 - 1, pow10, pow10 + 1, UINT64_MAX, UINT64_MAX - 1};
        for (size_t q = 0; q < sizeof us / sizeof *us; q++) {
            char got[SIM_FMT_U64_MAX + 1], want[32];
            size_t len = sim_fmt_u64(got, us[q]);
            got[len] = '\0';
            snprintf(want, sizeof want, "%llu", (unsigned long long)us[q]);
            CHECK_STR(got, want);
        }
        if (k < 19)
            pow10 *= 10;
        else
            pow10 = UINT64_MAX; /* 10^20 is past the range: its neighbours wrap */
    }
    /* sim_put_fixed falls back to printf; the integer writers. */
    FILE *f = tmpfile();
    CHECK(f != NULL);
    if (f) {
        sim_put_fixed(f, 1e300, 1);
        fputc(' ', f);
        sim_put_fixed(f, NAN, 3);
        fputc(' ', f);
        sim_put_fixed(f, -2.25, 1);
        fputc(' ', f);
        sim_put_u64(f, UINT64_MAX);
        fputc(' ', f);
        sim_put_i64(f, INT64_MIN);
        fputc(' ', f);
        sim_put_i64(f, 0);
        rewind(f);
        char line[1024] = {0}, want[1024];
        CHECK(fgets(line, sizeof line, f) != NULL);
        snprintf(want, sizeof want, "%.1f %.3f %.1f %llu %lld %lld", 1e300, NAN, -2.25,
                 (unsigned long long)UINT64_MAX, (long long)INT64_MIN, 0LL);
        CHECK_STR(line, want);
        fclose(f);
    }
    /* Empty text into a line with no buffer yet: nothing is written or allocated. */
    sim_line empty = {0};
    sim_line_str(&empty, "");
    sim_line_csv(&empty, "");
    CHECK(empty.len == 0 && empty.buf == NULL && !empty.oom);
    sim_line_free(&empty);
    /* Rows built in memory against the same rows through stdio, over many rows so the
     * buffer grows and is reused. */
    FILE *want_f = tmpfile(), *got_f = tmpfile();
    CHECK(want_f && got_f);
    if (want_f && got_f) {
        sim_line l = {0};
        char field[600];
        int put_st = SIM_OK;
        for (int row = 0; row < 20000; row++) {
            size_t len = gsl_rng_uniform_int(r, row % 100 == 0 ? sizeof field : 12);
            for (size_t i = 0; i < len; i++)
                field[i] = ",\"\nab c"[gsl_rng_uniform_int(r, 8)];
            field[len] = '\0';
            double x = pow(10.0, -8.0 + 30.0 * gsl_rng_uniform(r)) * (gsl_rng_uniform(r) - 0.5);
            unsigned d = (unsigned)gsl_rng_uniform_int(r, 12);
            uint64_t u = gsl_rng_get(r) * (uint64_t)gsl_rng_get(r);
            int64_t i = (int64_t)u;
            sim_csv_put_field(want_f, field);
            fprintf(want_f, ",%.*f,%llu,%lld,%s\n", (int)d, x, (unsigned long long)u,
                    (long long)i, field);
            sim_line_csv(&l, field);
            sim_line_char(&l, ',');
            sim_line_fixed(&l, x, d);
            sim_line_char(&l, ',');
            sim_line_u64(&l, u);
            sim_line_char(&l, ',');
            sim_line_i64(&l, i);
            sim_line_char(&l, ',');
            sim_line_str(&l, field);
            sim_line_char(&l, '\n');
            if (put_st == SIM_OK)
                put_st = sim_line_put(&l, got_f);
        }
        CHECK_EQ_I64(put_st, SIM_OK);
        CHECK_EQ_I64(l.len, 0);
        sim_line_free(&l);
        CHECK(l.buf == NULL && l.cap == 0);
        long wn = ftell(want_f), gn = ftell(got_f);
        CHECK_EQ_I64(gn, wn);
        rewind(want_f);
        rewind(got_f);
        long differ = -1;
        for (long k = 0; k < wn && differ < 0; k++)
            if (fgetc(want_f) != fgetc(got_f))
                differ = k;
        CHECK_EQ_I64(differ, -1);
    }
    if (want_f)
        fclose(want_f);
    if (got_f)
        fclose(got_f);
    gsl_rng_free(r);
    return check_done();
}
