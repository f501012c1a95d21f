# Session 44's device steps, sourced by runN.sh (which then sets R, its result folder):
#   rotate LIST LIMIT ORDER...  the carried binaries (.ab/bin) on LIST, a round per ORDER (binary names
#                               in turn), each run cut at LIMIT seconds, into $R/ab; verify: below
source "$(dirname "${BASH_SOURCE[0]}")/../session25/common.sh"
source "$(dirname "${BASH_SOURCE[0]}")/../session35/steps.sh"
source "$(dirname "${BASH_SOURCE[0]}")/../session36/steps.sh"
rotate() {
  local list=$1 limit=$2 order b r=0
  shift 2
  mkdir -p "$R/ab"
  for order in "$@"; do
    r=$((r + 1))
    for b in $order; do AB=$R/ab RUN_LIMIT=$limit list=$list run_as "$b" "$r" "$b"; done
  done
}
# verify NAME: the final code's check, NAME the packed kbench (.ab/bin/NAME.xz) beside the GPU tests and
# the fault probe (build/carry): the whole GPU test binary, then FlashInfer's sample testlist unchanged
# with --refcheck (build/carry/peer.txt, a copy of ../shared/peer's), into $R.
verify() {
  mkdir -p "$R/peer"
  unpack_all "$1"
  unpack build/carry/fault_probe.xz /work/main/build/tests/kbench_fault_probe
  gtests gtest_all.log 280
  grep -E "ms total\)$" "$R/gtest_all.log" | tail -1
  timeout 200 "/tmp/b/$1" --testlist build/carry/peer.txt --refcheck --output_path "$R/peer/peer.csv" >"$R/peer/peer.log" 2>&1
  echo "peer exit $?: $(grep -E 'Testlist summary|\] Backends:' "$R/peer/peer.log" | tail -3 | tr '\n' ' ')"
  grep -E '^\[ERROR\]' "$R/peer/peer.log" | head -20
}
