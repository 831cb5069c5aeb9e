# bench/run_codecs.sh: the sections of bench/run.sh on compression: z (lossless codecs,
# the write pipeline, the automatic choice) and lossy (the wavelet method, error-bounded
# modes vs ZFP, lossy checkpoints). Sourced by run.sh, which owns the knobs and helpers.

# ---- z: codecs vs zlib -6, the write pipeline vs its slowest stage, auto vs the best codec ----
# One rank with a pool of 2 compressor threads (the machine's cores), three
# in-memory data sets: examples/heat's field, proj-data's EGM96 geoid grid
# (skipped with a note if absent) and random bytes. Files go to the RAM disk.
bench_z() {
  local bin=$BUILD/bench/z_bench
  if [ ! -x "$bin" ]; then
    echo "# FAILED: $bin not built (run make first)"
    failed=1
    return
  fi
  local size=${Z_SIZE:-64}
  # Data sets, heat's second buffer, decode target, frames and a file read
  # back in RAM; one file at a time on the RAM disk.
  if ! mem_ok $((size * 8 + 512)) $((size * 2 + 256)); then
    echo "# skipped: z: not enough free memory for $((size * 8)) MiB"
    return
  fi
  run_mpi 1 "$bin" --size "$size" --reps "${Z_REPS:-5}" --warmup "${Z_WARMUP:-1}" \
    --heat-steps "${Z_HEAT_STEPS:-1600}" --scale-size "${Z_SCALE_SIZE:-16}" \
    --egm96 "${Z_EGM96:-/usr/share/proj/egm96_15.gtx}"
}

# ---- lossy: the wavelet method as published, then cairn's error-bounded modes vs ZFP ----
# One rank, one thread, in memory: a 3-D heat stencil's field of the paper's
# shape (1156 x 82 x 2), examples/heat's field and the EGM96 geoid grid
# (skipped with a note if absent). The paper's tables (n = 1..128, both
# quantizers, with and without encoding) against gzip alone; then wavelet and
# predict at bounds 1e-2..1e-4 of each field's range against ZFP's fixed-
# accuracy mode at the same tolerance (payloads alone: '#' lines). Then the
# headline, at the checkpoint (lossy_ckpt_bench): EGM96 through a real level-1
# checkpoint and restart, every byte of the generation's files counted,
# `bench: lossy.ckpt.{ratio,comp,decomp}.E.egm96` against ZFP in the same run.
# Every decoded array is checked.
bench_lossy() {
  local bin=$BUILD/bench/lossy_bench
  if [ ! -x "$bin" ]; then
    echo "# FAILED: $bin not built (run make first)"
    failed=1
    return
  fi
  # Data sets (14 MiB), the heat stencils' second buffers, payload, reconstruction, decode.
  if ! mem_ok 256 0; then
    echo "# skipped: lossy: not enough free memory for 256 MiB"
    return
  fi
  run_mpi 1 "$bin" --reps "${LOSSY_REPS:-3}" --warmup "${LOSSY_WARMUP:-1}" \
    --heat3d-steps "${LOSSY_HEAT3D_STEPS:-400}" --heat2d-steps "${LOSSY_HEAT2D_STEPS:-400}" \
    --paper "${LOSSY_PAPER:-heat3d,egm96,heat2d}" --egm96 "${LOSSY_EGM96:-/usr/share/proj/egm96_15.gtx}"
  # At the checkpoint: EGM96 through a real level-1 cairn_checkpoint into /dev/shm, every byte
  # of the generation's files counted, and restarted (every element checked), against ZFP.
  local ckbin=$BUILD/bench/lossy_ckpt_bench
  if [ ! -x "$ckbin" ]; then
    echo "# FAILED: $ckbin not built (run make first)"
    failed=1
    return
  fi
  # Pinned to one CPU: cairn's compressor thread and ZFP then run on the same core (a shared
  # machine's cores can differ by a third in speed, which would flip the ratio by placement).
  local cpu pin=()
  cpu=$(taskset -pc $$ 2>/dev/null | sed 's/.*: //; s/[,-].*//')
  [ -n "$cpu" ] && pin=(taskset -c "$cpu")
  run_mpi 1 "${pin[@]}" "$ckbin" --reps "${LOSSY_CKPT_REPS:-5}" --warmup "${LOSSY_WARMUP:-1}" \
    --dir "$tmp" --egm96 "${LOSSY_EGM96:-/usr/share/proj/egm96_15.gtx}"
}
