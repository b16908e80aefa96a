"""Mutable state in traced programs: array refs (``ref.py``) and their discharge into
pure jaxprs (``discharge.py``)."""
