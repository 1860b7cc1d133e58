"""Language knowledge as data: word tables per language that the engines read.

A table is one row per word or phrase; adding a word to a language is one line in one table.
The engines import from here; nothing here imports an engine.
"""
