"""Transformations from IR to IR: forward and reverse differentiation (ad), batching (vmap)."""
