"""The seed's story's data (SPEC DEMO-1): the memories and questions that
:mod:`varvemem.cli.story` tells offline over the public API."""
