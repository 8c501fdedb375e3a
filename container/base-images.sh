#!/usr/bin/env bash
# Stand-in base images, for a machine that reaches no container registry: made locally from
# Debian's packages and tagged with the official names that lmgate's Dockerfile and
# compose.yaml use, so both run unchanged (no pull happens when the image exists):
#
#   debian:bookworm-slim     debootstrap --variant=minbase bookworm, imported
#   node:24-bookworm-slim    that + Node 24.18.1 under /usr/local (npm package
#                            node-linux-<arch>: bin/node, include/node) + npm
#   postgres:15-bookworm     that + Debian's postgresql-15, with an entrypoint that honours
#                            POSTGRES_USER / POSTGRES_PASSWORD / POSTGRES_DB like the official one
#   redis:7-bookworm         that + Debian's redis-server (7.0)
#   caddy:2                  that + Debian's caddy (2.6)
#
# An image that exists is kept (delete it to remake it: podman rmi node:24-bookworm-slim), so
# a second run on the same machine costs nothing. Needs root, podman, debootstrap, npm, and
# containers.conf set up as container/ci.sh does. Where a registry is reachable, none of this
# is needed: the official images are pulled instead.
set -euo pipefail

MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
SECURITY_MIRROR="${DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}"
# Node 24.18.1, not the newest 24.x: better-sqlite3 12 compiled against the headers of 24.19
# or later aborts in its finalizers on every 24.x runtime (nodejs/node#65446), and the
# Dockerfile compiles it against the base image's own headers when they are 24.18.1's.
NODE_VERSION=24.18.1
NPM_VERSION=11
ARCH="$(node -p process.arch)"
# The official images' full names, so that short names (FROM node:..., image: redis:...) find
# them locally whatever the short-name resolution of the machine.
LIB=docker.io/library

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

exists() { podman image exists "$LIB/$1"; }
log() { printf '[base-images] %s\n' "$*"; }

# debian:bookworm-slim: a minbase debootstrap, trimmed the way the official slim image is
# (no docs, man pages or apt lists), with bookworm-updates and security like the official one.
if ! exists debian:bookworm-slim; then
  log "debootstrap --variant=minbase bookworm ($MIRROR)"
  rootfs="$work/rootfs"
  debootstrap --variant=minbase bookworm "$rootfs" "$MIRROR" >"$work/debootstrap.log" 2>&1 || {
    tail -n 30 "$work/debootstrap.log"
    exit 1
  }
  rm -f "$rootfs/etc/apt/sources.list"
  cat >"$rootfs/etc/apt/sources.list.d/debian.sources" <<EOF
Types: deb
URIs: $MIRROR
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: $SECURITY_MIRROR
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
  cat >"$rootfs/etc/dpkg/dpkg.cfg.d/docker-slim" <<'EOF'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/info/*
path-exclude /usr/share/locale/*
EOF
  printf 'APT::Install-Recommends "false";\nAPT::Install-Suggests "false";\n' >"$rootfs/etc/apt/apt.conf.d/docker-no-recommends"
  rm -rf "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/*.bin "$rootfs"/var/cache/apt/archives/*.deb \
    "$rootfs"/usr/share/man/* "$rootfs"/usr/share/info/* "$rootfs"/usr/share/locale/* "$rootfs"/var/log/*.log
  find "$rootfs/usr/share/doc" -mindepth 2 ! -name copyright -delete 2>/dev/null || true
  tar -C "$rootfs" --numeric-owner -c . | podman import --change 'CMD ["bash"]' - "$LIB/debian:bookworm-slim" >/dev/null
  rm -rf "$rootfs"
fi

# node:24-bookworm-slim: Node and npm under /usr/local as in the official image, and its
# `node` user (uid 1000).
if ! exists node:24-bookworm-slim; then
  log "node:24-bookworm-slim (node-linux-$ARCH@$NODE_VERSION, npm@$NPM_VERSION)"
  ctx="$work/node"
  mkdir -p "$ctx/usr/local/lib/node_modules/npm" "$ctx/usr/local/bin"
  (cd "$work" && npm pack --silent "node-linux-$ARCH@$NODE_VERSION" "npm@$NPM_VERSION" >/dev/null)
  tar xzf "$work/node-linux-$ARCH-$NODE_VERSION.tgz" -C "$ctx/usr/local" --strip-components=1 package/bin package/include package/share
  tar xzf "$work"/npm-"$NPM_VERSION".*.tgz -C "$ctx/usr/local/lib/node_modules/npm" --strip-components=1
  printf '#!/bin/sh\nexec /usr/local/bin/node /usr/local/lib/node_modules/npm/bin/npm-cli.js "$@"\n' >"$ctx/usr/local/bin/npm"
  printf '#!/bin/sh\nexec /usr/local/bin/node /usr/local/lib/node_modules/npm/bin/npx-cli.js "$@"\n' >"$ctx/usr/local/bin/npx"
  chmod 755 "$ctx/usr/local/bin/node" "$ctx/usr/local/bin/npm" "$ctx/usr/local/bin/npx"
  cat >"$ctx/Containerfile" <<EOF
FROM debian:bookworm-slim
RUN groupadd --gid 1000 node && useradd --uid 1000 --gid node --shell /bin/bash --create-home node
COPY usr/local /usr/local/
ENV NODE_VERSION=$NODE_VERSION
CMD ["node"]
EOF
  podman build -q --pull=never --format docker -t "$LIB/node:24-bookworm-slim" -t "$LIB/node:$NODE_VERSION-bookworm-slim" "$ctx" >/dev/null
fi

# postgres:15-bookworm, with the part of the official entrypoint that compose.yaml relies on:
# on an empty PGDATA, initdb with POSTGRES_USER and POSTGRES_PASSWORD (scram over TCP),
# create POSTGRES_DB, listen on every address; then run as the postgres user.
if ! exists postgres:15-bookworm; then
  log "postgres:15-bookworm (Debian's postgresql-15)"
  ctx="$work/postgres"
  mkdir -p "$ctx"
  cat >"$ctx/docker-entrypoint.sh" <<'EOF'
#!/bin/sh
set -eu
if [ "${1:-}" = postgres ] && [ "$(id -u)" = 0 ]; then
  mkdir -p "$PGDATA" /var/run/postgresql
  chown -R postgres:postgres "$PGDATA" /var/run/postgresql
  chmod 700 "$PGDATA"
  exec setpriv --reuid=postgres --regid=postgres --init-groups "$0" "$@"
fi
if [ "${1:-}" = postgres ] && [ ! -s "$PGDATA/PG_VERSION" ]; then
  : "${POSTGRES_PASSWORD:?POSTGRES_PASSWORD must be set}"
  user="${POSTGRES_USER:-postgres}"
  db="${POSTGRES_DB:-$user}"
  pwfile="$(mktemp)"
  printf '%s\n' "$POSTGRES_PASSWORD" >"$pwfile"
  initdb --username="$user" --pwfile="$pwfile" --auth-local=trust --auth-host=scram-sha-256 -D "$PGDATA" >/dev/null
  rm -f "$pwfile"
  echo 'host all all all scram-sha-256' >>"$PGDATA/pg_hba.conf"
  echo "listen_addresses = '*'" >>"$PGDATA/postgresql.conf"
  # Single-user mode runs as the bootstrap superuser, whatever its name.
  [ "$db" = postgres ] || echo "CREATE DATABASE \"$db\"" | postgres --single -D "$PGDATA" postgres >/dev/null
  echo "postgres: initialised $PGDATA (user $user, database $db)"
fi
exec "$@"
EOF
  chmod 755 "$ctx/docker-entrypoint.sh"
  cat >"$ctx/Containerfile" <<'EOF'
FROM debian:bookworm-slim
RUN mkdir -p /etc/postgresql-common \
 && echo 'create_main_cluster = false' > /etc/postgresql-common/createcluster.conf \
 && apt-get update && apt-get install -y postgresql-15 && rm -rf /var/lib/apt/lists/*
COPY docker-entrypoint.sh /usr/local/bin/
ENV PATH=/usr/lib/postgresql/15/bin:$PATH PGDATA=/var/lib/postgresql/data
VOLUME /var/lib/postgresql/data
EXPOSE 5432
STOPSIGNAL SIGINT
ENTRYPOINT ["docker-entrypoint.sh"]
CMD ["postgres"]
EOF
  podman build -q --pull=never --format docker -t "$LIB/postgres:15-bookworm" "$ctx" >/dev/null
fi

# redis:7-bookworm: redis-server in /data, as the redis user.
if ! exists redis:7-bookworm; then
  log "redis:7-bookworm (Debian's redis-server)"
  ctx="$work/redis"
  mkdir -p "$ctx"
  cat >"$ctx/docker-entrypoint.sh" <<'EOF'
#!/bin/sh
set -eu
case "${1:-}" in -*) set -- redis-server "$@" ;; esac
if [ "${1:-}" = redis-server ] && [ "$(id -u)" = 0 ]; then
  chown -R redis:redis /data
  exec setpriv --reuid=redis --regid=redis --init-groups "$0" "$@"
fi
exec "$@"
EOF
  chmod 755 "$ctx/docker-entrypoint.sh"
  cat >"$ctx/Containerfile" <<'EOF'
FROM debian:bookworm-slim
RUN apt-get update && apt-get install -y redis-server && rm -rf /var/lib/apt/lists/* \
 && mkdir -p /data && chown redis:redis /data
COPY docker-entrypoint.sh /usr/local/bin/
VOLUME /data
WORKDIR /data
EXPOSE 6379
ENTRYPOINT ["docker-entrypoint.sh"]
CMD ["redis-server"]
EOF
  podman build -q --pull=never --format docker -t "$LIB/redis:7-bookworm" "$ctx" >/dev/null
fi

# caddy:2: the official image's layout (Caddyfile in /etc/caddy, state in /data and /config).
if ! exists caddy:2; then
  log "caddy:2 (Debian's caddy)"
  ctx="$work/caddy"
  mkdir -p "$ctx"
  cat >"$ctx/Containerfile" <<'EOF'
FROM debian:bookworm-slim
RUN apt-get update && apt-get install -y caddy && rm -rf /var/lib/apt/lists/* && mkdir -p /config /data /srv
ENV XDG_CONFIG_HOME=/config XDG_DATA_HOME=/data
VOLUME /config /data
WORKDIR /srv
EXPOSE 80 443 2019
CMD ["caddy", "run", "--config", "/etc/caddy/Caddyfile", "--adapter", "caddyfile"]
EOF
  podman build -q --pull=never --format docker -t "$LIB/caddy:2" "$ctx" >/dev/null
fi

log "ready: $(podman images --format '{{.Repository}}:{{.Tag}} {{.Size}}' | grep -E '^docker.io/library/(debian|node|postgres|redis|caddy):' | tr '\n' ',' | sed 's/,$//')"
