"""Server-side enforcement: the pre-receive hook, audit log and installation."""
