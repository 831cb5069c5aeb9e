#!/usr/bin/env bash
# setup.sh: install the Debian packages cairn builds, tests and benchmarks with.
# Idempotent: does nothing when every package is already installed. Waits for
# another package manager's lock instead of failing. Run as root (or via sudo).
# `setup.sh --check` installs nothing: it lists the commands the suite, the demo,
# the bench and the hooks call that are not on PATH (with the package that has
# each) and exits 1 if there is one; tests/run.sh runs it first.
set -eu

pkgs=(
  build-essential pkg-config
  libopenmpi-dev openmpi-bin            # MPI (MPICH also works: setup.sh mpich)
  gfortran                              # the Fortran binding (module cairn) and its tests
  python3 python3-numpy python3-mpi4py  # the Python binding (package cairn) and its tests
  python3-venv python3-pip              # pip install of the package cairn into a venv (its test)
  python3-setuptools python3-wheel      # pyproject.toml's build backend, offline (--no-build-isolation)
  cmake                                 # the CMake package's test: an application project finds cairn
  libjerasure-dev libgf-complete-dev    # Cauchy Reed-Solomon
  libisal-dev                           # accelerated erasure-coding kernels
  zlib1g-dev libzstd-dev liblz4-dev     # lossless codecs
  libfpzip-dev                          # lossless floating-point predictor codec
  proj-data                             # a real data set for `make bench` (EGM96 geoid)
  libzfp-dev                            # ZFP, the lossy baseline of `make bench`
  xdelta3                               # binary diff, the incremental baseline of `make bench`
  libxxhash-dev                         # checksums and block hashes
  libpmem-dev                           # persistent-memory / tmpfs writes
  libinih-dev                           # INI configuration parser
  libjansson-dev                        # JSON documents of the CLI (cairn ls/status/verify --json)
  libhdf5-dev                           # routed HDF5 files split by dataset at level 4 (serial HDF5)
  libcmocka-dev                         # unit-test framework
  clang libclang-rt-14-dev              # libFuzzer and sanitizers for `make fuzz`
  slurmctld slurmd slurm-client munge   # a real Slurm for tests/slurm (started by the test)
  util-linux                            # setpriv: the hooks act as the job's user
  bsdutils                              # script: a pseudo-terminal for the CLI's progress tests
  e2fsprogs xfsprogs                    # mkfs.ext4, mkfs.xfs: crash states on a real file system (tests/crash)
  procps                                # pgrep, pkill, ps: the tests find and stop daemons
  iproute2                              # ip: the namespace lab's network (tests/cluster)
  psmisc                                # fuser: the lab names what holds a node's /dev/shm
  passwd                                # useradd: the hook tests' unprivileged victim and attacker
  strace                                # the PFS fsync-order check (tests/mpi/run_pfs.sh)
)

# The commands called from tests/, scripts/, bench/ and the Makefile, beyond the
# essential ones every Debian has (coreutils, grep, sed, findutils, diffutils),
# by the package that has them: "PACKAGE COMMAND...", one package a line.
tools=(
  "make make" "gcc gcc" "binutils ar nm objdump readelf" "pkg-config pkg-config"
  "openmpi-bin mpirun" "libopenmpi-dev mpicc mpif90" "gfortran gfortran" "python3 python3" "cmake cmake"
  "clang clang" "xdelta3 xdelta3"
  "slurmctld slurmctld" "slurmd slurmd" "slurm-client sbatch srun scontrol sinfo squeue scancel"
  "munge munged mungekey munge unmunge"
  "util-linux setpriv nsenter unshare setsid flock chrt ionice taskset"
  "bsdutils script logger" "procps pgrep pkill ps" "iproute2 ip" "psmisc fuser"
  "coreutils numfmt timeout truncate nproc" "libc-bin getent ldd" "hostname hostname"
  "mount mount umount losetup" "dpkg dpkg-query" "passwd useradd" "strace strace"
  "e2fsprogs mkfs.ext4" "xfsprogs mkfs.xfs" "util-linux findmnt mountpoint"
)
if [ "${1:-}" = --check ]; then
  # Slurm's and munge's daemons live in /usr/sbin, which a user's PATH may lack;
  # only root runs them (the Slurm test), and root's PATH has it.
  [ "$(id -u)" -eq 0 ] || PATH=$PATH:/usr/sbin:/sbin
  absent=()
  for t in "${tools[@]}"; do
    set -- $t
    p=$1; shift
    for c in "$@"; do command -v "$c" >/dev/null 2>&1 || absent+=("$c ($p)"); done
  done
  [ ${#absent[@]} -eq 0 ] && exit 0
  echo "setup --check: not on PATH: ${absent[*]}; install them with 'make deps' (scripts/setup.sh)" >&2
  exit 1
fi
# `setup.sh mpich` also installs MPICH beside Open MPI (for `make check-mpich`);
# Open MPI stays the default mpicc/mpirun.
if [ "${1:-}" = mpich ]; then
  pkgs+=(mpich libmpich-dev)
fi

missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "setup: installing ${missing[*]}"
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
apt_opts=(-y -q -o DPkg::Lock::Timeout=600)
$sudo apt-get "${apt_opts[@]}" update
# Packages must not start services (munge, slurmd): the Slurm test starts its
# own, with its own configuration. A temporary policy-rc.d says so.
rcd=""
if [ ! -e /usr/sbin/policy-rc.d ]; then
  printf '#!/bin/sh\nexit 101\n' | $sudo tee /usr/sbin/policy-rc.d >/dev/null
  $sudo chmod 755 /usr/sbin/policy-rc.d
  rcd=1
fi
$sudo apt-get "${apt_opts[@]}" install --no-install-recommends "${missing[@]}" || {
  rc=$?; [ -z "$rcd" ] || $sudo rm -f /usr/sbin/policy-rc.d; exit $rc; }
[ -z "$rcd" ] || $sudo rm -f /usr/sbin/policy-rc.d
