#!/bin/bash
# The MPI watchdog test ten times in a row with both cores busy (two spinning processes beside it).
cd /work/main
( while :; do :; done ) & b1=$!; ( while :; do :; done ) & b2=$!
pass=0
for i in $(seq 1 10); do
  if tests/mpi/mpi_test.sh build/bin/mmlab mpirun 4 watchdog > /tmp/wd-$i.log 2>&1; then pass=$((pass+1)); echo "run $i passed"; else echo "run $i FAILED"; tail -3 /tmp/wd-$i.log; fi
done
kill $b1 $b2
echo "$pass of 10 passed with both cores busy"
