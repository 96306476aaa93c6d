"""One module per ``fmu-surrogate`` command, each with ``HELP``, ``add_<command>_arguments`` and
``<command>_command(args) -> exit status``; :mod:`fmu_surrogate.cli.main` dispatches to them."""
