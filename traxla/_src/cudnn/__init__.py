"""``jax._src.cudnn``: JAX's cuDNN attention support checks (keras asks them before choosing
cuDNN flash attention)."""
