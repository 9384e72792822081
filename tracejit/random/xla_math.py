"""The math functions JAX's samplers go through, computed as XLA computes them on CPU, so that tracejit's
samples agree with JAX's to an ulp or two: log1p (Cephes' rational approximation for |x| < sqrt(2) - 1,
log(1 + x) beyond: up to ~100 ulp from the exact value near x = -0.41 in float64, which is what JAX's
samples carry), erf_inv (Giles' polynomials, "Approximating the erfinv function", 2010), erf in float32
(Eigen's rational approximation) and lgamma (Lanczos, g = 7, n = 9). Written with tracejit.numpy, so they
trace, batch and compile like any other code; the 16-bit floats are computed in float32, as XLA does.

erf in float64 is libm's in JAX; here it is Cephes' (erf and erfc rational approximations), within an ulp or
two of libm. tracejit.scipy.special's more accurate primitives are not used on purpose: the goal here is
JAX's values, approximation errors included.
"""
import functools
import math

import numpy as np

from .. import numpy as tnp
from ..core.avals import HALF_FLOATS, broadcast_shapes, float32, float64
from ..core.ops import ops

# Horner coefficients, highest degree first.
_LOG1P_NUM = (4.5270000862445199635215e-5, 4.9854102823193375972212e-1, 6.5787325942061044846969e0,
              2.9911919328553073277375e1, 6.0949667980987787057556e1, 5.7112963590585538103336e1,
              2.0039553499201281259648e1)
_LOG1P_DEN = (1.0, 1.5062909083469192043167e1, 8.3047565967967209469434e1, 2.2176239823732856465394e2,
              3.0909872225312059774938e2, 2.1642788614495947685003e2, 6.0118660497603843919306e1)

_ERF_INV32 = ((2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087, -0.00125372503,
               -0.00417768164, 0.246640727, 1.50140941),                       # w < 5
              (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613,
               0.00943887047, 1.00167406, 2.83297682))                          # w >= 5
_ERF_INV64 = ((-3.6444120640178196996e-21, -1.685059138182016589e-19, 1.2858480715256400167e-18,
               1.115787767802518096e-17, -1.333171662854620906e-16, 2.0972767875968561637e-17,
               6.6376381343583238325e-15, -4.0545662729752068639e-14, -8.1519341976054721522e-14,
               2.6335093153082322977e-12, -1.2975133253453532498e-11, -5.4154120542946279317e-11,
               1.051212273321532285e-09, -4.1126339803469836976e-09, -2.9070369957882005086e-08,
               4.2347877827932403518e-07, -1.3654692000834678645e-06, -1.3882523362786468719e-05,
               0.0001867342080340571352, -0.00074070253416626697512, -0.0060336708714301490533,
               0.24015818242558961693, 1.6536545626831027356),                 # w < 6.25
              (2.2137376921775787049e-09, 9.0756561938885390979e-08, -2.7517406297064545428e-07,
               1.8239629214389227755e-08, 1.5027403968909827627e-06, -4.013867526981545969e-06,
               2.9234449089955446044e-06, 1.2475304481671778723e-05, -4.7318229009055733981e-05,
               6.8284851459573175448e-05, 2.4031110387097893999e-05, -0.0003550375203628474796,
               0.00095328937973738049703, -0.0016882755560235047313, 0.0024914420961078508066,
               -0.0037512085075692412107, 0.005370914553590063617, 1.0052589676941592334,
               3.0838856104922207635),                                          # w < 16
              (-2.7109920616438573243e-11, -2.5556418169965252055e-10, 1.5076572693500548083e-09,
               -3.7894654401267369937e-09, 7.6157012080783393804e-09, -1.4960026627149240478e-08,
               2.9147953450901080826e-08, -6.7711997758452339498e-08, 2.2900482228026654717e-07,
               -9.9298272942317002539e-07, 4.5260625972231537039e-06, -1.9681778105531670567e-05,
               7.5995277030017761139e-05, -0.00021503011930044477347, -0.00013871931833623122026,
               1.0103004648645343977, 4.8499064014085844221))                  # w >= 16

_ERF32_NUM = (0.00022905065861350646, 0.0034082910107109506, 0.050955695062380861, 0.18520832239976145,
              1.128379143519084)
_ERF32_DEN = (-1.1791602954361697e-7, 0.000023547966471313185, 0.0010179625278914885, 0.014070470171167667,
              0.11098505178285362, 0.49746925110067538, 1.0)
_ERF32_SATURATES = 3.832506856900711          # erf is +-1 in float32 from here on
_ERF64_T = (9.60497373987051638749e0, 9.00260197203842689217e1, 2.23200534594684319226e3,
            7.00332514112805075473e3, 5.55923013010394962768e4)
_ERF64_U = (1.0, 3.35617141647503099647e1, 5.21357949780152679795e2, 4.59432382970980127987e3,
            2.26290000613890934246e4, 4.92673942608635921086e4)
_ERFC64_P = (2.46196981473530512524e-10, 5.64189564831068821977e-1, 7.46321056442269912687e0,
             4.86371970985681366614e1, 1.96520832956077098242e2, 5.26445194995477358631e2,
             9.34528527171957607540e2, 1.02755188689515710272e3, 5.57535335369399327526e2)
_ERFC64_Q = (1.0, 1.32281951154744992508e1, 8.67072140885989742329e1, 3.54937778887819891062e2,
             9.75708501743205489753e2, 1.82390916687909736289e3, 2.24633760818710981792e3,
             1.65666309194161350182e3, 5.57535340817727675546e2)
_ERFC64_R = (5.64189583547755073984e-1, 1.27536670759978104416e0, 5.01905042251180477414e0,
             6.16021097993053585195e0, 7.40974269950448939160e0, 2.97886665372100240670e0)
_ERFC64_S = (1.0, 2.26052863220117276590e0, 9.39603524938001434673e0, 1.20489539808096656605e1,
             1.70814450747565897222e1, 9.60896809063285878198e0, 3.36907645100081516050e0)

_LANCZOS_G = 7.0
_LANCZOS = (0.99999999999980993227684700473478, 676.520368121885098567009190444019,
            -1259.13921672240287047156078755283, 771.3234287776530788486528258894, -176.61502916214059906584551354,
            12.507343278686904814458936853, -0.13857109526572011689554707, 9.984369578019570859563e-6,
            1.50563273514931155834e-7)


def fma(a, b, c):
    """a * b + c rounded once, in a's dtype: XLA's CPU code fuses such pairs (llvm.fma, primitives/fma.py); b and
    c are converted to a's dtype and the operands broadcast together."""
    dtype = tnp.asarray(a).dtype
    xs = [tnp.asarray(_as(x, dtype)) for x in (a, b, c)]
    shape = broadcast_shapes(*(x.shape for x in xs))
    return ops.fma(*(x if x.ndim == 0 or x.shape == shape else tnp.broadcast_to(x, shape) for x in xs))


def _as(x, dtype):
    return np.asarray(x, dtype) if isinstance(x, (int, float)) else tnp.asarray(x).astype(dtype)


def _horner_step(p, x, c):
    """p * x + c: fused in float32 (constants rounded to float32 first), as XLA's polynomials; float64 ones
    are evaluated unfused here."""
    if x.dtype != float32:
        return p * x + c
    return fma(tnp.asarray(_as(p, float32)), x, _as(c, float32))


def _polynomial(x, coefficients):
    out = coefficients[0]
    for c in coefficients[1:]:
        out = _horner_step(out, x, c)
    return out


def _in_float32(f):
    """f computed in float32 for the 16-bit floats (XLA upcasts them), rounded back once."""
    def g(x):
        x = tnp.asarray(x)
        if x.dtype in HALF_FLOATS:
            return f(x.astype(float32)).astype(x.dtype)
        return f(x)
    g.__name__, g.__doc__ = f.__name__, f.__doc__
    return g


@_in_float32
def log1p(x):
    """log(1 + x) as XLA computes it."""
    x2 = x * x
    small = x + _horner_step(x2, np.asarray(-0.5, x.dtype), (x * x2) * (_polynomial(x, _LOG1P_NUM) /
                                                                          _polynomial(x, _LOG1P_DEN)))
    return tnp.where(tnp.abs(x) < math.sqrt(2) - 1, small, tnp.log(x + 1))


@_in_float32
def erf_inv(x):
    """The inverse of erf on (-1, 1), +-inf at +-1."""
    w = -log1p(-x * x)
    const = functools.partial(np.asarray, dtype=x.dtype)
    if x.dtype == float64:
        # three polynomials aligned at their leading coefficient; the shorter ones end earlier
        low, mid, high = _ERF_INV64
        lt_low, lt_mid = w < 6.25, w < 16
        w = tnp.where(lt_low, w - 3.125, tnp.sqrt(w) - tnp.where(lt_mid, const(3.25), const(5.0)))
        p = tnp.where(lt_low, const(low[0]), tnp.where(lt_mid, const(mid[0]), const(high[0])))
        for i in range(1, len(low)):
            c = tnp.where(lt_low, const(low[i]), const(mid[i])) if i < len(mid) else const(low[i])
            c = tnp.where(lt_mid, c, const(high[i])) if i < len(high) else c
            step = c + p * w
            p = step if i < len(high) else tnp.where(lt_mid if i < len(mid) else lt_low, step, p)
    else:
        below, above = _ERF_INV32
        lt = w < 5
        w = tnp.where(lt, w - 2.5, tnp.sqrt(w) - 3.0)
        p = tnp.where(lt, const(below[0]), const(above[0]))
        for c_below, c_above in zip(below[1:], above[1:]):
            p = _horner_step(p, w, tnp.where(lt, const(c_below), const(c_above)))
    return tnp.where(tnp.abs(x) == 1, x * np.inf, p * x)


@_in_float32
def erf(x):
    """The error function."""
    one = np.asarray(1, x.dtype)
    if x.dtype == float64:
        ax, z = tnp.abs(x), -x * x
        erfc = tnp.exp(z) * tnp.where(ax < 8, _polynomial(ax, _ERFC64_P) / _polynomial(ax, _ERFC64_Q),
                                      _polynomial(ax, _ERFC64_R) / _polynomial(ax, _ERFC64_S))
        erfc = tnp.where(z < -7.09782712893383996843e2, 0.0, erfc)
        central = x * _polynomial(x * x, _ERF64_T) / _polynomial(x * x, _ERF64_U)
        return tnp.where(ax < 1, central, tnp.where(x < 0, erfc - 1, 1 - erfc))
    x2 = x * x
    ratio = x * _polynomial(x2, _ERF32_NUM) / _polynomial(x2, _ERF32_DEN)
    return tnp.where(tnp.abs(x) >= _ERF32_SATURATES, tnp.where(x < 0, -one, one), ratio)


@_in_float32
def lgamma(x):
    """log |Gamma(x)| for x >= 1/2 (what the samplers need: no reflection)."""
    z = x - 1
    series = _LANCZOS[0]
    for i, c in enumerate(_LANCZOS[1:]):
        series = series + c / (z + (i + 1))
    t = z + (_LANCZOS_G + 0.5)
    log_t = math.log(_LANCZOS_G + 0.5) + log1p(z / (_LANCZOS_G + 0.5))
    return (math.log(2) + math.log(math.pi)) / 2 + (z + 0.5 - t / log_t) * log_t + tnp.log(series)
