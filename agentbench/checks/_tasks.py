"""Which module holds a task's browser probes: the one place that names the task packages.

The browser engine (``checks/browser/``) knows no task: it is handed a module name, imports it,
and the module registers the task's probes (``browser.register_task``). This resolver gives that
name on the host (``_run.browser_checks``) and is sent with each request to the checker
container's worker, which has no installed metadata to resolve it from.

Built-in tasks resolve from ``BUILTIN_PROBES`` alone; any other id is looked up among the installed
plug-in tasks (entry points ``agentbench.tasks``, see ``agentbench/tasks.py``), whose probe
packages ``plugin_probe_modules`` names for the checker image.
"""

from __future__ import annotations

import importlib.util

import structlog

from ..errors import TaskError
from ..tasks import installed_plugins, plugin_for

__all__ = ["BUILTIN_PROBES", "plugin_probe_modules", "probe_module"]

log = structlog.get_logger()

# Built-in task id -> the package whose import registers its probes.
BUILTIN_PROBES: dict[str, str] = {
    "flappy": "agentbench.checks.flappy",
    "ball": "agentbench.checks.ball",
    "todo": "agentbench.checks.todo",
    "converter": "agentbench.checks.converter",
}


def probe_module(task_id: str) -> str | None:
    """The module to import for ``task_id``'s probes: a built-in's package, else an installed plug-in's
    ``TaskPlugin.probes``; None: the task has none (only load and runtime-errors run)."""
    if task_id in BUILTIN_PROBES:
        return BUILTIN_PROBES[task_id]
    plugin = plugin_for(task_id)
    return plugin.probes if plugin is not None else None


def plugin_probe_modules() -> list[str]:
    """The probe modules of the installed plug-in tasks, for the checker image to carry.

    A plug-in that does not load, or whose probe package is not on this host, is left out with a
    warning: its own task is refused when asked for (``tasks.load_task``), and no other task loses
    its checks over it.
    """
    def skip(exc: TaskError) -> None:
        log.warning("plugin.left_out_of_checker", error=str(exc))

    modules = []
    for plugin in installed_plugins(on_error=skip):
        top = plugin.probes.split(".")[0]
        try:
            found = importlib.util.find_spec(top) is not None
        except (ImportError, ValueError):
            found = False
        if found:
            modules.append(plugin.probes)
        else:
            log.warning("plugin.left_out_of_checker", task=plugin.task_id, error=f"no package '{top}' on this host")
    return modules
