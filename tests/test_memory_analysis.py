"""Compiled.memory_analysis (issue 22 item 2): JAX's field names and argument/output sizes, and temporaries
equal to the arena that the liveness plan lays out, checked on programs whose plan is worked out by hand,
for fixed and symbolic shapes; cache_info shows the same arena."""
import jax
import numpy as np
import pytest

import tracejit as tj
import tracejit.numpy as tnp
from tracejit.core.avals import Dim

N = 64
X = np.ones((N, N), np.float32)
MATRIX = N * N * 4


def stats(f, *args, **jit_args):
    return tj.jit(f, **jit_args).lower(*args).compile().memory_analysis()


def test_fields_and_sizes_match_jax():
    def f(x, y):
        return x @ y + 1.0, (x * 2.0).sum()
    ours = stats(f, X, X[:, :3])
    theirs = jax.jit(f).lower(X, X[:, :3]).compile().memory_analysis()
    for field in ("generated_code_size_in_bytes", "argument_size_in_bytes", "output_size_in_bytes",
                  "alias_size_in_bytes", "temp_size_in_bytes", "peak_memory_in_bytes", "host_generated_code_size_in_bytes",
                  "host_argument_size_in_bytes", "host_output_size_in_bytes", "host_alias_size_in_bytes",
                  "host_temp_size_in_bytes"):
        assert isinstance(getattr(ours, field), int) and hasattr(theirs, field), field
    assert ours.argument_size_in_bytes == theirs.argument_size_in_bytes == MATRIX + N * 3 * 4
    assert ours.output_size_in_bytes == N * 3 * 4 + 4     # JAX adds 16 bytes: its tuple of two pointers
    single = jax.jit(lambda x: x @ x).lower(X).compile().memory_analysis()
    assert stats(lambda x: x @ x, X).output_size_in_bytes == single.output_size_in_bytes == MATRIX
    assert ours.alias_size_in_bytes == 0 and ours.generated_code_size_in_bytes > 0
    assert ours.peak_memory_in_bytes == ours.argument_size_in_bytes + ours.output_size_in_bytes + ours.temp_size_in_bytes


def test_temporaries_follow_liveness():
    """a = x@x and b = a@a are intermediates; c = b@b is the output. When b is computed, a is still read, so
    both are live: two matrices. Once a is read again at the end, b@b needs a third buffer; when nothing is
    read twice, a chain of any length needs two."""
    chain = stats(lambda x: ((x @ x) @ (x @ x)) @ x, X)
    assert chain.temp_size_in_bytes == 2 * MATRIX

    def reused(x):
        a = x @ x
        b = a @ a
        return (b @ b) @ a
    assert stats(reused, X).temp_size_in_bytes == 3 * MATRIX

    def long_chain(x):
        for _ in range(10):
            x = x @ x
        return x
    assert stats(long_chain, X).temp_size_in_bytes == 2 * MATRIX


def test_symbolic_dimensions_report_the_given_sizes():
    w = np.ones((8, 8), np.float32)

    def f(x, w):
        return tnp.tanh(x @ w) @ w      # two (n, 8) intermediates, x @ w and the tanh the matmul reads
    jitted = tj.jit(f, dynamic_dims={"x": {0: "n"}})
    for n in (16, 1000):
        lowered = jitted.lower(np.ones((n, 8), np.float32), w)
        assert "f32[n,8]" in lowered.as_text()
        m = lowered.compile().memory_analysis()
        assert m.argument_size_in_bytes == n * 8 * 4 + 8 * 8 * 4 and m.output_size_in_bytes == n * 8 * 4
        assert m.temp_size_in_bytes == 2 * -(-n * 8 * 4 // 64) * 64


def test_symbolic_code_lowered_without_sizes_says_so():
    n = tj.ShapeDtypeStruct((Dim("n"), 8), np.float32)
    with pytest.raises(ValueError, match=r"symbolic dimensions without sizes \(n\)"):
        tj.jit(lambda x: tnp.tanh(x) @ x.T).lower(n).compile().memory_analysis()


def test_cache_info_shows_the_arena():
    f = tj.jit(lambda x: ((x @ x) @ (x @ x)) @ x)
    f(X)
    (row,) = f.cache_info().signatures
    assert row.arena_bytes == 2 * MATRIX
    assert "arena KiB" in str(f.cache_info()) and f"{2 * MATRIX / 1024:.1f}" in str(f.cache_info())
