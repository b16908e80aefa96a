"""JAX's checked sequence helpers (``jax._src.util``): map and zip over equal lengths."""
from __future__ import annotations


def safe_map(f, *args):
    args = list(map(list, args))
    n = len(args[0])
    for arg in args[1:]:
        if len(arg) != n:
            raise ValueError(f"length mismatch: {list(map(len, args))}")
    return list(map(f, *args))


def safe_zip(*args):
    n = len(args[0])
    for arg in args[1:]:
        if len(arg) != n:
            raise ValueError(f"length mismatch: {list(map(len, args))}")
    return list(zip(*args))


def unzip2(xys):
    xs, ys = [], []
    for x, y in xys:
        xs.append(x)
        ys.append(y)
    return tuple(xs), tuple(ys)


def unzip3(xyzs):
    xs, ys, zs = [], [], []
    for x, y, z in xyzs:
        xs.append(x)
        ys.append(y)
        zs.append(z)
    return tuple(xs), tuple(ys), tuple(zs)


def subvals(lst, replace):
    """``lst`` as a tuple with ``lst[i] = v`` for each ``(i, v)`` of ``replace``."""
    lst = list(lst)
    for i, v in replace:
        lst[i] = v
    return tuple(lst)


def split_list(args, ns):
    """``args`` cut into pieces of the lengths ``ns``, then the rest (one more list)."""
    args = list(args)
    lists = []
    for n in ns:
        lists.append(args[:n])
        args = args[n:]
    lists.append(args)
    return lists


def partition_list(bs, lst):
    """``(the elements where bs is False, those where it is True)``."""
    assert len(bs) == len(lst)
    lists = ([], [])
    for b, x in zip(bs, lst):
        lists[b].append(x)
    return lists


def merge_lists(bs, l0, l1):
    """The inverse of ``partition_list``: ``l1``'s elements where ``bs`` is True."""
    assert sum(bs) == len(l1) and len(bs) - sum(bs) == len(l0)
    i0, i1 = iter(l0), iter(l1)
    out = [next(i1) if b else next(i0) for b in bs]
    sentinel = object()
    assert next(i0, sentinel) is next(i1, sentinel) is sentinel
    return out


def concatenate(xs):
    """A list of lists flattened into one list."""
    return [x for sub in xs for x in sub]


def ceil_of_ratio(x: int, y: int) -> int:
    return -(-x // y)
