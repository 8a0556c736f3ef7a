#!/usr/bin/env python3
# ctl_clients.py - clients of oprofiled's control socket for control_clients.sh:
# idle ones, slow ones dripping a byte at a time, ones that never read their
# reply, bursts, and a samples-per-CPU-second meter through "status".
# The socket is reached through an fd of the session directory (any path length).
# SPDX-License-Identifier: MIT
import errno
import os
import select
import socket
import sys
import time


def connect(dfd):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect("/proc/self/fd/%d/control" % dfd)
    return s


def request(dfd, line, timeout):
    """one request; the whole reply, or None when it took longer than timeout"""
    end = time.monotonic() + timeout
    try:
        s = connect(dfd)
    except OSError:
        return None
    try:
        s.settimeout(timeout)
        s.sendall(line.encode())
        s.shutdown(socket.SHUT_WR)
        out = b""
        while True:
            left = end - time.monotonic()
            if left <= 0:
                return None
            s.settimeout(left)
            b = s.recv(65536)
            if not b:
                return out.decode(errors="replace")
            out += b
    except OSError:
        return None
    finally:
        s.close()


def samples(dfd, timeout):
    r = request(dfd, "status\n", timeout)
    if r is None:
        return None
    for l in r.splitlines():
        if l.startswith("samples: "):
            return int(l.split()[1])
    return None


def cpu_s(pid):
    with open("/proc/%d/stat" % pid) as f:
        st = f.read()
    fields = st[st.rindex(")") + 2:].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def cmd_rate(dfd, pid, secs, timeout):
    """samples the daemon took per CPU second of pid; 0 when status did not answer"""
    c0, s0 = cpu_s(pid), samples(dfd, timeout)
    time.sleep(secs)
    c1, s1 = cpu_s(pid), samples(dfd, timeout)
    if s0 is None or s1 is None:
        print("rate 0 (status did not answer within %g s)" % timeout)
        return
    cpu = c1 - c0
    print("rate %d (%d samples in %.2f CPU s of pid %d)" %
          (int((s1 - s0) / cpu) if cpu > 0.05 else 0, s1 - s0, cpu, pid))


class Client:
    def __init__(self, dfd, kind):
        self.kind = kind
        self.sock = connect(dfd)
        self.t0 = time.monotonic()
        self.next_drip = self.t0
        if kind == "noread":
            # the reply is never read: the daemon must not wait for it
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            self.sock.sendall(b"status\n")


def cmd_hold(dfd, secs, nidle, ndrip, nnoread):
    """keep the clients connected for secs (reconnecting the ones the daemon
    drops); report how long the daemon let each kind live"""
    kinds = ["idle"] * nidle + ["drip"] * ndrip + ["noread"] * nnoread
    life = {k: 0.0 for k in set(kinds)}
    dropped = {k: 0 for k in set(kinds)}
    connects = failed = 0
    p = select.poll()
    live = {}

    def add(kind):
        nonlocal connects, failed
        try:
            c = Client(dfd, kind)
        except OSError:
            failed += 1
            return
        connects += 1
        live[c.sock.fileno()] = c
        p.register(c.sock, select.POLLRDHUP | select.POLLHUP | select.POLLERR |
                   (select.POLLIN if kind != "noread" else 0))

    for k in kinds:
        add(k)
    end = time.monotonic() + secs
    while time.monotonic() < end:
        now = time.monotonic()
        for c in list(live.values()):
            if c.kind == "drip" and now >= c.next_drip:
                c.next_drip = now + 0.9
                try:
                    c.sock.send(b"s")  # a line that never ends
                except OSError:
                    pass
        for fd, ev in p.poll(100):
            c = live.get(fd)
            if c is None:
                continue
            if c.kind != "noread" and not (ev & (select.POLLRDHUP | select.POLLHUP | select.POLLERR)):
                try:
                    if c.sock.recv(4096):
                        continue  # the error line; the close follows
                except OSError:
                    pass
            # the daemon closed it
            life[c.kind] = max(life[c.kind], time.monotonic() - c.t0)
            dropped[c.kind] += 1
            p.unregister(fd)
            del live[fd]
            c.sock.close()
            if time.monotonic() < end - 0.5:
                add(c.kind)
        if failed and len(live) < len(kinds) and time.monotonic() < end - 0.5:
            for k in kinds:
                if sum(1 for c in live.values() if c.kind == k) < kinds.count(k):
                    add(k)
                    break
    now = time.monotonic()
    for c in live.values():  # still connected at the end: they lived this long
        life[c.kind] = max(life[c.kind], now - c.t0)
        c.sock.close()
    for k in sorted(life):
        print("%s longest %.2f s dropped %d" % (k, life[k], dropped[k]))
    print("connects %d failed %d" % (connects, failed))


def cmd_burst(dfd, n):
    """n connections at once, none sends: how many are turned away at once"""
    socks = []
    for _ in range(n):
        try:
            socks.append(connect(dfd))
        except OSError:
            pass
    busy = 0
    end = time.monotonic() + 1.0
    pending = list(socks)
    while pending and time.monotonic() < end:
        r, _, _ = select.select(pending, [], [], max(0.0, end - time.monotonic()))
        for s in r:
            try:
                b = s.recv(4096)
            except OSError:
                b = b""
            if b.startswith(b"error: busy"):
                busy += 1
            pending.remove(s)
    for s in socks:
        s.close()
    print("connected %d busy %d" % (len(socks), busy))


def main():
    a = sys.argv[1:]
    dfd = os.open(a[1], os.O_RDONLY | os.O_DIRECTORY)
    if a[0] == "rate":
        cmd_rate(dfd, int(a[2]), float(a[3]), float(a[4]))
    elif a[0] == "hold":
        cmd_hold(dfd, float(a[2]), int(a[3]), int(a[4]), int(a[5]))
    elif a[0] == "burst":
        cmd_burst(dfd, int(a[2]))
    else:
        sys.exit("usage: ctl_clients.py rate|hold|burst SESSION_DIR ...")


if __name__ == "__main__":
    main()
