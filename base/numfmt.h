/*
 * numfmt.h: numbers written without printf, byte for byte as printf writes them: a
 * double as "%.Nf" (N = 0..9) and integers as "%llu" / "%lld". The outputs write
 * millions of numbers; printf's parsing of its format and its general conversion
 * dominate their cost.
 */
#ifndef BASE_NUMFMT_H
#define BASE_NUMFMT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Room sim_fmt_fixed needs: sign, 20 digits, point, 9 decimals, and more. */
#define SIM_FMT_FIXED_MAX 40

/* Write x as printf("%.*f", digits, x) would into buf (not NUL-terminated) and return
 * the length; 0 when x is not finite, digits > 9, or |x| x 10^digits reaches 2^64
 * (the caller then uses printf). Exact: the double's value is scaled in integers and
 * rounded half to even, as glibc rounds. O(digits of the result). */
size_t sim_fmt_fixed(char buf[SIM_FMT_FIXED_MAX], double x, unsigned digits);

/* Room sim_fmt_u64 needs: the 20 digits of 2^64 - 1. */
#define SIM_FMT_U64_MAX 20

/* Write u as printf("%llu") would into buf (not NUL-terminated) and return the length.
 * Two digits at a time. */
size_t sim_fmt_u64(char buf[SIM_FMT_U64_MAX], uint64_t u);

/* sim_fmt_fixed into f, or fprintf("%.*f") when it returns 0. */
void sim_put_fixed(FILE *f, double x, unsigned digits);

/* u as "%llu", i as "%lld". */
void sim_put_u64(FILE *f, uint64_t u);
void sim_put_i64(FILE *f, int64_t i);

#endif
