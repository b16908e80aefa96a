"""A ref view's chain of ``.at[...]`` indexers and ``.reshape``s, link by link (JAX's
transforms), without composing them: the shape it leaves, and the ``RefChain`` (one
``RefIndexer`` or ``RefReshape`` per link, their operands in turn) that a compiled Pallas
TPU kernel's reads, writes and DMAs of a reshaped view bind."""
from __future__ import annotations

import threading

import numpy as np

from traxla.ir.rules.refs import RefChain, RefReshape


def has_reshape(chain) -> bool:
    return any(isinstance(i, RefReshape) for i in chain)


class _KeepLinks(threading.local):
    depth = 0


# > 0 while a compiled Pallas TPU kernel is traced (set by its tracer, above this layer):
# there a read or write of a view of several `.at` links keeps them (see keeps_links)
keep_links = _KeepLinks()


def check_static_sizes(tree) -> None:
    """Reads and writes of a ref take slices of static size (a DMA takes any)."""
    for link in getattr(tree, "links", (tree,)):
        if any(d[0] == "dsize" for d in getattr(link, "dims", ())):
            raise NotImplementedError("Indexing a ref with a `pl.ds` slice of traced size is "
                                      "not supported (only a DMA's source or destination "
                                      "takes one).")


def linked(shape, chain, idx, make_indexer):
    """``(RefChain, operands)`` where ``view[idx]`` is read or written link by link (a
    reshaped view; see ``keeps_links``), else None."""
    if has_reshape(chain) or (keeps_links(chain, idx) and not _whole(idx)):
        tree, operands = chain_indexer(shape, chain, make_indexer, idx)
    elif keeps_links(chain, idx):
        tree, operands = chain_indexer(shape, chain[:-1], make_indexer, chain[-1])
    else:
        return None
    check_static_sizes(tree)
    return tree, operands


def _whole(idx) -> bool:
    return idx is None or idx is Ellipsis or (type(idx) is tuple and not idx)


def keeps_links(chain, idx) -> bool:
    """Whether ``view[idx]`` binds the view's links one by one (JAX's transforms: a
    compiled kernel slices the ref once per link, the last indexer the load's) rather than
    one composed index: in a compiled kernel, an indexed read or write of a view, or a
    whole one of a view of two ``.at`` links or more."""
    return keep_links.depth > 0 and len(chain) > (1 if _whole(idx) else 0)


def compose(ref, chain, compose_two):
    """The one index of ``ref`` that a chain of ``.at`` indices names (``compose_two``:
    traxla.state.ref's ``_compose``)."""
    if has_reshape(chain):
        raise NotImplementedError("a reshaped ref view is read, written and DMA'd only in a "
                                  "compiled Pallas TPU kernel")
    idx = chain[0]
    for nxt in chain[1:]:
        idx = compose_two(ref, idx, nxt)
    return idx


def reshape_link(shape, new_shape) -> RefReshape:
    """``view.reshape(*new_shape)`` of a view of ``shape`` (one dimension may be -1)."""
    if len(new_shape) == 1 and isinstance(new_shape[0], (tuple, list)):
        new_shape = tuple(new_shape[0])
    new_shape = tuple(int(d) for d in new_shape)
    if new_shape.count(-1) > 1:
        raise ValueError(f"At most one dimension can be -1, but got {new_shape}")
    size = int(np.prod(shape))
    if -1 in new_shape:
        known = int(np.prod([d for d in new_shape if d != -1]))
        new_shape = tuple(size // known if d == -1 else d for d in new_shape)
    if int(np.prod(new_shape)) != size:
        raise ValueError(f"Cannot reshape a ref of shape {tuple(shape)} to {new_shape}")
    return RefReshape(new_shape)


def chain_shape(shape, chain, make_indexer) -> tuple:
    """The shape a chain of indices and reshapes leaves of a ref of ``shape`` (no index
    arithmetic traced; ``make_indexer``: traxla.state.ref's)."""
    shape = tuple(shape)
    for idx in chain:
        if isinstance(idx, RefReshape):
            shape = idx.shape
            continue
        tree, operands = make_indexer(shape, idx)
        shape = tuple(tree.result_shape([np.shape(o) for o in operands]))
    return shape


def chain_indexer(shape, chain, make_indexer, idx=None):
    """``(RefChain, operands)`` of ``view[idx]`` for a view ``chain`` of a ref of
    ``shape``: trivial links dropped, the last indexer (``idx``) kept."""
    links, operands, shape = [], [], tuple(shape)
    for k, i in enumerate(tuple(chain) + (idx,)):
        if isinstance(i, RefReshape):
            links.append(i)
            shape = i.shape
            continue
        tree, ops = make_indexer(shape, i)
        if tree.trivial and k < len(chain):
            continue
        links.append(tree)
        operands += ops
        shape = tuple(tree.result_shape([np.shape(o) for o in ops]))
    return RefChain(tuple(links)), operands
