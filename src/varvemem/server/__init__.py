"""The HTTP service: ``create_app()`` builds the FastAPI app that ``varvemem serve`` runs.

Needs the ``server`` extra (FastAPI, uvicorn, prometheus-client, fastapi-offline).
"""

from __future__ import annotations

from .app import create_app

__all__ = ["create_app"]
