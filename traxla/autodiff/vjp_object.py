"""The object ``jax.vjp`` returns (``VJP``: the pullback, a pytree over its residuals, with
``with_refs``, ``args_res`` and ``opaque_residuals``) and the markers ``with_refs`` takes and
gives (``GradValue``, ``DontWant``, ``GradRef``, ``DidntWant``), as JAX 0.10.2's."""
from __future__ import annotations

import dataclasses

from traxla import tree_util
from traxla.tracer import Tracer

# ``jax.ref.addupdate`` (installed by ``traxla.state.ref``, a layer above): a cotangent
# accumulates into its Ref as one ``addupdate``, as JAX's backward pass accumulates it (the
# Ref keeps its type; it prints as ``a[...] += ct`` in a jaxpr)
ref_addupdate: list = [None]


@tree_util.register_dataclass
@dataclasses.dataclass(frozen=True, slots=True)
class NotNeeded:
    """An argument ``VJP.args_res`` does not keep (the backward pass does not use it)."""


@tree_util.register_dataclass
@dataclasses.dataclass(frozen=True, slots=True)
class GradRef:
    """Where ``VJP.with_refs`` accumulated a cotangent into the Ref given for it (a pytree
    node without leaves, as JAX's)."""


@dataclasses.dataclass(frozen=True, slots=True)
class DontWant:
    """Passed to ``VJP.with_refs`` for an input whose cotangent is not wanted."""


@tree_util.register_dataclass
@dataclasses.dataclass(frozen=True, slots=True)
class DidntWant:
    """What ``VJP.with_refs`` returns for an input passed as ``DontWant()``."""


@dataclasses.dataclass(frozen=True, slots=True)
class GradValue:
    """Passed to ``VJP.with_refs`` for an input whose cotangent is returned as a value (what
    a plain call of the pullback does for every input)."""


class VJP:
    """The pullback ``jax.vjp`` returns: ``vjp(ct)`` gives the input cotangents;
    ``vjp.with_refs(*maybe_ct_refs)(ct)`` adds each input's cotangent into the Ref given for
    it (returning ``GradRef()`` there), skips those given ``DontWant()``, and returns the
    others' values, as JAX 0.10.2's ``VJP.with_refs``."""

    __slots__ = ("_make_pullback", "_in_tree", "_residuals", "_pullback", "_primals",
                 "__weakref__")

    def __init__(self, make_pullback, in_tree, residuals):
        self._primals = None
        # a pytree (as JAX's): its leaves are the residuals, so it can be a custom_vjp
        # residual or a jit argument, and comes back over whatever values replace them
        self._make_pullback, self._in_tree = make_pullback, in_tree
        self._residuals = list(residuals)
        self._pullback = make_pullback(self._residuals)

    def __call__(self, out_ct, *extra_args):
        if extra_args:
            raise TypeError(f"The function returned by `jax.vjp` was called with "
                            f"{len(extra_args) + 1} arguments, but functions returned by "
                            "`jax.vjp` must be called with a single argument corresponding to "
                            "the single value returned by the function being differentiated.")
        return self._pullback(out_ct)

    @property
    def args_res(self):
        """Per argument (a tuple tree of its leaves), the leaves the backward pass keeps as
        they were given and ``NotNeeded()`` for the others (JAX's ``VJP.args_res``)."""
        kept = {id(r) for r in self._residuals}
        leaves = iter([p if id(p) in kept else NotNeeded() for p in (self._primals or [])])

        def walk(treedef):
            if treedef.num_nodes == 1 and treedef.num_leaves == 1:
                return next(leaves)
            return tuple(walk(c) for c in treedef.children())
        if self._primals is None:
            return []
        return list(walk(self._in_tree))

    @property
    def opaque_residuals(self):
        """The residuals that are not arguments (JAX's ``VJP.opaque_residuals``)."""
        primals = {id(p) for p in (self._primals or [])}
        return [r for r in self._residuals if id(r) not in primals]

    def with_refs(self, *maybe_ct_refs):
        targets, tree = tree_util.tree_flatten(maybe_ct_refs)
        if tree != self._in_tree:
            raise Exception  # noqa: TRY002  (JAX raises a bare Exception here)

        def pullback(out_ct):
            # an input given DontWant() gets no cotangent: what only it needs is not computed
            wanted = [not isinstance(t, DontWant) for t in targets]
            cts = tree_util.tree_leaves(self._pullback(out_ct, _wanted=wanted))
            out = []
            for target, ct in zip(targets, cts):
                if getattr(target, "is_array_ref", False) or (
                        isinstance(target, Tracer) and hasattr(target.aval, "inner_aval")):
                    ref_addupdate[0](target, ..., ct)  # a Ref (or one staged under jit)
                    out.append(GradRef())
                else:
                    out.append(DidntWant() if isinstance(target, DontWant) else ct)
            return tree_util.tree_unflatten(self._in_tree, out)
        return pullback


tree_util.register_pytree_node(
    VJP, lambda v: ((v._residuals,), (v._make_pullback, v._in_tree)),
    lambda meta, children: VJP(meta[0], meta[1], children[0]))
