"""What every section of the settings shares: :class:`Section`, the base class that refuses
unknown keys and validates assignments."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Section(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)
