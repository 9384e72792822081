"""Graph optimisation passes: functions from ClosedIR to ClosedIR, and `optimize`, their pipeline.

Passes never name a primitive; they read what the primitive declares (tracejit.core.trace.FLAGS and its
`simplify` rule). Every pass is idempotent, keeps the IR's inputs, and recurses into ClosedIR params.
"""
from ._sweep import fingerprint
from .cse import cse
from .dce import dce
from .fold import MAX_FOLD_ELEMENTS, fold
from .simplify import simplify

PIPELINE = (fold, simplify, cse, dce)
MAX_ROUNDS = 10


def optimize(closed):
    """Run the passes in turn until a round changes nothing (at most MAX_ROUNDS rounds)."""
    key = fingerprint(closed.ir)
    for _ in range(MAX_ROUNDS):
        for run in PIPELINE:
            closed = run(closed)
        key, previous = fingerprint(closed.ir), key
        if key == previous:
            break
    return closed


__all__ = ["MAX_FOLD_ELEMENTS", "MAX_ROUNDS", "PIPELINE", "cse", "dce", "fold", "optimize", "simplify"]
