"""``python -m dragoman.cli``: how the process scaler starts worker processes."""

from dragoman.cli import main

main()
