#!/bin/sh
# /init of the OpenMPI test (busybox; scripts/guest-mpi-test.sh): N guests
# on one L2 segment, each on ernic (or rxe), OpenMPI's pml ucx over UCX's
# rc_verbs and ud_verbs.
#   server: the head, rank 0: once every other guest answers, runs
#           mpirun with one rank per guest of /mpi-check (a ping-pong
#           with each rank and an allreduce, data checked; "mpi-check:"
#           lines), then tells each guest it is done
#   client: a node: answers mpirun's remote shell (below) until the
#           head says it is done
# mpi_hosts=IP,IP,... (the head's first) names the guests, mpi_rxe=1
# says one of them is on rxe; ulp-lib.sh has the rest of the command
# line.
# mpirun starts its daemon on a node through a remote shell: ssh, or
# its plm_rsh_agent. Here that is /mpi-rsh HOST COMMAND..., which sends
# the command line to the node's busybox nc on port 2222, where
# /mpi-rshd runs it with sh -c and its output comes back, as ssh's would.
. /ulp-lib.sh

hosts=
rxe=0
for a in $(cat /proc/cmdline); do
    case $a in
    mpi_hosts=*) hosts=$(echo "${a#*=}" | tr ',' ' ') ;;
    mpi_rxe=*) rxe=${a#*=} ;;
    esac
done

# Every guest by name, g<last octet> (ulp-lib.sh names this one so).
{
    echo "127.0.0.1 localhost"
    for h in $hosts; do
        echo "$h g${h##*.}"
    done
} >/etc/hosts

cat >/mpi-rshd <<'EOF'
#!/bin/sh
read -r line
exec sh -c "$line" </dev/null 2>&1
EOF
cat >/mpi-rsh <<'EOF'
#!/bin/sh
host=$1
shift
echo "$*" | nc "$host" 2222
EOF
chmod +x /mpi-rshd /mpi-rsh
# UCX's posix transport and OpenMPI's session files want these.
mkdir -p /dev/shm /root
mount -t tmpfs tmpfs /dev/shm
export HOME=/root

# up HOST: its remote shell answers.
up() {
    [ "$(echo 'echo up' | nc "$1" 2222 2>/dev/null)" = up ]
}

mpi_node() {
    nc -ll -p 2222 -e /mpi-rshd &
    wait_client
}

mpi_head() {
    local h i n=0 list=
    for h in $hosts; do
        i=0
        until [ "$h" = "$myip" ] || up "$h"; do
            i=$((i + 1))
            [ $i -lt 300 ] || { fail "$h does not answer"; break; }
            sleep 1
        done
        n=$((n + 1))
        list="$list${list:+,}$h:1"
    done
    say "head: $n guests answer; mpirun -np $n over pml ucx"
    # Each rank's UCX finds its own device and RoCE v2 GID: the guests
    # may be on ernic and rxe. TCP is not among UCX's transports.
    # shellcheck disable=SC2086 # the environment of the ranks
    timeout 600 mpirun.openmpi --allow-run-as-root -np "$n" --host "$list" \
        --mca plm_rsh_agent /mpi-rsh --mca plm_rsh_no_tree_spawn 1 \
        --mca pml ucx --mca btl self,tcp --mca oob_tcp_if_include "$nd" \
        -x UCX_IB_TX_MIN_SGE=3 -x UCX_TLS=self,rc_verbs,ud_verbs \
        -x UCX_WARN_UNUSED_ENV_VARS=n $mpi_env \
        /mpi-check >/tmp/mpi.out 2>&1
    echo "mpirun: exit $?" >>/tmp/mpi.out
    sed 's/^/guest: /' /tmp/mpi.out | tail -n 60
    grep -q '^mpi-check: RESULT PASS' /tmp/mpi.out || fail "mpi-check"
    for h in $hosts; do
        [ "$h" = "$myip" ] && continue
        peer=$h
        tell_server
    done
}

# With a guest on rxe (mpi_rxe=1), UCX must not check a UD packet's
# destination GID (rxe reports no packet type in wc.sl; docs/driver.md,
# "UCX").
mpi_env=
[ "$rxe" = 1 ] && mpi_env="-x UCX_UD_VERBS_ETH_DGID_CHECK=n"
rdma_up
if [ "$role" = server ]; then
    mpi_head
else
    mpi_node
fi
finish
