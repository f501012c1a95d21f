# The device's copy bandwidth in the same run as the sampling targets: softmax reads and writes its
# bytes once, so its 2.8 TB/s target is set beside what a device-to-device copy reaches.
source bench/norm/copy_bandwidth.sh
