"""Test helpers shared across test folders (import as ``helpers`` or ``tests.helpers``)."""

from .scripted import ScriptedServer, ScriptExhausted, text, tool_call

__all__ = ["ScriptExhausted", "ScriptedServer", "text", "tool_call"]
