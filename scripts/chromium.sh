#!/usr/bin/env bash
# Debian's headless Chromium, for the inspector's browser tests (tests/ui/: Playwright for
# Python drives this executable; Playwright's own browser downloads are never used), and a
# CJK font (WenQuanYi Zen Hei, 10 MB) so Chinese text renders in the screenshots.
set -euo pipefail
if command -v chromium >/dev/null 2>&1 && fc-list 2>/dev/null | grep -qi "wenquanyi"; then
    exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
    echo "scripts/chromium.sh: chromium or the CJK font is missing and installing them needs root (apt-get install chromium fonts-wqy-zenhei)" >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get install -y -q chromium fonts-wqy-zenhei >/dev/null 2>&1 || {
    apt-get update -q >/dev/null && apt-get install -y -q chromium fonts-wqy-zenhei >/dev/null; }
command -v chromium >/dev/null
