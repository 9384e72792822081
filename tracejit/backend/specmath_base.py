"""What every specmath kernel is written with: Body plus mathlib's functions, and the fitted polynomial sets
(specmath_f64, specmath_f32) evaluated by name, each constant term a double-double added last."""
from .mathlib import kernel
from .mathlib_body import Body
from .specmath_f32 import ESTRIN as _ESTRIN
from .specmath_f32 import POLY as _POLY_F32
from .specmath_f32 import estrin as _estrin
from .specmath_f32 import split
from .specmath_f64 import _CONSTANT_LO, _POLY

INF = float("inf")


class SpecialBody(Body):
    """Body plus mathlib's functions, inlined, computing in ty (float: mathlib's f32 exp, log and log1p)."""

    def __init__(self, ty="double", lanes=1):
        super().__init__(ty, lanes)

    def either(self, c1, c2):
        return self._emit(f"or {self.bty} {c1}, {c2}")

    def exp(self, x, lo=None):
        return kernel("exp")(self, x, self.ty, lo)

    def log(self, x):
        return kernel("log")(self, x, self.ty)

    def log1p(self, x):
        return kernel("log1p")(self, x, self.ty)

    def log_dd(self, x):
        return kernel("log_dd")(self, x)


def square(f, x):
    """x**2 as p + e exactly (e = 0 where p is not finite)."""
    p, e = f.two_prod(x, x)
    return p, f.sel(f.cmp("olt", p, INF), e, 0.0)


def log_parts(f, x, prec):
    """log(x) as hi + lo: a double-double for double results, log(x) + 0 for float ones (which round away far
    more than the difference; the double-double costs about twice the log)."""
    return f.log_dd(x) if prec == "double" else (f.log(x), 0.0)


def poly(f, z, name, prec):
    """The polynomial _POLY[name, prec] at z, its constant term (a double-double) added last."""
    coefs = _POLY[name, prec]
    hi, lo = split(f, coefs[0], _CONSTANT_LO[name, prec])
    return f.add(f.fma(_estrin(f, z, coefs[1:]) if name in _ESTRIN else f.poly(z, coefs[1:]), z, lo), hi)


def poly_pieces(f, conds, z, names, prec):
    """poly of names[i] where conds[i] holds (the first that does; the last name where none does), in one Horner
    pass, the coefficients selected per lane."""
    sets = [_POLY[name, prec] for name in names]
    n = max(map(len, sets))
    sets = [c + (0.0,) * (n - len(c)) for c in sets]
    constants = [split(f, c[0], _CONSTANT_LO[name, prec]) for c, name in zip(sets, names)]
    coefs = [pick(f, conds, column) for column in zip(*(c[1:] for c in sets))]
    lo, hi = pick(f, conds, [lo for _, lo in constants]), pick(f, conds, [hi for hi, _ in constants])
    return f.add(f.fma(f.poly(z, coefs), z, lo), hi)


def pick(f, conds, values):
    """values[i] where conds[i] holds (the first that does), else the last value."""
    out = values[-1]
    for cond, v in zip(reversed(conds), reversed(values[:-1])):
        out = f.sel(cond, v, out)
    return out



_POLY.update({(name, "float"): coefs for name, coefs in _POLY_F32.items()})
_CONSTANT_LO.update({(name, "float"): 0.0 for name in _POLY_F32})     # in the constant term
