// A kernel with a side effect and state that outlives a call: a process-wide counter per
// `index` attribute, incremented on every execution (so the call must never be
// deduplicated or removed: ffi_call(..., has_side_effect=True)).
#include <cstdint>
#include <mutex>
#include <unordered_map>

#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

namespace {

std::mutex counter_mutex;
std::unordered_map<int64_t, int32_t> counters;

ffi::Error CounterImpl(int64_t index, ffi::ResultBuffer<ffi::S32> out) {
  std::lock_guard<std::mutex> lock(counter_mutex);
  *out->typed_data() = ++counters[index];
  return ffi::Error::Success();
}

}  // namespace

XLA_FFI_DEFINE_HANDLER_SYMBOL(Counter, CounterImpl,
                              ffi::Ffi::Bind().Attr<int64_t>("index").Ret<ffi::Buffer<ffi::S32>>());
