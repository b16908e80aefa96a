"""traxla's own Mosaic lowering of Pallas kernels for the TPU: ``kernel`` builds a kernel's
module (the function, its grid and windows, the index-map transform functions) through the
rule registry of ``rules`` and ``control_flow``; ``dialects`` is the one adapter to jaxlib's
Mosaic TPU bindings (a context of its own, serialization). Imported only when a kernel is
lowered for a TPU (``traxla.lowering.rules.pallas``)."""
