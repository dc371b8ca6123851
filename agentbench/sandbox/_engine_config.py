"""Which Docker engines a run may use: their addresses, TLS files and capacities (pure data, no I/O).

An engine is addressed the way the docker CLI and SDK address it: ``unix:///var/run/docker.sock``,
``ssh://user@host`` (through the ``ssh`` binary, so ``~/.ssh/config`` applies) or
``tcp://host:2376`` with TLS client certificates. The engine named ``local`` is the one the
environment points at (``DOCKER_HOST``, default ``unix:///var/run/docker.sock``).
"""

from __future__ import annotations

import ipaddress
import os
import re
from pathlib import Path
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from agentbench.errors import ConfigError

__all__ = ["LOCAL", "EngineConfig", "TLSFiles", "local_engine", "select_engines"]

LOCAL = "local"  # the name of the engine DOCKER_HOST points at
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$")
_SCHEMES = ("unix", "tcp", "ssh")


class TLSFiles(BaseModel):
    """Client certificates for a ``tcp://`` engine: a folder (``ca.pem``, ``cert.pem``, ``key.pem``,
    as ``DOCKER_CERT_PATH`` holds them) or the three files one by one."""

    model_config = ConfigDict(extra="forbid")

    cert_path: Path | None = None
    ca_cert: Path | None = None
    client_cert: Path | None = None
    client_key: Path | None = None
    verify: bool = True  # check the engine's certificate against ca_cert

    @model_validator(mode="after")
    def _complete(self) -> TLSFiles:
        if self.cert_path is not None:
            base = self.cert_path.expanduser()
            self.ca_cert = self.ca_cert or base / "ca.pem"
            self.client_cert = self.client_cert or base / "cert.pem"
            self.client_key = self.client_key or base / "key.pem"
        if self.client_cert is None or self.client_key is None:
            raise ValueError("give cert_path (a folder with ca.pem, cert.pem, key.pem) or client_cert and client_key")
        if self.verify and self.ca_cert is None:
            raise ValueError("verify = true needs ca_cert (or cert_path) to check the engine's certificate")
        return self

    def missing_files(self) -> list[str]:
        """The named files that are not there (checked when the engine is connected, not when parsed)."""
        files = {"ca_cert": self.ca_cert, "client_cert": self.client_cert, "client_key": self.client_key}
        return [f"{k} = {v}" for k, v in files.items() if v is not None and not Path(v).expanduser().is_file()]


class EngineConfig(BaseModel):
    """One Docker engine and what it may hold at once.

    ``sandboxes``: cells (each one agent sandbox, plus its syntax-check sandbox while checked) on
    this engine at once; ``checks``: cells in their check phase at once. None: no limit beyond
    ``--concurrency``. The model's own ``max_concurrency`` holds across all engines.
    """

    model_config = ConfigDict(extra="forbid")

    name: str
    address: str | None = None  # None: the environment's engine (DOCKER_HOST)
    sandboxes: int | None = Field(default=None, gt=0)
    checks: int | None = Field(default=None, gt=0)
    tls: TLSFiles | None = None
    # A plain-TCP engine is root on its host for anyone who can reach the port: refused unless
    # it is on loopback or this is set on purpose.
    insecure_plain_tcp: bool = False

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if not _NAME.match(value):
            raise ValueError("use letters, digits, '.', '_' or '-' (it names the engine in results and messages)")
        return value

    @field_validator("address")
    @classmethod
    def _address(cls, value: str | None) -> str | None:
        if value is None:
            return None
        parts = urlsplit(value)
        if parts.scheme not in _SCHEMES:
            raise ValueError(f"'{value}' is not unix:///path, ssh://user@host or tcp://host:port")
        if parts.scheme == "unix" and not parts.path:
            raise ValueError(f"'{value}' names no socket; write unix:///path/to/docker.sock")
        if parts.scheme in ("tcp", "ssh") and not parts.hostname:
            raise ValueError(f"'{value}' names no host")
        return value

    @model_validator(mode="after")
    def _transport(self) -> EngineConfig:
        scheme = urlsplit(self.address).scheme if self.address else None
        if self.tls is not None and scheme != "tcp":
            raise ValueError("tls applies to tcp:// engines only")
        if scheme == "tcp" and self.tls is None and not self.insecure_plain_tcp and not _loopback(self.address):
            raise ValueError(
                f"{self.address} is plain TCP: anyone who reaches that port controls the engine. Give tls "
                "(cert_path, or ca_cert/client_cert/client_key) or, on a network you trust, insecure_plain_tcp = true"
            )
        return self

    @property
    def where(self) -> str:
        """The address as a person reads it (the environment's engine spelled out)."""
        return self.address or os.environ.get("DOCKER_HOST") or "unix:///var/run/docker.sock"

    def label(self) -> str:
        return f"engine '{self.name}' ({self.where})"


def _loopback(address: str | None) -> bool:
    host = urlsplit(address or "").hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def local_engine(**capacity: int | None) -> EngineConfig:
    """The engine the environment points at (DOCKER_HOST, DOCKER_TLS_VERIFY, DOCKER_CERT_PATH)."""
    return EngineConfig(name=LOCAL, **capacity)


def _name_of(address: str) -> str:
    parts = urlsplit(address)
    raw = parts.hostname if parts.scheme != "unix" else Path(parts.path).parent.name or "unix"
    if parts.scheme == "tcp" and parts.port:
        raw = f"{raw}-{parts.port}"
    name = re.sub(r"[^A-Za-z0-9._-]", "-", raw or "engine").strip("-.") or "engine"
    return name[:63]


def select_engines(arg: str | None, configured: list[EngineConfig]) -> list[EngineConfig]:
    """The engines a run uses: ``--engine`` items (configured names or addresses), else the settings,
    else the environment's engine alone."""
    if arg is None or not arg.strip():
        return list(configured) or [local_engine()]
    by_name = {e.name: e for e in configured}
    chosen: list[EngineConfig] = []
    for item in (p.strip() for p in arg.split(",")):
        if not item:
            continue
        if item in by_name:
            engine = by_name[item]
        elif item == LOCAL:
            engine = local_engine()
        elif "://" in item:
            known = next((e for e in configured if e.address == item), None)
            try:
                engine = known or EngineConfig(name=_name_of(item), address=item)
            except ValueError as exc:
                raise ConfigError(f"--engine {item}: {_first_error(exc)}") from exc
        else:
            names = ", ".join(sorted({*by_name, LOCAL}))
            raise ConfigError(
                f"--engine {item}: no engine of that name (known: {names}); give a configured name or an "
                "address (unix:///path, ssh://user@host, tcp://host:2376)."
            )
        chosen.append(engine)
    if not chosen:
        raise ConfigError("--engine names no engine; give names or addresses, comma-separated.")
    return _unique(chosen, "--engine")


def _unique(engines: list[EngineConfig], where: str) -> list[EngineConfig]:
    seen: dict[str, EngineConfig] = {}
    out = []
    for engine in engines:
        if engine.name in seen:
            if seen[engine.name] == engine:
                continue  # the same engine named twice: once is enough
            # Two addresses that derive the same name: keep both, told apart by a suffix.
            engine = engine.model_copy(update={"name": f"{engine.name}-{len(out) + 1}"})
        seen[engine.name] = engine
        out.append(engine)
    return out


def _first_error(exc: ValueError) -> str:
    errors = getattr(exc, "errors", None)
    if callable(errors):
        return "; ".join(str(e.get("msg", "")).removeprefix("Value error, ") for e in errors())
    return str(exc)
