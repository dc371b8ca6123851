"""The to-do task's probes: ``add``, ``complete``, ``delete``, ``filter``, ``persistence``, ``escaping``,
``empty-input``.

Importing the package registers them with the browser engine (``browser/_registry.py``).
"""

from . import _probes  # noqa: F401 - importing registers them
