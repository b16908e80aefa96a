"""The StableHLO every corpus program lowers to for the TPU, on any machine (no chip needed:
``lower(lowering_platforms=("tpu",))``), to tell whether a change alters what the chip runs:

    python tools/tpu_lowering_snapshot.py save A.json              # at the commit last checked on a chip
    python tools/tpu_lowering_snapshot.py save B.json              # at the new commit
    python tools/tpu_lowering_snapshot.py compare A.json B.json    # programs whose TPU module changed

The corpus is tools/tpu_diff.py's (tests/test_jaxpr_vs_jax.py's numeric part). Where nothing
changed, ``tools/tpu_check.sh``'s result at the old commit stands for the new one's corpus."""
from __future__ import annotations

import json
import os
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [REPO, os.path.join(REPO, "tests")]


def save(path: str) -> int:
    import test_jaxpr_vs_jax as C
    ns = C.TRAXLA
    texts = {}
    for name in C.CORPUS:
        if name in C.KNOWN_NUMERIC:
            continue
        try:
            fn = C._build(C.CORPUS[name], ns)
            texts[name] = ns.jit(fn).trace(*C.CORPUS[name].args).lower(
                lowering_platforms=("tpu",)).as_text()
        except Exception as e:  # noqa: BLE001 - recorded: an error is a result too
            texts[name] = f"ERROR {type(e).__name__}: {str(e).splitlines()[0][:200]}"
    with open(path, "w") as f:
        json.dump(texts, f, indent=0, sort_keys=True)
    print(f"{len(texts)} programs lowered for tpu -> {path}")
    return 0


def compare(a: str, b: str) -> int:
    with open(a) as f:
        old = json.load(f)
    with open(b) as f:
        new = json.load(f)
    changed = sorted(n for n in old.keys() & new.keys() if old[n] != new[n])
    print(f"{len(old.keys() & new.keys())} programs in both; {len(changed)} TPU modules changed; "
          f"only in the old: {len(old.keys() - new.keys())}, only in the new: "
          f"{len(new.keys() - old.keys())}")
    for n in changed:
        print("CHANGED", n)
    return 1 if changed or old.keys() != new.keys() else 0


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "save":
        sys.exit(save(sys.argv[2]))
    if len(sys.argv) == 4 and sys.argv[1] == "compare":
        sys.exit(compare(sys.argv[2], sys.argv[3]))
    print(__doc__)
    sys.exit(2)
