#!/usr/bin/env bash
# #79 on four H200s, session 2 call 2: run A of experiments/distributed-x4-rows.ini at the revision
# whose copy engines wait for unchanged sends at the run's end (9021743), then the four-GPU MPI test
# (every decomposition, engine and transport; rows among Cannon's variants).
source gpu-bin/env.sh
O=/tmp/c79g; mkdir -p $O; trap 'tar -C $O -czf $OUT/c79g.tgz .' EXIT
nvidia-smi > $O/device.txt; nvidia-smi topo -m >> $O/device.txt; nvidia-smi -L >> $O/device.txt; $B/mmlab --version >> $O/device.txt 2>&1
T=$O/times.txt; t0=$(date +%s); mark() { echo "$1 $(date -u +%FT%TZ) t=$(( $(date +%s) - t0 )) $2" >> $T; }
mark start
printf '#!/bin/bash\nexec mpirun --allow-run-as-root --bind-to none -x NCCL_NVLS_ENABLE=0 -x NVSHMEM_DISABLE_NVLS=1 -x MMLAB_NVSHMEM_DIR -x MMLAB_CUBLASMP_LIB -x LD_LIBRARY_PATH "$@"\n' > /tmp/mpiexec; chmod +x /tmp/mpiexec
timeout 200 /tmp/mpiexec -np 4 $B/mmlab run experiments/distributed-x4-rows.ini --rank-timeout 60 --stop-after 175 --resume \
  --output $O/rows.csv > $O/rows.log 2>&1; mark runA rc=$?
nvidia-smi --query-gpu=index,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv >> $O/device.txt
mkdir -p $O/mpi-test; MMLAB_MPI_TEST_KEEP=$O/mpi-test timeout 330 tests/mpi/mpi_test.sh $B/mmlab /tmp/mpiexec 4 gpus > $O/mpi-test.log 2>&1; mark mpi_gpus_4 rc=$?
mark end
