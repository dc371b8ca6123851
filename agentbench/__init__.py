"""agentbench: which model writes software that actually works."""

__version__ = "0.1.0"
__all__ = ["__version__"]
