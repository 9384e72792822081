"""jax.nn.dot_product_attention: softmax(Q K^T * scale + bias) V per head, for multi-head, grouped-query and
multi-query attention, with JAX's masking and numerics. Masked logits become a large negative number rather than
-inf, so a fully masked row averages the values instead of giving NaN; the softmax runs in float32 whatever the
input dtype; heads are grouped as JAX groups them (query head n uses key/value head n // (N // K))."""
import operator

import numpy as np

from .. import numpy as tnp
from ..numpy._base import stop_gradient
from . import logsumexp, softmax


def _as_4d(x, name):
    """x with leading axes of size 1 up to rank 4 (JAX accepts (T, N, H) for (1, T, N, H))."""
    x = tnp.asarray(x)
    if x.ndim > 4:
        raise ValueError(f"dot_product_attention: {name} has shape {tnp.shape(x)}; expected at most 4 dimensions")
    return tnp.reshape(x, (1,) * (4 - x.ndim) + tnp.shape(x))


def _check(x, name, shape, dtype=None):
    """A ValueError naming the argument when x's rank, sizes (-1: any) or dtype are not the expected ones."""
    if x is None:
        return
    got = tnp.shape(x)
    if len(got) != len(shape) or any(want not in (-1, n) for want, n in zip(shape, got)):
        raise ValueError(f"dot_product_attention: {name} has shape {got}; expected {tuple(shape)} (-1: any size)")
    if dtype is not None and np.dtype(x.dtype) != np.dtype(dtype):
        raise ValueError(f"dot_product_attention: {name} has dtype {np.dtype(x.dtype)}; expected {np.dtype(dtype)}")


def _static_mask(T, S, is_causal, local_window_size):
    """The (T, S) boolean mask of the causal and local-window constraints, or None: static, so a constant."""
    if not is_causal and local_window_size is None:
        return None
    query_pos, key_pos = np.arange(T)[:, None], np.arange(S)[None, :]
    mask = np.ones((T, S), bool)
    if is_causal:
        mask &= key_pos <= query_pos
    if local_window_size is not None:
        left, right = local_window_size
        mask &= (query_pos <= key_pos + left) & (query_pos >= key_pos - right)
    return mask


def _window(local_window_size):
    if local_window_size is None:
        return None
    pair = (local_window_size,) * 2 if not isinstance(local_window_size, (tuple, list)) else local_window_size
    if len(pair) != 2:
        raise ValueError(f"dot_product_attention: local_window_size={local_window_size!r}; expected an int or a "
                         "(left, right) pair")
    return tuple(operator.index(n) for n in pair)


def _grouped(t, B, N, T, S, K):
    """A bias or mask broadcastable to (B, N, T, S), as (B, K, G, T, S) to match the grouped logits."""
    return tnp.reshape(tnp.broadcast_to(t, (B, N, T, S)), (B, K, N // K, T, S))


def dot_product_attention(query, key, value, bias=None, mask=None, *, scale=None, is_causal=False,
                          query_seq_lengths=None, key_value_seq_lengths=None, local_window_size=None,
                          implementation=None, return_residual=False):
    """Scaled dot-product attention (jax.nn.dot_product_attention, the 'xla' implementation).

    query (B, T, N, H), key and value (B, S, K, H) with N a multiple of K (or all without B); bias and mask
    broadcastable to (B, N, T, S), mask boolean (True: attend); scale defaults to 1/sqrt(H); is_causal keeps
    key positions <= the query position; local_window_size=(left, right) keeps keys within that window;
    query_seq_lengths / key_value_seq_lengths (int32, (B,)) mask the padding (padded query rows give 0). With
    return_residual, also the logsumexp of each row's logits, (B, T, N), gradient-stopped as in JAX."""
    if implementation not in (None, "xla"):
        raise ValueError(f"dot_product_attention: implementation={implementation!r}; tracejit has only 'xla' "
                         "(the default)")
    out_shape = tnp.shape(query)
    query, key, value = _as_4d(query, "query"), _as_4d(key, "key"), _as_4d(value, "value")
    bias = None if bias is None else _as_4d(bias, "bias")
    mask = None if mask is None else _as_4d(mask, "mask")
    q_len = None if query_seq_lengths is None else tnp.asarray(query_seq_lengths)
    kv_len = None if key_value_seq_lengths is None else tnp.asarray(key_value_seq_lengths)
    B, S, K, H = tnp.shape(key)
    _check(value, "value", (B, S, K, H), key.dtype)
    _check(query, "query", (B, -1, -1, H), key.dtype)
    _check(mask, "mask", (-1,) * 4, np.bool_)
    _check(q_len, "query_seq_lengths", (B,), np.int32)
    _check(kv_len, "key_value_seq_lengths", (B,), np.int32)
    T, N = tnp.shape(query)[1:3]
    if N % K:
        raise ValueError(f"dot_product_attention: query has {N} heads, key and value {K}; the query heads must be a "
                         "multiple of the key/value heads")
    window = _window(local_window_size)
    scale = 1.0 / np.sqrt(H) if scale is None else scale

    logits_dtype = tnp.promote_types(query.dtype, np.float32)
    grouped_query = tnp.reshape(query, (B, T, K, N // K, H)).astype(logits_dtype)
    logits = tnp.einsum("btkgh,bskh->bkgts", grouped_query, key.astype(logits_dtype))
    logits = logits * tnp.asarray(scale, dtype=logits_dtype)
    if bias is not None:
        logits = (logits + _grouped(bias, B, N, T, S, K)).astype(logits_dtype)
    keep = _static_mask(T, S, is_causal, window)
    if mask is not None:
        keep = _grouped(mask, B, N, T, S, K) if keep is None else _grouped(mask, B, N, T, S, K) & keep
    if q_len is not None:
        rows = (tnp.arange(T, dtype=np.int32)[None, :] < q_len[:, None])[:, None, None, :, None]
        keep = rows if keep is None else keep & rows
    if kv_len is not None:
        columns = (tnp.arange(S, dtype=np.int32)[None, :] < kv_len[:, None])[:, None, None, None, :]
        keep = columns if keep is None else keep & columns
    if keep is not None:
        large_negative = -0.7 * min(float(np.finfo(logits_dtype).max), float(np.finfo(np.float32).max))
        logits = tnp.where(keep, logits, tnp.asarray(large_negative, dtype=logits_dtype))

    logits = logits.astype(np.float32)
    probs = softmax(logits, axis=-1).astype(key.dtype)
    encoded = tnp.einsum("bkgts,bskh->btkgh", probs, value)
    if q_len is not None:
        encoded = encoded * (tnp.arange(T, dtype=np.int32)[None, :] < q_len[:, None]).astype(encoded.dtype)[
            :, :, None, None, None]
    encoded = tnp.reshape(encoded, out_shape)
    if not return_residual:
        return encoded
    residual = tnp.transpose(logsumexp(logits, axis=-1).astype(key.dtype), (0, 3, 1, 2))
    return encoded, stop_gradient(tnp.reshape(residual, out_shape[:-1]))

