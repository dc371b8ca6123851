"""Agents: the builtin tool loop, its tools, the session transcript, and external agents.

External agents (opencode, aider, crush) run in their own sandbox images behind the model
gateway (``_gateway.py``), which adds the API key outside the sandbox and records the traffic.
"""

from ._builtin import SYSTEM_PROMPT, AgentLimits, AgentOutcome, BuiltinAgent
from ._external import AgentCrashed, ExternalSession
from ._gateway import GatewayRecord, ModelGateway
from ._images import AgentImage, ensure_agent_image
from ._registry import AgentPlan, ExternalAgent, agent, agent_names, get_agent
from ._tools import TOOL_NAMES, TOOL_SCHEMAS, ToolOutcome, execute, find_text_tool_calls
from ._transcript import Transcript

__all__ = [
    "SYSTEM_PROMPT",
    "AgentCrashed",
    "AgentImage",
    "AgentPlan",
    "ExternalAgent",
    "ExternalSession",
    "GatewayRecord",
    "ModelGateway",
    "agent",
    "agent_names",
    "ensure_agent_image",
    "get_agent",
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
