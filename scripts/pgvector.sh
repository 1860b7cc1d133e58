#!/usr/bin/env bash
# Install the pgvector extension into the machine's PostgreSQL when it is missing.
# pgvector is not packaged for Debian 12 (bookworm), so this builds it from Debian's source
# package of the next release (trixie). The apt source for it is derived from the machine's own
# Debian source entry (same mirror and keyring), so no registry host is named here.
set -euo pipefail

PG_CONFIG="${PG_CONFIG:-$(ls -d /usr/lib/postgresql/*/bin/pg_config 2>/dev/null | sort -V | tail -1)}"
[ -x "$PG_CONFIG" ] || { echo "pgvector: no PostgreSQL server found" >&2; exit 1; }
SHARE="$("$PG_CONFIG" --sharedir)"
if [ -f "$SHARE/extension/vector.control" ]; then
    echo "pgvector: already installed in $SHARE"
    exit 0
fi
PG_MAJOR="$("$PG_CONFIG" --version | sed -E 's/[^0-9]*([0-9]+).*/\1/')"
SUITE="${PGVECTOR_SUITE:-trixie}"

# The mirror and keyring of the machine's main Debian entry (deb822 or one-line format).
SOURCES=/etc/apt/sources.list.d/debian.sources
if [ -f "$SOURCES" ]; then
    URI="$(awk '/^URIs:/ && $2 !~ /security/ {print $2; exit}' "$SOURCES")"
    KEY="$(awk '/^Signed-By:/ {print $2; exit}' "$SOURCES")"
else
    URI="$(awk '$1 == "deb" && $0 !~ /security/ {for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:\/\//) {print $i; exit}}' /etc/apt/sources.list)"
    KEY=/usr/share/keyrings/debian-archive-keyring.gpg
fi
[ -n "$URI" ] || { echo "pgvector: no Debian apt source to derive from" >&2; exit 1; }

WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/lists/partial" "$WORK/sources.list.d"
cat > "$WORK/sources.list.d/src.sources" <<SRC
Types: deb-src
URIs: $URI
Suites: $SUITE
Components: main
Signed-By: ${KEY:-/usr/share/keyrings/debian-archive-keyring.gpg}
SRC
APT_OPTS=(-o "Dir::Etc::sourcelist=/dev/null" -o "Dir::Etc::sourceparts=$WORK/sources.list.d"
          -o "Dir::State::lists=$WORK/lists" -o "APT::Sandbox::User=root")
echo "pgvector: building from Debian $SUITE's source package ($URI)"
apt-get "${APT_OPTS[@]}" -qq update
export DEBIAN_FRONTEND=noninteractive
apt-get -qq install -y --no-install-recommends "postgresql-server-dev-$PG_MAJOR" make gcc \
    dpkg-dev >/dev/null
(cd "$WORK" && apt-get "${APT_OPTS[@]}" -qq source --download-only pgvector >/dev/null &&
    dpkg-source -x --no-check pgvector_*.dsc src >/dev/null)
make -s -C "$WORK/src" USE_PGXS=1 PG_CONFIG="$PG_CONFIG" OPTFLAGS="" >/dev/null
make -s -C "$WORK/src" USE_PGXS=1 PG_CONFIG="$PG_CONFIG" install >/dev/null
echo "pgvector: installed $(awk -F"'" '/default_version/ {print $2}' "$SHARE/extension/vector.control") into $SHARE"
