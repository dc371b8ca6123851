"""Sandboxes: where untrusted agent commands and artefacts run."""

from ._base import ExecResult, Sandbox, SandboxLimits
from ._docker import DockerSandbox
from ._health import ended_from_inside
from ._image import (
    BASE_TAG,
    IMAGE_TAG,
    build_image,
    connect_docker,
    ensure_image,
    image_exists,
    sweep_containers,
)
from ._lazy import LazySandbox
from ._paths import workspace_path

__all__ = [
    "BASE_TAG",
    "IMAGE_TAG",
    "DockerSandbox",
    "ExecResult",
    "LazySandbox",
    "Sandbox",
    "SandboxLimits",
    "build_image",
    "connect_docker",
    "ended_from_inside",
    "ensure_image",
    "image_exists",
    "sweep_containers",
    "workspace_path",
]
