"""What a jitted function's compile cache holds (`Jitted.cache_info()`), and why a call missed it.

`CacheInfo` renders as a rich table (`rich.print(f.cache_info())`, or `str()` for plain text): one row
per signature with its arguments (pytree path and type), static arguments, hits, compile seconds split
into phases (trace, transforms, passes, codegen, LLVM), object code size, the arena (the memory its
intermediates take per call; see Compiled.memory_analysis) and where the code came from (compiled here, the
disk cache, or shipped in a pickle). Fields also read by name (`info["hits"]`), as the dict it replaced.
"""
import dataclasses
import io

PHASES = ("trace", "transforms", "passes", "codegen", "llvm")


@dataclasses.dataclass
class SignatureInfo:
    args: tuple           # ((pytree path, type text), ...) of the dynamic arguments, e.g. ("x", "f32[3]")
    statics: tuple        # ((position or name, value), ...) of the static arguments
    hits: int
    seconds: dict         # phase -> seconds of its compile (PHASES, and "total")
    code_bytes: int       # object code size; 0 for the reference backend
    source: str           # where the code came from: "compiled", "disk", "shipped" (a pickle) or "reference"
    arena_bytes: object = None   # the intermediates' memory per call (int); None: depends on symbolic sizes

    @property
    def signature(self):
        return [t for _, t in self.args]

    @property
    def from_disk(self):
        return self.source == "disk"

    @property
    def shipped(self):
        return self.source == "shipped"

    def __getitem__(self, name):
        return getattr(self, name)


@dataclasses.dataclass
class CacheInfo:
    function: str
    entries: int
    hits: int
    misses: int           # signatures compiled here (traced, or recompiled from a pickle's IR)
    evicted: int          # entries dropped by the memory cache's bounds (config.memory_cache_max_*)
    signatures: list      # of SignatureInfo, in order of compilation

    def __getitem__(self, name):
        return getattr(self, name)

    def __rich__(self):
        # rich is imported here, when a table is first rendered, so that `import tracejit` does not load it
        from rich.markup import escape
        from rich.table import Table
        evicted = f", {self.evicted} evicted" if self.evicted else ""
        table = Table(title=f"{self.function}: {_count(self.entries, 'signature')}, {_count(self.hits, 'hit')}, "
                            f"{_count(self.misses, 'miss')}{evicted}")
        for name in ("arguments", "static", "hits", *(f"{p} ms" for p in PHASES), "code KiB", "arena KiB",
                     "code from"):
            table.add_column(name, justify="left" if name in ("arguments", "static") else "right")
        for s in self.signatures:
            table.add_row(escape("\n".join(f"{path}: {t}" for path, t in s.args) or "-"),
                          escape("\n".join(f"{where}={value!r}" for where, value in s.statics) or "-"), str(s.hits),
                          *(f"{s.seconds[p] * 1e3:.2f}" if p in s.seconds else "-" for p in PHASES),
                          f"{s.code_bytes / 1024:.1f}", "-" if s.arena_bytes is None else f"{s.arena_bytes / 1024:.1f}",
                          s.source)
        return table

    def __str__(self):
        from rich.console import Console  # (imported late, as in __rich__)
        console = Console(file=io.StringIO(), width=160, color_system=None)
        console.print(self)
        return console.file.getvalue()


def _count(n, noun):
    return f"{n} {noun}" + ("" if n == 1 else "es" if noun.endswith("s") else "s")


def _statics_text(statics):
    return {str(where): value for where, value in statics}


def explain_miss(function, key, names, cached):
    """Why the signature `key` = (in_tree, avals, statics) missed: the arguments (by pytree path) whose
    type or static value differs from the nearest cached signature. cached: [(key, names)]."""
    in_tree, avals, statics = key
    if not cached:
        args = ", ".join(f"{n}: {a!r}" for n, a in zip(names, avals))
        return f"tracejit: compiling {function} for its first signature ({args})"

    def differences(other_key, other_names):
        other_tree, other_avals, other_statics = other_key
        if other_tree != in_tree:
            new, old = set(names), set(other_names)
            return [(f"argument structure differs (only in this call: {sorted(new - old) or '-'}, "
                     f"only in the cached one: {sorted(old - new) or '-'})")], 1000
        diffs = [f"{n}: {b!r} -> {a!r}" for n, a, b in zip(names, avals, other_avals) if a != b]
        now, before = _statics_text(statics), _statics_text(other_statics)
        diffs += [f"static argument {w}: {before.get(w)!r} -> {now.get(w)!r}"
                  for w in sorted(set(now) | set(before)) if now.get(w) != before.get(w)]
        return diffs, len(diffs)

    diffs, _ = min((differences(k, n) for k, n in cached), key=lambda d: d[1])
    return (f"tracejit: compiling {function} for a new signature ({len(cached)} cached); versus the nearest: "
            + "; ".join(diffs))
