#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# xnic_demo_test.sh - `make demo` as make check runs it: tools/xnic-demo
# --json on 4 nodes, 2 links per pair, 64 MiB (the defaults), in the test
# VM as root. Passes when the demo says PASS and its JSON holds what it
# claims: 4 nodes with 6 links each, every one up, hearing exactly the
# node it is wired to, with an RTT; 6 pairs with a skew; a full 4 x 4
# matrix of latency and bandwidth; an all-reduce of 64 MiB checked
# element by element, PASS. XNIC_DEMO_ARGS adds demo options.
set -u
cd "$(dirname "$0")/.." || exit 1
KSFT_SKIP=4
[[ -x tools/xnictl && -x tools/xnic-perf && -x coll/xnic-allreduce &&
   -x tools/xnic-coll-rank ]] ||
	{ echo "SKIP: tools not built"; exit $KSFT_SKIP; }
out=$(mktemp)
trap 'rm -f "$out"' EXIT
# shellcheck disable=SC2086 # XNIC_DEMO_ARGS: one word per option
XNIC_VM=1 tools/xnic-demo --json ${XNIC_DEMO_ARGS:-} >"$out" 2>&1
rc=$?
python3 - "$out" "$rc" <<'PY'
import json, sys
text = open(sys.argv[1]).read()
rc = int(sys.argv[2])
try:
    r = json.loads(text)
except ValueError as e:
    print("not ok: no JSON from the demo (exit %d): %s" % (rc, e))
    print("\n".join("#   " + l for l in text.splitlines()[-40:]))
    sys.exit(1)
bad = []
def need(cond, what):
    if not cond:
        bad.append(what)
n, k = r.get("nodes"), r.get("links_per_peer")
need(rc == 0 and r.get("result") == "PASS",
     "exit %d, result %s: %s" % (rc, r.get("result"), r.get("problems")))
need(n == 4 and k == 2, "nodes %s, links per peer %s" % (n, k))
nodes = r["bringup"]["nodes"]
need(len(nodes) == 4, "%d nodes in the bring-up" % len(nodes))
for node in nodes:
    need(len(node["links"]) == 6, "node%d: %d links" % (node["node"],
                                                     len(node["links"])))
    for l in node["links"]:
        want = nodes[l["wired_to"]]["node_id"]
        need(l["state"] == "up" and
             [p["node_id"] for p in l["peers"]] == [want] and
             isinstance(l["rtt_us"], (int, float)) and l["rtt_us"] > 0,
             "node%d %s: %s" % (node["node"], l["netdev"], l))
pairs = r["bringup"]["pairs"]
need(len(pairs) == 6 and all(isinstance(p["skew_us"], (int, float))
                             for p in pairs), "pairs: %s" % pairs)
m = r["matrix"] or {}
for key in ("write_lat_8B_us_median", "write_bw_1MiB_MBps"):
    vals = [v for a, row in enumerate(m.get(key, [])) for b, v in
            enumerate(row) if a != b]
    need(len(vals) == 12 and all(isinstance(v, (int, float)) and v > 0
                                 for v in vals), "%s: %s" % (key, vals))
ar = r["allreduce"] or {}
need(ar.get("result") == "PASS" and ar.get("bytes") == 64 << 20 and
     ar.get("busbw_MBps", 0) > 0, "all-reduce: %s" % ar)
for b in bad:
    print("not ok: " + b)
if bad:
    sys.exit(1)
print("ok: demo PASS: 4 nodes x 6 links, RTT %s us, skew %s us; "
      "all-reduce 64 MiB %s ms, busbw %s MB/s" % (
          " ".join(str(l["rtt_us"]) for l in nodes[0]["links"]),
          " ".join(str(p["skew_us"]) for p in pairs),
          ar["time_ms"], ar["busbw_MBps"]))
PY
