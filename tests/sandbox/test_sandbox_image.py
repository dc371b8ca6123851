"""The sandbox image: mirror discovery, and a real offline-capable build."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from agentbench.errors import ImageMissing
from agentbench.sandbox import IMAGE_TAG, build_image, ensure_image, image_exists
from agentbench.sandbox._image import DEFAULT_MIRROR, _default_base, apt_mirror, dockerfile_dir
from agentbench.sandbox._users import SANDBOX_UID


def test_apt_mirror_reads_deb822_sources(tmp_path: Path):
    (tmp_path / "sources.list.d").mkdir()
    (tmp_path / "sources.list.d" / "debian.sources").write_text(
        "Types: deb\nURIs: http://security.example/debian-security\nSuites: bookworm-security\n\n"
        "Types: deb\n# a comment\nURIs: http://mirror.example/debian\nSuites: bookworm bookworm-updates\n"
        "Components: main\n"
    )
    assert apt_mirror(tmp_path) == "http://mirror.example/debian"


def test_apt_mirror_reads_one_line_sources_and_falls_back(tmp_path: Path):
    (tmp_path / "sources.list.d").mkdir()
    assert apt_mirror(tmp_path) == DEFAULT_MIRROR
    (tmp_path / "sources.list").write_text(
        "deb http://other.example/debian-security bookworm-security main\n"
        "deb [signed-by=/k.gpg] http://one.example/debian bookworm main\n"
    )
    assert apt_mirror(tmp_path) == "http://one.example/debian"


def test_dockerfile_default_base_is_debian_slim():
    dockerfile = dockerfile_dir() / "Dockerfile"
    assert _default_base(dockerfile) == "debian:bookworm-slim"
    text = dockerfile.read_text()
    assert "USER agent" in text and "WORKDIR /workspace" in text


@pytest.mark.docker
def test_ensure_image_names_the_build_command(docker_client):
    with pytest.raises(ImageMissing, match="agentbench sandbox build"):
        ensure_image(docker_client, tag="agentbench/missing:nope")


@pytest.mark.docker
def test_build_image_produces_a_working_image(docker_client, sandbox_image):
    """The real build path (pull, else the bootstrapped base), to a throwaway tag."""
    tag = f"agentbench/web:test-{uuid.uuid4().hex[:8]}"
    messages: list[str] = []
    try:
        assert build_image(docker_client, tag=tag, log=messages.append) == tag
        assert image_exists(docker_client, tag)
        config = docker_client.images.get(tag).attrs["Config"]
        assert config["User"] == "agent" and config["WorkingDir"] == "/workspace"
        out = docker_client.containers.run(
            tag, ["sh", "-c", "id -u; node -e 'console.log(1+1)'; stat -c %u /workspace; command -v timeout"],
            network_mode="none", remove=True,
        ).decode()
        assert out.split() == [str(SANDBOX_UID), "2", str(SANDBOX_UID), "/usr/bin/timeout"]
        assert any(f"Built {tag}" in m for m in messages), messages
    finally:
        if image_exists(docker_client, tag):
            docker_client.images.remove(tag)
    assert image_exists(docker_client, IMAGE_TAG)
