"""threefry2x32: the Threefry-2x32 block cipher (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3",
SC 2011), 20 rounds, the hash under JAX's default PRNG (tracejit.random).

threefry2x32[output](k1, k2, c1, c2) enciphers the counter (c1, c2) under the key (k1, k2), elementwise over
uint32 operands of one shape (rank-0 ones broadcast). JAX's primitive returns the two words of the result; this
one returns a single array, so that it is an elementwise primitive that fuses with the code consuming its bits:
output="pair" packs both words into a uint64, the first word high (64-bit draws use it as it is, split takes it
apart), output="xor" is the uint32 xor of the two words (what 32-bit and narrower draws use; without a 64-bit
value in the loop, it vectorizes twice as wide). The lowering is the 20 rounds as scalar i32 code, rotations as
funnel shifts, which the loop vectorizer widens to whole registers. Not differentiable (integer outputs).
"""
import numpy as np

from ..backend.rules import Elementwise
from ..core.avals import uint32, uint64
from ..core.trace import Primitive
from .base import zero_jvp
from .elementwise_rules import elementwise_batch, elementwise_shape

ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))   # the rotation distances of even and odd groups of 4 rounds
PARITY = 0x1BD11BDA                                # the third key word is k1 ^ k2 ^ PARITY


def _schedule(k1, k2, c1, c2, add, rotate, xor, const):
    """The cipher written once for both the NumPy impl and the lowering: 5 groups of 4 rounds, the key
    injected before the first group and after each (with the group's number added to the second word)."""
    keys = (k1, k2, xor(xor(k1, k2), const(PARITY)))
    x0, x1 = add(c1, k1), add(c2, k2)
    for group in range(5):
        for r in ROTATIONS[group % 2]:
            x0 = add(x0, x1)
            x1 = xor(rotate(x1, r), x0)
        x0 = add(x0, keys[(group + 1) % 3])
        x1 = add(add(x1, keys[(group + 2) % 3]), const(group + 1))
    return x0, x1


OUTPUTS = {"pair": uint64, "xor": uint32}


def _shape(k1, k2, c1, c2, output):
    if any(a.dtype != uint32 for a in (k1, k2, c1, c2)):
        raise TypeError("threefry2x32: operands must be uint32, got "
                        f"{', '.join(a.str_short() for a in (k1, k2, c1, c2))}")
    if output not in OUTPUTS:
        raise ValueError(f"threefry2x32: output must be one of {sorted(OUTPUTS)}, got {output!r}")
    return elementwise_shape("threefry2x32", "u", out_dtype=OUTPUTS[output])(k1, k2, c1, c2).strip_weak()


def _impl(k1, k2, c1, c2, output):
    def rotate(x, r):
        return (x << np.uint32(r)) | (x >> np.uint32(32 - r))

    words = [np.asarray(w, uint32) for w in (k1, k2, c1, c2)]
    with np.errstate(over="ignore"):
        x0, x1 = _schedule(*words, add=np.add, rotate=rotate, xor=np.bitwise_xor, const=uint32.type)
    if output == "xor":
        return np.asarray(x0 ^ x1)
    return np.asarray((x0.astype(uint64) << np.uint64(32)) | x1.astype(uint64))


def _lower(b, k1, k2, c1, c2, output):
    def add(x, y):
        return b(f"add i32 {x}, {y}")

    def xor(x, y):
        return b(f"xor i32 {x}, {y}")

    def rotate(x, r):
        return b(f"call i32 @llvm.fshl.i32(i32 {x}, i32 {x}, i32 {r})")

    x0, x1 = _schedule(k1, k2, c1, c2, add=add, rotate=rotate, xor=xor, const=lambda v: str(np.int32(np.uint32(v))))
    if output == "xor":
        return xor(x0, x1)
    high = b(f"shl i64 {b(f'zext i32 {x0} to i64')}, 32")
    return b(f"or i64 {high}, {b(f'zext i32 {x1} to i64')}")


threefry2x32_p = Primitive("threefry2x32", _shape, _impl, elementwise=True, costly=True,
                           lower=Elementwise(_lower, cheap=False))
threefry2x32_p.set(jvp=zero_jvp(threefry2x32_p), batch=elementwise_batch(threefry2x32_p))
