#!/usr/bin/env bash
# lab.sh - real separate nodes on one machine, as Linux namespaces (root only).
#
#   lab.sh up [N]              a head and N nodes (default 4), see below
#   lab.sh down                end every process in the lab, remove it all
#   lab.sh exec NAME CMD...    run CMD inside NAME's namespaces (head, n0, n1, ...)
#   lab.sh wipe NAME...        the node loses its storage: its tmpfs is unmounted
#                              and a fresh, empty one mounted in its place
#   lab.sh mpirun [--ppn K] -n NP PROG ARGS...
#                              the MPI launcher, run where it is called (head or a
#                              node), placing ranks on the nodes (2 per node, or K)
#   lab.sh hostname NAME       the hostname of NAME (lab-n0, ...)
#   lab.sh names               the nodes' short names (n0 n1 ...)
#
# Each member (the head and every node) is a process holding its own network
# namespace (one interface, lab0, a veth pair into a bridge that lives in a
# namespace of its own; addresses 10.77.0.0/24 exist only inside the lab), its
# own UTS namespace (hostname "head", "lab-n0", ...) and its own mount
# namespace, in which /dev/shm is a private tmpfs (the node-local storage:
# the same path on every node, so CAIRN_BASE is the same everywhere), /tmp is a
# private tmpfs and /etc/hosts names the lab's members. Only the file system
# (the build) and the PFS directory <lab>/pfs are shared. Nothing is made in
# the machine's own network namespace; `down` (or the end of the last process
# in them) frees the namespaces, their interfaces and mounts.
#
# The lab lives in CAIRN_LAB_DIR (default /var/tmp/cairn-lab). MPI: CAIRN_LAB_MPI
# = openmpi (default; mpirun with plm_rsh_agent = tests/cluster/agent, TCP over
# lab0) or mpich (mpiexec.hydra with -launcher-exec tests/cluster/agent). The
# agent enters the target member's namespaces with nsenter and starts the
# remote command with a clean environment, as ssh would.
set -euo pipefail
here=$(cd "$(dirname "$(readlink -f "$0")")" && pwd)
LAB=${CAIRN_LAB_DIR:-/var/tmp/cairn-lab}
SUBNET=10.77.0
SHM_SIZE=${CAIRN_LAB_SHM:-256m}
CLEAN_PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

die() { echo "lab: $*" >&2; exit 1; }
pid_of() { # pid_of NAME: the holder of NAME's namespaces
  local f=$LAB/pids/$1
  [ -f "$f" ] || die "no member '$1' in the lab at $LAB (lab.sh up?)"
  cat "$f"
}
host_of() { case $1 in head) echo head ;; *) echo "lab-$1" ;; esac; }
names() { cat "$LAB/nodes"; }
# member HOST: the member (head, n0, ...) a host name or lab address stands for.
member() {
  local h=${1%%.*}
  case $1 in "$SUBNET".*) h=$(awk -v a="$1" '$1 == a { print $2 }' "$LAB/hosts") ;; esac
  case $h in head) echo head ;; lab-n*) echo "${h#lab-}" ;; n[0-9]*) echo "$h" ;;
    *) die "host '$1' is not in the lab" ;; esac
}
# poll SECONDS CMD...: true once CMD succeeds, false after SECONDS.
poll() {
  local until=$((SECONDS + $1)); shift
  until "$@"; do [ "$SECONDS" -lt "$until" ] || return 1; sleep 0.05; done
}
# Entering a mount namespace resets the root to the namespace's own: --root keeps the
# member's (inside a chroot such as fresh-check's Debian root, the clone is only there).
in_ns() { local p; p=$(pid_of "$1"); shift; nsenter -t "$p" --net --uts --mount --root --wd=/ -- "$@"; }
link_up() { # link_up NAME: every lab link of NAME is up
  if [ "$1" = bridge ]; then ! in_br ip -br link | grep -v '^lo' | grep -qv 'UP'
  else in_ns "$1" ip -br link show lab0 | grep -q ' UP '; fi
}
in_br() { nsenter -t "$(pid_of bridge)" --net -- "$@"; }

# lab_propagation: how the members' mount namespaces are made so that their
# mounts (/dev/shm, /tmp, /etc/hosts) never reach the host. Normally by making
# every mount private (unshare --propagation private). Inside a chroot whose
# root is no mount point (a fresh Debian root made by debootstrap, as
# fresh-check.sh runs the suite), that fails ("cannot change root filesystem
# propagation"), and the mount around the root is not listed; there the
# propagation is kept as it is, and only if no mount in sight is shared (as
# in a mount namespace made private, which fresh-check.sh makes).
lab_propagation() {
  if mountpoint -q /; then echo private; return; fi
  ! grep -q ' shared:' /proc/self/mountinfo ||
    die "/ is no mount point (a chroot?) and shared mounts are in sight: the lab's mounts could reach the host"
  echo unchanged
}

# hold NAME SETUP: start a holder process in new namespaces; it runs SETUP
# (bash) there, says ready, and sleeps until `down`.
hold() {
  local name=$1 setup=$2
  rm -f "$LAB/ready.$name"
  setsid unshare --net --uts --mount --propagation "$(lab_propagation)" -- \
    bash -c "$setup"' && touch "$0" && exec sleep infinity' "$LAB/ready.$name" \
    </dev/null >>"$LAB/lab.log" 2>&1 &
  echo $! >"$LAB/pids/$name"
  poll 30 test -e "$LAB/ready.$name" || die "member $name did not come up (see $LAB/lab.log)"
}

up() {
  local n=${1:-4} i name addr
  [ "$(id -u)" -eq 0 ] || die "needs root (namespaces, mounts)"
  [ ! -e "$LAB/pids" ] || die "a lab exists at $LAB already (lab.sh down first)"
  mkdir -p "$LAB/pids" "$LAB/pfs"
  chmod 755 "$LAB"
  : >"$LAB/lab.log"
  { echo "127.0.0.1 localhost"; echo "$SUBNET.1 head"
    for ((i = 0; i < n; i++)); do echo "$SUBNET.$((11 + i)) lab-n$i"; done; } >"$LAB/hosts"
  : >"$LAB/nodes"
  for ((i = 0; i < n; i++)); do echo "n$i" >>"$LAB/nodes"; done
  # The bridge: a network namespace of its own, holding br0.
  hold bridge "ip link set lo up && ip link add br0 type bridge && ip link set br0 up"
  for name in head $(names); do
    addr=$(awk -v h="$(host_of "$name")" '$2 == h { print $1 }' "$LAB/hosts")
    hold "$name" "hostname $(host_of "$name") &&
      mount -t tmpfs -o size=$SHM_SIZE,mode=1777 lab-shm-$name /dev/shm &&
      mount -t tmpfs -o size=256m,mode=1777 lab-tmp-$name /tmp &&
      mount --bind '$LAB/hosts' /etc/hosts && ip link set lo up"
    in_br ip link add "v-$name" type veth peer name lab0 netns "$(pid_of "$name")"
    in_br ip link set "v-$name" master br0 up
    in_ns "$name" ip addr add "$addr/24" dev lab0
    in_ns "$name" ip link set lab0 up
  done
  # Hostfiles, 2 slots per node. Open MPI's placement is sequential (rank i on
  # line i of seq.K): its mpirun otherwise puts its own node first when it runs
  # on one of the nodes, and the job's rank -> node layout would differ by
  # where the launcher runs (which cairn, at levels 1-3, rightly sees as lost
  # nodes).
  for k in 1 2; do
    for name in $(names); do for ((i = 0; i < k; i++)); do host_of "$name"; done; done >"$LAB/seq.$k"
  done
  for name in $(names); do echo "$(host_of "$name"):2"; done >"$LAB/hostfile.mpich"
  # Every link is up (bounded poll).
  for name in bridge head $(names); do
    poll 30 link_up "$name" || die "$name: the lab's links did not come up"
  done
  echo "lab: up at $LAB: head + $n nodes ($(names | xargs)), node-local storage /dev/shm, PFS $LAB/pfs"
}

# The lab's network namespaces (of the holders), as /proc/PID/ns/net reads.
lab_ns() {
  local f l
  for f in "$LAB"/pids/*; do
    [ -e "$f" ] || continue
    l=$(readlink "/proc/$(cat "$f")/ns/net" 2>/dev/null) && echo "$l"
  done
  return 0
}
# lab_procs NS...: the processes in those namespaces; one pass over /proc
# (no process per entry: a loaded machine has many).
lab_procs() {
  { find /proc/[0-9]*/ns/net -maxdepth 0 -printf '%p %l\n' 2>/dev/null || true; } |
    awk -v ns="$*" 'BEGIN { n = split(ns, a, " "); for (i = 1; i <= n; i++) w[a[i]] = 1 }
                    $2 in w { split($1, p, "/"); print p[3] }'
}

down() {
  [ -d "$LAB" ] || return 0
  local ns procs round
  ns=$(lab_ns | xargs)
  # Everything in the lab dies with it, holders too, which frees the
  # namespaces (their veths, mounts); again while a process that was entering
  # one as the others died is found there.
  for round in 1 2 3 4 5 6 7 8 9 10; do
    procs=$([ -z "$ns" ] || lab_procs $ns | xargs) || true
    [ -n "$procs" ] || break
    kill -KILL $procs 2>/dev/null || true
    poll 10 bash -c '! kill -0 '"$procs"' 2>/dev/null' || true
  done
  [ -z "$procs" ] || echo "lab: processes outlived the teardown: $procs" >&2
  rm -rf -- "$LAB"
  [ -z "$procs" ]
}

wipe() {
  local name
  for name in "$@"; do
    [ "$name" != head ] || die "the head has no node-local storage to wipe"
    # A lost node's processes die with it: the crashed job's ranks and proxies
    # may still be exiting (MPICH's keep /dev/shm segments mapped), so wait for
    # the tmpfs to come free; what still holds it after that is killed (the
    # namespace's holder excepted), as a replaced node comes back empty.
    if ! poll 30 in_ns "$name" umount /dev/shm 2>/dev/null; then
      local holder procs
      holder=$(pid_of "$name")
      procs=$(lab_procs "$(readlink "/proc/$holder/ns/net")" | grep -vx "$holder" | xargs) || true
      [ -z "$procs" ] || kill -KILL $procs 2>/dev/null || true
      poll 30 in_ns "$name" umount /dev/shm 2>/dev/null ||
        die "cannot unmount $name's /dev/shm (a process still uses it: $(in_ns "$name" fuser -m /dev/shm 2>&1 | xargs))"
    fi
    in_ns "$name" mount -t tmpfs -o "size=$SHM_SIZE,mode=1777" "lab-shm-$name" /dev/shm
  done
}

# The rsh agent: AGENT [ssh options] HOST COMMAND...: COMMAND (one string, as a
# remote shell reads it) inside HOST's namespaces, with a clean environment.
agent() {
  while [ $# -gt 0 ]; do
    case $1 in
      -l|-p|-o|-i|-F) shift 2 ;;
      -*) shift ;;
      *) break ;;
    esac
  done
  [ $# -ge 2 ] || die "agent: usage: agent HOST COMMAND"
  local m; m=$(member "$1"); shift
  local p; p=$(pid_of "$m")
  exec nsenter -t "$p" --net --uts --mount --root --wd=/ -- env -i PATH="$CLEAN_PATH" HOME=/root \
    USER=root LOGNAME=root SHELL=/bin/bash LANG=C.UTF-8 CAIRN_LAB_DIR="$LAB" /bin/sh -c "$*"
}

# The launcher, run where it is called (in the head's or a node's namespaces).
launch() {
  local ppn=2 np=
  while [ $# -gt 0 ]; do
    case $1 in
      --ppn) ppn=$2; shift 2 ;;
      -n|-np) np=$2; shift 2 ;;
      *) break ;;
    esac
  done
  [ -n "$np" ] && [ $# -ge 1 ] || die "usage: lab.sh mpirun [--ppn K] -n NP PROG ARGS..."
  case ${CAIRN_LAB_MPI:-openmpi} in
    openmpi)
      local x=() v
      for v in $(compgen -e); do
        case $v in CAIRN_*|SLURMD_NODENAME|ASAN_OPTIONS|UBSAN_OPTIONS|LSAN_OPTIONS) x+=(-x "$v") ;; esac
      done
      [ -f "$LAB/seq.$ppn" ] || die "--ppn takes 1 or 2"
      exec mpirun --allow-run-as-root --hostfile "$LAB/seq.$ppn" --mca rmaps seq --bind-to none \
        --mca plm_rsh_agent "$here/agent" --mca plm_rsh_no_tree_spawn 1 --mca mpi_yield_when_idle 1 \
        --mca btl self,vader,tcp --mca btl_tcp_if_include lab0 --mca oob_tcp_if_include lab0 \
        "${x[@]}" -np "$np" "$@" ;;
    mpich)
      exec mpiexec.hydra -f "$LAB/hostfile.mpich" -launcher ssh -launcher-exec "$here/agent" \
        -iface lab0 -ppn "$ppn" -n "$np" "$@" ;;
    *) die "CAIRN_LAB_MPI must be openmpi or mpich" ;;
  esac
}

cmd=${1:-}; [ $# -gt 0 ] && shift
case $cmd in
  up) up "$@" ;;
  down) down ;;
  exec) [ $# -ge 2 ] || die "usage: lab.sh exec NAME CMD..."
    p=$(pid_of "$1"); shift
    exec nsenter -t "$p" --net --uts --mount --root --wd="$PWD" -- "$@" ;;
  wipe) wipe "$@" ;;
  agent) agent "$@" ;;
  mpirun) launch "$@" ;;
  hostname) host_of "$1" ;;
  names) names ;;
  *) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; [ -z "$cmd" ] || exit 2 ;;
esac
