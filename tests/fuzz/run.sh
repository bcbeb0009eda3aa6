#!/bin/sh
# run.sh FUZZER SEEDS SECONDS FINDINGS: fuzz for SECONDS from the seeds (left unchanged: new inputs
# go to a scratch corpus), crashes and the like into FINDINGS. Exit status: the fuzzer's.
set -eu
fuzzer=$1 seeds=$2 seconds=$3 findings=$4
corpus=$(mktemp -d)
trap 'rm -rf "$corpus"' EXIT
mkdir -p "$findings"
"$fuzzer" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
  -artifact_prefix="$findings/" -print_final_stats=1 "$corpus" "$seeds"
