"""Op-table rows: (filled in below)."""

from __future__ import annotations

from op_db import OpInfo

ROWS: list[OpInfo] = []
