#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""The cost meter's report (make bench-cost).

report.py OUTDIR RUN...: each RUN is a directory bench/cost/guest.sh
wrote under OUTDIR (its kallsyms, windows and the plugin's win.N dumps),
named KERNEL (7.2, 6.1, ...) or KERNEL-N for a repeat. For every window
(device, operation, size) it sums the instructions executed in kernel
text by symbol, puts each symbol in a class (ICRC, copy, skb/IP/UDP,
transport, rest) and writes OUTDIR/cost.md and cost.txt (per message and
per payload byte, softrdma against rdma_rxe, the classes and their top
symbols, and how far repeated runs differ) and OUTDIR/cost.dat for
bench/cost/plot.gp.
"""
import bisect
import os
import re
import sys

KERNEL_BASE = 0xffff800000000000
TOP = 5

CLASSES = ["icrc", "copy", "net", "transport", "rest"]
TITLES = {
    "icrc": "ICRC", "copy": "copy", "net": "skb/IP/UDP",
    "transport": "transport", "rest": "rest",
}
RE_ICRC = re.compile(r"crc", re.I)
RE_COPY = re.compile(r"^_*(memcpy|memmove)|copy_(to|from)_(user|iter)|"
                     r"copy_user|rep_movs|^_*copy_page|^skb_copy|"
                     r"^_copy_|csum_partial_copy|copy_mc")
RE_NET = re.compile(r"skb|^_*(ip|ipv4|ipv6|ip6|udp|udp4|udp6|udpv6|inet|"
                    r"inet6|net|netif|netdev|napi|dev|neigh|fib|fib4|fib6|"
                    r"dst|rt|rt6|eth|veth|gro|sk|sock|qdisc|sch|pfifo|nf|"
                    r"csum|xfrm|l3mdev|raw_v4|raw_local|icmp|arp|tc|rps|xdp|"
                    r"flow|"
                    r"validate|process_backlog|enqueue_to_backlog|"
                    r"page_pool)(_|$)")
TRANSPORT_MODS = {"softrdma", "rdma_rxe"}
DEV_NAMES = {"srdma": "softrdma", "rxe": "rxe"}


def classify(name, mod):
    # The CRC modules' local labels (6.1's crc32_pclmul: loop_64, ...).
    if RE_ICRC.search(name) or "crc" in mod:
        return "icrc"
    if RE_COPY.search(name):
        return "copy"
    if mod in TRANSPORT_MODS:
        return "transport"
    if RE_NET.search(name):
        return "net"
    return "rest"


def load_kallsyms(path):
    syms = []
    with open(path) as f:
        for line in f:
            p = line.split()
            if len(p) < 3 or p[1] not in "tTwW":
                continue
            addr = int(p[0], 16)
            if addr < KERNEL_BASE:
                continue
            mod = p[3].strip("[]") if len(p) > 3 else ""
            syms.append((addr, p[2], mod))
    syms.sort()
    return [s[0] for s in syms], syms


def load_window(path, addrs, syms):
    """{(symbol, module): insns} and the instructions in user space."""
    by_sym, user = {}, 0
    with open(path) as f:
        for line in f:
            if line.startswith("#"):
                continue
            a, _, n = line.split()
            a, n = int(a, 16), int(n)
            if a < KERNEL_BASE:
                user += n
                continue
            i = bisect.bisect_right(addrs, a) - 1
            key = (syms[i][1], syms[i][2]) if i >= 0 else ("?", "")
            by_sym[key] = by_sym.get(key, 0) + n
    return by_sym, user


def load_run(rundir):
    addrs, syms = load_kallsyms(os.path.join(rundir, "kallsyms"))
    out = []
    with open(os.path.join(rundir, "windows")) as f:
        for line in f:
            n, dev, op, size, count = line.split()
            by_sym, user = load_window(
                os.path.join(rundir, "win." + n), addrs, syms)
            cls = {c: 0 for c in CLASSES}
            top = {c: [] for c in CLASSES}
            for (name, mod), v in by_sym.items():
                c = classify(name, mod)
                cls[c] += v
                top[c].append((v, name))
            for c in CLASSES:
                top[c].sort(reverse=True)
            out.append({
                "dev": DEV_NAMES.get(dev, dev), "op": op, "size": int(size),
                "count": int(count), "kernel": sum(cls.values()),
                "user": user, "cls": cls, "top": top,
            })
    # A case's windows (guest.sh's COST_REPEAT): the median one stands
    # for it; "spread" is how far its windows lie apart.
    cases = {}
    for w in out:
        cases.setdefault((w["dev"], w["op"], w["size"]), []).append(w)
    med = []
    for ws in cases.values():
        ws.sort(key=lambda w: w["kernel"])
        m = dict(ws[len(ws) // 2])
        m["spread"] = 100.0 * (ws[-1]["kernel"] - ws[0]["kernel"]) / m["kernel"]
        med.append(m)
    return med


def opname(w):
    size = w["size"]
    s = "%d KiB" % (size >> 10) if size >= 1024 else "%d B" % size
    return "%s %s" % (w["op"].upper(), s)


def fmt(v):
    return "{:,.0f}".format(v)


def table(head, rows):
    """A markdown table and the same as plain text."""
    w = [max(len(str(r[i])) for r in [head] + rows) for i in range(len(head))]

    def line(r, sep):
        return sep.join(str(c).rjust(w[i]) if i else str(c).ljust(w[i])
                        for i, c in enumerate(r))
    md = ["| " + line(head, " | ") + " |",
          "|" + "|".join("-" * (x + 2) for x in w) + "|"]
    md += ["| " + line(r, " | ") + " |" for r in rows]
    txt = [line(head, "  "), "  ".join("-" * x for x in w)]
    txt += [line(r, "  ") for r in rows]
    return "\n".join(md), "\n".join(txt)


def main():
    outdir, runs = sys.argv[1], sys.argv[2:]
    data = {r: load_run(os.path.join(outdir, r)) for r in runs}
    md, txt = [], []

    def emit(title, head, rows, note=None):
        m, t = table(head, rows)
        md.extend(["### " + title, "", m, ""])
        txt.extend([title, "", t, ""])
        if note:
            md.extend([note, ""])
            txt.extend([note, ""])

    firsts = [r for r in runs if "-" not in r]
    # softrdma against rxe, kernel instructions per message.
    for r in firsts:
        rows = []
        for w in data[r]:
            if w["dev"] != "softrdma":
                continue
            x = [v for v in data[r] if v["dev"] == "rxe" and
                 v["op"] == w["op"] and v["size"] == w["size"]]
            s = w["kernel"] / w["count"]
            row = [opname(w), fmt(s), "%.2f" % (s / w["size"])]
            if x:
                xr = x[0]["kernel"] / x[0]["count"]
                row += [fmt(xr), "%.2f" % (xr / w["size"]),
                        "%.2f" % (s / xr)]
            else:
                row += ["-", "-", "-"]
            rows.append(row)
        emit("Kernel %s: kernel instructions per message, both sides" % r,
             ["operation", "softrdma/msg", "softrdma/B", "rxe/msg",
              "rxe/B", "softrdma/rxe"], rows)
    # The classes, and their top symbols.
    for r in firsts:
        rows = []
        for w in data[r]:
            c = w["count"]
            rows.append([w["dev"], opname(w)] +
                        ["%s (%.0f%%)" % (fmt(w["cls"][k] / c),
                                          100 * w["cls"][k] / w["kernel"])
                         for k in CLASSES] +
                        [fmt(w["kernel"] / c), fmt(w["user"] / c),
                         "%.2f%%" % w["spread"]])
        emit("Kernel %s: kernel instructions per message by class" % r,
             ["device", "operation"] + [TITLES[k] for k in CLASSES] +
             ["kernel", "user", "spread"], rows,
             "user: the process's own instructions (it polls its CQs, so "
             "they follow the time the operations take); not in kernel. "
             "spread: how far the case's windows in this boot lie apart "
             "(largest less smallest, of the median).")
        rows = []
        for w in data[r]:
            c = w["count"]
            for k in CLASSES:
                syms = ", ".join("%s %s" % (name, fmt(v / c))
                                 for v, name in w["top"][k][:TOP])
                rows.append([w["dev"], opname(w), TITLES[k], syms])
        emit("Kernel %s: top symbols of each class, instructions per message"
             % r, ["device", "operation", "class", "symbols"], rows)
    # Repeats: how far each window's kernel count moved.
    worst = 0.0
    for r in runs:
        if "-" not in r:
            continue
        base = r.split("-")[0]
        if base not in data:
            continue
        rows = []
        for a, b in zip(data[base], data[r]):
            d = 100.0 * (b["kernel"] - a["kernel"]) / a["kernel"]
            worst = max(worst, abs(d))
            rows.append([a["dev"], opname(a), fmt(a["kernel"] / a["count"]),
                         fmt(b["kernel"] / b["count"]), "%+.3f%%" % d])
        emit("Kernel %s: repeat (%s against %s)" % (base, r, base),
             ["device", "operation", "first/msg", "repeat/msg", "difference"],
             rows)
    if worst:
        line = "Largest difference between repeated runs: %.3f%%" % worst
        md.extend([line, ""])
        txt.extend([line, ""])
    with open(os.path.join(outdir, "cost.md"), "w") as f:
        f.write("\n".join(md))
    with open(os.path.join(outdir, "cost.txt"), "w") as f:
        f.write("\n".join(txt))
    # For the plot: a block per operation, a row per bar (device and
    # kernel), the classes in instructions per message.
    ops = []
    for r in firsts:
        for w in data[r]:
            if opname(w) not in ops:
                ops.append(opname(w))
    with open(os.path.join(outdir, "cost.dat"), "w") as f:
        for op in ops:
            f.write("# %s\n" % op)
            for r in firsts:
                for w in data[r]:
                    if opname(w) == op:
                        f.write('"%s %s" %s\n' % (
                            w["dev"], r, " ".join(
                                "%.0f" % (w["cls"][k] / w["count"])
                                for k in CLASSES)))
            f.write("\n\n")
    with open(os.path.join(outdir, "cost-ops.txt"), "w") as f:
        f.write("\n".join(ops) + "\n")
    print("\n".join(txt))


if __name__ == "__main__":
    main()
