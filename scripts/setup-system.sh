#!/usr/bin/env bash
# System packages Trident needs on Debian: Chromium (headless browser tests, and
# SwiftShader's Vulkan driver that Dawn uses for WebGPU in Node where there is no
# GPU) and the Vulkan loader. Skips what is already there; needs root (or sudo)
# to install.
set -euo pipefail
missing=()
[ -x /usr/bin/chromium ] || missing+=(chromium)
ldconfig -p 2>/dev/null | grep -q 'libvulkan.so.1' || missing+=(libvulkan1)
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
if [ "$(id -u)" -eq 0 ]; then
  as_root=()
elif command -v sudo >/dev/null; then
  as_root=(sudo)
else
  echo "setup-system: please install as root: apt-get install -y ${missing[*]}" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
"${as_root[@]}" apt-get update -qq
"${as_root[@]}" apt-get install -y -qq "${missing[@]}"
