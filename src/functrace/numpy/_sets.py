"""functrace.numpy: (filled in below)."""

from __future__ import annotations

__all__: list[str] = []
