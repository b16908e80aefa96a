"""``traxla.example_libraries``: ``stax`` and ``optimizers`` with the API of JAX's example
libraries, so that programs written against them run by switching the import."""
