"""The flappy task's probes: ``flap-input``, ``game-over``, ``restart``, ``score``; and how ``refresh-rate`` plays it.

Importing the package registers them with the browser engine (``checks/_tasks.py`` names it).
"""

from ..browser._registry import RefreshPlan, register_task
from ._probes import CHECK_IDS, FLAP_SCRIPT, LOAD_RUN, flappy_probes
from ._refresh import adapt_refresh, flappy_script

register_task("flappy", checks=CHECK_IDS, probes=flappy_probes, load_run=LOAD_RUN,
              refresh=RefreshPlan(FLAP_SCRIPT, script=flappy_script, adapt=adapt_refresh))
