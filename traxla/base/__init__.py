"""The base layer: pytrees (``traxla.tree_util`` is their public namespace). Its modules
import only the standard library and NumPy."""
