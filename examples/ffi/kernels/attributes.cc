// A kernel that reads one attribute of each kind the typed FFI decodes (integers and
// floats of several widths, a boolean, a string, an array, a dictionary) and writes what
// it decoded into its f64 output, so that a test can check every encoding end to end.
#include <cstdint>
#include <string_view>

#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

namespace {

ffi::Error AttributesImpl(int32_t a_i32, int64_t a_i64, float a_f32, double a_f64, bool flag,
                          std::string_view name, ffi::Span<const int64_t> values,
                          ffi::Dictionary params, ffi::ResultBuffer<ffi::F64> out) {
  if (out->element_count() != 9) {
    return ffi::Error::InvalidArgument("attributes: the output must have 9 elements");
  }
  int64_t total = 0;
  for (int64_t v : values) total += v;
  ffi::ErrorOr<double> scale = params.get<double>("scale");
  if (scale.has_error()) return scale.error();
  ffi::ErrorOr<int64_t> count = params.get<int64_t>("count");
  if (count.has_error()) return count.error();
  double* o = out->typed_data();
  o[0] = a_i32;
  o[1] = static_cast<double>(a_i64);
  o[2] = a_f32;
  o[3] = a_f64;
  o[4] = flag ? 1.0 : 0.0;
  o[5] = static_cast<double>(name.size());
  o[6] = static_cast<double>(total);
  o[7] = *scale;
  o[8] = static_cast<double>(*count);
  return ffi::Error::Success();
}

}  // namespace

XLA_FFI_DEFINE_HANDLER_SYMBOL(Attributes, AttributesImpl,
                              ffi::Ffi::Bind()
                                  .Attr<int32_t>("a_i32")
                                  .Attr<int64_t>("a_i64")
                                  .Attr<float>("a_f32")
                                  .Attr<double>("a_f64")
                                  .Attr<bool>("flag")
                                  .Attr<std::string_view>("name")
                                  .Attr<ffi::Span<const int64_t>>("values")
                                  .Attr<ffi::Dictionary>("params")
                                  .Ret<ffi::Buffer<ffi::F64>>());
