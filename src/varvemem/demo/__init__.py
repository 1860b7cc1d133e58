"""The seed's story (SPEC DEMO-1), run offline over the public API: see :func:`run_demo`."""

from .story import run_demo

__all__ = ["run_demo"]
