"""Op-table rows: primitive-level rows for the shape, reduction and indexing primitives."""

from __future__ import annotations

from op_db import OpInfo

ROWS: list[OpInfo] = []
