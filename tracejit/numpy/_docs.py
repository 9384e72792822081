"""Docstrings for the functions that follow a NumPy function without one of their own: NumPy's summary line and
where to read the rest, so help(tnp.sin) says what it computes (JAX's jax.numpy does the same)."""
import inspect
import types


def _summary(numpy_fn):
    """The first sentence-paragraph of NumPy's docstring, past a ufunc's signature line."""
    paragraphs = [p.strip() for p in inspect.cleandoc(getattr(numpy_fn, "__doc__", None) or "").split("\n\n")]
    prose = [p for p in paragraphs if p and not p.startswith(getattr(numpy_fn, "__name__", "?") + "(")]
    return " ".join(prose[0].split()) if prose else ""


def document_as_numpy(namespace, numpy_module, prefix):
    """Give each public function of namespace (a module's globals) that has no docstring NumPy's summary of
    numpy_module's function of that name, naming it (prefix: 'numpy', 'numpy.linalg' ...)."""
    for name, fn in list(namespace.items()):
        if name.startswith("_") or not isinstance(fn, types.FunctionType) or (fn.__doc__ or "").strip():
            continue
        if not fn.__module__.startswith("tracejit."):
            continue
        summary = _summary(getattr(numpy_module, name, None))
        if not summary:
            continue
        fn.__doc__ = f"{summary}\n\n" + (
            f"As {prefix}.{name}, on arrays and tracers (NumPy's promotion; float64 by default); see NumPy's "
            "documentation for the arguments.")
