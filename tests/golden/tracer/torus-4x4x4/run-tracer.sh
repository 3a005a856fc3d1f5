#!/bin/sh
# Runs TraceR on this folder (written by infracc): 64 ranks on 64 CODES servers.
# TRACER: the traceR binary (default: traceR on PATH). NP: MPI processes of the
# parallel simulation (default 2). Any NP works (CODES spreads its 64 x 3 LPs over
# them); more processes simulate faster until the LPs per process get few, and
# optimistic runs (--sync=3) may then roll back more. --sync=1 runs sequentially
# (NP=1) and gives the reference result; 3 must agree with it.
# The result: 'Job 0 Time <seconds>' (the latest rank's finish).
set -eu
cd "$(dirname "$0")"
exec mpirun ${MPIRUN_FLAGS:-} -np "${NP:-2}" "${TRACER:-traceR}" --sync="${SYNC:-3}" -- network.conf tracer_config
