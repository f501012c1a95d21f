# Session 36's device steps, sourced by runN.sh after ../session25/common.sh and ../session35/steps.sh.
# run_as NAME ROUND BINARY [NAME=VALUE ...]: /tmp/b/BINARY on $list with the environment given, into
# $AB/ab_NAME_ROUND.csv (scripts/ab.sh's names, so ../session35/table.py reads them).
run_as() {
  local name=$1 r=$2 bin=$3; shift 3
  env "$@" timeout "${RUN_LIMIT:-150}" /tmp/b/$bin --testlist $list --output_path $AB/ab_${name}_$r.csv >$AB/ab_${name}_$r.log 2>&1 ||
    echo "$name $r exit $?"
}
# unpack_bins: every carried .ab/bin/*.xz into /tmp/b/NAME.
unpack_bins() {
  local packed
  for packed in .ab/bin/*.xz; do unpack "$packed" "/tmp/b/$(basename "$packed" .xz)"; done
}
