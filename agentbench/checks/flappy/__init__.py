"""The flappy task's probes: ``flap-input``, ``game-over``, ``restart``, ``score``; refresh-rate's script and adapt.

Importing the package registers them with the browser engine (``browser/_registry.py``).
"""

from . import _probes, _refresh  # noqa: F401 - importing registers them
