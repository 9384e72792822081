"""Data-parallel training on a Dask cluster: the MLP of examples/mlp.py, its gradient step
jit(value_and_grad(loss)) run on N shards of each batch on the workers, the gradients averaged with
tree_map and the parameters updated here, on the client. The step is compiled once, here: it travels to the
workers with its machine code, and they run it without tracing or compiling (they say so at the end).
The result is checked against training on the whole batches in this process.

    python examples/dask_data_parallel.py                      # a LocalCluster of 2 worker processes
    python examples/dask_data_parallel.py --scheduler tcp://10.0.0.5:8786 --shards 8
    DASK_SCHEDULER_ADDRESS=tcp://10.0.0.5:8786 python examples/dask_data_parallel.py

On a real cluster the workers need tracejit, numpy and llvmlite installed, not this file: the model's code
travels by value (cloudpickle). Workers on another CPU, or with other versions, compile the step themselves.
"""
import argparse
import os
import sys
import time

import cloudpickle
import numpy as np

import tracejit as tj

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mlp  # the model of examples/mlp.py

cloudpickle.register_pickle_by_value(mlp)     # workers do not have examples/ on their path

grad_step = tj.jit(tj.value_and_grad(mlp.loss))


def average(results):
    """(mean loss, mean gradients) over shards of equal size: [(loss, grads)] -> (loss, grads)."""
    values, grads = zip(*results)
    return float(np.mean(values)), tj.tree_util.tree_map(lambda *g: sum(g) / len(g), *grads)


def sgd(params, grads, lr):
    return tj.tree_util.tree_map(lambda p, g: p - lr * g, params, grads)


def batches(steps, batch, seed=0):
    rng = np.random.default_rng(seed)
    x_all, y_all = mlp.make_data(rng, 8192)
    for _ in range(steps):
        idx = rng.integers(0, len(x_all), size=batch)
        yield x_all[idx], y_all[idx]


def train(params, data, lr, shard_results, log=print):
    """SGD on data; each step's (loss, gradients) from shard_results(params, x, y) -> [(loss, grads)]."""
    for step, (x, y) in enumerate(data, 1):
        value, grads = average(shard_results(params, x, y))
        params = sgd(params, grads, lr)
        log(f"step {step:3d}  loss {value:.5f}")
    return params


def on_cluster(client, n_shards):
    """shard_results for train: the shards' gradient steps as tasks on the cluster."""
    def shard_results(params, x, y):
        shared = client.scatter([params], broadcast=True, hash=False)[0]   # once per step, not per shard
        xs, ys = np.array_split(x, n_shards), np.array_split(y, n_shards)
        return client.gather(client.map(grad_step, [shared] * n_shards, xs, ys))
    return shard_results


def whole_batch(params, x, y):
    """shard_results for the single-process run: the whole batch as one shard."""
    return [grad_step(params, x, y)]


def worker_report(f):
    info = f.cache_info()
    return info.misses, sorted({s.source for s in info.signatures})


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scheduler", default=os.environ.get("DASK_SCHEDULER_ADDRESS"),
                        help="address of a Dask scheduler (default: $DASK_SCHEDULER_ADDRESS, else a LocalCluster)")
    parser.add_argument("--workers", type=int, default=2, help="worker processes of the LocalCluster")
    parser.add_argument("--shards", type=int, default=None, help="shards per batch (default: one per worker)")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--batch", type=int, default=512, help="examples per batch (a multiple of --shards)")
    parser.add_argument("--hidden", type=int, default=64)
    args = parser.parse_args(argv)

    from dask.distributed import Client, LocalCluster  # (here: the rest of the file does not need dask)
    if args.scheduler:
        client = Client(args.scheduler)
    else:
        client = Client(LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                                     dashboard_address=None))
    with client:
        n_shards = args.shards or len(client.scheduler_info()["workers"])
        if args.batch % n_shards:
            parser.error(f"--batch {args.batch} is not a multiple of {n_shards} shards")
        params = mlp.init_params(tj.random.PRNGKey(1), [2, args.hidden, args.hidden, 2])
        lr = np.float32(0.3)
        x, y = next(batches(1, args.batch))
        grad_step(params, x, y)                                      # compiled here: the whole batch,
        grad_step(params, x[:args.batch // n_shards], y[:args.batch // n_shards])   # and a shard
        print(f"{n_shards} shards of {args.batch // n_shards} examples on {client}")
        start = time.perf_counter()
        trained = train(params, batches(args.steps, args.batch), lr, on_cluster(client, n_shards))
        seconds = time.perf_counter() - start
        reports = client.run(worker_report, grad_step)

    reference = train(params, batches(args.steps, args.batch), lr, whole_batch, log=lambda line: None)
    difference = max(float(np.max(np.abs(a - b))) for a, b in zip(tj.tree_util.tree_leaves(trained),
                                                                 tj.tree_util.tree_leaves(reference)))
    print(f"{args.steps} steps in {seconds:.2f} s ({seconds / args.steps * 1e3:.1f} ms a step)")
    print(f"parameters match the single-process run: max |difference| {difference:.2e}")
    for address, (misses, sources) in sorted(reports.items()):
        print(f"worker {address}: compiled {misses} signatures, ran code from: {', '.join(sources) or '-'}")
    if difference > 1e-5:
        raise SystemExit("the distributed run differs from the single-process run")


if __name__ == "__main__":
    main()
