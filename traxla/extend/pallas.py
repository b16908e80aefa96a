"""``jax.extend.pallas``: JAX's Pallas internals for other kernel front ends (its grid
mapping and per-platform lowering-rule registration). traxla's Pallas lowering has its own
registry (``traxla/lowering/mosaic/``), so these names exist with JAX's kinds and raise
``NotImplementedError`` when used."""
from traxla.base.unsupported import fill

fill(globals(), "JAX's Pallas internals (jax.extend.pallas: GridMapping and lowering-rule "
     "registration for other kernel front ends)",
     functions="register_lowering_rule", classes="GridMapping")
