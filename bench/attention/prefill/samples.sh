# The seeds' prefill commands, verbatim (bench/run.sh hook).
run_testlist samples/prefill_seed.txt
