"""numpy.convolve and numpy.correlate on the conv_general_dilated primitive (one batch, one feature)."""
from ..core.trace import bind
from ..primitives import shapes as sh
from ..primitives.convolution import ConvDimensionNumbers, conv_general_dilated
from ._base import astype, aval, promote

_NCW = ConvDimensionNumbers((0, 1, 2), (0, 1, 2), (0, 1, 2))


def _conv(a, v, mode, name, flip, preferred_element_type):
    a, v = promote(a, v)
    if preferred_element_type is not None:
        a, v = astype(a, preferred_element_type), astype(v, preferred_element_type)
    if aval(a).ndim != 1 or aval(v).ndim != 1:
        raise ValueError(f"{name}: a and v must be 1-D, got shapes {aval(a).shape} and {aval(v).shape}")
    if aval(a).shape[0] == 0 or aval(v).shape[0] == 0:
        raise ValueError(f"{name}: a and v cannot be empty, got shapes {aval(a).shape} and {aval(v).shape}")
    reverse_out = False
    if aval(a).shape[0] < aval(v).shape[0]:        # NumPy slides the shorter one (correlate: reversed result)
        a, v = v, a
        reverse_out = not flip
    if flip:
        v = bind(sh.rev_p, v, dimensions=(0,))
    n = aval(v).shape[0]
    pads = {"valid": (0, 0), "same": (n // 2, n - n // 2 - 1), "full": (n - 1, n - 1)}
    if mode not in pads:
        raise ValueError(f"{name}: mode must be 'full', 'same' or 'valid', got {mode!r}")
    out = conv_general_dilated(*(bind(sh.reshape_p, x, new_sizes=(1, 1, aval(x).shape[0])) for x in (a, v)),
                               window_strides=(1,), padding=(pads[mode],), lhs_dilation=(1,), rhs_dilation=(1,),
                               dimension_numbers=_NCW, feature_group_count=1, batch_group_count=1, precision=None,
                               preferred_element_type=None)
    out = bind(sh.reshape_p, out, new_sizes=aval(out).shape[2:])
    return bind(sh.rev_p, out, dimensions=(0,)) if reverse_out else out


def convolve(a, v, mode="full", *, precision=None, preferred_element_type=None):
    """The discrete linear convolution of two 1-D arrays, as numpy.convolve (modes 'full', 'same', 'valid');
    the result has NumPy's dtype for the operands."""
    return _conv(a, v, mode, "convolve", True, preferred_element_type)


def correlate(a, v, mode="valid", *, precision=None, preferred_element_type=None):
    """The cross-correlation of two 1-D arrays, as numpy.correlate (modes 'valid', 'same', 'full')."""
    return _conv(a, v, mode, "correlate", False, preferred_element_type)

