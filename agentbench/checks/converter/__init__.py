"""The unit converter's probes: ``length``, ``weight``, ``temperature``, ``live-update``, ``bad-input``.

Importing the package registers them with the browser engine (``checks/_tasks.py`` names it).
"""

from ..browser._registry import register_task
from ._probes import CHECK_IDS, probe_converter

register_task("converter", checks=CHECK_IDS, probes=probe_converter)
