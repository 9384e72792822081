"""Small libraries written on tracejit's public API, as jax.example_libraries: examples of the core API, not a
framework."""
