"""matplotlib on first use: the Agg backend unless one was chosen, and one way to save figures."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

DPI = 110


def pyplot() -> Any:
    """``matplotlib.pyplot``, with the non-interactive Agg backend unless a backend is set."""
    import matplotlib

    if "matplotlib.pyplot" not in sys.modules:
        matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def finish(fig: Any, path: str | Path | None) -> Any:
    """Tight layout; save to ``path`` (PNG) and close when given; return the figure."""
    fig.tight_layout()
    if path is not None:
        fig.savefig(path, dpi=DPI)
        pyplot().close(fig)
    return fig
