#!/usr/bin/env bash
# A one-node Ceph cluster (1 mon, 1 memstore OSD, no mgr, auth none) with radosgw on 127.0.0.1: the
# strict S3 peer of the tests. Needs Debian's ceph-mon ceph-osd radosgw ceph-common, and curl.
# Adapted from start-rgw.sh and stop-rgw.sh of the mailroom workspace tools; additions: Paxos
# intervals cut so the start takes ~3 s instead of ~16, deadlines on every wait, daemon output kept
# in the cluster's directory, a watchdog that stops the cluster when the process that started it
# dies, and a stop that waits for the daemons to exit.
#
#   rgw.sh start DIR MON_PORT RGW_PORT ACCESS_KEY SECRET_KEY [WATCH_PID]
#   rgw.sh stop DIR
set -euo pipefail

daemons=(client.rgw.t osd.0 mon.a)

running() { # true while PID exists and is no zombie
  local state
  state=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) || return 1
  [ "$state" != Z ]
}

stop() {
  local D=$1 pid n
  if [ -f "$D/run/watchdog.pid" ]; then
    pid=$(cat "$D/run/watchdog.pid")
    rm -f "$D/run/watchdog.pid"
    # The watchdog calls stop as a child of its own; it is not to be killed then.
    if [ "$pid" != "$PPID" ]; then kill "$pid" 2>/dev/null || true; fi
  fi
  # One at a time, each after the one that depends on it: signalled together, radosgw and the OSD
  # keep retrying the monitor and take ~18 s to exit instead of under one.
  for n in "${daemons[@]}"; do
    [ -f "$D/run/$n.pid" ] || continue
    pid=$(cat "$D/run/$n.pid")
    # Removed first, so a second stop never signals a pid the system has since reused.
    rm -f "$D/run/$n.pid"
    kill "$pid" 2>/dev/null || continue
    for _ in $(seq 100); do
      running "$pid" || continue 2
      sleep 0.1
    done
    kill -9 "$pid" 2>/dev/null || true
  done
}

# Runs CMD until it succeeds, for at most 60 s; WHAT names the wait in the error.
await() {
  local what=$1
  shift
  for _ in $(seq 600); do
    "$@" >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  echo "rgw.sh: timed out waiting for $what; logs in $D/log" >&2
  tail -n 20 "$D"/log/*.log >&2 || true
  return 1
}

start() {
  D=$1
  local MONPORT=$2 RGWPORT=$3 ACCESS=$4 SECRET=$5 WATCH=${6:-}
  mkdir -p "$D"/{run,log,mon.a,osd0,rgw}
  local FSID
  FSID=$(cat /proc/sys/kernel/random/uuid)
  cat >"$D/ceph.conf" <<EOF
[global]
fsid = $FSID
mon host = [v2:127.0.0.1:$MONPORT]
public addr = 127.0.0.1
ms bind ipv6 = false
auth cluster required = none
auth service required = none
auth client required = none
ms mon client mode = crc
ms client mode = crc
ms mon service mode = crc
ms service mode = crc
ms cluster mode = crc
ms mon cluster mode = crc
osd pool default size = 1
osd pool default min size = 1
mon allow pool size one = true
mon warn on pool no redundancy = false
osd pool default pg num = 8
osd pool default pgp num = 8
osd pool default pg autoscale mode = off
mon max pg per osd = 1000
osd crush chooseleaf type = 0
osd objectstore = memstore
memstore device bytes = 1073741824
# radosgw creates its pools one monitor command at a time, and each waits out the Paxos propose
# interval (1 s by default): a single monitor has no one to batch with.
paxos propose interval = 0.01
paxos min wait = 0.001
run dir = $D/run
log file = $D/log/\$name.log
admin socket = $D/run/\$name.asok
pid file = $D/run/\$name.pid
mon data = $D/mon.\$id
osd data = $D/osd\$id
keyring = $D/keyring
[client.rgw.t]
rgw frontends = beast endpoint=127.0.0.1:$RGWPORT
rgw data = $D/rgw
EOF
  local C=(-c "$D/ceph.conf")
  if [ -n "$WATCH" ]; then
    # Outlives a test run killed before its teardown (then stops the cluster and removes its
    # directory); `stop` ends it otherwise.
    setsid bash -c 'while kill -0 "$1" 2>/dev/null; do sleep 1; done; bash "$2" stop "$3"; rm -rf "$3"' \
      watchdog "$WATCH" "${BASH_SOURCE[0]}" "$D" </dev/null >/dev/null 2>&1 &
    echo $! >"$D/run/watchdog.pid"
  fi
  monmaptool --create --addv a "[v2:127.0.0.1:$MONPORT]" --fsid "$FSID" --clobber "$D/monmap" >/dev/null
  ceph-mon "${C[@]}" --mkfs -i a --monmap "$D/monmap" >"$D/log/mkfs.out" 2>&1
  ceph-mon "${C[@]}" -i a </dev/null >"$D/log/mon.out" 2>&1
  await "the monitor" timeout 5 ceph "${C[@]}" --connect-timeout 4 health
  local UUID ID
  UUID=$(cat /proc/sys/kernel/random/uuid)
  ID=$(ceph "${C[@]}" osd new "$UUID")
  ceph-osd "${C[@]}" -i "$ID" --mkfs --osd-uuid "$UUID" >>"$D/log/mkfs.out" 2>&1
  ceph-osd "${C[@]}" -i "$ID" </dev/null >"$D/log/osd.out" 2>&1
  await "the OSD" bash -c "ceph -c '$D/ceph.conf' osd stat | grep -q '1 up'"
  radosgw "${C[@]}" -n client.rgw.t </dev/null >"$D/log/rgw.out" 2>&1
  await "radosgw on port $RGWPORT" curl -sf -o /dev/null "http://127.0.0.1:$RGWPORT/"
  # A radosgw that could not bind its port exits, and whatever holds the port answered instead.
  running "$(cat "$D/run/client.rgw.t.pid")" || { echo "rgw.sh: radosgw exited; see $D/log" >&2 && exit 1; }
  radosgw-admin "${C[@]}" user create --uid=mailroom --display-name=mailroom \
    --access-key="$ACCESS" --secret-key="$SECRET" >/dev/null
}

case ${1:-} in
start) start "${@:2}" ;;
stop) stop "${2:?dir}" ;;
*)
  echo "usage: $0 start DIR MON_PORT RGW_PORT ACCESS_KEY SECRET_KEY [WATCH_PID] | stop DIR" >&2
  exit 2
  ;;
esac
