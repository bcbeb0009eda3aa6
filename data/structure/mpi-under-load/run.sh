#!/bin/bash
# The MPI tests 10 times in a row with both cores busy (two spinning processes), on the clean clone's build.
cd /tmp/ci-clone/build
( while :; do :; done ) & L1=$!
( while :; do :; done ) & L2=$!
for i in $(seq 1 10); do
  s=$(date +%s); ctest -L mpi --output-on-failure > /tmp/mpiload/run$i.log 2>&1; rc=$?
  echo "run $i rc=$rc $(date -u +%T) $(( $(date +%s) - s )) s: $(grep 'tests passed' /tmp/mpiload/run$i.log)" >> /tmp/mpiload/summary.txt
done
kill $L1 $L2
