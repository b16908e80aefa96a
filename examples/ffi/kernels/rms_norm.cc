// RMS normalisation over the last axis, forward (with the per-row scale kept as a
// residual) and backward, written against the XLA FFI headers jaxlib ships, as in JAX's
// FFI tutorial. Rows are the leading axes: a (..., n) input is prod(...) rows of n.
#include <cmath>
#include <cstdint>
#include <string>
#include <tuple>
#include <utility>

#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

namespace {

// (number of elements, size of the last axis); (0, 0) for a scalar.
std::pair<int64_t, int64_t> RowsOf(const ffi::AnyBuffer::Dimensions dims, int64_t count) {
  if (dims.size() == 0) return {0, 0};
  return {count, dims.back()};
}

float RowScale(float eps, int64_t n, const float* x) {
  float sum = 0.0f;
  for (int64_t i = 0; i < n; ++i) sum += x[i] * x[i];
  return 1.0f / std::sqrt(sum / static_cast<float>(n) + eps);
}

// The declared result shapes come from Python: a kernel checks them before writing, so
// that a wrong declaration is an error, never a write past a buffer.
ffi::Error CheckCount(const char* what, int64_t got, int64_t expected) {
  if (got != expected) {
    return ffi::Error::InvalidArgument(std::string(what) + " has " + std::to_string(got) +
                                       " elements; expected " + std::to_string(expected));
  }
  return ffi::Error::Success();
}

ffi::Error CheckEps(float eps) {
  if (!(eps > 0.0f)) {
    return ffi::Error::InvalidArgument("rms_norm: eps must be positive");
  }
  return ffi::Error::Success();
}

ffi::Error RmsNormImpl(float eps, ffi::Buffer<ffi::F32> x, ffi::ResultBuffer<ffi::F32> y) {
  if (ffi::Error e = CheckEps(eps); e.failure()) return e;
  auto [total, n] = RowsOf(x.dimensions(), x.element_count());
  if (n == 0) return ffi::Error::InvalidArgument("rms_norm: the input must be an array");
  if (ffi::Error e = CheckCount("rms_norm: the result", y->element_count(), total); e.failure())
    return e;
  for (int64_t r = 0; r < total; r += n) {
    const float s = RowScale(eps, n, x.typed_data() + r);
    for (int64_t i = 0; i < n; ++i) y->typed_data()[r + i] = x.typed_data()[r + i] * s;
  }
  return ffi::Error::Success();
}

ffi::Error RmsNormFwdImpl(float eps, ffi::Buffer<ffi::F32> x, ffi::ResultBuffer<ffi::F32> y,
                          ffi::ResultBuffer<ffi::F32> res) {
  if (ffi::Error e = CheckEps(eps); e.failure()) return e;
  auto [total, n] = RowsOf(x.dimensions(), x.element_count());
  if (n == 0) return ffi::Error::InvalidArgument("rms_norm_fwd: the input must be an array");
  if (ffi::Error e = CheckCount("rms_norm_fwd: the result", y->element_count(), total);
      e.failure())
    return e;
  if (ffi::Error e = CheckCount("rms_norm_fwd: the residual", res->element_count(), total / n);
      e.failure())
    return e;
  for (int64_t r = 0, row = 0; r < total; r += n, ++row) {
    const float s = RowScale(eps, n, x.typed_data() + r);
    res->typed_data()[row] = s;
    for (int64_t i = 0; i < n; ++i) y->typed_data()[r + i] = x.typed_data()[r + i] * s;
  }
  return ffi::Error::Success();
}

// ct_x = s * ct_y - s^3 * x * mean(x * ct_y), per row.
ffi::Error RmsNormBwdImpl(ffi::Buffer<ffi::F32> res, ffi::Buffer<ffi::F32> x,
                          ffi::Buffer<ffi::F32> ct_y, ffi::ResultBuffer<ffi::F32> ct_x) {
  auto [total, n] = RowsOf(x.dimensions(), x.element_count());
  if (n == 0) return ffi::Error::InvalidArgument("rms_norm_bwd: the input must be an array");
  for (auto [what, got, expected] :
       {std::tuple{"rms_norm_bwd: the residual", res.element_count(), total / n},
        std::tuple{"rms_norm_bwd: the cotangent", ct_y.element_count(), total},
        std::tuple{"rms_norm_bwd: the result", ct_x->element_count(), total}}) {
    if (ffi::Error e = CheckCount(what, got, expected); e.failure()) return e;
  }
  for (int64_t r = 0, row = 0; r < total; r += n, ++row) {
    const float s = res.typed_data()[row];
    float dot = 0.0f;
    for (int64_t i = 0; i < n; ++i) dot += x.typed_data()[r + i] * ct_y.typed_data()[r + i];
    const float k = s * s * s * dot / static_cast<float>(n);
    for (int64_t i = 0; i < n; ++i) {
      ct_x->typed_data()[r + i] = s * ct_y.typed_data()[r + i] - k * x.typed_data()[r + i];
    }
  }
  return ffi::Error::Success();
}

}  // namespace

XLA_FFI_DEFINE_HANDLER_SYMBOL(RmsNorm, RmsNormImpl,
                              ffi::Ffi::Bind()
                                  .Attr<float>("eps")
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>());

XLA_FFI_DEFINE_HANDLER_SYMBOL(RmsNormFwd, RmsNormFwdImpl,
                              ffi::Ffi::Bind()
                                  .Attr<float>("eps")
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>());

XLA_FFI_DEFINE_HANDLER_SYMBOL(RmsNormBwd, RmsNormBwdImpl,
                              ffi::Ffi::Bind()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>());
