"""Graph optimisation passes: functions from ClosedIR to ClosedIR, and `optimize`, their pipeline.

Passes never name a primitive; they read what the primitive declares (tracejit.core.trace.FLAGS and its
`simplify` rule). Every pass is idempotent, keeps the IR's inputs, and recurses into ClosedIR params.
"""
from .cse import cse
from .dce import dce
from .fold import MAX_FOLD_ELEMENTS, fold
from .inline import inline
from .simplify import simplify

PIPELINE = (inline, fold, simplify, cse, dce)
MAX_ROUNDS = 10


def optimize(closed):
    """Run the passes in turn until each has found nothing to do since the last change (at most
    MAX_ROUNDS rounds). A pass returns its input object when it changes nothing, and is idempotent, so
    the one that made the last change need not run again: on an IR that no pass changes, each runs once."""
    clean = 0   # passes in a row that have seen the current IR and left it as it is
    for step in range(MAX_ROUNDS * len(PIPELINE)):
        changed = PIPELINE[step % len(PIPELINE)](closed)
        clean = clean + 1 if changed is closed else 1
        closed = changed
        if clean == len(PIPELINE):
            break
    return closed


__all__ = ["MAX_FOLD_ELEMENTS", "MAX_ROUNDS", "PIPELINE", "cse", "dce", "fold", "inline", "optimize",
           "simplify"]
