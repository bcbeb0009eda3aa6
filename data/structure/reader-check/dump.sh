#!/bin/bash
# dump.sh OUTDIR: every CSV in /tmp/frames/list read by mmlab-analyze rows (json), or its error
out=$1; mkdir -p $out
i=0
while read f; do
  i=$((i+1))
  /work/main/build/bin/mmlab-analyze rows --format json "$f" > $out/$i.json 2> $out/$i.err; echo $? > $out/$i.rc
done < /tmp/frames/list
