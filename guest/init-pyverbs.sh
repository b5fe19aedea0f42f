#!/bin/sh
# /init of the pyverbs test (busybox): rdma-core's own Python test suite
# (tests/run_tests.py, with pyverbs from the same rdma-core build) on one
# RDMA device, ernic (the rdma-core provider libernic) or rxe. Its traffic
# tests run in loopback: both players on the same device and GID, the
# rdma_cm ones in two processes connecting to the port's own address.
# Prints each test's line, the summary, and the tracebacks of failures.
. /ulp-lib.sh
# run_tests.py runs "ip -j" (iproute2 from PATH) and multiprocessing needs
# /dev/shm.
export PATH=/sbin:/usr/sbin:/bin:/usr/bin
mkdir -p /dev/shm
mount -t tmpfs tmpfs /dev/shm

load ib_uverbs rdma_ucm
rdma_up
ibdev=$(ls /sys/class/infiniband | head -n 1)
gid=1
cd /usr/share/rdma-core/tests || fail "no rdma-core tests"
say "pyverbs: run_tests.py --dev $ibdev --gid $gid"
timeout 600 python3 run_tests.py --dev "$ibdev" --gid "$gid" -v \
    >/tmp/py.out 2>&1
rc=$?
# One line per test: unittest's "NAME ... RESULT".
grep ' \.\.\. ' /tmp/py.out | sed 's/^/guest: test: /'
grep -E '^Ran |^OK|^FAILED' /tmp/py.out | sed 's/^/guest: pyverbs: /'
# No failure and no error is expected on ernic (since ERNIC-X atomics,
# test_mr_rereg_atomic's atomic WR runs too; docs/driver.md, "pyverbs").
if [ $rc -ne 0 ]; then
    fail "run_tests.py exit $rc"
    grep -A30 '^ERROR:\|^FAIL:' /tmp/py.out | head -n 120 |
        sed 's/^/guest: error: /'
    # A crash (exit 139) leaves no summary: where it was.
    grep -q '^Ran ' /tmp/py.out ||
        tail -n 40 /tmp/py.out | sed 's/^/guest: error: /'
fi
# The project's own checks of verbs that common software needs
# (guest/test_ernic_verbs.py), run apart so rdma-core's count stays its.
cp /test_ernic_verbs.py .
say "verbs: run_tests.py test_ernic_verbs"
timeout 300 python3 run_tests.py --dev "$ibdev" --gid "$gid" -v \
    test_ernic_verbs >/tmp/ev.out 2>&1 || fail "test_ernic_verbs failed"
grep ' \.\.\. ' /tmp/ev.out | sed 's/^/guest: verbs: /'
grep -A30 '^ERROR:\|^FAIL:' /tmp/ev.out | head -n 60 | sed 's/^/guest: error: /'
cd /
finish
