"""Memory held by jit's caches: N distinct shapes through one jitted function, with the
executable cache bounded (config ``jit_cache_size``), then the function deleted.

    python tools/cache_memory.py [N_SHAPES] [BOUND]

Prints the resident-set growth (MB) at each step and how many executables stay alive.
"""
import gc
import os
import sys
import weakref

import numpy as np

import traxla
import traxla.numpy as jnp


def rss_mb() -> float:
    with open(f"/proc/{os.getpid()}/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def main(n_shapes=500, bound=64):
    traxla.config.update("jit_cache_size", bound)
    traxla.config.update("trace_cache_size", bound)
    f = traxla.jit(lambda x: jnp.sin(x) * 2.0 + 1.0)
    f(np.ones(1, np.float32))
    gc.collect()
    base = rss_mb()
    refs = []
    for n in range(2, n_shapes + 2):
        f(np.ones(n, np.float32))
        refs += [weakref.ref(e.executable) for e in f._compiled.values()]
    gc.collect()
    alive = len({id(r()) for r in refs if r() is not None})
    grown = rss_mb() - base
    print(f"{n_shapes} shapes, bound {bound}: {len(f._compiled)} cached, {alive} executables "
          f"alive, RSS +{grown:.1f} MB")
    del f
    gc.collect()
    alive = sum(r() is not None for r in refs)
    print(f"after del: {alive} executables alive, RSS +{rss_mb() - base:.1f} MB")


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:3]))
