"""Where the checkout is: its docs, notebooks and the jar cache `make setup` fills."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
