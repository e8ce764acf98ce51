#include "emulation/device_math/c_library.hpp"

#include <math.h>

#if defined(__GLIBC__)
#include <gnu/libc-version.h>
#endif

namespace simprec::device_math {

// Called through volatile pointers, so that no compiler evaluates them itself.
namespace {
float (*volatile const exp2f_fn)(float) = ::exp2f;
float (*volatile const expf_fn)(float) = ::expf;
float (*volatile const logf_fn)(float) = ::logf;
float (*volatile const log2f_fn)(float) = ::log2f;
double (*volatile const exp2_fn)(double) = ::exp2;
double (*volatile const exp_fn)(double) = ::exp;
double (*volatile const log_fn)(double) = ::log;
double (*volatile const log2_fn)(double) = ::log2;
}  // namespace

float c_exp2f(float x) {
  return exp2f_fn(x);
}
float c_expf(float x) {
  return expf_fn(x);
}
float c_logf(float x) {
  return logf_fn(x);
}
float c_log2f(float x) {
  return log2f_fn(x);
}
double c_exp2(double x) {
  return exp2_fn(x);
}
double c_exp(double x) {
  return exp_fn(x);
}
double c_log(double x) {
  return log_fn(x);
}
double c_log2(double x) {
  return log2_fn(x);
}

std::string c_library_version() {
#if defined(__GLIBC__)
  return std::string("glibc ") + gnu_get_libc_version();
#else
  return "an unknown C library";
#endif
}

}  // namespace simprec::device_math
