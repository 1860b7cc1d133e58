#!/usr/bin/env bash
# Debian's headless Chromium, for the inspector's browser tests (tests/ui/: Playwright for
# Python drives this executable; Playwright's own browser downloads are never used).
set -euo pipefail
if command -v chromium >/dev/null 2>&1; then
    exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
    echo "scripts/chromium.sh: chromium is missing and installing it needs root (apt-get install chromium)" >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get install -y -q chromium >/dev/null 2>&1 || { apt-get update -q >/dev/null && apt-get install -y -q chromium >/dev/null; }
command -v chromium >/dev/null
