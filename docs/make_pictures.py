"""Draw the README's pictures of docs/model.py's gradient with `python -m tracejit.graph`: as traced (before the
passes) and as compiled (after them, with each kernel's equations in a cluster). Run from the repository root:

    python docs/make_pictures.py

It writes docs/<picture>.dot (the Graphviz text, which tests/test_readme.py checks is current) and
docs/<picture>.svg (drawn by Graphviz's `dot`, which must be installed)."""
import pathlib
import sys

DOCS = pathlib.Path(__file__).resolve().parent
PICTURES = {"grad_traced": [], "grad_compiled": ["--lowered"]}   # name: extra flags of python -m tracejit.graph


def commands():
    """{picture name: the arguments of `python -m tracejit.graph` that draw it, less the format and file}."""
    from model import SHAPES
    return {name: ["model:loss_grad", "--shapes", *SHAPES, *flags] for name, flags in PICTURES.items()}


def main():
    sys.path[:0] = [str(DOCS), str(DOCS.parent)]
    from tracejit.graph.__main__ import main as draw
    for name, args in commands().items():
        for fmt in ("dot", "svg"):
            if draw([*args, "--format", fmt, "-o", str(DOCS / f"{name}.{fmt}")]) != 0:
                return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
