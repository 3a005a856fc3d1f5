#!/usr/bin/env bash
# Runs the libFuzzer targets of a fuzz build (cmake -DINFRACC_FUZZ=ON, docs/reliability.md).
#
#   tests/fuzz/run.sh <build-dir> <limit> [target ...]
#
# <limit> is passed to libFuzzer: -runs=N (CI: a fixed number of executions from a fixed
# seed, so a run is repeatable) or -max_total_time=S. Without targets, all of them.
# INFRACC_FUZZ_JOBS=N runs N targets at a time (default: the number of CPUs; each target
# is one process on one CPU); the summaries come out in the order of the targets. New inputs go to <build-dir>/fuzz/corpus/<target> (the checked-in
# seeds in tests/fuzz/corpus/<target> are read, never written); a crash leaves its input
# in <build-dir>/fuzz/artifacts/ and the script exits 1 naming it.
#
# INFRACC_FUZZ_ALSO=<other-build-dir> also reads that build's corpus of each target: a
# corpus grown by a long campaign on a build without sanitizers (-DINFRACC_FUZZ_SANITIZE=OFF)
# is replayed on the sanitizer build with -runs=0.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
build="$1"; limit="$2"; shift 2
targets=("$@")
# By default every target the build has (its fuzz-<target> links, CMakeLists.txt keeps
# the list), the slowest first so that it does not run alone at the end.
if [ ${#targets[@]} -eq 0 ]; then
  for link in "$build"/fuzz-*; do
    [ -L "$link" ] && targets+=("${link##*/fuzz-}")
  done
  [ ${#targets[@]} -eq 0 ] && { echo "run.sh: $build has no fuzz-<target> links (cmake --build $build --target fuzz)" >&2; exit 2; }
  for i in "${!targets[@]}"; do [ "${targets[i]}" = otf2 ] && unset 'targets[i]'; done
  [ -L "$build/fuzz-otf2" ] && targets=(otf2 "${targets[@]}")
fi
jobs="${INFRACC_FUZZ_JOBS:-$(nproc)}"
mkdir -p "$build/fuzz/artifacts"
# One target: its libFuzzer run, then its summary line (and on failure the input) in
# <build-dir>/fuzz/<target>.result; exit status 1 on a finding.
fuzz_one() {
  local t="$1"
  mkdir -p "$build/fuzz/corpus/$t"
  local log="$build/fuzz/$t.log"
  # OTF2's bytes are parsed by Debian's libotf2, which allocates by counts it has not
  # checked yet (up to 32 GiB for one damaged record; infracc checks the anchor file's
  # counts itself). glibc's malloc returns NULL for such a request and the library then
  # reports an error; the sanitizer allocator is told to do the same, and libFuzzer's
  # per-allocation limit is lifted for this target (the RSS limit still holds).
  local malloc_limit=1024 asan_options="${ASAN_OPTIONS:-}"
  if [ "$t" = otf2 ]; then
    malloc_limit=1048576; asan_options="${asan_options:+$asan_options:}allocator_may_return_null=1"
    # Each execution writes a whole archive, and libotf2 reads it in infracc's worker
    # process (support/Isolation.h; since 2026-11-28 one worker for many archives, not a
    # fork each, which made this target the slowest by far: it had a twelfth of the
    # executions). Much of what is left is page faults in libotf2's buffers; glibc's
    # malloc asking for transparent huge pages cuts them in a build without sanitizers
    # (the sanitizers' allocator ignores it).
    export GLIBC_TUNABLES="${GLIBC_TUNABLES:+$GLIBC_TUNABLES:}glibc.malloc.hugetlb=1"
  fi
  # -close_fd_mask=2: the driver's error messages (expected for bad input) stay quiet.
  # -print_funcs=0: no "NEW_FUNC" lines, each of which has llvm-symbolizer run (about a
  # tenth of a short run's time).
  ASAN_OPTIONS="$asan_options" "$build/fuzz-$t" "$limit" -seed=1 -close_fd_mask=2 -timeout=10 \
      -print_funcs=0 \
      -rss_limit_mb=2048 -malloc_limit_mb="$malloc_limit" -dict="$here/dict/$t.dict" \
      -artifact_prefix="$build/fuzz/artifacts/$t-" \
      "$build/fuzz/corpus/$t" "$here/corpus/$t" ${INFRACC_FUZZ_ALSO:+"$INFRACC_FUZZ_ALSO/fuzz/corpus/$t"} \
      >"$log" 2>&1
  local rc=$?
  local summary="$(grep -E '^Done [0-9]+ runs' "$log" | tail -1); $(grep -oE 'cov: [0-9]+ ft: [0-9]+ corp: [0-9]+' "$log" | tail -1)"
  if [ $rc -ne 0 ]; then
    echo "fuzz-$t: FAILED (exit $rc); log: $log"
    grep -E 'ERROR|SUMMARY|Test unit written' "$log" | head -5
    # The input itself, so a failure in a log (CI) can be replayed without the artifact.
    for a in "$build/fuzz/artifacts/$t-"*; do
      [ -f "$a" ] && echo "input $(basename "$a") (hex, first 512 bytes):" &&
        head -c 512 "$a" | od -An -tx1 | head -40
    done
    return 1
  fi
  echo "fuzz-$t: ${summary:-done}"
}

for t in "${targets[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
  fuzz_one "$t" >"$build/fuzz/$t.result" 2>&1 &
done
wait
status=0
for t in "${targets[@]}"; do
  cat "$build/fuzz/$t.result"
  grep -q "^fuzz-$t: FAILED" "$build/fuzz/$t.result" && status=1
done
exit $status
