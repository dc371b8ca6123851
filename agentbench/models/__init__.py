"""Model endpoints: the OpenAI-compatible chat client, a loopback server, endpoint preflight.

``ChatClient`` is the only way agentbench talks to a model; ``OpenAICompatServer`` is a real
HTTP server on 127.0.0.1 that the demo replay models (``DemoServer``) and the tests answer through.
"""

from ._client import RETRYABLE_STATUSES, ChatClient
from ._demo import DemoServer  # the offline demo replay models (agents engineer)
from ._preflight import PING_TOOL, PreflightItem, preflight
from ._server import OpenAICompatServer, Reply
from ._types import ChatResult, RequestStats, ToolCall, Usage

__all__ = [
    "PING_TOOL",
    "RETRYABLE_STATUSES",
    "ChatClient",
    "ChatResult",
    "DemoServer",
    "OpenAICompatServer",
    "PreflightItem",
    "Reply",
    "RequestStats",
    "ToolCall",
    "Usage",
    "preflight",
]
