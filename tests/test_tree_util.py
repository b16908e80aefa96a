"""Differential tests: ``traxla.tree_util`` vs ``jax.tree_util`` (the oracle)."""

from __future__ import annotations

import ast
import collections
import dataclasses
import functools
import importlib.util
import pathlib
import pickle
import subprocess
import sys
import typing
from collections import OrderedDict, defaultdict, namedtuple

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import jax.tree_util as jtu

_REPO = pathlib.Path(__file__).resolve().parents[1]
_MODULE_PATH = _REPO / "traxla" / "tree_util.py"

try:
    from traxla import tree_util as tu
except Exception:  # traxla/__init__.py missing or mid-edit: load by path
    _spec = importlib.util.spec_from_file_location("traxla_tree_util", _MODULE_PATH)
    tu = importlib.util.module_from_spec(_spec)
    sys.modules["traxla_tree_util"] = tu
    _spec.loader.exec_module(tu)


# ---------------------------------------------------------------------------
# Test node types, registered identically with both libraries.
# ---------------------------------------------------------------------------

Point = namedtuple("Point", "x y")
Single = namedtuple("Single", "v")


class TypedNT(typing.NamedTuple):
    a: typing.Any
    b: typing.Any = None


class Box:
    """Custom node: two children plus aux data."""

    def __init__(self, a, b, aux="box"):
        self.a, self.b, self.aux = a, b, aux

    def __eq__(self, other):
        return (type(other) is Box and self.a == other.a and self.b == other.b
                and self.aux == other.aux)

    def __repr__(self):
        return f"Box({self.a!r}, {self.b!r}, {self.aux!r})"


def _box_flatten(b):
    return (b.a, b.b), b.aux


def _box_unflatten(aux, children):
    return Box(*children, aux)


class Keyed:
    """Custom node registered with keys."""

    def __init__(self, left, right):
        self.left, self.right = left, right

    def __eq__(self, other):
        return type(other) is Keyed and (self.left, self.right) == (other.left, other.right)


def _keyed_flatten_with_keys(k):
    return ((jtu.GetAttrKey("left"), k.left), (jtu.GetAttrKey("right"), k.right)), None


def _keyed_flatten_with_keys_tu(k):
    return ((tu.GetAttrKey("left"), k.left), (tu.GetAttrKey("right"), k.right)), None


def _keyed_unflatten(aux, children):
    return Keyed(*children)


class NodeCls:
    """Registered with register_pytree_node_class in both libraries."""

    def __init__(self, xs, tag):
        self.xs, self.tag = xs, tag

    def tree_flatten(self):
        return (self.xs,), self.tag

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(children[0], aux)

    def __eq__(self, other):
        return type(other) is NodeCls and (self.xs, self.tag) == (other.xs, other.tag)


@dataclasses.dataclass
class DC:
    x: typing.Any
    y: typing.Any
    name: str = dataclasses.field(default="dc", metadata=dict(static=True))


@dataclasses.dataclass
class DCExplicit:
    w: typing.Any
    b: typing.Any
    act: str = "relu"


class Static:
    def __init__(self, v):
        self.v = v

    def __eq__(self, other):
        return type(other) is Static and self.v == other.v

    def __hash__(self):
        return hash(self.v)

    def __repr__(self):
        return f"Static<{self.v}>"


jtu.register_pytree_node(Box, _box_flatten, _box_unflatten)
tu.register_pytree_node(Box, _box_flatten, _box_unflatten)
jtu.register_pytree_with_keys(Keyed, _keyed_flatten_with_keys, _keyed_unflatten)
tu.register_pytree_with_keys(Keyed, _keyed_flatten_with_keys_tu, _keyed_unflatten)
jtu.register_pytree_node_class(NodeCls)
assert tu.register_pytree_node_class(NodeCls) is NodeCls
jtu.register_dataclass(DC)
assert tu.register_dataclass(DC) is DC
jtu.register_dataclass(DCExplicit, data_fields=["w", "b"], meta_fields=["act"])
tu.register_dataclass(DCExplicit, data_fields=["w", "b"], meta_fields=["act"])
jtu.register_static(Static)
tu.register_static(Static)


def _examples():
    o = object()
    return [
        1, "s", o, None, (), [], {},
        (1,), [1], {"a": 1},
        (1, None, [2]),
        [None], {"a": None}, (None, None),
        {"w": 1, "layers": [2, 3]},
        {1: "a", 3: (4,), 2: [5, 6]},
        {'a"b': 1, "c'd": 2},
        Point(1, 2), Point((1, 2), None), Single([1]), TypedNT(1),
        OrderedDict([("b", 1), ("a", 2)]),
        defaultdict(list, {"b": 1, "a": [2, 3]}),
        Box(1, [2, 3], "hello"), Box(1, 2, {"k": 1}), Box(None, (1,), None),
        Box(Box(1, 2, "in"), 3, 7),
        Keyed([1, 2], {"z": 3}),
        NodeCls([1, (2, 3)], "tag"),
        DC(1, [2, 3]), DC(x=None, y=(4,), name="other"),
        DCExplicit(w=1, b=2, act="gelu"),
        [Static(1), 2], Static(3),
        {"w": 1, "layers": [2, (3,)], "p": Point(4, 5), "m": Box(6, 7, "a"),
         "od": OrderedDict(b=1), "dd": defaultdict(int, {"z": 1}), "d": DC(8, 9),
         "n": None, "k": Keyed(10, 11)},
        [[[[1]]], ((2,),), {"x": {"y": {"z": None}}}],
        (o, o, o), [o, [o, (o,)]],
    ]


EXAMPLES = _examples()
EXAMPLE_IDS = [f"ex{i}" for i in range(len(EXAMPLES))]


def _same_leaves(a, b):
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert x is y


def _normalize_msg(msg):
    """Sort the tokens of the set-valued line in prefix-error messages.

    jax prints ``symmetric difference on key sets`` by iterating a Python set,
    whose order depends on key hashes; we print it in a deterministic order.
    """
    lines = msg.split("\n")
    for i in range(1, len(lines)):
        if "symmetric difference" in lines[i - 1]:
            lines[i] = " ".join(sorted(lines[i].split()))
    return "\n".join(lines)


def _err(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001
        return type(e), _normalize_msg(str(e))
    return None


# ---------------------------------------------------------------------------
# The spec example
# ---------------------------------------------------------------------------

def test_spec_example():
    W, Z, O = object(), object(), object()
    params = {"w": W, "layers": [Z, O]}
    leaves, treedef = tu.tree_flatten(params)
    assert len(leaves) == 3
    _same_leaves(leaves, [Z, O, W])
    assert str(treedef) == "PyTreeDef({'layers': [*, *], 'w': *})"
    assert repr(treedef) == "PyTreeDef({'layers': [*, *], 'w': *})"
    jleaves, jtreedef = jtu.tree_flatten(params)
    _same_leaves(leaves, jleaves)
    assert str(treedef) == str(jtreedef)
    assert treedef.num_leaves == 3 and treedef.num_nodes == 5
    assert tu.tree_unflatten(treedef, leaves) == params


@pytest.mark.parametrize(
    "tree, expected",
    [
        ((1, None, [2]), "PyTreeDef((*, None, [*]))"),
        (1, "PyTreeDef(*)"),
        (None, "PyTreeDef(None)"),
        ((1,), "PyTreeDef((*,))"),
        (Point(1, 2), "PyTreeDef(CustomNode(namedtuple[Point], [*, *]))"),
        (Box(1, [2, 3], "hello"), "PyTreeDef(CustomNode(Box[hello], [*, [*, *]]))"),
        (DC(1, 2), "PyTreeDef(CustomNode(DC[('dc',)], [*, *]))"),
    ],
)
def test_known_treedef_strings(tree, expected):
    assert str(jtu.tree_structure(tree)) == expected  # guard the oracle too
    assert str(tu.tree_structure(tree)) == expected
    assert repr(tu.tree_structure(tree)) == expected


# ---------------------------------------------------------------------------
# Differential tests over the example zoo
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("tree", EXAMPLES, ids=EXAMPLE_IDS)
def test_flatten_matches_jax(tree):
    leaves, td = tu.tree_flatten(tree)
    jleaves, jtd = jtu.tree_flatten(tree)
    _same_leaves(leaves, jleaves)
    _same_leaves(tu.tree_leaves(tree), jleaves)
    assert str(td) == str(jtd)
    assert repr(td) == repr(jtd)
    assert str(tu.tree_structure(tree)) == str(jtd)
    assert td.num_leaves == jtd.num_leaves
    assert td.num_nodes == jtd.num_nodes
    assert [str(c) for c in td.children()] == [str(c) for c in jtd.children()]
    assert [c.num_leaves for c in td.children()] == [c.num_leaves for c in jtd.children()]
    assert tu.treedef_is_leaf(td) == jtu.treedef_is_leaf(jtd)
    if not isinstance(tree, tuple) or not hasattr(tree, "_fields"):
        # (jax's node_data() is broken for namedtuples)
        assert td.node_data() == jtd.node_data()


@pytest.mark.parametrize("tree", EXAMPLES, ids=EXAMPLE_IDS)
def test_unflatten_round_trip(tree):
    leaves, td = tu.tree_flatten(tree)
    jleaves, jtd = jtu.tree_flatten(tree)
    expected = jtd.unflatten(jleaves)
    # Repeated calls exercise both the interpreted and the compiled builder.
    for _ in range(3):
        out = tu.tree_unflatten(td, leaves)
        assert type(out) is type(expected)
        assert out == expected or (out is expected)
        assert str(tu.tree_structure(out)) == str(jtd)
    # Generator input and fresh leaves.
    new = [("new", i) for i in range(td.num_leaves)]
    assert td.unflatten(iter(new)) == jtd.unflatten(iter(new))
    assert td.unflatten(tuple(new)) == jtd.unflatten(tuple(new))


@pytest.mark.parametrize("tree", EXAMPLES, ids=EXAMPLE_IDS)
def test_flatten_with_path_matches_jax(tree):
    kl, td = tu.tree_flatten_with_path(tree)
    jkl, jtd = jtu.tree_flatten_with_path(tree)
    assert str(td) == str(jtd)
    assert [repr(p) for p, _ in kl] == [repr(p) for p, _ in jkl]
    _same_leaves([x for _, x in kl], [x for _, x in jkl])
    assert [tu.keystr(p) for p, _ in kl] == [jtu.keystr(p) for p, _ in jkl]
    assert ([tu.keystr(p, simple=True, separator="/") for p, _ in kl]
            == [jtu.keystr(p, simple=True, separator="/") for p, _ in jkl])
    assert [repr(p) for p, _ in tu.tree_leaves_with_path(tree)] == [
        repr(p) for p, _ in jtu.tree_leaves_with_path(tree)]


@pytest.mark.parametrize("tree", EXAMPLES, ids=EXAMPLE_IDS)
def test_tree_map_matches_jax(tree):
    f = lambda x: ("mapped", x)  # noqa: E731
    assert tu.tree_map(f, tree) == jtu.tree_map(f, tree)
    g = lambda x, y, z: (x, y, z)  # noqa: E731
    assert tu.tree_map(g, tree, tree, tree) == jtu.tree_map(g, tree, tree, tree)
    h = lambda p, x: (tu.keystr(p), x)  # noqa: E731
    jh = lambda p, x: (jtu.keystr(p), x)  # noqa: E731
    assert tu.tree_map_with_path(h, tree) == jtu.tree_map_with_path(jh, tree)


def test_treedef_equality_and_hash_matches_jax():
    ours = [tu.tree_structure(t) for t in EXAMPLES]
    theirs = [jtu.tree_structure(t) for t in EXAMPLES]
    for i, (a, ja) in enumerate(zip(ours, theirs)):
        # Equal by value to a freshly computed treedef, with equal hashes.
        b = tu.tree_structure(EXAMPLES[i])
        assert a == b and not (a != b)
        assert hash(a) == hash(b)
        for j, (c, jc) in enumerate(zip(ours, theirs)):
            assert (a == c) == (ja == jc), (i, j, str(a), str(c))
    assert {tu.tree_structure((1, 2)), tu.tree_structure((3, 4))} == {tu.tree_structure((5, 6))}
    assert tu.tree_structure((1, 2)) != 3


@pytest.mark.parametrize(
    "a, b",
    [
        ((1, 2), [1, 2]),
        (Point(1, 2), (1, 2)),
        (Point(1, 2), TypedNT(1, 2)),
        (1, None),
        ((None,), (1,)),
        ({"a": 1}, {"b": 1}),
        (OrderedDict(a=1, b=2), OrderedDict(b=1, a=2)),
        (OrderedDict(a=1), {"a": 1}),
        (Box(1, 2, "x"), Box(1, 2, "y")),
        (Box(1, 2, [1]), Box(1, 2, (1,))),
        (DC(1, 2), DC(1, 2, name="other")),
        (defaultdict(list, a=1), defaultdict(int, a=1)),
        (Static(1), Static(2)),
    ],
)
def test_treedef_inequality(a, b):
    assert (tu.tree_structure(a) == tu.tree_structure(b)) == (
        jtu.tree_structure(a) == jtu.tree_structure(b))
    assert tu.tree_structure(a) != tu.tree_structure(b)


def test_hash_with_unhashable_aux():
    a = tu.tree_structure(Box(1, 2, {"k": [1]}))
    b = tu.tree_structure(Box(3, 4, {"k": [1]}))
    assert a == b and hash(a) == hash(b)
    assert a != tu.tree_structure(Box(3, 4, {"k": [2]}))


# ---------------------------------------------------------------------------
# tree_map with several trees, prefix semantics and errors
# ---------------------------------------------------------------------------

def test_tree_map_multiple_trees():
    a = {"w": 1, "layers": [2, 3], "n": None}
    b = {"w": 10, "layers": [20, 30], "n": None}
    c = {"w": 100, "layers": [200, 300], "n": None}
    f = lambda x, y, z: x + y + z  # noqa: E731
    assert tu.tree_map(f, a, b, c) == jtu.tree_map(f, a, b, c) == {
        "w": 111, "layers": [222, 333], "n": None}


def test_tree_map_rest_may_have_subtrees_at_leaves():
    a = (1, {"k": 2})
    b = ([1, 2], {"k": (3, {"deep": 4})})
    f = lambda x, y: (x, y)  # noqa: E731
    assert tu.tree_map(f, a, b) == jtu.tree_map(f, a, b)


def test_tree_map_is_leaf():
    tree = [(1, 2), (3, (4, 5)), None]
    is_leaf = lambda x: isinstance(x, tuple) and len(x) == 2  # noqa: E731
    f = lambda x: ("L", x)  # noqa: E731
    assert tu.tree_map(f, tree, is_leaf=is_leaf) == jtu.tree_map(f, tree, is_leaf=is_leaf)
    none_leaf = lambda x: x is None  # noqa: E731
    assert tu.tree_map(f, tree, is_leaf=none_leaf) == jtu.tree_map(f, tree, is_leaf=none_leaf)


MISMATCHES = [
    ((1, 2), [1, 2]),
    ((1, 2), (1, 2, 3)),
    ([1, 2], [1]),
    ({"a": 1}, {"b": 1}),
    ({"a": 1}, {"a": 1, "b": 2}),
    ((1, None), (1, 2)),
    (Point(1, 2), (1, 2)),
    (Box(1, 2, "a"), Box(1, 2, "b")),
    (OrderedDict(a=1), OrderedDict(a=1, b=2)),
    ([1], 5),
    ({"x": [1, (2, 3)]}, {"x": [1, (2, 3, 4)]}),
    (DC(1, 2), DC(1, 2, name="zz")),
    ({"a": [None]}, {"a": [7]}),
]


@pytest.mark.parametrize("a, b", MISMATCHES)
def test_tree_map_mismatch_error(a, b):
    f = lambda *xs: xs  # noqa: E731
    with pytest.raises(ValueError) as ours:
        tu.tree_map(f, a, b)
    with pytest.raises(ValueError) as theirs:
        jtu.tree_map(f, a, b)
    msg = str(ours.value)
    # JAX's explanation verbatim, followed by both structures.
    assert _normalize_msg(msg).startswith(_normalize_msg(str(theirs.value)))
    assert str(tu.tree_structure(a)) in msg
    assert str(tu.tree_structure(b)) in msg
    with pytest.raises(ValueError) as ours_p:
        tu.tree_map_with_path(f, a, b)
    with pytest.raises(ValueError) as theirs_p:
        jtu.tree_map_with_path(f, a, b)
    assert str(ours_p.value).startswith(str(theirs_p.value))


def test_tree_map_mismatch_names_argument_position():
    with pytest.raises(ValueError, match="additional tree 2: PyTreeDef"):
        tu.tree_map(lambda *xs: 0, (1, 2), (3, 4), [5, 6])


FLATTEN_UP_TO_CASES = [
    ({"a": (1, 2), "b": [3]}, {"a": (1, 2), "b": [3]}),
    ({"a": (1, 2), "b": [3]}, {"a": (1, [2, 5]), "b": [(3,)]}),
    ({"a": (1, 2), "b": [3]}, {"a": (1, 2), "b": (3,)}),
    ({"a": (1, 2), "b": [3]}, {"a": (1, 2), "c": [3]}),
    ({"a": (1, 2), "b": [3]}, {"a": (1, 2, 3), "b": [3]}),
    ({"a": (1, 2), "b": [3]}, {"a": (1, 2)}),
    ({"a": (1, 2), "b": [3]}, {"b": [1], "a": (2, 3), "c": 4}),
    ({"a": (1, 2), "b": [3]}, 5),
    ({"a": (1, 2), "b": [3]}, None),
    ({"a": 1, "b": 2}, OrderedDict(b=1, a=2)),
    ([1, 2], [1]),
    ([1, 2], (1, 2)),
    ((1, 2), Point(1, 2)),
    (Point(1, 2), (1, 2)),
    (Point(1, 2), TypedNT(1, 2)),
    ([None], [1]),
    ([None], [None]),
    (None, 0),
    (1, None),
    (Box(1, 2, "a"), Box(1, 2, "b")),
    (Box(1, 2, "a"), 3),
    (Box(1, 2, "a"), Box([1], (2, 3), "a")),
    (OrderedDict(a=1), OrderedDict(b=1)),
    (OrderedDict(a=1), {"a": 1}),
    (DC(1, 2), DC(1, 2, name="zz")),
    (DC(1, 2), 5),
    (DC(1, 2), DC([1], 2)),
    (Static(1), Static(2)),
]


@pytest.mark.parametrize("prefix, full", FLATTEN_UP_TO_CASES)
def test_flatten_up_to_matches_jax(prefix, full):
    td, jtd = tu.tree_structure(prefix), jtu.tree_structure(prefix)
    expected = _err(lambda: jtd.flatten_up_to(full))
    got = _err(lambda: td.flatten_up_to(full))
    assert got == expected
    if expected is None:
        assert td.flatten_up_to(full) == jtd.flatten_up_to(full)


def test_unflatten_wrong_number_of_leaves():
    td, jtd = tu.tree_structure({"a": (1, 2), "b": [3]}), jtu.tree_structure({"a": (1, 2), "b": [3]})
    for leaves in ([1, 2], [1, 2, 3, 4], []):
        assert _err(lambda: td.unflatten(leaves)) == _err(lambda: jtd.unflatten(leaves))
        assert _err(lambda: td.unflatten(leaves))[0] is ValueError


# ---------------------------------------------------------------------------
# None handling, is_leaf, leaf-ness of subclasses, dict keys
# ---------------------------------------------------------------------------

def test_none_is_an_empty_node():
    leaves, td = tu.tree_flatten(None)
    assert leaves == [] and str(td) == "PyTreeDef(None)"
    assert td.num_leaves == 0 and td.num_nodes == 1
    assert tu.treedef_is_leaf(td)
    assert tu.tree_unflatten(td, []) is None
    assert tu.tree_leaves([None, 1, (None,)]) == [1]
    assert tu.tree_map(lambda x: x + 1, {"a": None, "b": 1}) == {"a": None, "b": 2}
    assert not tu.all_leaves([None])
    # None as a leaf via is_leaf
    leaves, td = tu.tree_flatten([None, 1], is_leaf=lambda x: x is None)
    assert leaves == [None, 1] and str(td) == "PyTreeDef([*, *])"


def test_is_leaf_called_in_same_order_as_jax():
    tree = [None, (1, {"b": 2, "a": [3]}), Point(4, None), Box(5, 6, "x")]
    ours, theirs = [], []
    tu.tree_flatten(tree, is_leaf=lambda x: ours.append(x) or False)
    jtu.tree_flatten(tree, is_leaf=lambda x: theirs.append(x) or False)
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        assert a is b
    pred = lambda x: isinstance(x, list)  # noqa: E731
    _same_leaves(tu.tree_leaves(tree, is_leaf=pred), jtu.tree_leaves(tree, is_leaf=pred))
    assert str(tu.tree_structure(tree, is_leaf=pred)) == str(jtu.tree_structure(tree, is_leaf=pred))


def test_is_leaf_must_return_bool():
    assert (_err(lambda: tu.tree_flatten([1, 2], is_leaf=lambda x: 1))
            == _err(lambda: jtu.tree_flatten([1, 2], is_leaf=lambda x: 1)))


def test_is_leaf_with_path():
    tree = [1, (2, 3), {"a": (4,)}]
    for kwargs in ({"is_leaf": lambda x: isinstance(x, tuple)},
                   {"is_leaf": lambda p, x: len(p) == 1, "is_leaf_takes_path": True}):
        kl, td = tu.tree_flatten_with_path(tree, **kwargs)
        jkl, jtd = jtu.tree_flatten_with_path(tree, **kwargs)
        assert str(td) == str(jtd)
        assert [(repr(p), x) for p, x in kl] == [(repr(p), x) for p, x in jkl]


def test_subclasses_of_builtin_containers_are_leaves():
    class L(list):
        pass

    class T(tuple):
        pass

    class D(dict):
        pass

    tree = [L([1, 2]), T((1,)), D(a=1)]
    leaves, td = tu.tree_flatten(tree)
    jleaves, jtd = jtu.tree_flatten(tree)
    _same_leaves(leaves, jleaves)
    assert str(td) == str(jtd) == "PyTreeDef([*, *, *])"
    assert tu.is_tree_node(list) and tu.is_tree_node(Point) and tu.is_tree_node(Box)
    assert not tu.is_tree_node(L) and not tu.is_tree_node(int)


def test_unsortable_dict_keys():
    tree = {1: 2, "a": 3}
    assert _err(lambda: tu.tree_flatten(tree)) == _err(lambda: jtu.tree_flatten(tree))
    assert _err(lambda: tu.tree_leaves(tree))[0] is ValueError


def test_dict_unflatten_is_sorted_like_jax():
    tree = {"c": 1, "a": 2, "b": 3}
    out = tu.tree_map(lambda x: x, tree)
    assert list(out) == list(jtu.tree_map(lambda x: x, tree)) == ["a", "b", "c"]


def test_ordered_and_default_dict():
    od = OrderedDict([("z", 1), ("a", 2)])
    out = tu.tree_map(lambda x: x * 10, od)
    assert type(out) is OrderedDict and list(out.items()) == [("z", 10), ("a", 20)]
    dd = defaultdict(list, {"b": 1, "a": 2})
    out = tu.tree_map(lambda x: x * 10, dd)
    assert type(out) is defaultdict and out.default_factory is list
    assert dict(out) == {"a": 20, "b": 10}


# ---------------------------------------------------------------------------
# Registration
# ---------------------------------------------------------------------------

def test_duplicate_registration_raises_like_jax():
    class Fresh:
        pass

    flat = lambda x: ((), None)  # noqa: E731
    unflat = lambda aux, ch: Fresh()  # noqa: E731
    jtu.register_pytree_node(Fresh, flat, unflat)
    tu.register_pytree_node(Fresh, flat, unflat)
    for typ in (Fresh, tuple, list, dict, type(None), Box):
        expected = _err(lambda: jtu.register_pytree_node(typ, flat, unflat))
        assert expected is not None and expected[0] is ValueError
        assert _err(lambda: tu.register_pytree_node(typ, flat, unflat)) == expected
    assert _err(lambda: tu.register_dataclass(DC)) == _err(lambda: jtu.register_dataclass(DC))


def test_register_pytree_node_class_and_aux_in_treedef():
    a = NodeCls([1, 2], "t1")
    td, jtd = tu.tree_structure(a), jtu.tree_structure(a)
    assert str(td) == str(jtd) == "PyTreeDef(CustomNode(NodeCls[t1], [[*, *]]))"
    assert td != tu.tree_structure(NodeCls([1, 2], "t2"))
    assert tu.tree_map(lambda x: x + 1, a) == NodeCls([2, 3], "t1")


def test_register_pytree_with_keys_paths():
    k = Keyed([1, 2], 3)
    assert ([tu.keystr(p) for p, _ in tu.tree_leaves_with_path(k)]
            == [jtu.keystr(p) for p, _ in jtu.tree_leaves_with_path(k)]
            == [".left[0]", ".left[1]", ".right"])


def test_register_dataclass_variants():
    @tu.register_dataclass
    @dataclasses.dataclass
    class Dec:
        a: typing.Any
        b: typing.Any = None
        s: int = dataclasses.field(default=0, metadata=dict(static=True))

    leaves, td = tu.tree_flatten(Dec(1, [2, 3], s=5))
    assert leaves == [1, 2, 3]
    assert str(td) == "PyTreeDef(CustomNode(Dec[(5,)], [*, [*, *]]))"
    assert td.unflatten([7, 8, 9]) == Dec(7, [8, 9], s=5)
    assert td != tu.tree_structure(Dec(1, [2, 3], s=6))
    assert [tu.keystr(p) for p, _ in tu.tree_leaves_with_path(Dec(1, 2))] == [".a", ".b"]

    # data_fields given explicitly, via functools.partial (JAX's documented idiom)
    @functools.partial(tu.register_dataclass, data_fields=["w"], meta_fields=["tag"])
    @dataclasses.dataclass
    class Part:
        w: typing.Any
        tag: str

    assert str(tu.tree_structure(Part(1, "t"))) == "PyTreeDef(CustomNode(Part[('t',)], [*]))"

    # all-data default with no static fields
    @tu.register_dataclass
    @dataclasses.dataclass
    class AllData:
        p: typing.Any
        q: typing.Any

    assert str(tu.tree_structure(AllData(1, 2))) == "PyTreeDef(CustomNode(AllData[()], [*, *]))"

    # explicit-field and static-field registration mirror jax
    x = DCExplicit(w=[1], b=(2,), act="tanh")
    assert str(tu.tree_structure(x)) == str(jtu.tree_structure(x))
    assert tu.tree_map(lambda v: v * 2, x) == jtu.tree_map(lambda v: v * 2, x)

    with pytest.raises(ValueError, match="must include all dataclass fields"):
        @functools.partial(tu.register_dataclass, data_fields=["w"], meta_fields=[])
        @dataclasses.dataclass
        class Missing:
            w: int
            v: int
    with pytest.raises(TypeError):
        tu.register_dataclass(int)


def test_register_static():
    tree = [Static(1), 2]
    assert str(tu.tree_structure(tree)) == str(jtu.tree_structure(tree))
    assert tu.tree_structure(tree) == tu.tree_structure([Static(1), 3])
    assert tu.tree_structure(tree) != tu.tree_structure([Static(2), 3])
    assert tu.tree_unflatten(tu.tree_structure(tree), [5]) == [Static(1), 5]


# ---------------------------------------------------------------------------
# Key entries
# ---------------------------------------------------------------------------

def test_key_entries_match_jax():
    pairs = [
        (tu.SequenceKey(0), jtu.SequenceKey(0)),
        (tu.DictKey("w"), jtu.DictKey("w")),
        (tu.DictKey(1), jtu.DictKey(1)),
        (tu.DictKey((1, "a")), jtu.DictKey((1, "a"))),
        (tu.GetAttrKey("name"), jtu.GetAttrKey("name")),
        (tu.FlattenedIndexKey(3), jtu.FlattenedIndexKey(3)),
    ]
    for ours, theirs in pairs:
        assert str(ours) == str(theirs)
        assert repr(ours) == repr(theirs)
        assert tu.keystr((ours,)) == jtu.keystr((theirs,))
        assert tu.keystr((ours,), simple=True) == jtu.keystr((theirs,), simple=True)
        assert type(ours).__match_args__ == type(theirs).__match_args__
    assert str(tu.SequenceKey(0)) == "[0]"
    assert str(tu.DictKey("w")) == "['w']"
    assert str(tu.GetAttrKey("name")) == ".name"
    assert tu.SequenceKey(2).idx == 2 and tu.DictKey("k").key == "k"
    assert tu.GetAttrKey("n").name == "n" and tu.FlattenedIndexKey(4).key == 4
    assert tu.SequenceKey(0) == tu.SequenceKey(0)
    assert hash(tu.DictKey("a")) == hash(tu.DictKey("a"))
    assert tu.SequenceKey(0) != tu.DictKey(0) and tu.SequenceKey(0) != 0
    with pytest.raises(TypeError):
        tu.SequenceKey("a")
    with pytest.raises(TypeError):
        tu.GetAttrKey(1)
    match tu.DictKey("m"):
        case tu.DictKey(key=k):
            assert k == "m"
    path = (tu.DictKey("layers"), tu.SequenceKey(0), tu.GetAttrKey("w"))
    jpath = (jtu.DictKey("layers"), jtu.SequenceKey(0), jtu.GetAttrKey("w"))
    assert tu.keystr(path) == jtu.keystr(jpath) == "['layers'][0].w"
    assert (tu.keystr(path, simple=True, separator="/")
            == jtu.keystr(jpath, simple=True, separator="/") == "layers/0/w")
    assert tu.keystr(()) == "" and tu.keystr([tu.SequenceKey(0), "zz", 3]) == "[0]zz3"


# ---------------------------------------------------------------------------
# Misc API
# ---------------------------------------------------------------------------

def test_all_leaves_tree_all_reduce():
    for items in ([1, 2, 3], [1, [2]], [None], [], [Point(1, 2)], [Static(1)]):
        assert tu.all_leaves(items) == jtu.all_leaves(items)
        assert tu.all_leaves(iter(items)) == jtu.all_leaves(iter(items))
    is_tup = lambda x: isinstance(x, tuple)  # noqa: E731
    assert tu.all_leaves([(1, 2)], is_leaf=is_tup) == jtu.all_leaves([(1, 2)], is_leaf=is_tup)
    for tree in ([1, True], [], [1, 0], {"a": [1, None]}, {"a": [0]}):
        assert tu.tree_all(tree) == jtu.tree_all(tree)
    assert tu.tree_reduce(lambda a, b: a + b, {"a": [1, 2], "b": 3}) == 6
    assert tu.tree_reduce(lambda a, b: a + b, [], 10) == 10


def test_treedef_tuple_compose_transpose_pickle():
    td = tu.tree_structure({"a": (1, 2), "b": [3]})
    jtd = jtu.tree_structure({"a": (1, 2), "b": [3]})
    both = tu.treedef_tuple([td, tu.tree_structure(1)])
    assert str(both) == str(jtu.treedef_tuple([jtd, jtu.tree_structure(1)]))
    assert both.num_leaves == 4
    comp = td.compose(tu.tree_structure((1, 2)))
    assert str(comp) == str(jtd.compose(jtu.tree_structure((1, 2))))
    assert comp.num_leaves == 6
    assert [str(c) for c in tu.treedef_children(td)] == [str(c) for c in jtd.children()]
    args = (tu.tree_structure([0, 0]), tu.tree_structure((0, 0)), [(1, 2), (3, 4)])
    jargs = (jtu.tree_structure([0, 0]), jtu.tree_structure((0, 0)), [(1, 2), (3, 4)])
    assert tu.tree_transpose(*args) == jtu.tree_transpose(*jargs)
    again = pickle.loads(pickle.dumps(td))
    assert again == td and hash(again) == hash(td)
    assert again.unflatten([1, 2, 3]) == {"a": (1, 2), "b": [3]}


def test_large_and_deep_trees():
    big = {f"k{i:04d}": [i, (i, None)] for i in range(700)}
    leaves, td = tu.tree_flatten(big)
    jleaves, jtd = jtu.tree_flatten(big)
    assert leaves == jleaves and str(td) == str(jtd)
    for _ in range(3):  # interpreted, then compiled-builder fallback for big trees
        assert td.unflatten(leaves) == big
    deep = 0
    for i in range(60):
        deep = [deep, (i,)] if i % 2 else {"d": deep, "i": i}
    leaves, td = tu.tree_flatten(deep)
    jleaves, jtd = jtu.tree_flatten(deep)
    assert leaves == jleaves and str(td) == str(jtd)
    for _ in range(3):
        assert td.unflatten(leaves) == deep


def test_flat_fast_path_treedefs_are_shared_and_correct():
    o = object()
    for tree in [(o, o, o), [o, o], (), [], (1, 2.0, "s")]:
        leaves, td = tu.tree_flatten(tree)
        jleaves, jtd = jtu.tree_flatten(tree)
        _same_leaves(leaves, jleaves)
        assert str(td) == str(jtd)
        assert leaves is not tree and type(leaves) is list
        out = td.unflatten(leaves)
        assert out == tree and type(out) is type(tree)
        if isinstance(tree, list):
            assert out is not leaves
    assert tu.tree_structure((1, 2)) == tu.tree_structure((o, Box))


def test_module_imports_only_stdlib():
    """``traxla.tree_util`` and its implementation, the base layer ``traxla/base/``, import
    the standard library and each other only (no jax, no numpy, no other traxla layer)."""
    for path in [_MODULE_PATH, *sorted((_REPO / "traxla" / "base").glob("*.py"))]:
        mods = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                mods.update(a.name.split(".")[0] for a in node.names)
            elif isinstance(node, ast.ImportFrom):
                assert node.level == 0, "no relative (traxla) imports allowed"
                if node.module.split(".")[:2] != ["traxla", "base"]:
                    mods.add(node.module.split(".")[0])
        assert mods <= set(sys.stdlib_module_names) | {"__future__"}, (path, mods)
    code = (  # a bare ``traxla`` package: its __init__ (which imports everything) is not run
        "import sys, types\n"
        f"pkg = types.ModuleType('traxla'); pkg.__path__ = [{str(_REPO / 'traxla')!r}]\n"
        "sys.modules['traxla'] = pkg\n"
        "import traxla.tree_util\n"
        "assert 'jax' not in sys.modules and 'numpy' not in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


# ---------------------------------------------------------------------------
# Hypothesis: random nested trees
# ---------------------------------------------------------------------------

_keys = st.text(alphabet="abcxyz", min_size=1, max_size=2)


def _containers(children):
    return st.one_of(
        st.lists(children, max_size=4).map(tuple),
        st.lists(children, max_size=4),
        st.dictionaries(_keys, children, max_size=4),
        st.builds(Point, children, children),
        st.dictionaries(st.integers(0, 5), children, max_size=3),
    )


trees = st.recursive(st.one_of(st.none(), st.integers(-3, 3)), _containers,
                     max_leaves=16)

_HYP = settings(max_examples=120, deadline=None,
                suppress_health_check=[HealthCheck.too_slow])


@_HYP
@given(trees)
def test_hypothesis_flatten_matches_jax(tree):
    leaves, td = tu.tree_flatten(tree)
    jleaves, jtd = jtu.tree_flatten(tree)
    assert leaves == jleaves
    assert str(td) == str(jtd)
    assert (td.num_leaves, td.num_nodes) == (jtd.num_leaves, jtd.num_nodes)
    assert tu.tree_leaves(tree) == jleaves
    for _ in range(2):
        assert td.unflatten(leaves) == jtd.unflatten(jleaves)
    kl, _ = tu.tree_flatten_with_path(tree)
    jkl, _ = jtu.tree_flatten_with_path(tree)
    assert [(tu.keystr(p), x) for p, x in kl] == [(jtu.keystr(p), x) for p, x in jkl]
    assert hash(td) == hash(tu.tree_structure(tree))


@_HYP
@given(trees, trees)
def test_hypothesis_structure_equality_and_tree_map(t1, t2):
    assert (tu.tree_structure(t1) == tu.tree_structure(t2)) == (
        jtu.tree_structure(t1) == jtu.tree_structure(t2))
    f = lambda x, y: (x, y)  # noqa: E731
    expected = _err(lambda: jtu.tree_map(f, t1, t2))
    got = _err(lambda: tu.tree_map(f, t1, t2))
    if expected is None:
        assert got is None
        assert tu.tree_map(f, t1, t2) == jtu.tree_map(f, t1, t2)
    else:
        assert got is not None and got[0] is expected[0] is ValueError
        if not got[1].startswith(expected[1]):
            # jax's flatten_one_level_with_keys labels every namedtuple child
            # with the *first* field name (a jax bug), so its key-path line can
            # differ from ours; everything else must agree.
            g0, g_path, g_rest = got[1].split("\n", 2)
            e0, e_path, e_rest = expected[1].split("\n", 2)
            assert g0 == e0 and g_rest.startswith(e_rest)
            assert "." in e_path


def test_mismatch_key_path_through_namedtuple():
    # jax reports "tree_map tree.x" here (mislabelled); we name the real field.
    with pytest.raises(ValueError, match=r"tree_map tree\.y\n"):
        tu.tree_map(lambda a, b: 0, Point(None, None), Point(None, ()))


@_HYP
@given(trees)
def test_hypothesis_prefix_tree_map(tree):
    # Replace every leaf by a random-ish subtree: `tree` is then a prefix.
    full = jtu.tree_map(lambda x: [x, {"s": (x,)}] if isinstance(x, int) and x % 2 else x, tree)
    f = lambda x, y: (x, y)  # noqa: E731
    assert tu.tree_map(f, tree, full) == jtu.tree_map(f, tree, full)
    assert (tu.tree_structure(tree).flatten_up_to(full)
            == jtu.tree_structure(tree).flatten_up_to(full))


def test_unflatten_shares_compiled_builders_only_between_identical_structures():
    import enum
    from traxla.base import treedef as td

    class K(str, enum.Enum):
        A = "a"

    plain = {"a": 1, "b": (2, [3])}
    t = tu.tree_structure(plain)
    for _ in range(2):  # the second unflatten compiles, and shares, the builder
        assert t.unflatten([4, 5, 6]) == {"a": 4, "b": (5, [6])}
    fresh = tu.tree_structure(plain)
    assert fresh.unflatten([7, 8, 9]) == {"a": 7, "b": (8, [9])}
    assert fresh._builder is td._compiled[fresh._node]  # taken on its first use
    once = tu.tree_structure({"once": (1, 2), "z": None})
    assert once.unflatten([1, 2]) == {"once": (1, 2), "z": None} and not once._builder
    again = tu.tree_structure({"once": (1, 2), "z": None})  # met twice: compiled, shared
    assert again.unflatten([3, 4]) == {"once": (3, 4), "z": None}
    assert again._builder is td._compiled[again._node]
    enum_tree = tu.tree_structure({K.A: 1})
    t = tu.tree_structure({"a": 1})
    t.unflatten([0]), t.unflatten([0])
    assert t._node == enum_tree._node and t._node in td._compiled
    for _ in range(3):  # equal to {"a": *} as a node, but must keep its Enum key
        out = tu.tree_structure({K.A: 1}).unflatten([2])
        assert type(next(iter(out))) is K
    assert enum_tree.unflatten([3]) == {K.A: 3}
