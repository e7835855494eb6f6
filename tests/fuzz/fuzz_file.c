/*
 * fuzz_file.c: a libFuzzer target for one parser that is not a trace reader (FUZZ_KIND:
 * cluster_spec, quota, failures, calibrate, model, policy_opt), built only with
 * -DSIM_FUZZ=ON (clang). See fuzz_file_one.h for what one input means and what is
 * checked. https://llvm.org/docs/LibFuzzer.html
 */
#include "fuzz_file_one.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_file_one(FUZZ_KIND, data, size);
}
