"""python -m tracejit.graph module:function --shapes "f32[3,4]" "f32[4]" [--optimize | --lowered]
[--format svg|png|dot|mermaid] [-o FILE]: draw the IR of a function traced at the given argument types;
--lowered draws it as jit compiles it, after the passes, each kernel's equations in a cluster (a fused loop
nest, a BLAS call, control flow, the Python driver). SVG and PNG need Graphviz's `dot` program; without it
the DOT text is written instead, with a note on how to install Graphviz."""
import argparse
import importlib
import re
import shutil
import subprocess
import sys
from pathlib import Path

from ..api import jit
from ..core.avals import SHORT_NAMES, Dim, ShapedArray
from . import graph

DTYPES = {short: dtype for dtype, short in SHORT_NAMES.items()}
INSTALL_HINT = ("Graphviz's `dot` program is not on PATH, so no {fmt} was drawn. Install Graphviz with\n"
                "    apt-get install graphviz           (Debian, Ubuntu)\n"
                "    brew install graphviz              (macOS)\n"
                "    conda install -c conda-forge graphviz\n"
                "and run this again. The DOT text is in {dot_file}; `dot -T{fmt} {dot_file} -o {out}` draws it.")


def parse_type(text):
    """'f32[3,4]' -> ShapedArray((3, 4), float32); a name in place of a size is a symbolic dimension."""
    match = re.fullmatch(r"(\w+)\[([\w, ]*)\]", text.strip())
    dims = [d.strip() for d in match[2].split(",") if d.strip()] if match else []
    if not match or match[1] not in DTYPES or not all(d.isdigit() or d.isidentifier() for d in dims):
        raise argparse.ArgumentTypeError(f"{text!r} is not a type like f32[3,4] or f32[n,4] "
                                         f"(dtypes: {', '.join(DTYPES)})")
    return ShapedArray(tuple(int(d) if d.isdigit() else Dim(d) for d in dims), DTYPES[match[1]])


def load_function(spec, parser):
    """The function named by 'module:function' (the module importable from here; the name may be dotted)."""
    module_name, _, attr = spec.partition(":")
    if not module_name or not attr:
        parser.error(f"function: expected module:function, got {spec!r}")
    try:
        target = importlib.import_module(module_name)
    except ImportError as e:
        parser.error(f"function: cannot import module {module_name!r}: {e}")
    for part in attr.split("."):
        if not hasattr(target, part):
            parser.error(f"function: {module_name!r} has no attribute {attr!r}")
        target = getattr(target, part)
    if not callable(target):
        parser.error(f"function: {spec!r} is a {type(target).__name__}, not a function")
    return target


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m tracejit.graph", description=__doc__.split(":", 1)[1].strip())
    parser.add_argument("function", help="module:function, the module importable from the current directory")
    parser.add_argument("--shapes", nargs="*", type=parse_type, default=[], metavar="TYPE",
                        help="one type per positional argument, as the IR prints them: f32[3,4], i64[], f64[n,8]")
    drawn = parser.add_mutually_exclusive_group()
    drawn.add_argument("--optimize", action="store_true", help="draw the IR after the optimisation passes")
    drawn.add_argument("--lowered", action="store_true",
                       help="draw the IR jit compiles, with the fusion groups (kernels) as clusters")
    parser.add_argument("--format", choices=["svg", "png", "dot", "mermaid"], default="svg")
    parser.add_argument("-o", "--output", help="file to write (default: FUNCTION.svg or .png; stdout for text)")
    args = parser.parse_args(argv)
    fun = load_function(args.function, parser)
    if args.lowered:
        if any(isinstance(d, Dim) for a in args.shapes for d in a.shape):
            parser.error("--lowered draws code compiled for sizes: give every dimension a number")
        g = jit(fun).lower(*args.shapes)
    else:
        g = graph(fun, optimize=args.optimize)(*args.shapes)
    text = g.to_mermaid() if args.format == "mermaid" else g.to_dot()
    if args.format in ("dot", "mermaid"):
        if args.output:
            Path(args.output).write_text(text)
        else:
            sys.stdout.write(text)
        return 0
    out = Path(args.output or f"{args.function.split(':')[-1].split('.')[-1]}.{args.format}")
    dot = shutil.which("dot")
    if dot is None:
        dot_file = out.with_suffix(".dot")
        dot_file.write_text(text)
        print(INSTALL_HINT.format(fmt=args.format, dot_file=dot_file, out=out), file=sys.stderr)
        return 1
    done = subprocess.run(check=False, args=[dot, f"-T{args.format}", "-o", str(out)], input=text, text=True, capture_output=True)
    if done.returncode != 0:
        print(f"dot failed (exit status {done.returncode}):\n{done.stderr}", file=sys.stderr)
        return 1
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
