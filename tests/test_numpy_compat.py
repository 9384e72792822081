"""Code written for NumPy and JAX runs: NumPy's keywords (out=None, which np.sum(tracer) passes), JAX's
product keywords, einsum's forms, and the derivatives that used to be wrong (issue 15's regressions)."""
import inspect

import numpy as np
import pytest

import tracejit as tj
import tracejit.numpy as tnp

# ---------------------------------------------------------------------------------------- NumPy's keywords

KEYWORDS_NOT_TAKEN = {     # (function, NumPy's parameter): why tracejit.numpy does not take it
    ("arange", "start_or_stop"): "NumPy 2's name for its positional-only first argument; start, as in JAX",
    ("linalg.matrix_rank", "A"): "JAX's signature (M, rtol=None, *, hermitian, tol): NumPy 2's second "
                                 "positional argument is the absolute tol, JAX's the relative rtol",
    ("histogram", "density"): "JAX's positional order (a, bins, range, weights, density); NumPy's puts density "
                              "before weights: code for either passes them by keyword",
    ("histogram2d", "density"): "as histogram", ("histogramdd", "density"): "as histogram",
    ("compress", "out"): "JAX's signature (condition, a, axis=None, *, size, fill_value, out): out is keyword-only "
                         "(and must be None: tracejit never writes into an array)",
    ("einsum_path", "einsum_call"): "NumPy's internal flag (np.einsum asks einsum_path for its contraction list); "
                                    "JAX's einsum_path does not take it either",
    ("linalg.pinv", "rcond"): "JAX's signature (a, rtol=None, hermitian=False, *, rcond): the second positional "
                              "argument is rtol, which NumPy 2 also takes (its rcond by keyword here)",
}


def _numpy_functions():
    for prefix, module, numpy_module in (("", tnp, np), ("linalg.", tnp.linalg, np.linalg), ("fft.", tnp.fft, np.fft)):
        names = getattr(module, "__all__", None) or [n for n in dir(module) if not n.startswith("_")]
        for name in sorted(names):
            ours, theirs = getattr(module, name), getattr(numpy_module, name, None)
            if not (callable(ours) and not isinstance(ours, type) and callable(theirs)
                    and not isinstance(theirs, (np.ufunc, type))):
                continue
            try:
                yield prefix + name, inspect.signature(ours).parameters, inspect.signature(theirs).parameters
            except ValueError:      # NumPy functions written in C without a signature
                continue


@pytest.mark.parametrize("name, ours, theirs", list(_numpy_functions()), ids=lambda x: x if isinstance(x, str) else "")
def test_numpy_keywords_are_taken(name, ours, theirs):
    """Every parameter of NumPy's function is one of ours, by name, and NumPy's positional parameters come in
    NumPy's order (options tracejit cannot honour raise when given a value other than the default)."""
    variadic = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
    if any(p.kind == inspect.Parameter.VAR_KEYWORD for p in ours.values()):
        return
    missing = [p for p, v in theirs.items() if v.kind not in (*variadic, v.POSITIONAL_ONLY) and p not in ours
               and (name, p) not in KEYWORDS_NOT_TAKEN]
    assert not missing, f"tnp.{name} does not take NumPy's {missing}"
    positional = [p for p, v in theirs.items() if v.kind in (v.POSITIONAL_ONLY, v.POSITIONAL_OR_KEYWORD)]
    ours_positional = [p for p, v in ours.items() if v.kind in (v.POSITIONAL_ONLY, v.POSITIONAL_OR_KEYWORD)]
    renamed = any((name, p) in KEYWORDS_NOT_TAKEN for p in positional)
    named = [p if theirs[p].kind == theirs[p].POSITIONAL_OR_KEYWORD else None for p in positional]  # only-positional:
    assert renamed or [p if q else None for p, q in zip(ours_positional, named)] == named, (   # any name
        f"tnp.{name}'s positional parameters {ours_positional} are not in NumPy's order {positional}")


METHOD_ARGUMENTS = {"dot": (np.ones(4),), "clip": (0.0, 1.0), "swapaxes": (0, 1), "take": (np.array([0, 2]),), "repeat": (2,),
                    "reshape": ((-1,),), "round": (1,), "std": (0,), "var": (0,)}


def test_numpy_functions_call_the_tracer_methods():
    """np.sum(x) on a tracer calls x.sum(axis=None, dtype=None, out=None), and so on: each method tracejit
    gives tracers takes the keywords NumPy passes. (Functions that convert instead, np.sort say, meet the
    tracer's ConcretizationError.)"""
    x = np.random.default_rng(0).uniform(-1, 2, (3, 4))
    dispatched = set()
    for name in sorted(tnp._METHODS):
        function = getattr(np, name, None)
        if name.startswith("_") or not callable(function) or name == "astype":   # np.astype takes ndarrays only
            continue
        if isinstance(function, np.ufunc) or name in OTHER_CALLS:   # (ufuncs call no methods: tracers opt out)
            continue
        args = METHOD_ARGUMENTS.get(name, ())
        try:
            got = tj.jit(lambda t, f=function, args=args: f(t, *args))(x)
        except tj.ConcretizationError:
            continue
        np.testing.assert_allclose(got, function(x, *args), err_msg=name)
        dispatched.add(name)
    assert {"sum", "mean", "std", "var", "max", "min", "prod", "argmax", "argmin", "cumsum", "round", "clip", "any",
            "all", "take", "repeat", "reshape", "swapaxes", "squeeze", "transpose"} <= dispatched


# Methods that NumPy's functions reach with other arguments than one float matrix (test_other_method_calls), or
# not at all: NumPy 2's np.ptp computes with ufuncs, which tracers refuse, instead of calling the method.
OTHER_CALLS = {"argpartition", "searchsorted", "compress", "choose", "ptp"}


def test_other_method_calls():
    x = np.random.default_rng(1).uniform(-1, 2, (3, 5))
    parts = tj.jit(lambda t: np.argpartition(t, 2))(x)          # any order around the kth is a partition
    ranked = np.take_along_axis(x, parts, -1)
    np.testing.assert_array_equal(ranked[:, 2], np.sort(x)[:, 2])
    assert (ranked[:, :2].max(1) <= ranked[:, 2]).all() and (ranked[:, 3:].min(1) >= ranked[:, 2]).all()
    s, v = np.sort(x.ravel()), np.array([-2.0, 0.1, 0.5, 3.0])
    np.testing.assert_array_equal(tj.jit(lambda t: np.searchsorted(t, v, side="right"))(s),
                                  np.searchsorted(s, v, side="right"))
    keep = np.array([True, False, True])
    np.testing.assert_array_equal(tj.jit(lambda t: np.compress(keep, t, axis=0))(x), np.compress(keep, x, axis=0))
    which = np.array([0, 2, 1, 1, 0])
    np.testing.assert_array_equal(tj.jit(lambda t: np.choose(t, x, mode="clip"))(which), np.choose(which, x))
    with pytest.raises(tj.ConcretizationError):    # mode 'raise' needs concrete indices (NumPy retries by converting)
        tj.jit(lambda t: np.choose(t, x))(which)


def test_out_must_be_none():
    x = np.ones(3)
    assert tnp.sum(x, out=None) == 3
    with pytest.raises(NotImplementedError, match="sum: out= is not supported.*got a ndarray; expected None"):
        tnp.sum(x, out=np.empty(()))


def test_reduction_where_and_initial():
    x = np.array([[1.0, -2.0, 3.0], [4.0, 5.0, -6.0]])
    mask = x > 0
    for f in ("sum", "prod", "mean"):
        check = getattr(np, f)(x, axis=1, where=mask)
        np.testing.assert_allclose(getattr(tnp, f)(x, axis=1, where=mask), check)
        np.testing.assert_allclose(tj.jit(lambda x, m, f=f: getattr(tnp, f)(x, axis=1, where=m))(x, mask), check)
    np.testing.assert_allclose(tnp.max(x, axis=0, where=mask, initial=0.0), np.max(x, axis=0, where=mask, initial=0.0))
    np.testing.assert_allclose(tnp.var(x, where=mask, ddof=1), np.var(x, where=mask, ddof=1))
    assert tnp.max(np.zeros(0), initial=-1.0) == -1.0
    with pytest.raises(ValueError, match="initial"):
        tnp.max(x, where=mask)

# --------------------------------------------------------------------------------------- JAX's conveniences


def test_products_take_keywords_precision_and_preferred_element_type():
    a, b = np.arange(6.0).reshape(2, 3), np.arange(12.0).reshape(3, 4)
    np.testing.assert_allclose(tnp.tensordot(a, b, axes=1), np.tensordot(a, b, axes=1))
    np.testing.assert_allclose(tj.jit(lambda a, b: tnp.tensordot(a, b, axes=([1], [0])))(a, b), a @ b)
    for precision in (None, "highest", tj.lax.Precision.HIGH, ("default", "highest")):
        for f in (tnp.dot, tnp.matmul, tnp.inner, lambda a, b, **k: tnp.einsum("ij,jk", a, b, **k)):
            np.testing.assert_allclose(f(a, b if f is not tnp.inner else a, precision=precision),
                                       a @ b if f is not tnp.inner else np.inner(a, a))
    out = tnp.matmul(a.astype(np.float32), b.astype(np.float32), preferred_element_type=np.float64)
    assert out.dtype == np.float64
    assert tj.lax.dot_general(a, b, (((1,), (0,)), ((), ())), preferred_element_type=np.float32).dtype == np.float32
    np.testing.assert_allclose(tj.lax.dot(a, b, precision=tj.lax.Precision.HIGHEST), a @ b)
    with pytest.raises(ValueError, match="precision must be None, a tj.lax.Precision"):
        tnp.dot(a, b, precision="fast")


@pytest.mark.parametrize("operands", [
    ("...ij,...jk->...ik", (2, 2, 3), (2, 3, 4)), ("ij,jk", (2, 3), (3, 4)), ("ij,jk,kl->il", (2, 3), (3, 4), (4, 2)),
    ("i,i,i", (3,), (3,), (3,)), ("ii->i", (3, 3)), ("ii", (3, 3)), ("iij->j", (2, 2, 3)), ("...i,...i", (2, 3), (3,)),
    ("bij,bjk,bkl->bil", (2, 2, 3), (2, 3, 2), (2, 2, 2)), ("i,j,k", (2,), (3,), (2,)), ("ij,ij->", (0, 3), (0, 3)),
], ids=lambda o: o[0])
def test_einsum_forms(operands):
    spec, *shapes = operands
    rng = np.random.default_rng(1)
    arrays = [rng.standard_normal(s) for s in shapes]
    expected = np.einsum(spec, *arrays)
    np.testing.assert_allclose(tnp.einsum(spec, *arrays), expected, atol=1e-12)
    np.testing.assert_allclose(tj.jit(lambda *xs: tnp.einsum(spec, *xs))(*arrays), expected, atol=1e-12)


def test_einsum_sublists_and_its_greedy_order():
    a, b, c = np.ones((2, 100)), np.ones((100, 3)), np.ones((3, 50))
    np.testing.assert_allclose(tnp.einsum(a, [0, 1], b, [1, 2]), a @ b)
    np.testing.assert_allclose(tnp.einsum(a, [0, 1], b, [1, 2], [2, 0]), (a @ b).T)
    d = np.arange(12.0).reshape(2, 2, 3)
    for operands in ((d, [Ellipsis, 0, 1], b[:3], [1, 2], [Ellipsis, 0, 2]), (d, [Ellipsis, 1], [Ellipsis])):
        np.testing.assert_allclose(tnp.einsum(*operands), np.einsum(*operands))
    ir = str(tj.make_ir(lambda a, b, c: tnp.einsum("ij,jk,kl->il", a, b, c))(a, b, c))
    assert "f64[2,3] = dot_general" in ir and "f64[100,50]" not in ir      # (a b) first: the small product
    with pytest.raises(ValueError, match="needs a '...'"):
        tnp.einsum("...i->i", np.ones((2, 3)))


def test_dtype_names():
    assert tnp.float32 is np.float32 and tnp.int_ is np.int64 and tnp.bool is np.bool_
    assert tnp.issubdtype(tnp.float64, tnp.floating) and tnp.finfo(tnp.float32).eps == np.finfo(np.float32).eps
    assert tnp.zeros(2, tnp.int32).dtype == np.int32 and tnp.zeros(2, tnp.int8).dtype == np.int8
    assert tnp.ones(2, tnp.bfloat16).dtype == tnp.bfloat16 and tnp.issubdtype(tnp.bfloat16, tnp.floating)

# --------------------------------------------------------------------------------- derivatives (regressions)


def test_logaddexp_second_derivative_at_a_tie():
    """Through sign(x - y) the second derivative vanished at x == y; Newton's method from w = 0 diverged."""
    assert tj.grad(tj.grad(lambda x: tnp.logaddexp(x, 0.4)))(0.4) == pytest.approx(0.25, abs=1e-15)
    np.testing.assert_allclose(np.diag(tj.hessian(lambda z: tnp.sum(tnp.logaddexp(0.0, z)))(np.zeros(3))), 0.25)
    np.testing.assert_allclose(tj.jit(tj.hessian(lambda z: tnp.sum(tj.nn.softplus(z))))(np.zeros(2)), np.eye(2) / 4)
    ln2 = np.log(2)
    assert tj.grad(tj.grad(lambda x: tnp.logaddexp2(x, 1.0)))(1.0) == pytest.approx(ln2 / 4, rel=1e-14)
    tj.test_util.check_grads(lambda x, y: tnp.logaddexp2(x, y), (np.array([0.3, -1.0]), np.array([0.3, 2.0])), 2)


def test_logaddexp_values_at_infinities_and_nan():
    x = np.array([np.inf, -np.inf, np.inf, -np.inf, 1.0, np.nan, 0.5])
    y = np.array([np.inf, -np.inf, -np.inf, 1.0, -np.inf, 1.0, 0.5])
    with np.errstate(invalid="ignore"):
        for ours, theirs in ((tnp.logaddexp, np.logaddexp), (tnp.logaddexp2, np.logaddexp2)):
            np.testing.assert_array_equal(ours(x, y), theirs(x, y))
            np.testing.assert_allclose(tj.jit(ours)(x, y), theirs(x, y), rtol=1e-15)


def test_derivatives_that_were_nan():
    """std of one element is 0 whatever the element; x ** 0.0 is 1 (tracejit's derivatives 0, JAX's NaN)."""
    assert tj.jvp(tnp.std, (np.ones(1),), (np.ones(1),))[1] == 0
    assert tj.grad(tj.grad(lambda x: tnp.power(x, 0.0)))(0.0) == 0
    assert tj.grad(lambda x: tnp.power(x, 0.0))(0.0) == 0
    assert tnp.power(np.nan, 0.0) == 1


def test_floor_divide_and_remainder_derivatives():
    """floor_divide is piecewise constant (derivative 0, also at y = 0); remainder keeps its derivative where
    its value is 0, as JAX's."""
    x, y = np.array([0.0, 2.0, 3.0, -4.0]), np.array([0.0, 2.0, 0.0, 2.0])
    np.testing.assert_array_equal(tj.grad(lambda x: tnp.sum(tnp.floor_divide(x, y)))(x), 0)
    np.testing.assert_array_equal(tj.grad(lambda x: tnp.sum(tnp.remainder(x, 2.0)))(np.array([2.0, -4.0])), 1)
    np.testing.assert_array_equal(tnp.remainder(np.array([2.0, -2.0]), np.array([-2.0, 2.0])), [-0.0, 0.0])
    assert np.signbit(tj.jit(tnp.remainder)(np.array([2.0]), np.array([-2.0]))[0])
