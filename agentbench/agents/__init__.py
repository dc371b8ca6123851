"""Agents: the builtin tool loop, its tools and the session transcript."""

from ._builtin import SYSTEM_PROMPT, AgentLimits, AgentOutcome, BuiltinAgent
from ._tools import TOOL_NAMES, TOOL_SCHEMAS, ToolOutcome, execute, find_text_tool_calls
from ._transcript import Transcript

__all__ = [
    "SYSTEM_PROMPT",
    "TOOL_NAMES",
    "TOOL_SCHEMAS",
    "AgentLimits",
    "AgentOutcome",
    "BuiltinAgent",
    "ToolOutcome",
    "Transcript",
    "execute",
    "find_text_tool_calls",
]
