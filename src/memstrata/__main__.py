"""``python -m memstrata``."""

from memstrata.cli import main

main()
