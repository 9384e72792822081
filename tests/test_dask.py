"""Jitted functions on a real Dask cluster (2 worker processes on loopback, one cluster for the module):
client.map, dask.array's map_blocks and dask.delayed give the local results, and the workers, asked for
their cache_info(), report that they ran the code shipped with the function and compiled nothing (their
disk cache is off, so there was nowhere else to get code from)."""
import logging
import os
import subprocess
import sys

import numpy as np
import pytest

import tracejit as tj
import tracejit.numpy as tnp

dask = pytest.importorskip("dask", reason="needs dask and distributed (the test extra: pip install -e .[test])")
distributed = pytest.importorskip("distributed", reason="needs distributed (the test extra)")
import dask.array as da  # (after the skip)
from dask.distributed import Client, LocalCluster


def disk_cache_off():
    """Run on the workers: no disk cache (set here, not by environment: a spawned worker may have imported
    tracejit before the nanny set its environment)."""
    tj.config.update("disk_cache", False)
    return tj.config.disk_cache


@pytest.fixture(scope="module")
def client():
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None,
                      silence_logs=logging.ERROR) as cluster, Client(cluster) as c:
        assert list(c.run(disk_cache_off).values()) == [False, False]
        yield c


def workers(client):
    return sorted(client.scheduler_info()["workers"])


def report(f):
    """What a worker says about its copy of f (run there by client.run; f unpickles to the worker's copy)."""
    info = f.cache_info()
    return {"misses": info.misses, "sources": sorted({s.source for s in info.signatures}), "entries": info.entries}


def assert_shipped_code_ran_everywhere(client, f):
    reports = client.run(report, f)
    assert sorted(reports) == workers(client)
    for address, r in reports.items():
        assert r["entries"] >= 1 and r["misses"] == 0 and r["sources"] == ["shipped"], (address, r)


def scaled_tanh(x):
    return tnp.tanh(x * 0.5) * 2.0 + 1.0


def test_client_map_on_both_workers(client):
    f = tj.jit(scaled_tanh)
    shards = [np.linspace(-k, k, 64, dtype=np.float32) for k in range(1, 9)]
    local = [f(s) for s in shards]
    first, second = workers(client)
    futures = client.map(f, shards[::2], workers=[first]) + client.map(f, shards[1::2], workers=[second])
    remote = client.gather(futures)
    for r, want in zip(remote, local[::2] + local[1::2]):
        np.testing.assert_array_equal(r, want)
    assert_shipped_code_ran_everywhere(client, f)


def test_closure_with_a_pytree_and_symbolic_dims(client):
    w = np.linspace(-1.0, 1.0, 12).reshape(4, 3)

    def loss(params, x):
        return tnp.mean((x @ params["w"] + params["b"]) ** 2)

    f = tj.jit(tj.value_and_grad(loss), dynamic_dims={"x": {0: "n"}})
    params = {"w": w, "b": np.zeros(3)}
    batches = [np.linspace(-1.0, 1.0, 4 * n).reshape(n, 4) for n in (5, 9, 16, 3)]
    local = [f(params, b) for b in batches]
    remote = client.gather([client.submit(f, params, b, workers=[w_]) for b, w_ in zip(batches, workers(client) * 2)])
    for (value, grads), (want_value, want_grads) in zip(remote, local):
        np.testing.assert_allclose(value, want_value, rtol=1e-12)
        np.testing.assert_allclose(grads["w"], want_grads["w"], rtol=1e-12)
    assert_shipped_code_ran_everywhere(client, f)


def test_dask_array_map_blocks_and_method(client):
    data = np.linspace(-3.0, 3.0, 64 * 6, dtype=np.float32).reshape(64, 6)
    x = da.from_array(data, chunks=(16, 6))
    f = tj.jit(scaled_tanh)
    want = f(data)
    f(data[:16])                                    # the blocks' signature, compiled here before shipping
    np.testing.assert_array_equal(da.map_blocks(f, x, dtype=np.float32).compute(), want)
    np.testing.assert_array_equal(x.map_blocks(f, dtype=np.float32).compute(), want)
    assert_shipped_code_ran_everywhere(client, f)


def test_dask_delayed(client):
    f = tj.jit(lambda a, b: tnp.sum(tnp.exp(-a * b)))
    a, b = np.linspace(0.0, 1.0, 100), np.linspace(1.0, 2.0, 100)
    want = f(a, b)
    parts = [dask.delayed(f)(a[k::2], b[k::2]) for k in range(2)]
    f(a[::2], b[::2])
    total = dask.delayed(sum)(parts).compute()
    np.testing.assert_allclose(total, want, rtol=1e-12)
    reports = client.run(report, f)
    ran = [r for r in reports.values() if r["entries"]]
    assert ran and all(r["misses"] == 0 and r["sources"] == ["shipped"] for r in ran)


def test_data_parallel_example_matches_the_single_process_run(tmp_path):
    """examples/dask_data_parallel.py on its own LocalCluster: the parameters it trains match training on
    the whole batches in one process, and its workers compiled nothing."""
    example = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples",
                           "dask_data_parallel.py")
    proc = subprocess.run([sys.executable, example, "--steps", "3", "--batch", "64", "--hidden", "16"],
                          capture_output=True, text=True, timeout=300, check=False,
                          env={**os.environ, "TRACEJIT_CACHE_DIR": str(tmp_path / "cache")})
    assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
    lines = proc.stdout.splitlines()
    assert sum(line.startswith("step ") for line in lines) == 3
    assert "parameters match the single-process run" in proc.stdout
    workers = [line for line in lines if line.startswith("worker ")]
    assert len(workers) == 2 and all("compiled 0 signatures, ran code from: shipped" in w for w in workers)
