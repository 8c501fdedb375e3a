# lmgate's container image: `docker build -t lmgate .`, then
# `docker run -p 8080:8080 -v lmgate:/data lmgate` is the README's Quick start (see its
# Container section). Two stages on node:24-bookworm-slim: `build` compiles better-sqlite3,
# the server (dist/) and the dashboard (web/dist) and drops the dev dependencies; the last
# stage holds only what `lmgate serve` reads, owned by root, and runs it as a user that
# owns nothing but /data.

FROM node:24-bookworm-slim AS build

# better-sqlite3 compiles from source (no prebuilt binary is fetched: see below).
RUN apt-get update \
 && apt-get install -y --no-install-recommends g++ make python3 \
 && rm -rf /var/lib/apt/lists/*

WORKDIR /src

# better-sqlite3 12 must be compiled against Node 24.18.1's headers: compiled against those
# of 24.19 or later, its finalizers abort the process on every 24.x runtime
# (nodejs/node#65446; .ci/run does the same on the host). The stand-in base image
# (container/base-images.sh) carries Node 24.18.1 itself, so its own headers under
# /usr/local serve; on any other Node (the registry's node:24-bookworm-slim moves on), the
# build fetches 24.18.1's headers from the npm package node-linux-<arch>.
ARG ADDON_NODE_VERSION=24.18.1
# Optional: a CA bundle the build trusts for the npm registry (a TLS-inspecting network).
# container/ci.sh mounts the host's bundle read-only and names it here.
ARG NODE_EXTRA_CA_CERTS

COPY package.json package-lock.json ./
# --ignore-scripts: the root package's `prepare` would build before the sources are here;
# the two dependencies with install steps are rebuilt explicitly instead.
RUN set -eu; \
    if [ "$(node -p process.versions.node)" = "$ADDON_NODE_VERSION" ]; then \
      nodedir=/usr/local; \
    else \
      mkdir -p /tmp/node-headers && cd /tmp/node-headers; \
      npm pack --silent "node-linux-$(node -p process.arch)@$ADDON_NODE_VERSION" >/dev/null; \
      tar xzf node-linux-*.tgz --strip-components=1 package/include && rm node-linux-*.tgz; \
      nodedir=/tmp/node-headers; cd /src; \
    fi; \
    npm ci --ignore-scripts --no-audit --no-fund --loglevel=error; \
    npm_config_nodedir="$nodedir" npm_config_build_from_source=true \
      npm rebuild better-sqlite3 esbuild --loglevel=error; \
    rm -rf /tmp/node-headers /root/.npm

COPY tsconfig.json tsconfig.build.json ./
COPY bin ./bin
COPY web ./web
COPY src ./src
# The build, then production dependencies only, then what no process reads at run time:
# type declarations, source maps, TypeScript sources and docs, and better-sqlite3's SQLite
# sources and object files (its one .node file is all it loads).
RUN set -eu; \
    npm run build; \
    npm prune --omit=dev --ignore-scripts --no-audit --no-fund --loglevel=error; \
    find node_modules dist -type f \( -name '*.d.ts' -o -name '*.d.mts' -o -name '*.d.cts' \
      -o -name '*.map' -o -name '*.ts' -o -name '*.mts' -o -name '*.cts' -o -name '*.md' \) -delete; \
    addon=node_modules/better-sqlite3/build/Release/better_sqlite3.node; \
    mv "$addon" /tmp/; rm -rf node_modules/better-sqlite3/build node_modules/better-sqlite3/deps node_modules/better-sqlite3/src; \
    mkdir -p "$(dirname "$addon")" && mv /tmp/better_sqlite3.node "$addon"; \
    rm -rf /root/.npm

FROM node:24-bookworm-slim

ARG VERSION=0.0.0
ARG REVISION=unknown
ARG SOURCE=unknown
LABEL org.opencontainers.image.title="lmgate" \
      org.opencontainers.image.description="Self-hostable, OpenAI-compatible language-model API with keys, credits, tiers and usage metering" \
      org.opencontainers.image.version="$VERSION" \
      org.opencontainers.image.revision="$REVISION" \
      org.opencontainers.image.source="$SOURCE" \
      org.opencontainers.image.licenses="MIT"

# A user of its own; /data (the SQLite store) is the only place it may write. A named
# volume mounted there starts as a copy of this directory, so it starts owned by lmgate.
RUN groupadd --system --gid 10001 lmgate \
 && useradd --system --uid 10001 --gid lmgate --home-dir /data --no-create-home --shell /usr/sbin/nologin lmgate \
 && mkdir -p /data /etc/lmgate && chown lmgate:lmgate /data \
 && printf '#!/bin/sh\n# The operator CLI: docker exec CONTAINER lmgate keys create ...\nexec node /app/bin/lmgate.js "$@"\n' > /usr/local/bin/lmgate \
 && chmod 755 /usr/local/bin/lmgate

WORKDIR /app
COPY --from=build /src/package.json ./
COPY --from=build /src/node_modules ./node_modules
COPY --from=build /src/bin ./bin
COPY --from=build /src/dist ./dist
COPY --from=build /src/web/dist ./web/dist
COPY container/healthcheck.mjs ./container/

# Defaults chosen for a container (each can be overridden with -e):
# - LMGATE_HOST=0.0.0.0: 127.0.0.1 inside a container is unreachable from outside it.
# - LMGATE_ALLOW_PLAIN_HTTP=true: lmgate refuses plain HTTP on a non-loopback address, but
#   here the address is the container's own; who can reach it is decided by what is
#   published (-p) and by the proxy in front that terminates TLS, the usual container
#   setup. Set LMGATE_TLS_CERT/LMGATE_TLS_KEY to serve TLS itself, or
#   LMGATE_ALLOW_PLAIN_HTTP=false to have it refuse plain HTTP as on a host.
# - LMGATE_DATA_DIR=/data: the SQLite store, on the volume.
# - LMGATE_DRAIN_SECONDS=8: `docker stop` waits 10 s before SIGKILL, so the drain fits in
#   it; raise both together (docker stop -t, compose's stop_grace_period).
# No LMGATE_PORT: 8080 is the default, and PORT (set by some platforms) still applies.
ENV NODE_ENV=production \
    LMGATE_HOST=0.0.0.0 \
    LMGATE_ALLOW_PLAIN_HTTP=true \
    LMGATE_DATA_DIR=/data \
    LMGATE_DRAIN_SECONDS=8

# lmgate.yaml is read from the working directory: mount one at /etc/lmgate/lmgate.yaml
# (or name another file with LMGATE_CONFIG). Without it, the defaults and the environment.
WORKDIR /etc/lmgate
VOLUME /data
EXPOSE 8080
USER lmgate
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "/app/container/healthcheck.mjs"]
# The server is PID 1: `serve` handles SIGTERM and SIGINT itself (drain, flush, exit 0),
# and starts no child processes but its own workers (--workers), which Node reaps.
STOPSIGNAL SIGTERM
ENTRYPOINT ["node", "/app/bin/lmgate.js"]
CMD ["serve"]
