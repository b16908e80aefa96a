"""Shared by the differential test files: run one as a script to see the jaxprs that differ.

    python tests/test_jaxpr_vs_jax.py [name-substring ...]
"""
from __future__ import annotations


def print_differences(corpus, known, texts, argv):
    """Prints JAX's and traxla's jaxpr for each corpus program whose text differs
    (``texts(case) -> (jax_text, traxla_text)``), filtered by name substrings."""
    shown = ok = 0
    for name, case in corpus.items():
        if argv and not any(a in name for a in argv):
            continue
        shown += 1
        try:
            want, got = texts(case)
        except Exception as e:  # noqa: BLE001 - a debugging aid: report and go on
            want, got = "", f"ERROR {type(e).__name__}: {e}"
        if want == got:
            ok += 1
            continue
        print(f"=== {name}{'  (known: ' + str(known[name]) + ')' if name in known else ''}")
        print(f"--- jax\n{want}\n--- traxla\n{got}")
    print(f"{ok}/{shown} match")


def leaves(tree):
    """The arrays of a nested result, in a fixed order (dicts by sorted key)."""
    if isinstance(tree, dict):
        return [leaf for k in sorted(tree) for leaf in leaves(tree[k])]
    if isinstance(tree, (list, tuple)):
        return [leaf for t in tree for leaf in leaves(t)]
    return [tree]


def run_group(fns, args_per_fn, jit):
    """Runs several programs as one jitted function: compiling dominates the cost of a
    differential numeric test, so a group of programs shares one executable."""
    arity = [len(args) for args in args_per_fn]

    def group(*flat):
        outs, i = [], 0
        for fn, k in zip(fns, arity):
            outs.append(fn(*flat[i:i + k]))
            i += k
        return outs

    return jit(group)(*[a for args in args_per_fn for a in args])


def compare_outputs(name, got, want, rtol, atol):
    """Same number of outputs, dtypes, shapes and values (within tolerance) as JAX's."""
    import numpy as np
    got, want = leaves(got), leaves(want)
    assert len(got) == len(want), f"{name}: {len(got)} outputs, JAX has {len(want)}"
    for g, w in zip(got, want):
        g, w = np.asarray(g), np.asarray(w)
        assert g.dtype == w.dtype, f"{name}: dtype {g.dtype}, JAX has {w.dtype}"
        assert g.shape == w.shape, f"{name}: shape {g.shape}, JAX has {w.shape}"
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, err_msg=name)
