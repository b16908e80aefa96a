"""Functions that bind one primitive each (the binding half of ``jax.lax``): value helpers
and conversions (``values``), elementwise operations (``elementwise``) and shape operations
(``shapes``). They sit below the transformations, so that autodiff and vmap machinery can
bind primitives without importing ``traxla.lax``, which is built on top of them."""
