"""Which module holds a task's browser probes: the one place that names the task packages.

The browser engine (``checks/browser/``) knows no task: it is handed a module name, imports it,
and the module registers the task's probes (``browser.register_task``). This resolver gives that
name on the host (``_run.browser_checks``) and is sent with each request to the checker
container's worker, which has no installed metadata to resolve it from.
"""

from __future__ import annotations

__all__ = ["BUILTIN_PROBES", "probe_module"]

# Built-in task id -> the package whose import registers its probes.
BUILTIN_PROBES: dict[str, str] = {
    "flappy": "agentbench.checks.flappy",
    "ball": "agentbench.checks.ball",
    "todo": "agentbench.checks.todo",
    "converter": "agentbench.checks.converter",
}


def probe_module(task_id: str) -> str | None:
    """The module to import for ``task_id``'s probes; None: the task has none (only load and runtime-errors run)."""
    return BUILTIN_PROBES.get(task_id)
