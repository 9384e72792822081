"""The small model whose gradient the README draws (`python docs/make_pictures.py`): a two-layer tanh network's
mean squared output, differentiated with respect to both weight matrices."""
import tracejit as tj
import tracejit.numpy as tnp


def loss(w1, w2, x):
    h = tnp.tanh(x @ w1)
    return tnp.mean((h @ w2) ** 2)


loss_grad = tj.grad(loss, argnums=(0, 1))
SHAPES = ("f32[4,8]", "f32[8,2]", "f32[16,4]")      # w1, w2, x
