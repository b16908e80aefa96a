// A Python extension module exposing the handlers as JAX's FFI tutorial does:
// `registrations()` returns a dict of target name -> PyCapsule, ready for
// `jax.ffi.register_ffi_target(name, capsule)` (traxla.ffi accepts it unchanged).
// Written against the plain Python C API, so no binding library is needed.
#include <Python.h>

#include "xla/ffi/api/c_api.h"

extern "C" {
XLA_FFI_Error* RmsNorm(XLA_FFI_CallFrame* call_frame);
XLA_FFI_Error* RmsNormFwd(XLA_FFI_CallFrame* call_frame);
XLA_FFI_Error* RmsNormBwd(XLA_FFI_CallFrame* call_frame);
XLA_FFI_Error* Attributes(XLA_FFI_CallFrame* call_frame);
XLA_FFI_Error* Counter(XLA_FFI_CallFrame* call_frame);
}

namespace {

PyObject* Registrations(PyObject*, PyObject*) {
  const struct {
    const char* name;
    void* handler;
  } targets[] = {
      {"rms_norm", reinterpret_cast<void*>(RmsNorm)},
      {"rms_norm_fwd", reinterpret_cast<void*>(RmsNormFwd)},
      {"rms_norm_bwd", reinterpret_cast<void*>(RmsNormBwd)},
      {"attributes", reinterpret_cast<void*>(Attributes)},
      {"counter", reinterpret_cast<void*>(Counter)},
  };
  PyObject* dict = PyDict_New();
  if (dict == nullptr) return nullptr;
  for (const auto& t : targets) {
    PyObject* capsule = PyCapsule_New(t.handler, nullptr, nullptr);
    if (capsule == nullptr || PyDict_SetItemString(dict, t.name, capsule) != 0) {
      Py_XDECREF(capsule);
      Py_DECREF(dict);
      return nullptr;
    }
    Py_DECREF(capsule);
  }
  return dict;
}

PyMethodDef methods[] = {
    {"registrations", Registrations, METH_NOARGS,
     "FFI target name -> PyCapsule of its handler."},
    {nullptr, nullptr, 0, nullptr},
};

PyModuleDef module = {PyModuleDef_HEAD_INIT, "traxla_ffi_example_ext", nullptr, -1, methods};

}  // namespace

PyMODINIT_FUNC PyInit_traxla_ffi_example_ext() { return PyModule_Create(&module); }
