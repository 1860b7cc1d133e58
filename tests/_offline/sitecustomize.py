"""Run by every Python process the test suite starts (``tests/conftest.py`` puts this folder
first on ``PYTHONPATH``): refuses connections and name lookups to hosts other than this
machine (see ``varvemem_offline_guard``), then runs any other ``sitecustomize`` this one shadows.
"""

import importlib.machinery
import importlib.util
import os
import sys

import varvemem_offline_guard

varvemem_offline_guard.install()

_here = os.path.dirname(os.path.abspath(__file__))
_rest = [p for p in sys.path if os.path.abspath(p or os.curdir) != _here]
_other = importlib.machinery.PathFinder.find_spec("sitecustomize", _rest)
if _other is not None and _other.loader is not None:
    _module = importlib.util.module_from_spec(_other)
    sys.modules["sitecustomize"] = _module
    _other.loader.exec_module(_module)
