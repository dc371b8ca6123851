"""The ball task's probes: ``motion``, ``bounds``, ``energy-loss``, ``ball-count``; and how ``refresh-rate`` plays it.

Importing the package registers them with the browser engine (``checks/_tasks.py`` names it).
"""

from ..browser._registry import RefreshPlan, register_task
from ._probes import CHECK_IDS, LOAD_RUN, ball_probes
from ._refresh import adapt_refresh, ball_script

# No fixed script: the balls' spawn the probes found (ball_script) is what refresh-rate plays.
register_task("ball", checks=CHECK_IDS, probes=ball_probes, load_run=LOAD_RUN,
              refresh=RefreshPlan((), script=ball_script, adapt=adapt_refresh))
