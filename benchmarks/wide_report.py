"""The wide suite's report (issue 20): geometric means over its rows, and the workloads where tracejit loses (slower
than NumPy, more than 10% slower than JAX, or compiling slower), each with its kernels that ran scalar or through
the Python driver."""
import math


def ratios(row):
    """(numpy / tracejit, jax / tracejit or None): above 1, tracejit is faster."""
    t = row["tracejit"][0]
    return row["numpy"][0] / t, (row["jax"][0] / t if "jax" in row else None)


def losers(results):
    """(workload, why) where tracejit is slower than NumPy or more than 10% slower than JAX, or compiles slower
    than JAX."""
    found = []
    for r in results:
        vs_np, vs_jax = ratios(r)
        why = []
        if vs_np < 1:
            why.append(f"{vs_np:.2f}x NumPy")
        if vs_jax is not None and vs_jax < 1 / 1.1:
            why.append(f"{vs_jax:.2f}x JAX")
        if "jax first ms" in r and r["tracejit first ms"] > r["jax first ms"]:
            why.append(f"first call {r['tracejit first ms']:.0f} ms vs JAX {r['jax first ms']:.0f} ms")
        if why:
            found.append((r["workload"], "; ".join(why), r.get("problems") or ["(no scalar or Python kernel)"]))
    return found


def summary(results, match=""):
    """Print the geometric means and the losers with their kernels (match: the --match that selected the rows)."""
    vs = [ratios(r) for r in results]
    if not vs:
        print(f"no workload's rows contain {match!r}")
        return {}
    gm_np = math.exp(sum(math.log(a) for a, _ in vs) / len(vs))
    jaxes = [b for _, b in vs if b is not None]
    gm_jax = math.exp(sum(map(math.log, jaxes)) / len(jaxes)) if jaxes else None
    print(f"geometric mean over {len(vs)} workloads: {gm_np:.2f}x NumPy"
          + (f", {gm_jax:.2f}x JAX" if gm_jax else ""))
    lost = losers(results)
    print(f"{len(lost)} workloads where tracejit loses (slower than NumPy, >10% slower than JAX, or compiles slower):")
    for name, why, kernels in lost:
        print(f"  {name}: {why}")
        for k in kernels:
            print(f"      {k}")
    return {"geomean numpy": gm_np, "geomean jax": gm_jax, "losers": [list(x) for x in lost]}
