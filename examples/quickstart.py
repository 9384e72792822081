"""Trace a function to IR, print it, and run it compiled."""
import numpy as np

import tracejit as tj
import tracejit.numpy as tnp


def predict(params, x):
    return tnp.tanh(x @ params["w"] + params["b"])


params = {"w": np.full((3, 2), 0.5, np.float32), "b": np.zeros(2, np.float32)}
x = np.arange(12, dtype=np.float32).reshape(4, 3) / 10

print(tj.make_ir(predict)(params, x))
print(tj.jit(predict)(params, x))
