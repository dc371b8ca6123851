"""Process limits agentbench raises for itself.

Every sandbox's model gateway holds connections, every engine client a pool, every checker a
pipe: with the usual soft limit of 1024 open files, one cell's flood of connections (capped per
gateway, but the run has many cells) or a wide run could exhaust them and fail other cells. The
soft limit is raised to the hard one once per process; nothing needs privileges.
"""

from __future__ import annotations

import resource

import structlog

__all__ = ["raise_fd_limit"]


def raise_fd_limit() -> int:
    """Raise RLIMIT_NOFILE's soft limit to its hard limit; returns the soft limit now in force."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY or soft == hard:
        return soft
    target = hard if hard != resource.RLIM_INFINITY else max(soft, 1 << 20)
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    except (ValueError, OSError) as exc:  # e.g. a hard limit above the kernel's nr_open
        structlog.get_logger().debug("limits.nofile_unchanged", soft=soft, hard=hard, error=str(exc))
        return soft
    return target
