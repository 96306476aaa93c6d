"""Option values shared by several commands."""

from __future__ import annotations

__all__ = ["comma_list"]


def comma_list(text: str | None) -> list[str]:
    """``"a, b,c"`` -> ``["a", "b", "c"]``; ``None`` or ``""`` -> ``[]`` (empty items are kept).

    Parameters
    ----------
    text : str or None
        A comma-separated option value.

    Returns
    -------
    list of str
        The stripped items.
    """
    return [s.strip() for s in text.split(",")] if text else []
