/*
 * fuzz_reader.c: a libFuzzer target for one trace reader (FUZZ_FORMAT, with the format
 * option FUZZ_OPT when the format needs a side table), built only with -DSIM_FUZZ=ON
 * (clang). See fuzz_one.h for what one input means and what is checked: the reader
 * never crashes or hangs, and every job it yields is well formed. FUZZ_FORMAT "cluster"
 * fuzzes cluster_spec_load instead. https://llvm.org/docs/LibFuzzer.html
 */
#include "fuzz_one.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_one(FUZZ_FORMAT, FUZZ_OPT, data, size);
}
