#!/usr/bin/env bash
# The lab against its cheats (cheats_plugin.cu): REPEATS separate runs of every cheat and its honest
# twin on odd shapes; every cheat's row must be `failed` by the lab's judgement (not a fatal CUDA
# error, which ends a run), every twin's `ok`, and every row there, in every run.
#   cheats_test.sh MMLAB PLUGIN host|gpu [REPEATS]     (MMLAB_CHEATS_KEEP=DIR keeps every run's files)
#     host  the host cheats (no GPU needed)
#     gpu   the GPU cheats: 77 (skipped) without a GPU
set -u
mmlab=$1 plugin=$2 mode=$3 repeats=${4:-20}
dir=${MMLAB_CHEATS_KEEP:-$(mktemp -d)}
mkdir -p "$dir"
[ -n "${MMLAB_CHEATS_KEEP:-}" ] || trap 'rm -rf "$dir"' EXIT
# The memoising cheats (issue #81) on shapes whose products take 0.05 ms or more: below it the lab does
# not tell a trial on inputs it has seen from noise (nor can such a cheat gain: every timed trial is on
# inputs of its own).
if [ "$mode" = gpu ]; then
  nvidia-smi -L >/dev/null 2>&1 || { echo "no GPU: skipped"; exit 77; }
  algorithms=cheat_side_stream,honest_fork_join,cheat_legacy_stream,cheat_per_thread,honest_per_thread,cheat_late_thread,cheat_right_once,cheat_zeros_after,cheat_half,honest_halves,honest_plain,cheat_stored,honest_through,cheat_poison_aware,honest_reads_c,cheat_past_stop,honest_thread_joined,cheat_tf32,cheat_count_calls,honest_count_calls
  shapes=383x405x1508,1375x526x130,64x64x64,2048x2048x512
  memo_algorithms=cheat_memo_sampled,honest_memo_sampled,cheat_memo_checksum,honest_memo_checksum
  memo_shapes=383x405x1508,1200x700x3000,2048x2048x512
else
  algorithms=cheat_host_once,cheat_host_late,cheat_host_stored,cheat_host_poison_aware,honest_host
  shapes=64x48x80,129x65x33
  memo_algorithms=cheat_host_memo,honest_host_memo
  memo_shapes=256x200x300
fi
for r in $(seq 1 "$repeats"); do
  mkdir -p "$dir/$r"
  for set in rows memo; do
    if [ $set = rows ]; then names=$algorithms list=$shapes; else names=$memo_algorithms list=$memo_shapes; fi
    "$mmlab" run --plugin "$plugin" --algorithms "$names" --shape "$list" --trials 5 --warmup 1 \
      --seed "$r" --output "$dir/$r/$set.csv" >"$dir/$r/$set.log" 2>&1
    rc=$?
    # A run with failed rows ends 1; anything else but 0 is the lab's own failure.
    [ $rc -le 1 ] || { cat "$dir/$r/$set.log"; echo "FAIL: run $r ($set) exit $rc"; exit 1; }
  done
done
check() {  # check NAMES SHAPES SET
want=$(( repeats * $(echo "$2" | tr ',' '\n' | wc -l) ))
awk -F, -v want="$want" -v names="$1" 'FNR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
         { a = $col["algorithm"]; st = $col["status"]; rows[a]++
           if ($0 ~ /cudaError/) { bad++; print "a CUDA error (a sticky one ends the run): " a " " $col["m"] "x" $col["n"] "x" $col["k"] }
           if (a ~ /^cheat_/ && st != "failed") { bad++; print "a cheat passed: " a " " $col["m"] "x" $col["n"] "x" $col["k"] " " st }
           if (a ~ /^honest_/ && st != "ok") { bad++; print "an honest twin did not pass: " a " " $col["m"] "x" $col["n"] "x" $col["k"] " " st ": " $col["reason"] } }
         END { n = split(names, every, ",")
               for (i = 1; i <= n; i++) { printf "%s: %d rows\n", every[i], rows[every[i]]
                                          if (rows[every[i]] != want) { bad++; print "  expected " want " rows" } }
               exit (bad > 0) }' "$dir"/*/"$3".csv
}
check "$algorithms" "$shapes" rows || { echo FAIL; exit 1; }
check "$memo_algorithms" "$memo_shapes" memo || { echo FAIL; exit 1; }
# What the lab said of each cheat (the first run's reasons).
awk -F, 'FNR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next } $col["algorithm"] ~ /^cheat_/ && !seen[$col["algorithm"]]++ { print $col["algorithm"] ": " $col["reason"] }' "$dir/1/rows.csv" "$dir/1/memo.csv"
echo "every cheat failed and every twin passed in $repeats runs"
