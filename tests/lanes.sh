# lanes.sh - sourced by run.sh: run the suite's sections side by side in
# CAIRN_TEST_JOBS lanes. Each section (or group of sections that must not run
# at the same time) runs in a child run.sh of its own (CAIRN_TEST_LANE=1, its
# own CAIRN_TEST_TAG, so its own job ids, directories and daemons); a lane
# takes the next one from a queue, longest first, so the long sections start
# at once and the short ones fill the gaps. A section's lines are printed
# whole when it ends; the counts of every child add up to the last line.
# Returns run.sh's exit status (0: nothing failed).

# The queue, longest first: the seconds each part took in the lanes of an idle
# 2-core run (make test's profile, 2026-11-30, after the scenarios' rank counts
# were cut to what each tests). Sections joined by "+" run in one child, one
# after another: the Slurm test and the cluster lab take turns on machine-wide
# names (slurmctld's ports, munge, namespace nodes) anyway; the quickest ones
# share one child's start-up.
LANE_QUEUE="daemon:368 pfs:325 slurm+cluster:210 soak:159 incr:136 fti:133 drill:131 scr:124
  veloc:120 query:120 hooks:112 python:109 owed:101 install:89 levels:84 mpi:81 ring:73 unit:71
  remap:71 crash:70 fortran:48 h5:45 user:38 need:37 demo:37 auto:27 nodes:26 lossy:14
  replay+cli+config+docs:18"

lanes_run() {
  local dir item name sections s picked=() n=0 lane
  dir=$(mktemp -d "${TMPDIR:-/tmp}/cairn-lanes.XXXXXX"); SCRATCH_DIRS+=("$dir")
  for item in $LANE_QUEUE; do
    name=${item%%:*} sections=
    for s in ${name//+/ }; do want "$s" && sections+=" $s"; done # unselected: counted as skipped
    [ -n "$sections" ] && picked+=("${sections# }")
  done
  for s in $(sed -n 's/^section \([a-z]*\) .*/\1/p; s/^if want \([a-z]*\);.*/\1/p' tests/run.sh); do
    [[ " ${LANE_QUEUE//+/ } " == *" $s:"* || " ${LANE_QUEUE//+/ } " == *" $s "* ]] && continue
    FAILED=$((FAILED + 1)); echo "not ok - section $s of run.sh is in no lane (add it to LANE_QUEUE in tests/lanes.sh)"
  done
  printf '%s\n' "${picked[@]}" >"$dir/queue"
  echo "# ${#picked[@]} parts of the suite in ${CAIRN_TEST_JOBS:-3} lanes, longest first; each printed when it ends"
  for ((lane = 0; lane < ${CAIRN_TEST_JOBS:-3}; lane++)); do
    lane_worker "$dir" &
  done
  wait
  local log last p f k
  for sections in "${picked[@]}"; do
    log="$dir/${sections// /+}.log"
    last=$(tail -n 1 "$log" 2>/dev/null)
    if [[ $last =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed,\ ([0-9]+)\ skipped$ ]]; then
      PASSED=$((PASSED + BASH_REMATCH[1])) FAILED=$((FAILED + BASH_REMATCH[2]))
      SKIPPED=$((SKIPPED + BASH_REMATCH[3]))
    else
      FAILED=$((FAILED + 1)); echo "not ok - section $sections ended without its counts (see its lines above)"
    fi
  done
  echo "# total took $SECONDS s"
  echo "$PASSED passed, $FAILED failed, $SKIPPED skipped"
  [ "$FAILED" -eq 0 ]
}

lane_worker() { # lane_worker DIR: run parts from DIR/queue until it is empty
  local dir=$1 sections log
  while :; do
    sections=$(flock "$dir/queue.lock" sh -c 'head -n 1 "$1"; sed -i 1d "$1"' _ "$dir/queue")
    [ -n "$sections" ] || return 0
    log="$dir/${sections// /+}.log"
    # Open MPI's session directories per part (scripts/mpirun.sh keeps one per
    # launch): jobs of two lanes never share the top one, which a job that ends
    # removes under another one starting. The lab's jobs span namespaces: theirs.
    case " $sections " in
      *" cluster "* | *" slurm "*) unset OMPI_MCA_orte_tmpdir_base ;;
      *) mkdir -p "$dir/o.${sections// /+}"; export OMPI_MCA_orte_tmpdir_base="$dir/o.${sections// /+}" ;;
    esac
    CAIRN_TEST_LANE=1 CAIRN_TEST_ONLY="$sections" CAIRN_TEST_TAG="$CAIRN_TEST_TAG${sections// /}" \
      bash tests/run.sh >"$log" 2>&1 </dev/null
    # everything but the counts (the parent adds them up), whole, between other parts' lines
    flock "$dir/out" sed '${/^[0-9]* passed, [0-9]* failed, [0-9]* skipped$/d}' "$log"
  done
}

lanes_run
