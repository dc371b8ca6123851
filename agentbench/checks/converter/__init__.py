"""The unit converter's probes: ``length``, ``weight``, ``temperature``, ``live-update``, ``bad-input``.

Importing the package registers them with the browser engine (``browser/_registry.py``).
"""

from . import _probes  # noqa: F401 - importing registers them
