#!/usr/bin/env python3
"""Write a synthetic rant emit log in the exact csv format rant writes.

    synth-log.py ROWS OUT [RTT_STEP_NS]

Without RTT_STEP_NS the RTTs wander over a few microseconds like a veth run;
with it, row i has an RTT of (i + 1) * RTT_STEP_NS, so every percentile is
known exactly.  Every latency column agrees with its stamps, as rant checks.
"""
import sys

HEADER = ("seq,status,t1_sw,t1_ksw,t2_ksw,t2_sw,t3_sw,t3_ksw,t4_ksw,t4_sw,"
          "rtt_ns,response_ns,network_ns\n")


def stamp(ns):
    return "%d.%09d" % divmod(ns, 1000000000)


def main():
    rows = int(sys.argv[1])
    step = int(sys.argv[3]) if len(sys.argv) > 3 else 0
    base = 1700000000 * 1000000000
    with open(sys.argv[2], "w") as f:
        f.write("# rant 1.0.0 mode=emit wire=software server_wire=software "
                "app_stamps=on session=0x00000001 records=%d dropped=0 "
                "cmdline=synth-log.py\n" % rows)
        f.write(HEADER)
        out = []
        for i in range(rows):
            t1sw = base + i * 100000
            t1 = t1sw + 800
            t2 = t1 + 200
            t2sw = t2 + 2000
            t3sw = t2sw + 70
            t3 = t3sw + 1000
            if step:
                t4 = t1 + (i + 1) * step
                t3 = min(t3, t4 - 100)
                t3sw = min(t3sw, t3 - 1)
                t2sw = min(t2sw, t3sw - 1)
                t2 = min(t2, t2sw - 1)
            else:
                t4 = t3 + 220 + (i * 7919) % 5000
            t4sw = t4 + 2500
            rtt = t4 - t1
            resp = t3 - t2
            out.append("%d,ok,%s,%s,%s,%s,%s,%s,%s,%s,%d,%d,%d\n" % (
                i, stamp(t1sw), stamp(t1), stamp(t2), stamp(t2sw), stamp(t3sw),
                stamp(t3), stamp(t4), stamp(t4sw), rtt, resp, rtt - resp))
            if len(out) == 65536:
                f.write("".join(out))
                out = []
        f.write("".join(out))


main()
