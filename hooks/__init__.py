"""Client hooks for the pre-commit framework."""
