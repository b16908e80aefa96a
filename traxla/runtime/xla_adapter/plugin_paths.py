"""Where accelerator plugins are on disk, found without importing them (or jax): the CUDA
PJRT plugin and NVIDIA's libraries from their pip wheels, libtpu, and the TPU chips attached.
Nothing of jaxlib but its version here: ``clients`` loads what these find."""
from __future__ import annotations

import ctypes
import importlib
import importlib.util
import os
import pathlib
from importlib import metadata

import jaxlib

JAXLIB_VERSION = jaxlib.__version__


class PluginError(RuntimeError):
    """A GPU plugin that is missing, mismatched or cannot start; the message says what to do."""


# (pip distribution of the PJRT plugin, of its extension package, the extension's module)
_CUDA_PLUGINS = (("cuda13", "jax-cuda13-pjrt", "jax-cuda13-plugin", "jax_cuda13_plugin"),
                 ("cuda12", "jax-cuda12-pjrt", "jax-cuda12-plugin", "jax_cuda12_plugin"))
# NVIDIA libraries preloaded from their pip wheels, as jax_plugins.xla_cuda12 does
_NVIDIA_LIBRARIES = (("cuda_runtime", ("libcudart.so.12",)), ("cu13", ("libcudart.so.13",)),
                     ("cuda_nvrtc", ("libnvrtc.so.12",)), ("cu13", ("libnvrtc.so.13",)),
                     ("cublas", ("libcublas.so.12", "libcublasLt.so.12")),
                     ("cu13", ("libcublas.so.13", "libcublasLt.so.13")),
                     ("nccl", ("libnccl.so.2",)), ("cuda_cupti", ("libcupti.so.12",)),
                     ("cu13", ("libcupti.so.13",)), ("cusparse", ("libcusparse.so.12",)),
                     ("cusolver", ("libcusolver.so.11",)), ("cu13", ("libcusolver.so.12",)),
                     ("cufft", ("libcufft.so.11",)), ("cu13", ("libcufft.so.12",)),
                     ("nvshmem", ("libnvshmem_host.so.3",)), ("cudnn", ("libcudnn.so.9",)))
_INSTALL_HINT = ("pip install -e \".[cuda12]\" (or: pip install 'jax-cuda12-plugin[with-cuda]=={v}' "
                 "'jax-cuda12-pjrt=={v}')")


def _distribution_version(name):
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def find_cuda_plugin():
    """``(plugin .so path, extension module name, version)`` of the installed CUDA PJRT
    plugin, located on disk: ``jax_plugins.xla_cuda*``'s ``__init__`` imports jax, so it is
    never imported. Raises PluginError saying what to install or fix."""
    spec = importlib.util.find_spec("jax_plugins")
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    for tag, pjrt_dist, ext_dist, ext_module in _CUDA_PLUGINS:
        candidates = [pathlib.Path(p) / f"xla_{tag}" / "xla_cuda_plugin.so" for p in locations]
        so = next((c for c in candidates if c.exists()), None)
        if so is None:
            continue
        version = _distribution_version(pjrt_dist)
        if version is not None and version != JAXLIB_VERSION:
            raise PluginError(
                f"the CUDA plugin {pjrt_dist} {version} does not match jaxlib {JAXLIB_VERSION}: "
                + _INSTALL_HINT.format(v=JAXLIB_VERSION))
        ext_version = _distribution_version(ext_dist)
        if ext_version is not None and ext_version != JAXLIB_VERSION:
            raise PluginError(
                f"the CUDA plugin extension {ext_dist} {ext_version} does not match jaxlib "
                f"{JAXLIB_VERSION}: " + _INSTALL_HINT.format(v=JAXLIB_VERSION))
        return str(so), ext_module, version
    raise PluginError("the CUDA plugin is not installed: " + _INSTALL_HINT.format(v=JAXLIB_VERSION))


def _preload_nvidia_libraries():
    for module, libraries in _NVIDIA_LIBRARIES:
        try:
            package = importlib.import_module(f"nvidia.{module}")
        except ImportError:
            continue
        for library in libraries:
            try:
                ctypes.cdll.LoadLibrary(str(pathlib.Path(package.__path__[0]) / "lib" / library))
            except OSError:
                pass  # as jax: a library missing from the wheel is looked up by the plugin later


# -- TPU: libtpu's PJRT plugin, found as JAX finds it (jax/_src/cloud_tpu_init.py) -------------

_GOOGLE_PCI_VENDOR = "0x1ae0"
_TPU_PCI_IDS = {"0x0027", "0x0056", "0x005e", "0x0062", "0x0063", "0x006f", "0x0076"}


def find_libtpu():
    """The libtpu shared object: ``TPU_LIBRARY_PATH`` when it names a file, else the ``libtpu``
    package's (located on disk, not imported), else None."""
    path = os.environ.get("TPU_LIBRARY_PATH")
    if path and os.path.isfile(path):
        return path
    spec = importlib.util.find_spec("libtpu")
    for folder in (spec.submodule_search_locations or []) if spec is not None else []:
        so = pathlib.Path(folder) / "libtpu.so"
        if so.exists():
            return str(so)
    return None


def tpu_chips_present() -> int:
    """TPU chips attached through PCI (JAX's hardware_utils check); cheap, starts nothing."""
    count = 0
    for vendor in pathlib.Path("/sys/bus/pci/devices").glob("*/vendor"):
        try:
            count += (vendor.read_text().strip() == _GOOGLE_PCI_VENDOR
                      and (vendor.parent / "device").read_text().strip() in _TPU_PCI_IDS)
        except OSError:
            continue
    return count or len(list(pathlib.Path("/dev").glob("accel[0-9]*")))
