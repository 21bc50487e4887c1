"""Op-table rows: functrace.numpy indexing rows: x[idx] and x.at[idx] updates."""

from __future__ import annotations

from op_db import OpInfo

ROWS: list[OpInfo] = []
