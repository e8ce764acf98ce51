// The C library this process runs with: its exp2, exp, log and log2 of fp32 and fp64 values, as
// a CPU kernel compiled without -ffast-math calls them (one call into libm per value; never
// folded at compile time nor replaced by a vector variant such as glibc's libmvec, whose values
// differ). Not correctly rounded (docs/attention.md, "Device functions", counts glibc 2.36's
// misrounded arguments), and the values are the installed library's: other versions and other
// C libraries may give other bits.
#pragma once

#include <string>

namespace simprec::device_math {

float c_exp2f(float x);
float c_expf(float x);
float c_logf(float x);
float c_log2f(float x);
double c_exp2(double x);
double c_exp(double x);
double c_log(double x);
double c_log2(double x);

// "glibc 2.36" (gnu_get_libc_version), or "an unknown C library" elsewhere.
std::string c_library_version();

}  // namespace simprec::device_math
