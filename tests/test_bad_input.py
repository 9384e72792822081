"""Bad input is refused as NumPy refuses it (issue 24, items 2-6 and 8), eagerly and under jit, grad and vmap:
negative and too large sizes, boolean masks of the wrong shape, axes and sizes of the wrong type; dynamic_slice's
negative starts and tnp.take's bool indices follow JAX and NumPy. tests/test_fuzz_bad_input.py searches wider."""
# ruff: noqa: B023 -- each lambda in a loop runs right away, inside its iteration
import numpy as np
import pytest

import tracejit as tj
import tracejit.numpy as tnp
from tracejit import lax

X6 = np.arange(6.0) - 2.5
X23 = X6.reshape(2, 3)


def outcome(fn):
    try:
        return fn()
    except Exception as e:      # noqa: BLE001 - the exception is the outcome compared
        return e


def in_every_mode(f, x, modes=("eager", "jit", "grad", "vmap")):
    """{mode: f's outcome there}: f(x) eagerly, under jit, inside grad (of its sum), vmapped over a stack of x."""
    run = {"eager": lambda: f(x), "jit": lambda: tj.jit(f)(x),
           "grad": lambda: tj.grad(lambda x: tnp.sum(f(x)))(x), "vmap": lambda: tj.vmap(f)(np.stack([x, x + 1]))}
    return {mode: outcome(run[mode]) for mode in modes}


def assert_refused_like_numpy(call, x, names, modes=("eager", "jit", "grad", "vmap")):
    """NumPy raises on call(np, x); tracejit raises an exception of that type (its nearest builtin class) in every
    mode, whose message contains one of `names`."""
    want = outcome(lambda: call(np, x))
    assert isinstance(want, Exception), f"NumPy accepts it: {want}"
    kind = next(c for c in type(want).__mro__ if c.__module__ == "builtins")
    for mode, got in in_every_mode(lambda x: call(tnp, x), x, modes).items():
        assert isinstance(got, kind), f"{mode}: NumPy raises {want!r}, tracejit gives {got!r}"
        assert any(n in str(got) for n in names), f"{mode}: {got} names none of {names}"


# ------------------------------------------------------------------------------- 2. negative sizes


NEGATIVE_SIZES = {
    "sum of broadcast_to (-1, 3)": (lambda M, x: M.sum(M.broadcast_to(x[0], (-1, 3))), "(-1, 3)"),
    "zeros((-2,))": (lambda M, x: M.zeros((-2,)) + x[0], "(-2,)"),
    "zeros(-2)": (lambda M, x: M.zeros(-2) + x[0], "(-2,)"),
    "ones((2, -1))": (lambda M, x: M.ones((2, -1)) * x[0], "(2, -1)"),
    "full((-1,), x)": (lambda M, x: M.full((-1,), x[0]), "(-1,)"),
    "empty((-3, 2))": (lambda M, x: M.zeros_like(M.empty((-3, 2))) + x[0], "(-3, 2)"),
    "eye(-2)": (lambda M, x: M.eye(-2) * x[0], "-2"),
    "reshape with two -1": (lambda M, x: M.reshape(x, (-1, -1)), "(-1, -1)"),
    "reshape with -2 and -3": (lambda M, x: M.reshape(x, (-2, -3)), "(-2, -3)"),
    "tile by -1": (lambda M, x: M.tile(x, -1), "-1"),
    "repeat -1 times": (lambda M, x: M.repeat(x, -1), "-1"),
}


@pytest.mark.parametrize("name", NEGATIVE_SIZES)
def test_a_negative_size_raises_value_error_naming_it(name):
    call, shape_text = NEGATIVE_SIZES[name]
    assert_refused_like_numpy(call, X6, [shape_text])


def test_reshape_infers_any_one_negative_size_as_numpy_does():
    for shape in [(2, -3), (-1, 3), (-7,)]:
        want = np.reshape(X6, shape)
        for got in in_every_mode(lambda x, shape=shape: tnp.reshape(x, shape), X6, ("eager", "jit")).values():
            np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("call", [lambda x: lax.broadcast_in_dim(x[0], (-1, 3), ()), lambda x: lax.iota(np.int32, -3),
                                  lambda x: lax.reshape(x, (-1, 6)), lambda x: lax.dynamic_slice(x, (0,), (-1,))])
def test_lax_refuses_negative_sizes_too(call):
    """JAX raises a TypeError here; tracejit a ValueError, as NumPy does for a negative size."""
    for mode, got in in_every_mode(call, X6, ("eager", "jit")).items():
        assert isinstance(got, ValueError) and "negative dimensions" in str(got), (mode, got)


# -------------------------------------------------------------------------- 3. masks of the wrong shape


WRONG_MASKS = {
    "x[2 of 6]": (lambda x: x[np.array([True, False])], X6),
    "x[7 of 6]": (lambda x: x[np.array([True, False] * 3 + [True])], X6),
    "x[mask 2x2 of 2x3]": (lambda x: x[np.array([[True, False], [True, True]])], X23),
    "x[:, mask 2 of 3]": (lambda x: x[:, np.array([True, False])], X23),
    "x[mask 3 of 2, 0]": (lambda x: x[np.array([True, False, True]), 0], X23),
}
AT_FORMS = {"get": lambda x, m: x[m], "at set": lambda x, m: x.at[m].set(1.0),
            "at add": lambda x, m: x.at[m].add(1.0), "at get": lambda x, m: x.at[m].get()}


@pytest.mark.parametrize("name", WRONG_MASKS)
def test_a_boolean_mask_of_the_wrong_shape_raises_index_error(name):
    index, x = WRONG_MASKS[name]
    with pytest.raises(IndexError, match="boolean index did not match"):
        index(x)    # NumPy
    jnp = pytest.importorskip("jax.numpy", reason="JAX is the reference for .at")
    with pytest.raises(IndexError):
        index(jnp.asarray(x, jnp.float32))
    for mode, got in in_every_mode(index, x, ("jit", "grad", "vmap")).items():
        assert isinstance(got, IndexError) and "boolean index did not match" in str(got), (mode, got)


@pytest.mark.parametrize("form", AT_FORMS)
def test_at_with_a_boolean_mask_of_the_wrong_length_raises_index_error(form):
    mask = np.array([True, False])
    for mode, got in in_every_mode(lambda x: AT_FORMS[form](x, mask), X6, ("jit", "grad", "vmap")).items():
        assert isinstance(got, IndexError) and "size of axis is 6" in str(got), (mode, got)


@pytest.mark.parametrize("mask", [np.array([True, False, True, True, False, False]), True, np.True_, False,
                                  np.array(True)], ids=repr)
def test_boolean_masks_of_the_right_shape_select_as_numpy(mask):
    """Bool scalars too (they add an axis: x[True] has shape (1, 6)); they took a wrong path before."""
    np.testing.assert_array_equal(tj.jit(lambda x: x[mask])(X6), X6[mask])
    np.testing.assert_array_equal(tj.vmap(lambda x: x[mask])(np.stack([X6, X6])), np.stack([X6[mask]] * 2))
    want = X6.copy()
    want[mask] = 7.0
    np.testing.assert_array_equal(tj.jit(lambda x: x.at[mask].set(7.0))(X6), want)


def test_concrete_integer_indices_out_of_bounds_raise_as_numpy_and_traced_ones_clamp_as_jax():
    with pytest.raises(IndexError, match="index 6 is out of bounds for axis 0 with size 6"):
        tj.jit(lambda x: x[np.array([0, 6])])(X6)
    assert np.isnan(tj.jit(lambda x: tnp.take(x, -7))(X6))     # take fills instead, as JAX's (test_take_modes.py)
    np.testing.assert_array_equal(tj.jit(lambda x, i: x[i])(X6, np.array([0, 6])), X6[[0, 5]])
    np.testing.assert_array_equal(tj.jit(lambda x: x.at[np.array([0, 6])].add(1.0))(X6), X6 + [1, 0, 0, 0, 0, 0])


# ------------------------------------------------------------------------- 4. axes and sizes of the wrong type


WRONG_TYPES = {
    "sum axis '0'": (lambda M, x: M.sum(x, axis="0"), X6),
    "sum axis 1.5": (lambda M, x: M.sum(x, axis=1.5), X6),
    "sum axis True": (lambda M, x: M.sum(x, axis=True), X23),
    "sum axis [0]": (lambda M, x: M.sum(x, axis=[0]), X6),
    "mean axis np.bool_": (lambda M, x: M.mean(x, axis=np.bool_(True)), X23),
    "cumsum axis True": (lambda M, x: M.cumsum(x, axis=True), X23),
    "argmax axis (0,)": (lambda M, x: M.argmax(x, axis=(0,)), X23),
    "concatenate axis True": (lambda M, x: M.concatenate([x, x], axis=True), X23),
    "take axis True": (lambda M, x: M.take(x, [0], axis=True), X23),
    "argsort axis True": (lambda M, x: M.argsort(x, axis=True), X23),
    "squeeze axis [0]": (lambda M, x: M.squeeze(x[None], axis=[0]), X6),
    "expand_dims axis 1.5": (lambda M, x: M.expand_dims(x, 1.5), X6),
    "flip axis '0'": (lambda M, x: M.flip(x, "0"), X6),
    "transpose (1.0, 0)": (lambda M, x: M.transpose(x, (1.0, 0)), X23),
    "reshape (3.0, 2)": (lambda M, x: M.reshape(x, (3.0, 2)), X6),
    "reshape (True, 6)": (lambda M, x: M.reshape(x, (True, 6)), X6),
    "zeros((2.0,))": (lambda M, x: M.zeros((2.0,)) + x[0], X6),
    "zeros(True)": (lambda M, x: M.zeros(True) + x[0], X6),
    "broadcast_to (True, 3)": (lambda M, x: M.broadcast_to(x[0], (True, 3)), X6),
    "eye(2.0)": (lambda M, x: M.eye(2.0) * x[0], X6),
    "linspace num 2.5": (lambda M, x: M.linspace(0.0, x[0], 2.5), X6),
    "tile reps 1.5": (lambda M, x: M.tile(x, 1.5), X6),
    "diff n 1.5": (lambda M, x: M.diff(x, 1.5), X6),
    "pad width 1.5": (lambda M, x: M.pad(x, 1.5), X6),
}


@pytest.mark.parametrize("name", WRONG_TYPES)
def test_an_argument_of_the_wrong_type_raises_type_error_naming_it(name):
    call, x = WRONG_TYPES[name]
    assert_refused_like_numpy(call, x, ["axis", "shape", "size", "N", "num", "reps", "order", "pad_width"])


ACCEPTED = {       # what NumPy takes: integer-likes, and lists or bools where its Python functions take them
    "sum axis np.int64": lambda M, x: M.sum(x, axis=np.int64(1)),
    "sum axis 0-d array": lambda M, x: M.sum(x, axis=np.array(1)),
    "sum axis tuple": lambda M, x: M.sum(x, axis=(0, 1)),
    "flip axis [0]": lambda M, x: M.flip(x, [0]),
    "flip axis True": lambda M, x: M.flip(x, True),
    "roll axis True": lambda M, x: M.roll(x, 1, axis=True),
    "expand_dims [0, 3]": lambda M, x: M.expand_dims(x, [0, 3]),
    "moveaxis [0] [1]": lambda M, x: M.moveaxis(x, [0], [1]),
    "swapaxes True": lambda M, x: M.swapaxes(x, True, 0),
    "sort axis True": lambda M, x: M.sort(x, True),
    "median axis (0, 1)": lambda M, x: M.median(x, axis=(0, 1)),
    "average axis [1]": lambda M, x: M.average(x, axis=[1]),
    "zeros np.int64 and 0-d array": lambda M, x: M.zeros((np.int64(2), np.array(3))) + x,
    "reshape list": lambda M, x: M.reshape(x, [3, 2]),
    "tile np.True_": lambda M, x: M.tile(x, np.True_),
    "take a NumPy bool": lambda M, x: M.take(x, np.bool_(True)),
    "take bool indices": lambda M, x: M.take(x, np.array([True, False])),
}


@pytest.mark.parametrize("name", ACCEPTED)
def test_integer_likes_are_accepted_as_numpy_accepts_them(name):
    want = ACCEPTED[name](np, X23)
    for mode, got in in_every_mode(lambda x: ACCEPTED[name](tnp, x), X23, ("eager", "jit")).items():
        np.testing.assert_allclose(got, want, err_msg=mode)


@pytest.mark.parametrize("call", [lambda L, x: L.reshape(x, (3.0, 2)), lambda L, x: L.transpose(x, (1.0, 0)),
                                  lambda L, x: L.squeeze(x[None], (0.0,)), lambda L, x: L.rev(x, (1.0,)),
                                  lambda L, x: L.reduce_sum(x, (1.0,)), lambda L, x: L.iota(np.int32, 3.0),
                                  lambda L, x: L.concatenate([x, x], 1.0), lambda L, x: L.integer_pow(x, 2.5)])
def test_lax_static_arguments_of_the_wrong_type_raise_type_error_as_jax(call):
    jax = pytest.importorskip("jax", reason="JAX is the reference for lax")
    with pytest.raises(TypeError):
        call(jax.lax, X23.astype(np.float32))
    jax.clear_caches()   # JAX caches by params, and (1.0,) == (1,): a later x[::-1] in JAX would get rev(x, (1.0,))
    for mode, got in in_every_mode(lambda x: call(lax, x), X23, ("eager", "jit")).items():
        assert isinstance(got, TypeError) and "must be an integer" in str(got), (mode, got)


@pytest.mark.parametrize("call", [lambda L, x: L.squeeze(x[None], (-3,)), lambda L, x: L.expand_dims(x, (-1, 0))])
def test_lax_negative_dimensions_count_from_the_end_as_jax_in_eager_and_compiled_code(call):
    """lax.squeeze(x, (-3,)) kept the axis when compiled; lax.expand_dims(x, (-1,)) raised StopIteration."""
    jax = pytest.importorskip("jax", reason="JAX is the reference for lax")
    want = np.asarray(call(jax.lax, X23))
    for mode, got in in_every_mode(lambda x: call(lax, x), X23, ("eager", "jit")).items():
        np.testing.assert_array_equal(got, want, err_msg=mode)


def test_lax_rev_refuses_negative_dimensions_as_jax():
    """Eagerly it flipped, compiled it did not."""
    for mode, got in in_every_mode(lambda x: lax.rev(x, (-1,)), X23, ("eager", "jit")).items():
        assert isinstance(got, ValueError) and "dimensions (-1,)" in str(got), (mode, got)


def test_jit_checks_its_static_arguments_as_jax():
    f = lambda x, a: tnp.sum(x, axis=a)
    with pytest.raises(ValueError, match=r"static_argnums \[5\] out of range"):
        tj.jit(f, static_argnums=5)
    with pytest.raises(TypeError, match="static_argnums '1'"):
        tj.jit(f, static_argnums="1")
    with pytest.raises(ValueError, match=r"static_argnames \['b'\]"):
        tj.jit(f, static_argnames="b")
    # as in JAX, a static parameter is static whether it is passed by position or by name
    np.testing.assert_allclose(tj.jit(f, static_argnums=1)(X23, a=1), X23.sum(1))
    np.testing.assert_allclose(tj.jit(f, static_argnames="a")(X23, 1), X23.sum(1))


# ----------------------------------------------------------------- 5. dynamic_slice's negative starts


@pytest.mark.parametrize("start", [-1, -3, -9, -10, -11, -25, 0, 3, 8, 12])
def test_dynamic_slice_wraps_a_negative_start_once_then_clamps_as_jax(start):
    jax = pytest.importorskip("jax", reason="JAX is the reference for dynamic_slice")
    x, update, s = np.arange(10.0, dtype=np.float32), np.float32([-1, -2]), np.int32(start)
    for name, f in {"slice": lambda L, x, s: L.dynamic_slice(x, (s,), (3,)),
                    "update": lambda L, x, s: L.dynamic_update_slice(x, update, (s,))}.items():
        want = np.asarray(f(jax.lax, x, s))
        w = np.arange(1.0, want.size + 1, dtype=np.float32)
        want_grad = np.asarray(jax.grad(lambda x: (f(jax.lax, x, s) * w).sum())(x))
        got = {"eager": f(lax, x, s), "jit": tj.jit(lambda x, s: f(lax, x, s))(x, s),
               "vmap starts": tj.jit(tj.vmap(lambda s: f(lax, x, s)))(np.int32([start, 0]))[0],
               "vmap operand": tj.vmap(lambda x: f(lax, x, s))(np.stack([x, x]))[1]}
        for mode, value in got.items():
            np.testing.assert_array_equal(value, want, err_msg=f"{name} {mode}")
        for mode, grad in {"grad": tj.grad(lambda x: tnp.sum(f(lax, x, s) * w))(x),
                           "jit grad": tj.jit(tj.grad(lambda x, s: tnp.sum(f(lax, x, s) * w)))(x, s)}.items():
            np.testing.assert_array_equal(grad, want_grad, err_msg=f"{name} {mode}")


def test_a_traced_negative_index_counts_from_the_end_once_then_clamps_as_jax():
    jax = pytest.importorskip("jax", reason="JAX is the reference for traced indices")
    x = np.arange(10.0, dtype=np.float32)
    for i in [-1, -10, -11, -25, 12]:
        want = jax.jit(lambda x, i: x[i])(x, np.int32(i))
        np.testing.assert_array_equal(tj.jit(lambda x, i: x[i])(x, np.int32(i)), want)


# ------------------------------------------------------------------------------------ 6. take of a bool


def test_take_of_a_numpy_bool_takes_element_one_as_numpy_and_jax():
    jnp = pytest.importorskip("jax.numpy", reason="JAX is the reference too")
    for index in [np.bool_(True), True, np.array(True), np.bool_(False)]:
        want = np.take(X6, index)
        assert np.asarray(jnp.take(X6.astype(np.float32), index)) == np.float32(want)
        for mode, got in in_every_mode(lambda x, index=index: tnp.take(x, index), X6).items():
            if mode == "grad":
                np.testing.assert_array_equal(got, np.eye(6)[int(index)], err_msg=mode)
            else:
                np.testing.assert_array_equal(got, want if mode != "vmap" else [want, want + 1], err_msg=mode)


def test_take_refuses_float_indices_as_numpy():
    assert_refused_like_numpy(lambda M, x: M.take(x, np.array([1.0])), X6, ["indices"])


# ----------------------------------------------------------------------------------- 8. sizes too large


def test_a_size_beyond_what_a_buffer_holds_raises_at_trace_time():
    """The issue's case ran for minutes: 2**64 elements overflow int64. It now fails before anything runs."""
    f = lambda x: tnp.sum(tnp.broadcast_to(x, (2**32, 2**32)))
    with pytest.raises(ValueError, match=r"\(4294967296, 4294967296\).*array is too big"):
        tj.make_ir(f)(np.float32(1.5))
    with pytest.raises(ValueError, match="array is too big"):
        tj.jit(f).lower(np.float32(1.5))
    with pytest.raises(ValueError, match="array is too big"):
        tj.grad(f)(np.float32(1.5))
    with pytest.raises(ValueError, match="array is too big"):
        tj.vmap(f)(np.ones(2, np.float32))


@pytest.mark.parametrize("call", [lambda: tnp.zeros((2**64,)), lambda: tnp.zeros((2**63,), bool),
                                  lambda: tnp.ones((2**31, 2**31), np.float32), lambda: tnp.eye(2**32),
                                  lambda: tnp.arange(2**62), lambda: tnp.tile(np.ones(4), 2**62),
                                  lambda: lax.iota(np.int32, 2**62)])
def test_sizes_too_large_say_so_and_name_the_shape(call):
    with pytest.raises(ValueError, match="array is too big") as err:
        call()
    assert "Maximum allowed dimension" not in str(err.value)
    with pytest.raises(ValueError, match="array is too big"):
        tj.jit(lambda x: call() + x)(0.0)


@pytest.mark.parametrize("call", [lambda x: tj.lax.igamma(x), lambda x: tj.lax.erf(x, x), lambda x: tj.lax.add(x),
                                  lambda x: tj.lax.betainc(x, x), lambda x: tj.lax.exp(x, x),
                                  lambda x: tj.lax.bitwise_not(x.astype(np.int32), x.astype(np.int32))],
                         ids=["igamma", "erf", "add", "betainc", "exp", "bitwise_not"])
def test_elementwise_primitives_check_their_operand_count(call):
    """An elementwise primitive given too few or too many operands raises, eagerly and under jit (lax.igamma(x)
    under jit gave zeros: its loop read a missing operand)."""
    x = np.array([0.5, 1.5])
    for run in (call, tj.jit(call)):
        with pytest.raises(TypeError, match=r"takes \d operands?, got \d"):
            run(x)
