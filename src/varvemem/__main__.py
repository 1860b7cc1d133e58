"""``python -m varvemem``."""

from varvemem.cli import main

main()
