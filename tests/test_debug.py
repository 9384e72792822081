"""tj.debug.print and tj.debug.callback (issue 22 item 5): effects staged in the IR that the passes keep, in
program order, under jit, vmap (once per example, as JAX), grad (in the forward pass) and inside cond, while
and scan, printing what JAX's print; debug_nans names the equation and the line that made a NaN; equations
remember their source lines through the transformations."""
import contextlib
import io
import os
import subprocess
import sys
import textwrap

import jax
import numpy as np
import pytest

import tracejit as tj
import tracejit.numpy as tnp
from tracejit import lax

X = np.arange(3.0, dtype=np.float32)


def output_of(fn, *args):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        fn(*args)
    return out.getvalue().splitlines()


def program(lib, np_):
    """One function, written for tracejit or JAX: prints before and after a computation whose value is dead."""
    def f(x):
        lib.debug.print("first {x}", x=x)
        dead = np_.sin(x) * 3.0
        lib.debug.print("sum {} and {s}", np_.sum(x), s=np_.sum(dead))
        y = x * 2.0
        lib.debug.print("last {y}", y=y)
        return y
    return f


def run(lib, np_, make, how):
    """A thunk running make(lib, np_) as `how` says; JAX always runs op by op (jit dropped), printing in program
    order, which tracejit keeps under jit too (JAX's jit may reorder prints that are not `ordered`)."""
    f = make(lib, np_)
    jit = lib.jit if lib is tj else (lambda g: g)
    g = lambda x: np_.sum(f(x))
    batch = np.stack([X, X / 4])
    return {"eager": lambda: f(X), "jit": lambda: jit(f)(X), "vmap": lambda: lib.vmap(f)(batch),
            "jit_vmap": lambda: jit(lib.vmap(f))(batch), "grad": lambda: lib.grad(g)(X),
            "jit_grad": lambda: jit(lib.grad(g))(X)}[how]


@pytest.mark.parametrize("how", ["eager", "jit", "vmap", "jit_vmap", "grad", "jit_grad"])
def test_prints_what_jax_prints(how):
    ours, theirs = output_of(run(tj, tnp, program, how)), output_of(run(jax, jax.numpy, program, how))
    assert ours == theirs
    assert len(ours) == (6 if "vmap" in how else 3)


def test_the_passes_keep_effects_in_order():
    f = program(tj, tnp)
    text = tj.jit(f).lower(X).as_text()
    assert [line.split("[")[0].strip() for line in text.splitlines() if "debug_callback" in line] == [
        "debug_callback"] * 3
    assert text.index("print 'first {x}'") < text.index("print 'sum {} and {s}'") < text.index("print 'last {y}'")
    assert "sin" in text       # only the print reads it


def test_callback_gets_arrays_and_pytrees():
    calls = []

    def record(a, tree, scale=None):
        calls.append((a, tree, scale))

    @tj.jit
    def f(x):
        tj.debug.callback(record, x, {"double": x * 2, "n": 3}, scale=x[0])
        return x + 1
    np.testing.assert_array_equal(f(X), X + 1)
    ((a, tree, scale),) = calls
    assert isinstance(a, np.ndarray) and a.dtype == np.float32 and a.tolist() == X.tolist()
    assert tree["double"].tolist() == (X * 2).tolist() and int(tree["n"]) == 3 and float(scale) == 0.0


def control_flow(lib, np_):
    def f(x):
        def body(c, t):
            lib.debug.print("scan {c} {t}", c=c, t=t)
            return c + t, c

        c, _ = lib.lax.scan(body, 0.0, x)
        c = lib.lax.cond(c > 1, lambda v: (lib.debug.print("big {}", v), v * 2)[1],
                         lambda v: (lib.debug.print("small {}", v), v)[1], c)
        return lib.lax.while_loop(lambda v: v < 20, lambda v: (lib.debug.print("while {}", v), v * 3)[1], c)
    return f


def in_a_loop(lib, np_):
    return lambda x: lib.lax.scan(lambda c, t: ((lib.debug.print("step {}", t), c + np_.sin(t))[1], None), 0.0,
                                  x)[0]


@pytest.mark.parametrize("make, how", [(control_flow, "jit"), (control_flow, "jit_vmap"), (in_a_loop, "jit_grad")])
def test_inside_scan_cond_and_while(make, how):
    ours = output_of(run(tj, tnp, make, how))
    assert ours and ours == output_of(run(jax, jax.numpy, make, how))


def test_checkpointed_function_prints_once_under_grad():
    """A deliberate difference from JAX, which prints again when the backward pass recomputes: an effect runs
    where the program has it, once."""
    f = tj.checkpoint(lambda x: (tj.debug.print("in {}", x), tnp.sin(x))[1])
    assert output_of(lambda: tj.jit(tj.grad(lambda x: tnp.sum(f(x))))(X)) == ["in [0. 1. 2.]"]


def test_bad_arguments():
    with pytest.raises(TypeError, match="format must be a string"):
        tj.debug.print(3)
    with pytest.raises(TypeError, match="first argument must be a function"):
        tj.debug.callback("f", X)
    with pytest.raises(TypeError, match="not an array or a scalar"):
        tj.jit(lambda x: (tj.debug.print("{}", object()), x)[1])(X)

# ------------------------------------------------------------------------------------------------ debug_nans


@pytest.fixture
def debug_nans():
    tj.config.update("debug_nans", True)
    yield
    tj.config.update("debug_nans", False)


def line_of(text, fn):
    lines, start = __import__("inspect").getsourcelines(fn)
    return start + next(i for i, line in enumerate(lines) if text in line)


def making_nan(x):
    a = x * 2.0
    b = tnp.log(a - 3.0)        # log of a negative number: the first NaN
    return tnp.sqrt(b) + 1.0


@pytest.mark.parametrize("how", ["jit", "jit_grad", "jit_vmap", "in_scan"])
def test_debug_nans_names_the_equation_and_line(debug_nans, how):
    f = {"jit": tj.jit(making_nan), "jit_grad": tj.jit(tj.grad(lambda x: tnp.sum(making_nan(x)))),
         "jit_vmap": tj.jit(tj.vmap(making_nan)),
         "in_scan": tj.jit(lambda x: lax.scan(lambda c, t: (c + making_nan(t), None), 0.0, x)[0])}[how]
    with pytest.raises(FloatingPointError) as error:
        f(X)
    message = str(error.value)
    assert message.startswith("invalid value (nan) encountered in log: `")
    assert f"{__file__}:{line_of('the first NaN', making_nan)} (making_nan)" in message


def test_debug_nans_quiet_without_nans_and_off_by_default(debug_nans):
    np.testing.assert_allclose(tj.jit(making_nan)(X + 2), np.sqrt(np.log((X + 2) * 2 - 3)) + 1, rtol=1e-6)
    tj.config.update("debug_nans", False)
    assert np.isnan(tj.jit(making_nan)(X)).any()


def test_debug_nans_checks_functions_called_before_it_was_set():
    f = tj.jit(making_nan)
    f(X), f(X)       # the fast path is in place
    tj.config.update("debug_nans", True)
    try:
        with pytest.raises(FloatingPointError, match="encountered in log"):
            f(X)
    finally:
        tj.config.update("debug_nans", False)


def test_debug_nans_names_an_argument_that_holds_one(debug_nans):
    with pytest.raises(FloatingPointError, match="in the argument x of making_nan"):
        tj.jit(making_nan)(np.array([np.nan], np.float32))


def test_debug_nans_environment_variable(tmp_path):
    script = tmp_path / "nan.py"
    script.write_text(textwrap.dedent("""
        import numpy as np, tracejit as tj, tracejit.numpy as tnp
        def f(x):
            return tnp.log(x - 5.0)
        tj.jit(f)(np.ones(2))
        """))
    env = {**os.environ, "TRACEJIT_DEBUG_NANS": "1", "PYTHONPATH": os.path.dirname(os.path.dirname(tj.__file__))}
    done = subprocess.run(check=False, args=[sys.executable, str(script)], env=env, capture_output=True, text=True)
    assert done.returncode == 1
    assert "FloatingPointError: invalid value (nan) encountered in log" in done.stderr
    assert f"{script}:4 (f)" in done.stderr

# ------------------------------------------------------------------------------------------- source lines


def test_equations_keep_their_lines_through_transformations():
    def f(x):
        y = tnp.sin(x)
        return tnp.sum(y * y)
    sin_line = line_of("tnp.sin", f)
    for closed in (tj.make_ir(f)(X), tj.make_ir(tj.grad(f))(X), tj.make_ir(tj.vmap(tj.grad(f)))(np.stack([X, X])),
                   tj.jit(tj.grad(f)).lower(X)._entry.closed):
        lines = {e.prim.name: e.source_info[1] for e in closed.eqns}
        assert lines["sin"] == sin_line and all(e.source_info[0] == __file__ for e in closed.eqns)
    cos = [e for e in tj.make_ir(tj.grad(f))(X).eqns if e.prim.name == "cos"]
    assert cos and cos[0].source_info[1:] == (sin_line, "test_equations_keep_their_lines_through_transformations.<locals>.f")
