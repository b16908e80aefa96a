"""Document layout for the jaxpr printer: Wadler-Lindig documents (Lindig, "Strictly
Pretty", 2000) and their layout in a given width.

Documents are tuples tagged by kind; ``format`` lays them out in ``width``
columns: a group prints flat when it fits on the rest of the line, otherwise
its breaks become newlines at the current nesting. This reproduces the layout
of JAX's printer, which is part of traxla's interface.
"""
from __future__ import annotations

_NIL, _TEXT, _CONCAT, _BREAK, _GROUP, _NEST = range(6)
_FLAT, _BROKEN = 0, 1

NIL = (_NIL,)


def text(s: str):
    return (_TEXT, s)


def concat(docs):
    docs = list(docs)
    return docs[0] if len(docs) == 1 else (_CONCAT, docs)


def brk(s: str = " "):
    return (_BREAK, s)


def group(doc):
    return (_GROUP, doc)


def nest(n: int, doc):
    return (_NEST, n, doc)


def join(sep, docs):
    docs = list(docs)
    if not docs:
        return NIL
    out = [docs[0]]
    for doc in docs[1:]:
        out.append(sep)
        out.append(doc)
    return concat(out)


def _fits(doc, width: int) -> bool:
    agenda = [(_FLAT, doc)]
    while width >= 0 and agenda:
        mode, doc = agenda.pop()
        kind = doc[0]
        if kind == _TEXT:
            width -= len(doc[1])
        elif kind == _CONCAT:
            agenda.extend((mode, d) for d in reversed(doc[1]))
        elif kind == _BREAK:
            if mode == _BROKEN:
                return True
            width -= len(doc[1])
        elif kind == _NEST:
            agenda.append((mode, doc[2]))
        elif kind == _GROUP:
            agenda.append((_FLAT, doc[1]))
    return width >= 0


def format(doc, width: int = 80) -> str:  # noqa: A001 - mirrors Doc.format
    out: list[str] = []
    agenda = [(0, _BROKEN, doc)]
    column = 0
    while agenda:
        indent, mode, doc = agenda.pop()
        kind = doc[0]
        if kind == _TEXT:
            out.append(doc[1])
            column += len(doc[1])
        elif kind == _CONCAT:
            agenda.extend((indent, mode, d) for d in reversed(doc[1]))
        elif kind == _BREAK:
            if mode == _BROKEN:
                out.append("\n" + " " * indent)
                column = indent
            else:
                out.append(doc[1])
                column += len(doc[1])
        elif kind == _NEST:
            agenda.append((indent + doc[1], mode, doc[2]))
        elif kind == _GROUP:
            flat = _fits(doc[1], width - column)
            agenda.append((indent, _FLAT if flat else _BROKEN, doc[1]))
    return "".join(out)
