"""The to-do task's probes: ``add``, ``complete``, ``delete``, ``filter``, ``persistence``, ``escaping``,
``empty-input``.

Importing the package registers them with the browser engine (``checks/_tasks.py`` names it).
"""

from ..browser._registry import register_task
from ._probes import CHECK_IDS, probe_todo

register_task("todo", checks=CHECK_IDS, probes=probe_todo)
