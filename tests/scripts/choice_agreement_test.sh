#!/usr/bin/env bash
# scripts/choice-agreement check on made-up runs: picks that agree, picks that differ within 3% as the
# judge timed them, and picks that differ by more (or that the judge never timed) must fail.
set -u
script=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
header=algorithm,variant,resolved,m,n,k,inputs,status,reason
row() { echo "flagship,$1,kernel=$2;choice=measured;launch=graph,64,64,64,uniform,ok,"; }
make_case() {  # name pick1 pick2 pick3 judge-log-lines...
  local name=$1; shift
  mkdir -p "$dir/$name"
  local i=1
  for pick in "$1" "$2" "$3"; do
    { echo "$header"; row cuda_cores "$pick"; row tensor_cores "small:tf32x3:tile=32x32;thread=4x4;split=2"; } \
      >"$dir/$name/run$i.csv"
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
