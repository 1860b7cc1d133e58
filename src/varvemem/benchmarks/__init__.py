"""Retrieval benchmarks on public data sets (LoCoMo, LongMemEval), run by ``varvemem bench``.

The data sets are read from where the user keeps them; nothing is downloaded or copied.
"""
