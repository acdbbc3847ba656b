#!/usr/bin/env bash
# Side by side: hostd apply, cf-agent -K and puppet apply, each a whole process per run, on the
# same files: 10 directories and 500 files (then 2,000), each file one line of content, mode
# 0644. For every case it times RUNS runs (default 5) after a warm-up and prints the median,
# then the peak RSS of one more run under /usr/bin/time -v.
#
#   bench/peers/run.sh            # from the repository; needs go, and apt for the peers
#   RUNS=9 bench/peers/run.sh
#   TOOLS="hostd cf" bench/peers/run.sh   # leave puppet out (its runs take most of the time)
#
# It installs cfengine3 and puppet from Debian's packages when they are missing (and time,
# for /usr/bin/time). Everything it generates lives in a temporary directory, removed at the
# end (KEEP=1 keeps it); it never touches the repository.
#
# Cases:
#   no-op 500     every file already as declared
#   one change    one file changed behind the tool's back before each run; the run puts it back
#   no-op 2000    2,000 files in the same 10 directories, already as declared
#   create 2000   2,000 files into an empty root (the root, not the tool's state, is emptied)
set -euo pipefail
cd "$(dirname "$0")/../.."
RUNS=${RUNS:-5}
TOOLS=${TOOLS:-hostd cf puppet}
measured() { [[ " $TOOLS " == *" $1 "* ]]; }

need() { command -v "$1" >/dev/null 2>&1; }
install_missing() {
  local pkgs=()
  measured cf && ! need cf-agent && pkgs+=(cfengine3)
  measured puppet && ! need puppet && pkgs+=(puppet)
  [ -x /usr/bin/time ] || pkgs+=(time)
  if [ ${#pkgs[@]} -gt 0 ]; then
    echo "installing ${pkgs[*]} from Debian's packages" >&2
    # The policy is read whole before grep looks at it: grep -q stops at its first match, and
    # under pipefail the pipe from apt-cache would then count as failed.
    candidate() { local policy; policy=$(apt-cache policy "$1"); grep -q 'Candidate: [0-9]' <<<"$policy"; }
    for p in "${pkgs[@]}"; do candidate "$p" || { apt-get update -qq >&2; break; }; done
    for p in "${pkgs[@]}"; do candidate "$p" || { echo "no candidate for $p in apt's lists" >&2; exit 1; }; done
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${pkgs[@]}" >&2
  fi
}
install_missing

W=$(mktemp -d /tmp/hq-peers-XXXXXX)
[ "${KEEP:-}" = 1 ] || trap 'rm -rf "$W"' EXIT
echo "building hostd into $W" >&2
go build -o "$W/bin/hostd" ./cmd/hostd

# generate N writes the three tools' inputs for N files (N/10 per directory) under $W/<tool>.
generate() {
  local n=$1 per=$(( $1 / 10 ))
  mkdir -p "$W/hostd" "$W/cf" "$W/puppet"
  local cfroot="$W/cf/root" proot="$W/puppet/root"
  {
    echo 'body common control { bundlesequence => { "main" }; }'
    echo 'body perms p644 { mode => "644"; rxdirs => "false"; }'
    echo 'body perms p755 { mode => "755"; rxdirs => "false"; }'
    echo 'bundle agent main {'
    echo 'files:'
  } > "$W/cf/policy.cf"
  : > "$W/puppet/site.pp"
  local json="$W/hostd/bench.json" sep=""
  printf '{"resources":[' > "$json"
  for d in $(seq 0 9); do
    local dir; dir=$(printf '/d%02d' "$d")
    echo "  \"$cfroot$dir/.\" create => \"true\", perms => p755;" >> "$W/cf/policy.cf"
    echo "file { '$proot$dir': ensure => directory, mode => '0755' }" >> "$W/puppet/site.pp"
    printf '%s{"name":"d%02d","kind":"directory","path":"%s","mode":"0755"}' "$sep" "$d" "$dir" >> "$json"
    sep=","
  done
  for i in $(seq 0 $(( n - 1 ))); do
    local dir path line
    dir=$(printf '/d%02d' $(( i / per )))
    path=$(printf '%s/f%04d.conf' "$dir" "$i")
    line="setting_$i = value_$i"
    printf '  "%s" create => "true", perms => p644, content => "%s\n";\n' "$cfroot$path" "$line" >> "$W/cf/policy.cf"
    printf "file { '%s': ensure => file, mode => '0644', content => \"%s\\\\n\" }\n" "$proot$path" "$line" >> "$W/puppet/site.pp"
    printf ',{"name":"f%04d","kind":"file","path":"%s","content":"%s\\n","mode":"0644"}' "$i" "$path" "$line" >> "$json"
  done
  echo '}' >> "$W/cf/policy.cf"
  echo ']}' >> "$json"
}

run_hostd() { HOSTD_ROOT="$W/hostd/root" HOSTD_STATE_DIR="$W/hostd/state" "$W/bin/hostd" apply "$W/hostd/bench.json" >/dev/null 2>&1 || [ $? -le 2 ]; }
run_cf() { cf-agent -K -f "$W/cf/policy.cf" >/dev/null 2>&1; }
run_puppet() {
  puppet apply --color=false --confdir="$W/puppet/etc" --vardir="$W/puppet/var" --codedir="$W/puppet/code" \
    --logdir="$W/puppet/log" --rundir="$W/puppet/run" --publicdir="$W/puppet/public" "$W/puppet/site.pp" >/dev/null 2>&1
}
root_of() { case $1 in hostd) echo "$W/hostd/root" ;; cf) echo "$W/cf/root" ;; puppet) echo "$W/puppet/root" ;; esac; }

# prepare CASE TOOL readies the machine for one run of the case (not timed).
prepare() {
  local root; root=$(root_of "$2")
  case $1 in
    change) echo "changed behind its back" > "$root/d00/f0000.conf" ;;
    create) rm -rf "$root"; mkdir -p "$root" ;;
  esac
}

# measure CASE TOOL prints "median_ms peak_rss_kib".
measure() {
  local c=$1 tool=$2 times=() t0 t1
  mkdir -p "$(root_of "$tool")"
  prepare "$c" "$tool"; "run_$tool" # warm-up (and, for the no-op cases, convergence)
  for _ in $(seq "$RUNS"); do
    prepare "$c" "$tool"
    t0=$EPOCHREALTIME; "run_$tool"; t1=$EPOCHREALTIME
    times+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", (b - a) * 1000 }')")
  done
  prepare "$c" "$tool"
  local rss
  rss=$( { /usr/bin/time -v bash -c "$(declare -f "run_$tool"); W='$W'; run_$tool" ; } 2>&1 >/dev/null | awk '/Maximum resident set size/ { print $6 }')
  local median
  median=$(printf '%s\n' "${times[@]}" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
  echo "$median $rss"
}

declare -A MS RSS
for n in 500 2000; do
  rm -rf "$W/hostd" "$W/cf" "$W/puppet"
  generate "$n"
  cases=(noop)
  [ "$n" = 500 ] && cases=(noop change)
  [ "$n" = 2000 ] && cases=(noop create)
  for c in "${cases[@]}"; do
    for tool in $TOOLS; do
      echo "measuring $c $n with $tool" >&2
      read -r ms rss < <(measure "$c" "$tool")
      MS[$c$n$tool]=$ms
      RSS[$c$n$tool]=$rss
    done
  done
done

label() { case $1 in noop500) echo "no-op, 500 files" ;; change500) echo "one change, 500 files" ;; noop2000) echo "no-op, 2,000 files" ;; create2000) echo "create 2,000 files" ;; esac; }
mib() { if [ -n "$1" ]; then awk -v k="$1" 'BEGIN { printf "%.1f MiB", k / 1024 }'; else echo "–"; fi; }
ms() { if [ -n "$1" ]; then echo "$1 ms"; else echo "–"; fi; }
echo
echo "median of $RUNS whole-process runs after a warm-up; peak RSS of one more run ($(nproc) cores, $(date -u +%Y-%m-%d))"
echo
echo "| case | hostd apply | cf-agent -K | puppet apply | cf-agent ÷ hostd |"
echo "|---|---:|---:|---:|---:|"
for k in noop500 change500 noop2000 create2000; do
  h=${MS[${k}hostd]:-} cf=${MS[${k}cf]:-} p=${MS[${k}puppet]:-} ratio=""
  [ -n "$h" ] && [ -n "$cf" ] && ratio=$(awk -v a="$cf" -v b="$h" 'BEGIN { printf "%.1f×", a / b }')
  echo "| $(label $k) | $(ms "$h") | $(ms "$cf") | $(ms "$p") | $ratio |"
done
for k in noop500 noop2000; do
  echo "| peak RSS, $(label $k) | $(mib "${RSS[${k}hostd]:-}") | $(mib "${RSS[${k}cf]:-}") | $(mib "${RSS[${k}puppet]:-}") | |"
done
echo
versions="hostd $(git rev-parse --short HEAD)"
measured cf && versions+=", $(cf-agent --version | head -1)"
measured puppet && versions+=", puppet $(puppet --version 2>/dev/null)"
echo "versions: $versions"
