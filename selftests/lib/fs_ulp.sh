# SPDX-License-Identifier: GPL-2.0
# Shared by the file-system ULP tests (nfs_rdma.sh, p9_rdma.sh), sourced
# after lib.sh: data checks and throughput through the mount at $MNT of
# the server's directory $EXPORT, with $SRC the source file. Each step is
# bounded in time: a connection given up can leave a client waiting.

# fs_sha FILE: its sha256, alone.
fs_sha() {
	sha256sum "$1" | cut -d' ' -f1
}

# fs_copy_check: $SRC through the mount: what the server holds and what
# the client reads back (page cache dropped) match it.
fs_copy_check() {
	local want
	want=$(fs_sha $SRC) &&
		timeout -s KILL 180 cp $SRC $MNT/copy && sync &&
		echo 3 >/proc/sys/vm/drop_caches &&
		[ "$(fs_sha $EXPORT/copy)" = "$want" ] &&
		[ "$(timeout -s KILL 180 sha256sum $MNT/copy | cut -d' ' -f1)" = "$want" ] &&
		rm $MNT/copy
}

# fs_fio_bw FIELD ARGS...: fio on 32 MiB files in the mount, its
# bandwidth in KiB/s (terse v3 field 7 read, 48 write); fails with fio.
# Its job is a thread, so the time limit kills all of it.
fs_fio_bw() {
	local out f=$1
	shift
	out=$(timeout -s KILL 180 fio --name=fs --thread --directory=$MNT --size=32M \
		--output-format=terse --terse-version=3 "$@" 2>&1) ||
		{ echo "$out" | tail -n 5 >&2; return 1; }
	echo "$out" | tail -n 1 | cut -d';' -f"$f"
}
