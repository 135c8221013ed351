"""git's own push tests as a tier of push-gate (`./dev compat`, docs/architecture.md)."""
