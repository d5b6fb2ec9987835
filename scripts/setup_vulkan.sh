#!/usr/bin/env bash
# Make sure a Vulkan device exists for SAPIEN's renderer.
#
# SAPIEN 3 renders through Vulkan. On a machine without a GPU driver we fall back to
# Mesa's lavapipe (software Vulkan), which SAPIEN accepts from Mesa 24.3 on. Debian 12
# ships Mesa 22.3, so we take mesa-vulkan-drivers from the bookworm-backports suite,
# built from the mirror already configured for this machine (no host name is written here).
#
# Exit status is 0 even when no driver could be installed: state-only environments
# do not need Vulkan, and rendering raises a clear error naming these packages.
set -u
PY="${1:-python3}"

have_vulkan() {
    "$PY" - <<'PYEOF' 2>/dev/null
import sys
try:
    import sapien.render
    sapien.render.RenderSystem()
except Exception:
    sys.exit(1)
PYEOF
}

if have_vulkan; then
    echo "[setup_vulkan] a Vulkan device is available"
    exit 0
fi

PKGS="mesa-vulkan-drivers libvulkan1"
if [ "$(id -u)" != "0" ] || ! command -v apt-get >/dev/null 2>&1; then
    echo "[setup_vulkan] no Vulkan device found. Rendering needs a Vulkan driver:" >&2
    echo "[setup_vulkan]   Debian 12: apt-get install -t bookworm-backports $PKGS  (Mesa >= 24.3)" >&2
    echo "[setup_vulkan]   Debian 13 / Ubuntu 24.10+: apt-get install $PKGS" >&2
    exit 0
fi

. /etc/os-release 2>/dev/null || true
APT_OPTS=""
if [ "${VERSION_CODENAME:-}" = "bookworm" ]; then
    SRC=/etc/apt/sources.list.d/simulo-backports.sources
    if [ ! -f "$SRC" ]; then
        # Reuse the URI of the machine's own Debian source.
        URI=$(grep -h '^URIs:' /etc/apt/sources.list.d/*.sources 2>/dev/null | grep -v security | head -n 1 | awk '{print $2}')
        if [ -z "$URI" ]; then
            URI=$(grep -hE '^deb ' /etc/apt/sources.list 2>/dev/null | grep -v security | head -n 1 | awk '{print $2}')
        fi
        if [ -z "$URI" ]; then
            echo "[setup_vulkan] no Debian apt source found to derive bookworm-backports from" >&2
            exit 0
        fi
        printf 'Types: deb\nURIs: %s\nSuites: bookworm-backports\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' "$URI" > "$SRC"
    fi
    APT_OPTS="-t bookworm-backports"
fi
echo "[setup_vulkan] installing $PKGS (software Vulkan: lavapipe)"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null 2>&1 || true
apt-get install -y -qq $APT_OPTS $PKGS >/dev/null 2>&1 || apt-get install -y -qq $PKGS >/dev/null 2>&1
if have_vulkan; then
    echo "[setup_vulkan] software Vulkan (lavapipe) ready"
else
    echo "[setup_vulkan] still no usable Vulkan device; rendering will be unavailable" >&2
fi
exit 0
