"""The counter task as an agentbench plug-in: its data folder and the module holding its probes.

agentbench finds ``task`` through the entry point ``counter`` of the group ``agentbench.tasks``
(see pyproject.toml). ``data/`` holds task.toml, prompt.md, checklist.toml and reviewer.toml;
``probes`` is imported in the checker container, where it registers the task's probes.
"""

from pathlib import Path

from agentbench.tasks import TaskPlugin

task = TaskPlugin(data=Path(__file__).resolve().parent / "data", probes="agentbench_counter.probes")
