#!/usr/bin/env bash
# lmgate's container image and compose.yaml, built and run with podman (issue #34):
#   1. podman, buildah, podman-compose, debootstrap and runc (apt-get, when missing), and the
#      two containers.conf settings this kind of machine needs;
#   2. stand-in base images when no registry is reachable (container/base-images.sh, cached);
#   3. the image, then the README's Quick start through it (demo key from the log, the
#      `openai` client, the dashboard), and SIGTERM during a stream;
#   4. compose.yaml in shared mode: a request through the proxy and each instance, a key
#      revoked on one refused on the other, a balance spent across both exact;
#   5. everything it started is removed on the way out, failed or not.
# The checks themselves are container/check.mjs. Host ports: 18080 (the image), 18443 (the
# proxy), 18081 and 18082 (the instances, loopback only); PostgreSQL and Redis publish none.
set -euo pipefail
cd "$(dirname "$0")/.."

started=$SECONDS
step() { printf '\n== %s [%ds]\n' "$*" "$((SECONDS - started))"; }
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

IMAGE="${LMGATE_CI_IMAGE:-localhost/lmgate:ci}"
RUN_NAME=lmgate-ci-run
RUN_VOLUME=lmgate-ci-data
PROJECT=lmgate-ci
work="$(mktemp -d)"
export PODMAN_COMPOSE="podman-compose -p $PROJECT -f compose.yaml"
# compose.yaml's settings for this run.
export LMGATE_IMAGE="$IMAGE" LMGATE_HTTPS_PORT=18443 LMGATE_1_PORT=18081 LMGATE_2_PORT=18082
export LMGATE_PUBLIC_URL=https://localhost:18443
POSTGRES_PASSWORD="$(head -c 18 /dev/urandom | base64 | tr -dc 'A-Za-z0-9')"
export POSTGRES_PASSWORD

# podman-compose down removes containers without their anonymous volumes (the image's
# VOLUME /data, unused on PostgreSQL) and leaves the network: rm -v first, then the rest.
compose_down() {
  podman ps -a -q --filter "label=io.podman.compose.project=$PROJECT" | xargs -r podman rm -f -v -t "$1"
  $PODMAN_COMPOSE down -v -t "$1"
  podman volume ls -q --filter "label=io.podman.compose.project=$PROJECT" | xargs -r podman volume rm -f
  if podman network exists "${PROJECT}_default"; then podman network rm -f "${PROJECT}_default"; fi
}

cleanup() {
  local status=$?
  set +e
  if [ "$status" != 0 ]; then
    echo "== failed (exit $status): the containers' last log lines"
    for c in $(podman ps -a --format '{{.Names}}' | grep -E "^($RUN_NAME|${PROJECT}_)"); do
      echo "-- $c ($(podman inspect --format '{{.State.Status}} exit {{.State.ExitCode}}, restarts {{.RestartCount}}' "$c"))"
      podman logs --tail 25 "$c" 2>&1
    done
  fi
  podman rm -f -v -t 2 "$RUN_NAME" >/dev/null 2>&1
  podman volume rm -f "$RUN_VOLUME" >/dev/null 2>&1
  compose_down 2 >/dev/null 2>&1
  local left
  left="$(podman ps -a --format '{{.Names}}' | grep -E "^($RUN_NAME|${PROJECT}_)")"
  left+=" $(comm -13 <(echo "$volumes_before") <(podman volume ls -q | sort))"
  left+=" $(podman network ls --format '{{.Name}}' | grep -E "^${PROJECT}_")"
  left="$(echo $left)"
  if [ -n "$left" ]; then
    echo "== left behind: $left"
    [ "$status" != 0 ] || status=1
  fi
  rm -rf "$work"
  echo "== container CI $([ "$status" = 0 ] && echo passed || echo FAILED) in $((SECONDS - started)) s"
  exit "$status"
}
volumes_before="$( (podman volume ls -q 2>/dev/null || true) | sort)"
trap cleanup EXIT

step "tools"
missing=()
for tool in podman buildah podman-compose debootstrap runc; do command -v "$tool" >/dev/null || missing+=("$tool"); done
if [ "${#missing[@]}" -gt 0 ]; then
  as_root apt-get update -qq
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq "${missing[@]}"
fi
podman --version

# crun refuses this machine's hybrid cgroup layout, and the runtime cannot raise the hard
# limits of open files and processes: runc, and limits within the ones it has.
conf=/etc/containers/containers.conf
if [ ! -e "$conf" ]; then
  as_root mkdir -p /etc/containers
  as_root tee "$conf" >/dev/null <<'EOF'
[containers]
default_ulimits = ["nofile=20000:20000", "nproc=32768:32768"]

[engine]
runtime = "runc"
EOF
elif ! grep -q '^ *runtime *= *"runc"' "$conf" || ! grep -q '^ *default_ulimits' "$conf"; then
  echo "$conf exists without runtime = \"runc\" (in [engine]) or default_ulimits (in [containers]): add them" >&2
  exit 1
fi

step "base images"
bash container/base-images.sh

step "build $IMAGE"
build_started=$SECONDS
version="$(node -p "require('./package.json').version")"
revision="$(git rev-parse HEAD 2>/dev/null || echo unknown)"
source_url="$(git remote get-url origin 2>/dev/null || echo unknown)"
# The build reaches the npm registry through the host's CA bundle (a TLS-inspecting network
# adds its own CA there).
podman build --pull=never --format docker -t "$IMAGE" \
  --build-arg VERSION="$version" --build-arg REVISION="$revision" --build-arg SOURCE="$source_url" \
  -v /etc/ssl/certs/ca-certificates.crt:/etc/ssl/host-ca-certificates.crt:ro \
  --build-arg NODE_EXTRA_CA_CERTS=/etc/ssl/host-ca-certificates.crt \
  . >"$work/build.log" 2>&1 || { tail -n 40 "$work/build.log"; exit 1; }
echo "built in $((SECONDS - build_started)) s"
image_bytes="$(podman image inspect --format '{{.Size}}' "$IMAGE")"
base_bytes="$(podman image inspect --format '{{.Size}}' node:24-bookworm-slim)"
echo "image: $((image_bytes / 1000000)) MB; base node:24-bookworm-slim: $((base_bytes / 1000000)) MB; lmgate's layers: $(((image_bytes - base_bytes) / 1000000)) MB"
echo "its layers with content (podman history, newest first):"
podman history --format '{{.Size}}\t{{.CreatedBy}}' "$IMAGE" | awk -F'\t' '$1 != "0 B"' | cut -c1-120 | sed -n 1,12p

step "docker run: the Quick start"
podman rm -f "$RUN_NAME" >/dev/null 2>&1 || true
podman volume rm -f "$RUN_VOLUME" >/dev/null 2>&1 || true
run_started=$(date +%s%N)
podman run -d --name "$RUN_NAME" -p 127.0.0.1:18080:8080 -v "$RUN_VOLUME:/data" "$IMAGE" >/dev/null
for _ in $(seq 1 150); do
  curl -fsS -o /dev/null http://127.0.0.1:18080/healthz 2>/dev/null && break
  sleep 0.1
done
echo "answering /healthz $((($(date +%s%N) - run_started) / 1000000)) ms after podman run"
# The banner (and the demo key) follows the first answer by a moment: the key is made once
# the port is taken.
for _ in $(seq 1 50); do
  podman logs "$RUN_NAME" 2>&1 | grep -c 'created with this API key' >/dev/null && break
  sleep 0.2
done
podman logs "$RUN_NAME" 2>&1 | sed -n '1,20p'
demo_key="$(podman logs "$RUN_NAME" 2>&1 | grep -oE 'sk-lmg-[A-Za-z0-9]+' | sed -n 1p)"
[ -n "$demo_key" ] || { echo "no demo key in the log" >&2; exit 1; }
[ "$(podman exec "$RUN_NAME" id -u)" = 10001 ] || { echo "the server does not run as the lmgate user" >&2; exit 1; }
podman healthcheck run "$RUN_NAME" || { echo "the image's HEALTHCHECK fails" >&2; exit 1; }
echo "the image's HEALTHCHECK: healthy"
BASE_URL=http://127.0.0.1:18080 API_KEY="$demo_key" node container/check.mjs quickstart
another="$(podman exec "$RUN_NAME" lmgate keys create demo@lmgate.local --name laptop)"
grep -q 'sk-lmg-' <<<"$another" || { echo "lmgate keys create in the container printed no key: $another" >&2; exit 1; }
echo "the CLI in the container (lmgate keys create) makes another key"

step "docker stop during a stream"
BASE_URL=http://127.0.0.1:18080 API_KEY="$demo_key" CONTAINER="$RUN_NAME" PODMAN=podman node container/check.mjs stop
podman rm -f -t 2 "$RUN_NAME" >/dev/null
podman volume rm -f "$RUN_VOLUME" >/dev/null

step "compose up (shared mode)"
compose_down 2 >/dev/null 2>&1 || true
$PODMAN_COMPOSE up -d >"$work/compose-up.log" 2>&1 || { tail -n 40 "$work/compose-up.log"; exit 1; }
# Not `podman wait`: a run that failed (PostgreSQL not up yet) and restarts would end it.
for _ in $(seq 1 600); do
  [ "$(podman inspect --format '{{.State.Status}} {{.State.ExitCode}}' "${PROJECT}_migrate_1")" = "exited 0" ] && break
  sleep 0.2
done
[ "$(podman inspect --format '{{.State.Status}} {{.State.ExitCode}}' "${PROJECT}_migrate_1")" = "exited 0" ] \
  || { echo "migrate did not end with exit code 0 within 120 s" >&2; exit 1; }
for c in migrate lmgate-1 lmgate-2; do
  echo "$c: $(podman inspect --format 'restarts {{.RestartCount}}, {{.State.Status}}' "${PROJECT}_${c}_1")"
done
echo "migrate's log: $(podman logs "${PROJECT}_migrate_1" 2>&1 | tail -n 3 | tr '\n' ' ')"
for _ in $(seq 1 100); do
  podman exec "${PROJECT}_caddy_1" test -s /data/caddy/pki/authorities/local/root.crt 2>/dev/null && break
  sleep 0.2
done
podman exec "${PROJECT}_caddy_1" cat /data/caddy/pki/authorities/local/root.crt >"$work/caddy-root.crt"
# Retried: aardvark-dns, podman's DNS, tears its listeners down and sets them up again on
# every container start and stop (containers/aardvark-dns#389), and a lookup of `postgres`
# in that moment fails ("no such host").
admin_json=""
for attempt in $(seq 1 10); do
  admin_json="$(podman exec "${PROJECT}_lmgate-1_1" lmgate admin-keys create --scope read,accounts,credits,keys --name ci --json 2>"$work/admin-key.err")" && break
  echo "lmgate admin-keys create, attempt $attempt: $(tr '\n' ' ' <"$work/admin-key.err")"
  admin_json=""
  sleep 1
done
[ -n "$admin_json" ] || { echo "lmgate admin-keys create failed 10 times" >&2; exit 1; }
admin_key="$(node -e 'console.log(JSON.parse(process.argv[1]).secret)' "$admin_json")"
for _ in $(seq 1 100); do
  podman logs "${PROJECT}_lmgate-1_1" 2>&1 | grep -c 'created with this API key' >/dev/null && break
  sleep 0.2
done
podman logs "${PROJECT}_lmgate-1_1" 2>&1 | grep -c 'created with this API key' >/dev/null \
  || { echo "no demo key in lmgate-1's log" >&2; exit 1; }
echo "lmgate-1's log holds the demo key"

step "compose checks"
NODE_EXTRA_CA_CERTS="$work/caddy-root.crt" PROXY_URL=https://localhost:18443 \
  INSTANCE_URLS=http://127.0.0.1:18081,http://127.0.0.1:18082 ADMIN_KEY="$admin_key" \
  node container/check.mjs compose

step "compose down"
# SIGTERM to the instances first: each drains and exits 0, as serve does.
podman stop -t 30 "${PROJECT}_lmgate-1_1" "${PROJECT}_lmgate-2_1" >/dev/null
for c in lmgate-1 lmgate-2; do
  code="$(podman inspect --format '{{.State.ExitCode}}' "${PROJECT}_${c}_1")"
  [ "$code" = 0 ] || { echo "$c exited $code on SIGTERM" >&2; exit 1; }
done
echo "both instances exited 0 on SIGTERM"
compose_down 30 >/dev/null 2>&1
