#!/usr/bin/env bash
# Side by side: hostd apply and podman-compose, each a whole process per run, on the same 20
# containers (busybox, each a shell that sleeps and stops when told to). For each tool it times
# bringing them up from nothing once, then RUNS runs (default 5) that find them all as
# declared, and prints the median of those.
#
#   bench/peers/containers.sh          # from the repository; needs go, and apt for the peer
#   RUNS=9 bench/peers/containers.sh
#
# It installs podman, runc, busybox-static and podman-compose from Debian's packages when they
# are missing. podman gets a containers.conf and an image store of the script's own in a
# temporary directory, removed at the end with every container it made (KEEP=1 keeps the
# directory); the machine's own podman settings and containers are not touched.
set -euo pipefail
cd "$(dirname "$0")/../.."
RUNS=${RUNS:-5}
N=20

pkgs=()
command -v podman >/dev/null 2>&1 || pkgs+=(podman)
command -v runc >/dev/null 2>&1 || pkgs+=(runc)
dpkg -s busybox-static >/dev/null 2>&1 || pkgs+=(busybox-static)
command -v podman-compose >/dev/null 2>&1 || pkgs+=(podman-compose)
if [ ${#pkgs[@]} -gt 0 ]; then
  echo "installing ${pkgs[*]} from Debian's packages" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${pkgs[@]}" >&2
fi

W=$(mktemp -d /tmp/hq-containers-XXXXXX)
export CONTAINERS_CONF=$W/containers.conf CONTAINERS_STORAGE_CONF=$W/storage.conf
cleanup() {
  podman rm -a -f -t 0 >/dev/null 2>&1 || true
  [ "${KEEP:-}" = 1 ] || rm -rf "$W"
}
trap cleanup EXIT
printf '[containers]\ndefault_ulimits = []\n[engine]\ncgroup_manager = "cgroupfs"\nruntime = "runc"\n' >"$CONTAINERS_CONF"
printf '[storage]\ndriver = "vfs"\ngraphroot = "%s/graph"\nrunroot = "%s/run"\n' "$W" "$W" >"$CONTAINERS_STORAGE_CONF"

echo "building hostd into $W" >&2
go build -o "$W/hostd" ./cmd/hostd

mkdir -p "$W/rootfs/bin"
cp "$(command -v busybox)" "$W/rootfs/bin/busybox"
for a in sh sleep; do ln -s busybox "$W/rootfs/bin/$a"; done
tar -C "$W/rootfs" -cf "$W/rootfs.tar" .
podman import -q "$W/rootfs.tar" localhost/bench/bb:1 >/dev/null
image="localhost/bench/bb@$(podman image inspect --format '{{.Digest}}' localhost/bench/bb:1)"

cmd="trap 'exit 0' TERM; sleep 3600 & wait"
{
  echo '{"resources": ['
  for i in $(seq -w 1 $N); do
    sep=','; [ "$i" = "$N" ] && sep=''
    printf '  {"name": "c%s", "kind": "container", "image": "%s", "command": ["sh", "-c", "%s"]}%s\n' "$i" "$image" "$cmd" "$sep"
  done
  echo ']}'
} >"$W/bench.json"
{
  echo 'version: "3"'
  echo 'services:'
  for i in $(seq -w 1 $N); do
    printf '  c%s:\n    image: %s\n    command: ["sh", "-c", "%s"]\n' "$i" "$image" "$cmd"
  done
} >"$W/compose.yml"

# ms runs a command and prints how long it took, in milliseconds.
ms() {
  local t0 t1
  t0=$(date +%s%N)
  "$@" >/dev/null 2>&1
  t1=$(date +%s%N)
  echo $(( (t1 - t0) / 1000000 ))
}
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

hostd_apply() { HOSTD_ROOT=$W/root HOSTD_STATE_DIR=$W/state HOSTD_NODE=bench "$W/hostd" apply --take "$W/bench.json" || [ $? -eq 2 ]; }
compose_up() { podman-compose -p bench -f "$W/compose.yml" up -d; }

mkdir -p "$W/root"
up=$(ms hostd_apply)
noop=$(for _ in $(seq "$RUNS"); do ms hostd_apply; done | median)
running=$(podman ps --filter label=hq.node=bench --format '{{.Names}}' | wc -l)
printf '%-16s up %6s ms   no-op median of %s: %6s ms   (%s running)\n' "hostd apply" "$up" "$RUNS" "$noop" "$running"
podman rm -a -f -t 0 >/dev/null

up=$(ms compose_up)
noop=$(for _ in $(seq "$RUNS"); do ms compose_up; done | median)
running=$(podman ps --filter label=io.podman.compose.project=bench --format '{{.Names}}' | wc -l)
printf '%-16s up %6s ms   no-op median of %s: %6s ms   (%s running)\n' "podman-compose" "$up" "$RUNS" "$noop" "$running"
