"""Every primitive by name, looked up when it is applied: `ops.mul(x, y)` binds the primitive `mul`.

Rules apply other primitives through this namespace instead of importing them, so the primitive families (and
the AD vocabulary in core, below all of them) never import one another: a name is looked up when a rule runs,
after `tracejit.primitives` has registered every family. Names that are Python keywords take a trailing
underscore (`ops.and_`, `ops.while_`).
"""
from .trace import Primitive, bind

_registry = {}


def register(modules):
    """Register the primitives defined in `modules`; returns {name: primitive} of those."""
    found = {p.name: p for m in modules for p in vars(m).values() if isinstance(p, Primitive)}
    for name, prim in found.items():
        if _registry.setdefault(name, prim) is not prim:
            raise ValueError(f"two primitives are named {name!r}")
    return found


def primitive(name):
    """The registered primitive called `name`."""
    try:
        return _registry[name]
    except KeyError:
        raise AttributeError(f"no primitive named {name!r} is registered (import tracejit.primitives)") from None


class _Ops:
    def __getattr__(self, attr):
        prim = primitive(attr.removesuffix("_"))

        def apply(*args, **params):
            return bind(prim, *args, **params)

        apply.__name__ = prim.name
        setattr(self, attr, apply)    # found once; later lookups are plain attribute reads
        return apply


ops = _Ops()
