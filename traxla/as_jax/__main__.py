"""``python -m traxla.as_jax script.py args...`` / ``python -m traxla.as_jax -m module args...``:
runs a program with every ``import jax`` resolving to traxla (see ``traxla.as_jax``)."""
from __future__ import annotations

import runpy
import sys

USAGE = ("usage: python -m traxla.as_jax script.py [args...]\n"
         "       python -m traxla.as_jax -m module [args...]\n"
         "Runs the program with 'jax' mapped to traxla.")


def main(argv: list[str]) -> None:
    if not argv or argv[0] in ("-h", "--help"):
        print(USAGE, file=sys.stderr if not argv else sys.stdout)
        raise SystemExit(2 if not argv else 0)
    from traxla import as_jax
    as_jax.install()
    if argv[0] == "-m":
        if len(argv) < 2:
            print(USAGE, file=sys.stderr)
            raise SystemExit(2)
        sys.argv = argv[1:]
        # As `python -m module`: the current directory first on sys.path.
        sys.path.insert(0, "")
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
    else:
        import os
        sys.argv = argv[:]
        # As `python script.py`: the script's folder first on sys.path.
        sys.path[0] = os.path.dirname(os.path.abspath(argv[0]))
        runpy.run_path(argv[0], run_name="__main__")


if __name__ == "__main__":
    main(sys.argv[1:])
