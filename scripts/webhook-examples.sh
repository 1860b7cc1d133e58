#!/usr/bin/env bash
# GitHub's example webhook payloads, as the npm package @octokit/webhooks-examples publishes
# them, for tests/e2e/test_github_examples.py: installed from the npm registry into
# .cache/webhook-examples (ignored by git) unless that version is there already. `.ci/run`
# runs it before the tests; the test runs it too when the payloads are missing.
set -euo pipefail
cd "$(dirname "$0")/.."
VERSION="${OCTOKIT_WEBHOOKS_EXAMPLES_VERSION:-7.6.1}"  # keep in step with the test's PINNED
DEST=.cache/webhook-examples
PKG="$DEST/node_modules/@octokit/webhooks-examples"
if [ -f "$PKG/api.github.com/index.json" ] && grep -q "\"version\": \"$VERSION\"" "$PKG/package.json"; then
    exit 0
fi
command -v npm >/dev/null || { echo "webhook-examples: npm is not installed" >&2; exit 1; }
mkdir -p "$DEST"
npm install --prefix "$DEST" --no-audit --no-fund --no-save --ignore-scripts --loglevel=error \
    "@octokit/webhooks-examples@$VERSION"
test -f "$PKG/api.github.com/index.json"
