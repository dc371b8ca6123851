#!/usr/bin/env bash
# Idempotent set-up for a fresh Debian 12 machine (run as root, or with sudo available):
# system packages, a running Docker engine, the Python package, and the sandbox and checker images:
# what `make demo` needs, and nothing more.
#   scripts/setup.sh          the demo's set-up
#   scripts/setup.sh --test   also the test extras (pytest, inspect_ai) and the images of the external
#                             agents the tests run (opencode, aider); `make test` uses it.
# A run that uses an external agent builds that agent's image itself on first use.
set -euo pipefail
cd "$(dirname "$0")/.."

FOR_TESTS=0
for arg in "$@"; do
    case "$arg" in
        --test) FOR_TESTS=1 ;;
        *) echo "setup: unknown option $arg (known: --test)" >&2; exit 2 ;;
    esac
done

SUDO=""
if [ "$(id -u)" != "0" ]; then SUDO="sudo"; fi
EXTRAS=""
if [ "$FOR_TESTS" = 1 ]; then EXTRAS="[test]"; fi

# The Python package is installed (editable, this checkout) only when something is missing: the
# installed agentbench is not this checkout's, or a requirement of pyproject.toml (with the test extras
# under --test) is absent or of the wrong version. A repeated `make test` skips pip (~20 s).
python_ready() {
    python3 -P - "$FOR_TESTS" <<'PY' >/dev/null 2>&1
import importlib.metadata as md, sys, tomllib
from pathlib import Path
from packaging.requirements import Requirement
import agentbench
if Path(agentbench.__file__).resolve().parent != (Path.cwd() / "agentbench").resolve():
    sys.exit(1)  # another checkout's (or none)
project = tomllib.loads(Path("pyproject.toml").read_text())["project"]
extras = project.get("optional-dependencies", {})
todo = [Requirement(r) for r in project["dependencies"] + (extras.get("test", []) if sys.argv[1] == "1" else [])]
while todo:
    req = todo.pop()
    if req.name == project["name"]:
        todo += [Requirement(r) for extra in req.extras for r in extras.get(extra, [])]
    elif req.marker is None or req.marker.evaluate():
        if not req.specifier.contains(md.version(req.name), prereleases=True):
            sys.exit(1)
PY
}
pip_pid=""
if ! python_ready; then
    # In the background: it downloads while apt does (pip needs nothing apt installs).
    PIP_LOG="$(mktemp -t agentbench-pip.XXXXXX)"
    echo "setup: installing the Python package and its requirements (log: $PIP_LOG)"
    python3 -m pip install -q --disable-pip-version-check -e ".$EXTRAS" >"$PIP_LOG" 2>&1 &
    pip_pid=$!
fi

need_pkgs=()
command -v dockerd >/dev/null 2>&1 || need_pkgs+=(docker.io)
command -v debootstrap >/dev/null 2>&1 || need_pkgs+=(debootstrap)
command -v chromium >/dev/null 2>&1 || need_pkgs+=(chromium)
command -v node >/dev/null 2>&1 || need_pkgs+=(nodejs)
if [ "$FOR_TESTS" = 1 ]; then
    command -v npm >/dev/null 2>&1 || need_pkgs+=(npm)  # fetches opencode for its agent image
    # The checker container's browser, on the host too: the tests of what a page reads of it.
    command -v chromium-headless-shell >/dev/null 2>&1 || need_pkgs+=(chromium-headless-shell)
fi
if [ ${#need_pkgs[@]} -gt 0 ]; then
    echo "setup: installing ${need_pkgs[*]}"
    $SUDO apt-get update -q
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${need_pkgs[@]}" iptables ca-certificates
fi

if ! docker info >/dev/null 2>&1; then
    echo "setup: starting dockerd (log: /tmp/agentbench-dockerd.log)"
    $SUDO sh -c 'nohup dockerd >/tmp/agentbench-dockerd.log 2>&1 &'
    for _ in $(seq 1 300); do docker info >/dev/null 2>&1 && break; sleep 0.2; done
    docker info >/dev/null 2>&1 || { echo "setup: dockerd did not start; see /tmp/agentbench-dockerd.log" >&2; exit 1; }
fi

if [ -n "$pip_pid" ]; then
    if ! wait "$pip_pid"; then
        cat "$PIP_LOG" >&2
        echo "setup: pip install -e '.$EXTRAS' failed (above)" >&2
        exit 1
    fi
    cat "$PIP_LOG"
    rm -f "$PIP_LOG"
fi

# The sandbox image, and the checker image every browser check runs in (its code layer is rebuilt
# on demand when the check code changes).
# Their tags come from the code (they name the uid the images' users have).
tags="$(python3 -c 'from agentbench.sandbox import IMAGE_TAG as w
from agentbench.sandbox._checker_image import CHECKER_RUNTIME_TAG as r
print(w, r)')" || { echo "setup: could not import agentbench to name its images" >&2; exit 1; }
read -r web_tag runtime_tag <<< "$tags" || true
if [ -z "${web_tag:-}" ] || [ -z "${runtime_tag:-}" ] \
        || ! docker image inspect "$web_tag" >/dev/null 2>&1 \
        || ! docker image inspect "$runtime_tag" >/dev/null 2>&1; then
    echo "setup: building the sandbox and checker images (first time only: a few minutes)"
    python3 -m agentbench sandbox build
fi
# The external agents the tests run (opencode, aider), built offline on the sandbox image: once per
# pinned version and base, reused after (about a minute the first time; Crush needs a binary you give).
# Their Debian packages are worked out from the host's apt lists, so those must exist. The demo
# uses the builtin agent only, so `make demo` skips this.
if [ "$FOR_TESTS" = 1 ]; then
    if ! ls /var/lib/apt/lists/*_Packages* >/dev/null 2>&1; then $SUDO apt-get update -q; fi
    python3 -m agentbench sandbox build --agent opencode --agent aider
fi
echo "setup: ready"
