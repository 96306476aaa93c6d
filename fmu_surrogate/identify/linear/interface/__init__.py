"""The interface of an FMU to fit: its power pairs, by units, names or the data (docs/design.md §4)."""
