"""Jitted functions on Dask (tracejit/shipping.py): what shipping compiled code buys and what Dask costs.

1. Time to first result on 2 fresh worker processes (a new LocalCluster each run, workers' disk cache
   off, tracejit already imported there): the function shipped with its code (the workers link it) against
   ship_code=False (each worker traces and compiles it), for an MLP 784-512-10 SGD step and a 1,000-op
   elementwise chain. Medians over runs, and what the workers' cache_info() says they spent.
2. The data-parallel step of examples/dask_data_parallel.py: 2 shards on 2 workers against the whole batch
   in this process; the per-step overhead Dask adds is the distributed step minus one shard's compute.
3. The pickled size of a jitted step, with and without its code.

    python benchmarks/bench_dask.py [--runs N] [--steps N]

Needs dask and distributed; prints nothing else without them. The machine's load average is printed
first and last: on a machine shared with other work, the numbers are not worth much.
"""
import argparse
import logging
import os
import statistics
import sys
import time

import cloudpickle
import numpy as np

import tracejit as tj
import tracejit.numpy as tnp

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "examples"))
from bench_cache import PROGRAMS  # the programs of the compile-cache benchmark


def _load():
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def _cluster():
    """A client of a fresh LocalCluster of 2 worker processes, their disk cache off and tracejit imported."""
    from dask.distributed import Client, LocalCluster
    client = Client(LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                 dashboard_address=None, silence_logs=logging.ERROR))
    client.run(_disk_cache_off)
    return client


def _disk_cache_off():
    tj.config.update("disk_cache", False)    # (the environment may come too late: tracejit may be imported)


def _worker_seconds(f):
    info = f.cache_info()
    return info.misses, sum(s.seconds.get("total", 0.0) for s in info.signatures)


def first_result(name, runs):
    """Medians over fresh clusters of the time from submitting f to both workers to having both results."""
    fun, make_args = PROGRAMS[name]
    args = make_args()
    rows = {}
    for ship in (True, False):
        times, worker = [], []
        for _ in range(runs):
            f = tj.jit(fun, ship_code=ship)
            f(*args)                                   # compiled here, as a user's client would have
            with _cluster() as client:
                addresses = sorted(client.scheduler_info()["workers"])
                start = time.perf_counter()
                client.gather([client.submit(f, *args, workers=[a], pure=False) for a in addresses])
                times.append(time.perf_counter() - start)
                worker += list(client.run(_worker_seconds, f).values())
        rows["shipped code" if ship else "compiled on each worker"] = (
            statistics.median(times), statistics.median(m for m, _ in worker), statistics.median(s for _, s in worker))
    print(f"\nfirst result on 2 fresh workers: {name}  (median of {runs} clusters)")
    print(f"  {'':26s} {'first result':>13s} {'compiles/worker':>16s} {'worker s (cache_info)':>22s}")
    for label, (t, misses, seconds) in rows.items():
        print(f"  {label:26s} {t * 1e3:10.1f} ms {misses:16.0f} {seconds * 1e3:19.1f} ms")
    shipped, compiled = rows["shipped code"][0], rows["compiled on each worker"][0]
    print(f"  ratio compiled / shipped: {compiled / shipped:.2f}x")


def data_parallel(steps, hidden, batch):
    import dask_data_parallel as example
    import mlp
    params = mlp.init_params(tj.random.PRNGKey(1), [2, hidden, hidden, 2])
    data = list(example.batches(steps + 1, batch))
    x, y = data[0]
    half = batch // 2
    example.grad_step(params, x, y)
    example.grad_step(params, x[:half], y[:half])

    def per_step(fn):
        times = []
        for x, y in data:
            start = time.perf_counter()
            fn(params, x, y)
            times.append(time.perf_counter() - start)
        return statistics.median(times[1:])      # the first step on each worker links its code
    local = per_step(example.whole_batch)
    shard = per_step(lambda p, x, y: example.grad_step(p, x[:half], y[:half]))
    with _cluster() as client:
        distributed = per_step(lambda p, x, y: example.average(example.on_cluster(client, 2)(p, x, y)))
    print(f"\ndata-parallel step, MLP 2-{hidden}-{hidden}-2, batch {batch} (median of {steps} steps)")
    print(f"  whole batch in this process     {local * 1e3:9.2f} ms")
    print(f"  one shard of {half:5d} here          {shard * 1e3:9.2f} ms")
    print(f"  2 shards on 2 Dask workers      {distributed * 1e3:9.2f} ms   "
          f"({local / distributed:.2f}x the single process; Dask adds about {(distributed - shard) * 1e3:.1f} ms "
          f"a step: scatter, 2 tasks, gather)")


def pickled_sizes():
    print("\npickled size (cloudpickle)")
    for name in ("small: tanh(x)*2+1, 1000 f32", "MLP 784-512-10 SGD step (grad)"):
        fun, make_args = PROGRAMS[name]
        for ship in (True, False):
            f = tj.jit(fun, ship_code=ship)
            f(*make_args())
            print(f"  {name:34s} {'with code' if ship else 'function only':14s} {len(cloudpickle.dumps(f)) / 1024:8.1f} KiB")
    step = tj.jit(tj.value_and_grad(lambda w, x: tnp.sum(tnp.tanh(x @ w) ** 2)))
    step(np.ones((64, 64), np.float32), np.ones((32, 64), np.float32))
    print(f"  {'value_and_grad of tanh(x @ w)':34s} {'with code':14s} {len(cloudpickle.dumps(step)) / 1024:8.1f} KiB")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3, help="fresh clusters per first-result measurement")
    parser.add_argument("--steps", type=int, default=30, help="steps per data-parallel measurement")
    args = parser.parse_args()
    try:
        import dask.distributed  # noqa: F401
    except ImportError:
        print("bench_dask: dask and distributed are not installed; nothing to measure")
        return
    print(f"load average at start: {_load()}  ({os.cpu_count()} CPUs)")
    tj.config.update("disk_cache", False)      # every compile here is a compile
    for name in ("MLP 784-512-10 SGD step (grad)", "1000-op elementwise chain"):
        first_result(name, args.runs)
    for hidden, batch in ((64, 512), (512, 8192)):
        data_parallel(args.steps, hidden, batch)
    pickled_sizes()
    print(f"\nload average at end: {_load()}")


if __name__ == "__main__":
    main()
