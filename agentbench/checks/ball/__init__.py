"""The ball task's probes: ``motion``, ``bounds``, ``energy-loss``, ``ball-count``; refresh-rate's script and adapt.

Importing the package registers them with the browser engine (``browser/_registry.py``).
"""

from . import _probes, _refresh  # noqa: F401 - importing registers them
