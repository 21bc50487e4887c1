"""Op-table rows: functrace.numpy rows: reductions, products, shape ops, creation."""

from __future__ import annotations

from op_db import OpInfo

ROWS: list[OpInfo] = []
