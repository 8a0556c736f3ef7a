#!/usr/bin/env python3
# reuse_pid.py - runs a command as a new process in a given cgroup, with a
# given pid if asked (issue 20's reused-pid test): the kernel hands out
# last_pid + 1, so with --pid=N it writes N-1 to
# /proc/sys/kernel/ns_last_pid just before forking, retrying (at most 50
# times) when another process of the busy machine took N first; then puts
# the pid counter back where it was, so that the machine's processes do not
# notice. The child joins the cgroup (writes itself to DIR/cgroup.procs)
# and execs the command. Needs root (CAP_SYS_ADMIN) for --pid.
# Usage: reuse_pid.py [--pid=N] [--pid-file=F] CGROUP_DIR CMD [ARG...]
# Prints "pid N" and exits with the command's status (3: no such pid after
# 50 tries, 2: usage).
# SPDX-License-Identifier: MIT
import os
import sys

LAST = "/proc/sys/kernel/ns_last_pid"


def main(argv):
    want = None
    pid_file = None
    while argv and argv[0].startswith("--"):
        a = argv.pop(0)
        if a.startswith("--pid="):
            want = int(a[6:])
        elif a.startswith("--pid-file="):
            pid_file = a[11:]
        else:
            print("reuse_pid.py: unknown option " + a, file=sys.stderr)
            return 2
    if len(argv) < 2:
        print(__doc__ if __doc__ else "usage: reuse_pid.py [--pid=N] CGROUP_DIR CMD...", file=sys.stderr)
        return 2
    cg, cmd = argv[0], argv[1:]
    for _ in range(50):
        before = None
        if want is not None:
            with open(LAST) as f:
                before = int(f.read())
            with open(LAST, "w") as f:
                f.write(str(want - 1))
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(r)
            if want is not None and os.getpid() != want:
                os._exit(3)
            with open(os.path.join(cg, "cgroup.procs"), "w") as f:
                f.write(str(os.getpid()))
            os.write(w, b"x")  # in the cgroup: the parent may report the pid
            os.close(w)
            try:
                os.execv(cmd[0], cmd)
            finally:
                os._exit(127)
        os.close(w)
        if before is not None:
            # the counter continues where it was (never below what was handed out)
            with open(LAST) as f:
                now = int(f.read())
            with open(LAST, "w") as f:
                f.write(str(max(before, now)))
        ok = os.read(r, 1)
        os.close(r)
        if not ok:  # the child exited early: another process had the pid
            os.waitpid(pid, 0)
            continue
        print("pid %d" % pid, flush=True)
        if pid_file:
            with open(pid_file, "w") as f:
                f.write("%d\n" % pid)
        _, status = os.waitpid(pid, 0)
        return os.waitstatus_to_exitcode(status)
    print("reuse_pid.py: could not get pid %s in 50 tries" % want, file=sys.stderr)
    return 3


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
