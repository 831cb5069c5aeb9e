#!/usr/bin/env bash
# setup.sh: install the Debian packages cairn builds, tests and benchmarks with.
# Idempotent: does nothing when every package is already installed. Waits for
# another package manager's lock instead of failing. Run as root (or via sudo).
set -eu

pkgs=(
  build-essential pkg-config
  libopenmpi-dev openmpi-bin            # MPI (MPICH also works: setup.sh mpich)
  gfortran                              # the Fortran binding (module cairn) and its tests
  python3 python3-numpy python3-mpi4py  # the Python binding (package cairn) and its tests
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
  libhdf5-dev                           # routed HDF5 files split by dataset at level 4 (serial HDF5)
  libcmocka-dev                         # unit-test framework
  clang libclang-rt-14-dev              # libFuzzer and sanitizers for `make fuzz`
  slurmctld slurmd slurm-client munge   # a real Slurm for tests/slurm (started by the test)
  util-linux                            # setpriv: the hooks act as the job's user
  bsdutils                              # script: a pseudo-terminal for the CLI's progress tests
  e2fsprogs xfsprogs                    # mkfs.ext4, mkfs.xfs: crash states on a real file system (tests/crash)
)
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
