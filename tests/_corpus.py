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
