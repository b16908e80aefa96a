"""PJRT clients per platform, created lazily, and traxla's Device wrapper."""
from __future__ import annotations

import threading

from traxla.ir.config import config
from traxla.lowering.module import set_default_platform
from traxla.runtime import xla_adapter as xla

_backend_lock = threading.RLock()


class Device:
    """A device users can see; the jaxlib object stays inside."""

    __slots__ = ("_device", "id", "platform", "process_index")

    def __init__(self, device):
        self._device = device
        self.id = device.id
        self.platform = device.platform
        self.process_index = device.process_index

    def __repr__(self):
        return f"CpuDevice(id={self.id})" if self.platform == "cpu" else repr(self._device)

    def __str__(self):
        return str(self._device)  # as JAX's: "cpu:0"

    @property
    def device_kind(self):
        return self._device.device_kind

    def memory_stats(self):
        """The allocator's statistics as JAX reports them (None on CPU)."""
        return xla.device_memory_stats(self._device)

    def __getattr__(self, name):
        # platform attributes JAX's Device has too (coords, core_on_chip, client, ...)
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self._device, name)

    def __eq__(self, other):
        return isinstance(other, Device) and other._device == self._device

    def __hash__(self):
        return hash((self.platform, self.id))


class Backend:
    """One platform's client, its devices, and the default device's sharding."""

    def __init__(self, platform: str = "cpu"):
        self.platform = platform
        if platform == "cpu":
            config.read_environment(("num_cpu_devices",))  # XLA_FLAGS as of now, as JAX
            self.client = xla.cpu_client(max(config.read("num_cpu_devices"), 1))  # -1: one
        elif platform == "tpu":
            self.client = xla.tpu_client()
        else:
            self.client = xla.cuda_client(_visible_devices())
        self.raw_devices = xla.devices(self.client)
        self.devices = [Device(d) for d in self.raw_devices]
        local_ids = {d.id for d in xla.local_devices(self.client)}
        self.local_devices = [d for d in self.devices if d.id in local_ids]
        self.default_device = self.local_devices[0]._device
        self.default_sharding = xla.single_device_sharding(self.default_device)


_backends: dict[str, Backend] = {}
_failures: dict[str, str] = {}       # platform -> why it could not start (auto mode skips it)
_KNOWN = ("cpu", "cuda", "tpu")
_ALIASES = {"gpu": ("cuda",), "cuda": ("cuda",), "cpu": ("cpu",), "tpu": ("tpu",)}
_PRIORITY = ("tpu", "cuda", "cpu")   # automatic choice, the default first (JAX's priorities)
_HINT = " (set JAX_PLATFORMS='' to automatically choose an available backend)"


def _visible_devices():
    value = config.read("cuda_visible_devices")
    if value in (None, "", "all"):
        return None
    return [int(d) for d in str(value).split(",")]


def _requested_platforms():
    """The platforms named by ``config.update("platforms", ...)`` / ``JAX_PLATFORMS``, with
    aliases expanded, or None for automatic choice."""
    value = config.read("platforms")
    if not value:
        return None
    out = []
    for name in str(value).split(","):
        name = name.strip().lower()
        if name not in _ALIASES:
            raise RuntimeError(f"Unable to initialize backend '{name}': Backend '{name}' is not "
                               f"in the list of known backends: {list(_KNOWN)}.{_HINT}")
        out.extend(p for p in _ALIASES[name] if p not in out)
    return out


def _start(platform: str) -> Backend:
    backend = _backends.get(platform)
    if backend is None:
        with _backend_lock:
            backend = _backends.get(platform)
            if backend is None:
                backend = _backends[platform] = Backend(platform)
                for hook in initialization_hooks:
                    hook(backend.client)
    return backend


# ``hook(client)`` for each backend started from now on (jax.extend.xla's transformations
# register themselves with plugin clients so)
initialization_hooks: list = []


def _try_start(platform: str):
    """The backend, or None (with the reason kept) when it cannot start."""
    if platform in _failures:
        return None
    try:
        return _start(platform)
    except xla.PluginError as e:
        _failures[platform] = str(e)
        return None


def available_platforms() -> list[str]:
    """The platforms this process runs on, the default first."""
    requested = _requested_platforms()
    if requested is not None:
        for platform in requested:
            if _try_start(platform) is None:
                raise RuntimeError(f"Unable to initialize backend '{platform}': "
                                   f"{_failures[platform]}{_HINT}")
        return requested
    present = [p for p in _PRIORITY if _try_start(p) is not None]
    preferred = config.read("xla_backend") or config.read("platform_name")  # JAX's old flags
    if preferred:  # that platform is the default one
        first = _ALIASES.get(preferred.lower(), (preferred.lower(),))
        if not all(p in present for p in first):
            raise RuntimeError(f"Unknown backend {preferred}. Available backends are "
                               f"{[_jax_platform(p) for p in present]}")
        present = list(first) + [p for p in present if p not in first]
    return present


def _jax_platform(platform: str) -> str:
    return "gpu" if platform == "cuda" else platform


def default_backend() -> str:
    """The platform of the default device: ``'cpu'``, ``'gpu'`` or ``'tpu'``, as JAX names
    them."""
    platform = available_platforms()[0]
    return "gpu" if platform == "cuda" else platform


def get_backend(platform: str | None = None) -> Backend:
    """The backend for ``platform`` (``'cpu'``, ``'gpu'``/``'cuda'``, ``'tpu'``), or the
    default one."""
    if platform is None:
        backend = _default.get("backend")
        if backend is None:
            backend = _start(available_platforms()[0])
            set_default_platform(backend.platform)
            _default["backend"] = backend
        return backend
    name = platform.lower()
    if name not in _ALIASES:
        raise RuntimeError(f"Unknown backend {platform}. Available backends are "
                           f"{available_platforms()}")
    available = available_platforms()
    for candidate in _ALIASES[name]:
        if candidate in available:
            return _start(candidate)
    if name == "gpu":
        present = ", ".join(available)
        raise RuntimeError(f"Unknown backend: 'gpu' requested, but no platforms that are "
                           f"instances of gpu are present. Platforms present are: {present}")
    reason = _failures.get(_ALIASES[name][0])
    detail = f" ({reason})" if reason else ""
    raise RuntimeError(f"Unknown backend {platform}{detail}. Available backends are {available}")


_default: dict = {}


def _refuse_late_device_count(name, value):
    if name == "num_cpu_devices" and xla.backend_started("cpu") and value != config.read(name):
        raise RuntimeError(
            "traxla.config.update('num_cpu_devices', ...) must run before the CPU backend is first "
            f"used; it has already started with {config.read(name)} device(s).")
    if name in ("platform_name", "xla_backend") and _default and value and \
            _ALIASES.get(value.lower(), (value.lower(),))[0] != _default["backend"].platform:
        raise RuntimeError(
            f"traxla.config.update('jax_{name}', ...) must run before the first computation; "
            f"the default backend is already {_default['backend'].platform!r}.")
    if name == "platforms" and _default and value != config.read(name):
        raise RuntimeError(
            "traxla.config.update('platforms', ...) must run before the first computation; the "
            f"default backend is already {_default['backend'].platform!r}.")


config.on_update(_refuse_late_device_count)


def devices(backend: str | None = None):
    return list(get_backend(backend).devices)


def local_devices(process_index: int | None = None, backend: str | None = None):
    return list(get_backend(backend).local_devices)
