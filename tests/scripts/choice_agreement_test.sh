#!/usr/bin/env bash
# scripts/choice-agreement check on made-up runs: picks that agree, picks that differ within 3% as the
# judge timed them, and picks that differ by more (or that the judge never timed) must fail.
set -u
script=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
# A run's file: the flagship's rows at 64x64x64, made from one row of a real run (flagship-row.csv, from
# data/flagship/regret/measured/measured1.csv), so that core's reader reads them as the script does.
template=$(dirname "$0")/flagship-row.csv
run_file() {  # VARIANT KERNEL ...
  python3 -c '
import csv, sys
template = next(csv.DictReader(open(sys.argv[1], newline="")))
out = csv.DictWriter(sys.stdout, fieldnames=list(template), lineterminator="\n")
out.writeheader()
for i, (variant, kernel) in enumerate(zip(sys.argv[2::2], sys.argv[3::2])):
    out.writerow(dict(template, variant=variant, resolved=f"kernel={kernel};choice=measured;launch=graph", m=64,
                      n=64, k=64, inputs="uniform", run_id=template["run_id"] + "-" + str(i)))
' "$template" "$@"
}
make_case() {  # name pick1 pick2 pick3 judge-log-lines...
  local name=$1; shift
  mkdir -p "$dir/$name"
  local i=1
  for pick in "$1" "$2" "$3"; do
    run_file cuda_cores "$pick" tensor_cores "small:tf32x3:tile=32x32;thread=4x4;split=2" >"$dir/$name/run$i.csv"
    i=$((i + 1))
  done
  shift 3
  printf '%s\n' "$@" >"$dir/$name/judge.log"
}
a="small:default:tile=32x32;thread=4x4;split=4" b="small:default:tile=32x64;thread=8x4;split=2"
make_case same "$a" "$a" "$a" "choice 64x64x64 uniform $a: ms 0.0054 0"
make_case near "$a" "$b" "$a" "choice 64x64x64 uniform $a: ms 0.0054 0" "choice 64x64x64 uniform $b: ms 0.0060 0" \
  "choice 64x64x64 uniform $a: ms, in turns 0.00540 0" "choice 64x64x64 uniform $b: ms, in turns 0.00550 0"
make_case far "$a" "$b" "$a" "choice 64x64x64 uniform $a: ms, in turns 0.00540 0" \
  "choice 64x64x64 uniform $b: ms, in turns 0.00600 0"
make_case untimed "$a" "$b" "$a" "choice 64x64x64 uniform $a: ms 0.0054 0"
fail=0
expect() {  # case expected-exit
  "$script" check "$dir/$1" --share 0.95 >"$dir/$1.out" 2>&1
  local rc=$?
  if [ $rc -ne "$2" ]; then echo "FAIL: $1 ended $rc, expected $2"; cat "$dir/$1.out"; fail=1; fi
}
expect same 0
expect near 0
expect far 1
expect untimed 1
[ $fail -eq 0 ] && echo "choice-agreement check: agreeing, near, far and untimed picks judged as expected"
exit $fail
