# The seed-style sample testlist, unchanged (bench/run.sh hook: $KBENCH, $OUT and run_testlist set).
run_testlist samples/sample_testlist.txt
