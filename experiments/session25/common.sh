# Sourced by this session's device scripts (runN.sh): the repository root as the working directory,
# $OUT, the GPU's clocks and power (smi), and `unpack XZ DEST`: a carried, compressed binary into place
# (the GPU tests look for kbench and the fault probe at their build paths).
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT" /tmp/b /work/main/build/src/app /work/main/build/tests
smi() { nvidia-smi --query-gpu=clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv,noheader; }
unpack() { xz -dc "$1" >"$2" && chmod +x "$2"; }
echo "start: $(smi)"
