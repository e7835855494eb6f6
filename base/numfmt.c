/*
 * numfmt.c: fixed-point formatting of doubles without printf (see numfmt.h). The value
 * m x 2^e of a double is scaled by 10^digits exactly in 128-bit integers, rounded half to
 * even as glibc's printf rounds the exact value, and written by hand.
 */
#include "base/numfmt.h"

#include <math.h>
#include <string.h>

static const uint64_t pow10_tab[10] = {1,      10,      100,      1000,      10000,
                                       100000, 1000000, 10000000, 100000000, 1000000000};

size_t sim_fmt_fixed(char buf[SIM_FMT_FIXED_MAX], double x, unsigned digits)
{
    typedef unsigned __int128 u128;
    double a = fabs(x);
    if (!isfinite(x) || digits > 9)
        return 0;
    uint64_t p10 = pow10_tab[digits];
    u128 r = 0;
    if (a != 0) {
        int ex;
        double f = frexp(a, &ex);
        uint64_t m = (uint64_t)ldexp(f, 53); /* exact: f has 53 significant bits */
        int e = ex - 53;
        if (e >= 0) {
            if (e > 40)
                return 0;
            r = ((u128)m << e) * p10;
        } else {
            int k = -e;
            u128 n = (u128)m * p10; /* below 2^83 */
            if (k >= 100) {
                r = 0; /* n < 2^83 < half of 2^k: rounds to 0 */
            } else {
                u128 q = n >> k, rem = n & (((u128)1 << k) - 1), half = (u128)1 << (k - 1);
                if (rem > half || (rem == half && (q & 1)))
                    q++;
                r = q;
            }
        }
    }
    if (r >> 64)
        return 0;
    uint64_t u = (uint64_t)r, whole = u / p10, frac = u % p10;
    char tmp[SIM_FMT_FIXED_MAX];
    char *p = tmp + sizeof tmp;
    for (unsigned i = 0; i < digits; i++) {
        *--p = (char)('0' + frac % 10);
        frac /= 10;
    }
    if (digits)
        *--p = '.';
    do {
        *--p = (char)('0' + whole % 10);
        whole /= 10;
    } while (whole);
    if (signbit(x))
        *--p = '-';
    size_t len = (size_t)(tmp + sizeof tmp - p);
    memcpy(buf, p, len);
    return len;
}

void sim_put_fixed(FILE *f, double x, unsigned digits)
{
    char buf[SIM_FMT_FIXED_MAX];
    size_t n = sim_fmt_fixed(buf, x, digits);
    if (n)
        fwrite(buf, 1, n, f);
    else
        fprintf(f, "%.*f", (int)digits, x);
}

/* Decimal digits of u (at least 1). */
static unsigned u64_digits(uint64_t u)
{
    /* From the bit length (1233 / 4096 approximates log10 2) and one comparison with a
     * power of ten: no branch on the value, whose length varies from one call to the
     * next. */
    /* clang-format off */
    static const uint64_t pow10[20] = {
        1u, 10u, 100u, 1000u, 10000u, 100000u, 1000000u, 10000000u, 100000000u, 1000000000u,
        10000000000u, 100000000000u, 1000000000000u, 10000000000000u, 100000000000000u,
        1000000000000000u, 10000000000000000u, 100000000000000000u, 1000000000000000000u,
        10000000000000000000u};
    /* clang-format on */
    unsigned bits = 64u - (unsigned)__builtin_clzll(u | 1u);
    unsigned t = (bits * 1233u) >> 12;     /* floor(log10 2^bits) */
    return t + (u >= pow10[t]) + (u == 0); /* "0" has a digit */
}

size_t sim_fmt_u64(char buf[SIM_FMT_U64_MAX], uint64_t u)
{
    static const char pairs[201] = "00010203040506070809101112131415161718192021222324"
                                   "25262728293031323334353637383940414243444546474849"
                                   "50515253545556575859606162636465666768697071727374"
                                   "75767778798081828384858687888990919293949596979899";
    /* Written in place, from the last digit back. */
    size_t n = u64_digits(u);
    char *p = buf + n;
    while (u >= 100) {
        p -= 2;
        memcpy(p, pairs + 2 * (u % 100), 2);
        u /= 100;
    }
    if (u >= 10) {
        p -= 2;
        memcpy(p, pairs + 2 * u, 2);
    } else {
        *--p = (char)('0' + u);
    }
    return n;
}

void sim_put_u64(FILE *f, uint64_t u)
{
    char buf[SIM_FMT_U64_MAX];
    fwrite(buf, 1, sim_fmt_u64(buf, u), f);
}

void sim_put_i64(FILE *f, int64_t i)
{
    if (i < 0)
        fputc('-', f);
    sim_put_u64(f, i < 0 ? (uint64_t)0 - (uint64_t)i : (uint64_t)i);
}
