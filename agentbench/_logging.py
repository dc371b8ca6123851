"""Structured logs (structlog) to stderr; quiet by default so progress and tables stay readable."""

from __future__ import annotations

import logging
import os
import sys

import structlog

__all__ = ["configure_logging"]


def configure_logging(verbose: int = 0, *, json_logs: bool | None = None) -> None:
    level = logging.WARNING - 10 * min(verbose, 2)
    if json_logs is None:
        json_logs = os.environ.get("AGENTBENCH_LOG_JSON", "") not in ("", "0")
    renderer = structlog.processors.JSONRenderer() if json_logs else structlog.dev.ConsoleRenderer(colors=False)
    structlog.configure(
        processors=[
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso"),
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(level),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=False,
    )
