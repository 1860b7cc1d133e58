"""The release, in a module of its own: what reads it imports nothing else of the package."""

__version__ = "0.1.0"
