"""The push-gate benchmark: the hook's cost side by side with native git.

Run it with `./dev bench` or `python -m bench` (see bench/README.md).
"""
