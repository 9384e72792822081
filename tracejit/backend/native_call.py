"""The Python-callable fast entry: a builtin function object made around generated code
(fast_entry.emit_py_entry writes it), so that a call of compiled code costs one C-level call of
`f(args)` (about 40 ns) instead of a ctypes call (300-350 ns) plus np.empty for each output (150 ns).

The code it runs reads CPython's and numpy's object layouts and calls C API functions, named by
symbol (`SYMBOLS`, name -> address). All of it is checked here at import: the array layout
(runtime.ARRAY_LAYOUT_OK), a tuple's length and items, a float's and a complex's value at the offsets the code reads, a
numpy scalar's value, numpy's C API table (its PyArray_Type slot must be np.ndarray, and
PyArray_NewFromDescr must make the array it is asked for and take exactly the reference it steals).
`PY_ENTRY_OK` says whether everything held; when it is False no such entry is written and calls take
the ctypes fast path.

The function is `PyObject *pyfast(PyObject *self, PyObject *args)` (METH_O): args is the tuple of the
flat leaves; it returns the output (one output), a tuple of them, the MISS sentinel when an argument
does not fit (the caller takes the general path), or NULL with a Python error set (no memory).
`self` is the tuple (hit counter, int bounds, arena cache, method record, code, generic_entry.py's descriptor
or None): the generated code counts
its hits in the first (an int64[1] array), reads in the second the range a Python int must be in at each
position (int64[2 n]: the compiled dtype's range and those of NumPy 2's overflow checks), keeps in the third
(an object[1] array, None when empty) the arena array of its last call when the arena is too large for the
stack (taken and put back with the GIL held; a call that finds it empty makes one), and the rest keep the
machine code and its method record alive as long as the function.
"""
import ctypes
import sys
import sysconfig

import numpy as np

from . import runtime

METH_O = 0x0008
TUPLE_SIZE = 16        # offset of a tuple's length (PyTupleObject: PyObject_VAR_HEAD, ob_item[])
TUPLE_ITEMS = 24       # offset of its first item
SCALAR_VALUE = 16      # offset of a float's double, a complex's two, a numpy scalar's value (after PyObject_HEAD)
NEW_FROM_DESCR = 94    # PyArray_NewFromDescr's slot in numpy's C API table (numpy/__multiarray_api.h)
ARRAY_TYPE = 2         # PyArray_Type's slot

_api = ctypes.pythonapi


class _MethodDef(ctypes.Structure):
    _fields_ = [("ml_name", ctypes.c_char_p), ("ml_meth", ctypes.c_void_p), ("ml_flags", ctypes.c_int),
                ("ml_doc", ctypes.c_char_p)]


def _numpy_api_table():
    capsule = np._core._multiarray_umath._ARRAY_API
    get = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.py_object, ctypes.c_char_p)(("PyCapsule_GetPointer", _api))
    table = get(capsule, None)
    return (ctypes.c_void_p * 300).from_address(table)


def _new_from_descr_holds(address, incref):
    """Whether the function at address behaves as PyArray_NewFromDescr (type, descr, nd, dims, strides, data,
    flags, obj): a fresh C-contiguous writeable array of that shape and dtype, its descr reference stolen."""
    new = ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.c_void_p, ctypes.py_object, ctypes.c_int,
                            ctypes.POINTER(ctypes.c_ssize_t), ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int,
                            ctypes.c_void_p)(address)
    dtype = np.dtype(np.float32)
    dims = (ctypes.c_ssize_t * 2)(3, 5)
    before = sys.getrefcount(dtype)
    incref(dtype)
    a = new(id(np.ndarray), dtype, 2, dims, None, None, 0, None)
    ok = (type(a) is np.ndarray and a.shape == (3, 5) and a.dtype == dtype and a.flags.c_contiguous
          and a.flags.writeable and a.flags.owndata)
    del a
    return ok and sys.getrefcount(dtype) == before


def _verify():
    """The symbols the generated code calls, or None when a layout or function is not the expected one."""
    if (not runtime.ARRAY_LAYOUT_OK or sys.implementation.name != "cpython"
            or sysconfig.get_config_var("Py_GIL_DISABLED")):
        return None
    try:
        t = (object(), 1.5)
        words = ctypes.c_void_p * 2
        if (list(words.from_address(id(t) + TUPLE_ITEMS)) != [id(t[0]), id(t[1])]
                or ctypes.c_ssize_t.from_address(id(t) + TUPLE_SIZE).value != 2):
            return None
        z = complex(2.5, -4.0)
        if (ctypes.c_double.from_address(id(t[1]) + SCALAR_VALUE).value != 1.5
                or list((ctypes.c_double * 2).from_address(id(z) + SCALAR_VALUE)) != [2.5, -4.0]):
            return None
        table = _numpy_api_table()
        if table[ARRAY_TYPE] != id(np.ndarray):
            return None
        names = ["Py_IncRef", "Py_DecRef", "PyLong_AsLongLongAndOverflow", "PyEval_SaveThread",
                 "PyEval_RestoreThread", "PyTuple_New"]
        symbols = {f"tj_{n}": ctypes.cast(getattr(_api, n), ctypes.c_void_p).value for n in names}
        incref = ctypes.PYFUNCTYPE(None, ctypes.py_object)(symbols["tj_Py_IncRef"])
        if not _new_from_descr_holds(table[NEW_FROM_DESCR], incref):
            return None
        return {**symbols, "tj_PyArray_NewFromDescr": table[NEW_FROM_DESCR]}
    except Exception:  # noqa: BLE001 -- any surprise means: do not write such entries
        return None


SYMBOLS = _verify()
PY_ENTRY_OK = SYMBOLS is not None


def scalar_layout_holds(dtype):
    """Whether a numpy scalar of dtype holds its value at SCALAR_VALUE (what the entry reads)."""
    try:
        x = dtype.type(3)
        return (dtype.kind in "biufc" and np.asarray(x).dtype == dtype
                and ctypes.string_at(id(x) + SCALAR_VALUE, dtype.itemsize) == np.asarray(x).tobytes())
    except Exception:  # noqa: BLE001 -- a type whose scalars are not plain values: arrays only
        return False


def int_bounds(dtypes_per_input):
    """The int64[2 n] bounds array of `self`: per input, the range a Python int there must be in (of the
    int dtypes given for it; floats: |x| <= 2**53, where every int converts exactly)."""
    bounds = np.empty(2 * len(dtypes_per_input), np.int64)
    for i, dtypes in enumerate(dtypes_per_input):
        lo, hi = -(1 << 63), (1 << 63) - 1
        for d in dtypes:
            if d.kind in "iu":
                lo, hi = max(lo, int(np.iinfo(d).min)), min(hi, int(np.iinfo(d).max))
            elif d.kind in "fc":
                lo, hi = max(lo, -(1 << 53)), min(hi, 1 << 53)
        bounds[2 * i:2 * i + 2] = lo, hi
    return bounds


def py_function(address, counter, bounds, code, descriptor=None):
    """The builtin function running the entry at address (self: see the module's docstring; descriptor:
    generic_entry.py's, its sixth item)."""
    method = _MethodDef(b"tracejit_fast", address, METH_O, None)
    new = ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.c_void_p, ctypes.py_object, ctypes.c_void_p)(
        ("PyCFunction_NewEx", _api))
    return new(ctypes.addressof(method), (counter, bounds, np.full(1, None, object), method, code, descriptor),
               None)
