# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
# A one-node Slurm cluster in a folder of its own, for tests/bats/slurm.bats:
# munged (as the munge user, a key made here, its socket in the folder),
# slurmctld and slurmd (as root), config, state, spool and logs in the
# folder, ports free at start.  Nothing of the machine's own /etc/slurm,
# /etc/munge or /run/munge is used or changed.
#
#   . tests/lib/slurm_cluster.sh
#   slurm_cluster_start DIR   # 0: up (SLURM_CONF exported); 2: cannot run
#                             # here (SLURM_WHY says why); 1: an error
#   slurm_cluster_stop DIR    # every process of the cluster gone, or 1
#
# Every process the cluster starts (daemons, slurmstepd, job tasks) carries
# SLURM_CONF=DIR/slurm.conf in its environment: the daemons are started
# with it, a step inherits slurmd's and srun's.  slurm_cluster_stop ends
# those processes by that mark, so nothing of the cluster outlives it, and
# nothing else is touched.
#
# Run alone (as root) to try it: bash tests/lib/slurm_cluster.sh start DIR,
# then bash tests/lib/slurm_cluster.sh stop DIR.

SLURM_SBIN=${SLURM_SBIN:-/usr/sbin}
SLURM_LIB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# slurm_free_ports: two TCP ports nothing listens on now (held together
# while asked for, so they differ).
slurm_free_ports() {
	python3 -c 'import socket
s = [socket.socket() for _ in range(2)]
for x in s:
    x.bind(("127.0.0.1", 0))
print(" ".join(str(x.getsockname()[1]) for x in s))'
}

# slurm_cluster_pids DIR: the PIDs whose environment names DIR's config,
# this shell and its ancestors left out (the test exports SLURM_CONF: what
# it starts carries the mark, it does not).
slurm_cluster_pids() {
	python3 - "SLURM_CONF=$1/slurm.conf" <<-'EOF'
		import os, sys
		mark = sys.argv[1].encode()
		mine, pid = set(), os.getpid()
		while pid > 1:
		    mine.add(pid)
		    try:
		        with open("/proc/%d/stat" % pid) as f:
		            pid = int(f.read().rsplit(")", 1)[1].split()[1])
		    except (OSError, ValueError, IndexError):
		        break
		for d in os.listdir("/proc"):
		    if not d.isdigit() or int(d) in mine:
		        continue
		    try:
		        with open("/proc/%s/environ" % d, "rb") as f:
		            env = f.read().split(b"\0")
		    except OSError:
		        continue
		    if mark in env:
		        print(d)
	EOF
}

slurm_write_conf() {
	local dir=$1 host=$2 cpus=$3 ctld_port=$4 d_port=$5
	cat >"$dir/slurm.conf" <<-EOF
		ClusterName=fvbpftest
		SlurmctldHost=$host(127.0.0.1)
		SlurmctldPort=$ctld_port
		SlurmdPort=$d_port
		SlurmUser=root
		SlurmdUser=root
		AuthType=auth/munge
		AuthInfo=socket=$dir/munge/munge.socket
		CredType=cred/munge
		StateSaveLocation=$dir/state
		SlurmdSpoolDir=$dir/spool
		SlurmctldPidFile=$dir/slurmctld.pid
		SlurmdPidFile=$dir/slurmd.pid
		SlurmctldLogFile=$dir/log/slurmctld.log
		SlurmdLogFile=$dir/log/slurmd.log
		SlurmctldDebug=info
		SlurmdDebug=info
		ProctrackType=proctrack/linuxproc
		TaskPlugin=task/none
		SelectType=select/cons_tres
		SelectTypeParameters=CR_CPU
		JobAcctGatherType=jobacct_gather/none
		AccountingStorageType=accounting_storage/none
		MpiDefault=none
		SwitchType=switch/none
		ReturnToService=2
		SlurmdParameters=config_overrides
		SlurmctldTimeout=30
		SlurmdTimeout=30
		InactiveLimit=0
		KillWait=5
		MinJobAge=60
		NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
		PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
	EOF
}

# slurm_wait_up: sinfo says the node is idle (up to 60 s).
slurm_wait_up() {
	local i state
	for i in $(seq 600); do
		state=$(sinfo -h -o %T 2>/dev/null)
		case $state in idle*|mixed*|allocated*) return 0 ;; esac
		sleep 0.1
	done
	return 1
}

# slurm_start_daemons DIR: munged, slurmctld and slurmd, each of which
# forks into the background; run under tests/lib/subreaper.py, which reaps
# them and the steps' slurmstepd.  2 and DIR/log/why when one cannot start.
slurm_start_daemons() {
	local dir=$1
	export SLURM_CONF=$dir/slurm.conf
	if ! runuser -u munge -- env SLURM_CONF="$SLURM_CONF" "$SLURM_SBIN/munged" \
		--socket="$dir/munge/munge.socket" --key-file="$dir/munge/munge.key" \
		--pid-file="$dir/munge/munged.pid" --log-file="$dir/munge/munged.log" \
		--seed-file="$dir/munge/munged.seed" >"$dir/log/munged.out" 2>&1; then
		echo "munged does not start here: $(tail -n 1 "$dir/log/munged.out")" >"$dir/log/why"
		return 2
	fi
	if ! "$SLURM_SBIN/slurmctld" -i >"$dir/log/slurmctld.out" 2>&1; then
		echo "slurmctld does not start here: $(tail -n 1 "$dir/log/slurmctld.out")" >"$dir/log/why"
		return 2
	fi
	if ! "$SLURM_SBIN/slurmd" >"$dir/log/slurmd.out" 2>&1; then
		echo "slurmd does not start here: $(tail -n 1 "$dir/log/slurmd.out")" >"$dir/log/why"
		return 2
	fi
	return 0
}

slurm_cluster_start() {
	local dir=$1 host cpus i rc
	SLURM_WHY=
	for i in munged slurmctld slurmd slurmstepd; do
		if [ ! -x "$SLURM_SBIN/$i" ]; then
			SLURM_WHY="$SLURM_SBIN/$i is not installed (make deps installs slurm-wlm and munge)"
			return 1
		fi
	done
	id munge >/dev/null 2>&1 || { SLURM_WHY="no munge user (Debian's munge package makes it)"; return 1; }
	host=$(hostname -s)
	# 4 CPUs whatever the machine has (config_overrides): a 2-task job and
	# an --overlap step fit on a 2-CPU machine and on a 1-CPU one alike
	cpus=4
	mkdir -p "$dir/munge" "$dir/state" "$dir/spool" "$dir/log" || return 1
	# munged checks that the key and its socket's folder are its own, not
	# writable by others, and that everyone may reach the socket
	chmod 755 "$dir"
	chown munge:munge "$dir/munge"
	chmod 711 "$dir/munge"
	head -c 1024 /dev/urandom >"$dir/munge/munge.key"
	chown munge:munge "$dir/munge/munge.key"
	chmod 400 "$dir/munge/munge.key"
	# shellcheck disable=SC2046 # two ports, two words
	slurm_write_conf "$dir" "$host" "$cpus" $(slurm_free_ports)
	export SLURM_CONF=$dir/slurm.conf
	# fd 3 closed: bats waits for whatever holds it
	setsid python3 "$SLURM_LIB_DIR/subreaper.py" "$dir/started" \
		bash "$SLURM_LIB_DIR/slurm_cluster.sh" daemons "$dir" \
		</dev/null >"$dir/log/subreaper.out" 2>&1 3>&- &
	for i in $(seq 600); do
		[ -s "$dir/started" ] && break
		sleep 0.1
	done
	rc=$(cat "$dir/started" 2>/dev/null)
	if [ "$rc" != 0 ]; then
		SLURM_WHY=$(cat "$dir/log/why" 2>/dev/null)
		[ -n "$SLURM_WHY" ] || SLURM_WHY="the daemons did not start within 60 s (status '${rc}'): $(tail -n 1 "$dir/log/subreaper.out")"
		return 2
	fi
	if ! slurm_wait_up; then
		SLURM_WHY="the node did not come up within 60 s: sinfo says '$(sinfo -h -o '%T %E' 2>&1 | head -n 1)'; slurmd's log: $(tail -n 1 "$dir/log/slurmd.log" 2>/dev/null)"
		return 2
	fi
	return 0
}

# slurm_cluster_stop DIR: jobs cancelled, daemons stopped, then whatever
# still carries the cluster's mark (a step that ignored the cancel) killed;
# 1 when something is left after that.
slurm_cluster_stop() {
	local dir=$1 i pids
	[ -f "$dir/slurm.conf" ] || return 0
	export SLURM_CONF=$dir/slurm.conf
	scancel --full --quiet --user=root >/dev/null 2>&1
	for i in $(seq 100); do
		[ -z "$(squeue -h 2>/dev/null)" ] && break
		sleep 0.1
	done
	for i in slurmd slurmctld; do
		[ -f "$dir/$i.pid" ] && kill -TERM "$(cat "$dir/$i.pid")" 2>/dev/null
	done
	[ -f "$dir/munge/munged.pid" ] && kill -TERM "$(cat "$dir/munge/munged.pid")" 2>/dev/null
	for i in $(seq 100); do
		pids=$(slurm_cluster_pids "$dir")
		[ -z "$pids" ] && return 0
		sleep 0.1
	done
	# shellcheck disable=SC2086 # one PID a word
	kill -KILL $pids 2>/dev/null
	for i in $(seq 50); do
		pids=$(slurm_cluster_pids "$dir")
		[ -z "$pids" ] && return 0
		sleep 0.1
	done
	echo "processes of the Slurm cluster in $dir left: $pids" >&2
	return 1
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	case ${1:-} in
	start)
		slurm_cluster_start "$2"
		rc=$?
		[ -n "$SLURM_WHY" ] && echo "$SLURM_WHY" >&2
		[ $rc -eq 0 ] && echo "export SLURM_CONF=$2/slurm.conf"
		exit $rc
		;;
	stop) slurm_cluster_stop "$2" ;;
	daemons) slurm_start_daemons "$2" ;;
	*) echo "usage: $0 start|stop DIR" >&2; exit 2 ;;
	esac
fi
