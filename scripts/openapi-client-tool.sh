#!/usr/bin/env bash
# openapi-python-client, for tests/e2e/test_openapi.py (a client generated from our schema,
# called against a live server): in a venv of its own under .cache/openapi-tool (ignored by
# git), because it pins typer below the version the varvemem CLI needs. Installed from PyPI
# unless that version is there already. `.ci/run` runs it before the tests; the test runs it
# too when the tool is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
VERSION="${OPENAPI_PYTHON_CLIENT_VERSION:-0.29.1}"  # keep in step with the test's PINNED
DEST=.cache/openapi-tool
if [ -x "$DEST/bin/openapi-python-client" ] && \
        "$DEST/bin/python" -m pip show openapi-python-client 2>/dev/null | grep -q "^Version: $VERSION$"; then
    exit 0
fi
python3 -m venv "$DEST"
"$DEST/bin/python" -m pip install --quiet --disable-pip-version-check \
    "openapi-python-client==$VERSION"
test -x "$DEST/bin/openapi-python-client"
