#!/usr/bin/env bash
# Session 2 call 4 (the same machine as call 3, two minutes after its run A ended, a separate job): run B of
# experiments/distributed-x4-rows.ini at e9cba57 (given inline to the device tool; this is that command).
source gpu-bin/env.sh; O=/tmp/c79i; mkdir -p $O; trap 'tar -C $O -czf $OUT/c79i.tgz .' EXIT
nvidia-smi > $O/device.txt; nvidia-smi -L >> $O/device.txt; $B/mmlab --version >> $O/device.txt; date -u +%FT%TZ > $O/times.txt
printf '#!/bin/bash\nexec mpirun --allow-run-as-root --bind-to none -x NCCL_NVLS_ENABLE=0 -x NVSHMEM_DISABLE_NVLS=1 -x MMLAB_NVSHMEM_DIR -x MMLAB_CUBLASMP_LIB -x LD_LIBRARY_PATH "$@"\n' > /tmp/mpiexec; chmod +x /tmp/mpiexec
timeout 200 /tmp/mpiexec -np 4 $B/mmlab run experiments/distributed-x4-rows.ini --rank-timeout 60 --stop-after 180 --resume \
  --output $O/rows-runB.csv > $O/rows-runB.log 2>&1; echo "runB rc=$? $(date -u +%FT%TZ)" >> $O/times.txt
nvidia-smi --query-gpu=index,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv >> $O/device.txt
