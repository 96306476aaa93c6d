"""What an FMU is: its archive checked before unpacking, its declared variables, opening it, and compiling C sources into one."""
