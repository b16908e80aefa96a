"""Rematerialization policies (``checkpoint_policies``): a policy is called as
``policy(primitive, *avals, **params)`` for each equation whose inputs are all known
when a ``checkpoint``-ed function is differentiated, and says whether its outputs may be
saved for the backward pass (``True``/``Saveable``) or must be recomputed there
(``False``/``Recompute``). Same names, reprs and behaviour as JAX 0.10.2."""
from __future__ import annotations

import types
from dataclasses import dataclass
from typing import NamedTuple

from traxla.ir.rules.ad_checkpoint import name_p


class RecomputeType:
    pass


class SaveableType:
    pass


Recompute = RecomputeType()
Saveable = SaveableType()


class Offloadable(NamedTuple):
    src: object
    dst: object


def ensure_enum(case):
    """JAX's ``pe.ensure_enum``: a policy's answer as Saveable/Recompute/Offloadable."""
    if isinstance(case, bool):
        return Saveable if case else Recompute
    if not isinstance(case, (RecomputeType, SaveableType, Offloadable)):
        msg = ("Value returned by a remat policy should be a bool or"
               " `ad_checkpoint.Recompute`, `ad_checkpoint.Saveable` or"
               " `ad_checkpoint.Offloadable(...)`."
               f" Got {case} of type {type(case)}.")
        if case is Offloadable:
            msg += ("Did you return `Offloadable` instead of an instantiated"
                    " `Offloadable(...)`?")
        raise TypeError(msg)
    return case


def everything_saveable(*_, **__) -> bool:
    """The default strategy, as if ``checkpoint`` were not being used at all."""
    return True


def nothing_saveable(*_, **__) -> bool:
    """Rematerialize everything (the policy of ``checkpoint`` without ``policy=``)."""
    return False


_DOTS = frozenset({"dot_general", "conv_general_dilated", "scaled_matmul_wrapper"})


@dataclass(frozen=True)
class DotsSaveable:
    only_if_no_batch_dims: bool

    def __call__(self, prim, *args, **params):
        if self.only_if_no_batch_dims:
            if prim.name == "dot_general":
                (_, _), (lhs_b, rhs_b) = params["dimension_numbers"]
                return not lhs_b and not rhs_b
            if prim.name == "scaled_matmul_wrapper":
                return args[0].shape[0] == 1
            return False
        return prim.name in _DOTS


checkpoint_dots = dots_saveable = DotsSaveable(False)
dots_with_no_batch_dims_saveable = DotsSaveable(True)


def offload_dot_with_no_batch_dims(offload_src, offload_dst):
    """Same as ``dots_with_no_batch_dims_saveable``, but offloaded to ``offload_dst``
    memory instead of recomputed."""
    def policy(prim, *_, **params):
        if prim.name == "dot_general":
            (_, _), (lhs_b, rhs_b) = params["dimension_numbers"]
            if not lhs_b and not rhs_b:
                return Offloadable(src=offload_src, dst=offload_dst)
        return Recompute
    return policy


def save_anything_except_these_names(*names_not_to_save):
    """Save any values (not just named ones) excluding the names given (as in JAX 0.10.2,
    where this policy saves everything)."""
    return lambda *_, **__: True


@dataclass(frozen=True)
class SaveOnlyTheseNames:
    saveable_names: frozenset

    def __call__(self, prim, *_, **params):
        if prim is name_p:
            return params["name"] in self.saveable_names
        return False


@dataclass(frozen=True)
class SaveAnyNamesButThese:
    names: frozenset

    def __call__(self, prim, *_, **params):
        if prim is name_p:
            return params["name"] not in self.names
        return False


def save_any_names_but_these(*names_not_to_save):
    """Save only named values (outputs of ``checkpoint_name``), but not the names given."""
    return SaveAnyNamesButThese(frozenset(names_not_to_save))


def save_only_these_names(*names_which_can_be_saved):
    """Save only named values, and only among the names given."""
    return SaveOnlyTheseNames(frozenset(names_which_can_be_saved))


def save_and_offload_only_these_names(*, names_which_can_be_saved, names_which_can_be_offloaded,
                                      offload_src, offload_dst):
    """Same as ``save_only_these_names``, offloading the second group of names."""
    names_which_can_be_saved = set(names_which_can_be_saved)
    names_which_can_be_offloaded = set(names_which_can_be_offloaded)
    intersection = names_which_can_be_saved.intersection(names_which_can_be_offloaded)
    if intersection:
        raise ValueError(
            "The names should be exclusive and should not intersect in"
            " `names_which_can_be_saved` and `names_which_can_be_offloaded`. Got"
            f" names_which_can_be_saved={names_which_can_be_saved},"
            f" names_which_can_be_offloaded={names_which_can_be_offloaded} and the"
            f" intersection={intersection}")

    def policy(prim, *_, **params):
        if prim is name_p and params["name"] in names_which_can_be_saved:
            return Saveable
        if prim is name_p and params["name"] in names_which_can_be_offloaded:
            return Offloadable(src=offload_src, dst=offload_dst)
        return Recompute
    return policy


def save_from_both_policies(policy_1, policy_2):
    """Logical OR of the given policies."""
    def policy(prim, *args, **params):
        out1 = policy_1(prim, *args, **params)
        out2 = policy_2(prim, *args, **params)
        if not (isinstance(out1, bool) and isinstance(out2, bool)):
            raise ValueError(
                "The return value of the policies should be a boolean. Got:"
                f" {out1} and {out2}. Please write a custom policy function directly,"
                " rather than using this helper function.")
        return out1 or out2
    return policy


checkpoint_policies = types.SimpleNamespace(
    everything_saveable=everything_saveable,
    nothing_saveable=nothing_saveable,
    dots_saveable=dots_saveable,
    checkpoint_dots=dots_saveable,
    dots_with_no_batch_dims_saveable=dots_with_no_batch_dims_saveable,
    checkpoint_dots_with_no_batch_dims=dots_with_no_batch_dims_saveable,
    offload_dot_with_no_batch_dims=offload_dot_with_no_batch_dims,
    save_anything_except_these_names=save_anything_except_these_names,
    save_any_names_but_these=save_any_names_but_these,
    save_only_these_names=save_only_these_names,
    save_from_both_policies=save_from_both_policies,
    save_and_offload_only_these_names=save_and_offload_only_these_names)
