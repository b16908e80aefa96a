"""``jax.experimental.roofline``: not supported by traxla, which does not have roofline
analysis of jaxprs (jax.experimental.roofline). The module imports and its names exist with
JAX's kinds; using one raises NotImplementedError naming the capability."""


from traxla.base.unsupported import fill as _fill

from traxla.experimental.roofline.roofline import roofline  # noqa: E402

_CAPABILITY = 'roofline analysis of jaxprs (jax.experimental.roofline)'
_fill(globals(), _CAPABILITY,
    functions='register_roofline register_standard_roofline roofline roofline_and_grad',
    classes='RooflineResult RooflineRuleContext RooflineShape')
