"""What a coupled run yields: its rows as the engine steps (``recording``), the energy of its
bonds in physical units and their report (``energy``), and its plot (``plotting``)."""
