#!/usr/bin/env python3
"""Chaos over loopback: a hub (`quereus serve`) and N peer processes (`quereus` with a
`sync:` section), each peer behind a TCP proxy this script controls. A seeded random
schedule writes on random peers, severs and partitions their connections, delays traffic,
SIGKILLs and restarts peers and the hub. Then everything heals and every peer must reach
the same content (same rows, hashed), with every acknowledged insert present.

  sync_chaos.py --bin build/bin/quereus --plugin-dir build/lib/quereus --runs 3 --seconds 10

Exit status 0 when every run converged with no acknowledged write lost; prints one line per
run and a summary (runs, writes acknowledged, kills, violations).
"""
import argparse
import asyncio
import hashlib
import os
import queue
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

TOKEN = "chaos-token-0123"


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Proxy:
    """A TCP proxy peer -> hub whose connections the schedule severs, partitions and slows."""

    def __init__(self, loop, listen_port, hub_port, rng):
        self.loop, self.listen_port, self.hub_port, self.rng = loop, listen_port, hub_port, rng
        self.partitioned = False
        self.delay = 0.0
        self.conns = set()
        self.server = None

    async def start(self):
        self.server = await asyncio.start_server(self.handle, "127.0.0.1", self.listen_port)

    async def handle(self, reader, writer):
        if self.partitioned:
            writer.close()
            return
        try:
            ur, uw = await asyncio.open_connection("127.0.0.1", self.hub_port)
        except OSError:
            writer.close()
            return
        pair = (writer, uw)
        self.conns.add(pair)

        async def pipe(r, w):
            try:
                while True:
                    data = await r.read(65536)
                    if not data:
                        break
                    if self.delay:
                        await asyncio.sleep(self.rng.random() * self.delay)
                    w.write(data)
                    await w.drain()
            except (ConnectionError, OSError):
                pass
            finally:
                try:
                    w.close()
                except Exception:
                    pass

        await asyncio.gather(pipe(reader, uw), pipe(ur, writer))
        self.conns.discard(pair)

    def sever(self):
        for a, b in list(self.conns):
            for w in (a, b):
                try:
                    w.transport.abort()
                except Exception:
                    pass
        self.conns.clear()


class Peer:
    def __init__(self, args, root, index, proxy_port):
        self.args, self.index = args, index
        self.dir = os.path.join(root, f"peer{index}")
        self.config = os.path.join(root, f"peer{index}.yaml")
        horizon = prune = ""
        if args.horizon_ms:
            # Short horizons: a peer kept away longer than this falls behind the hub's pruned
            # log and must take a snapshot (which purges what the hub deleted meanwhile).
            horizon = f"\n        tombstone_horizon_ms: {args.horizon_ms}"
            prune = f"\n      prune_interval_ms: {max(args.horizon_ms // 2, 100)}"
        with open(self.config, "w") as f:
            f.write(f"""plugin_dir: {args.plugin_dir}
plugins:
  - path: sync-store
databases:
  main:
    default_module: sync-store
    module_options:
      sync-store:
        path: {self.dir}{horizon}
    sync:
      url: ws://127.0.0.1:{proxy_port}/sync
      database_id: chaos
      token: {TOKEN}
      poll_ms: 300
      push_debounce_ms: 10
      reconnect_max_ms: 2000
      batch_size: 50{prune}
logging:
  level: {args.log_level}
""")
        self.log = os.path.join(root, f"peer{index}.log")
        self.proc = None
        self.lines = queue.Queue()

    def start(self):
        self.proc = subprocess.Popen(
            [self.args.bin, "--config", self.config, "--format", "csv", "--no-header", "--bail", "off"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=open(self.log, "a"), text=True, bufsize=1)
        self.lines = queue.Queue()
        proc, lines = self.proc, self.lines

        def pump():
            for line in proc.stdout:
                lines.put(line.rstrip("\n"))
            lines.put(None)

        threading.Thread(target=pump, daemon=True).start()
        return self.run("create table if not exists t (id integer primary key, v text null, n integer null)")

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def kill(self):
        if self.alive():
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait()

    def run(self, sql, timeout=15.0):
        """Runs sql, then a marker; returns the output lines before it, or None (no ack)."""
        if not self.alive():
            return None
        marker = "ack-%d" % random.getrandbits(48)
        try:
            self.proc.stdin.write(sql.rstrip().rstrip(";") + ";\nselect '" + marker + "';\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            return None
        out, deadline = [], time.time() + timeout
        while time.time() < deadline:
            try:
                line = self.lines.get(timeout=max(0.01, deadline - time.time()))
            except queue.Empty:
                break
            if line is None:
                return None
            if line == marker:
                return out
            out.append(line)
        return None

    def content(self):
        # Compared by column name: a column added on one peer takes the next position on each
        # peer that receives it, so concurrent adds can sit in different orders (their values
        # agree by name; docs/sync-store.md "Schema replication").
        names = self.run("select name from table_info('t')")
        if names is None:
            return None
        names = sorted(n.strip('"') for n in names)
        rows = self.run("select %s from t order by id" % ", ".join('"%s"' % n for n in names))
        if rows is not None:
            rows = [",".join(names)] + rows
        return None if rows is None else rows


def one_run(args, seed):
    rng = random.Random(seed)
    root = tempfile.mkdtemp(prefix="quereus-chaos-")
    hub_port = free_port()
    hub_cfg = os.path.join(root, "hub.yaml")
    hub_extra = ""
    if args.horizon_ms:
        hub_extra = (f"\n  prune_interval_ms: {max(args.horizon_ms // 2, 100)}"
                     f"\n  module_options:\n    tombstone_horizon_ms: {args.horizon_ms}")
    with open(hub_cfg, "w") as f:
        f.write(f"""plugin_dir: {args.plugin_dir}
plugins:
  - path: sync-store
server:
  listen: 127.0.0.1:{hub_port}
  data_dir: {root}/hub
  tokens: [{TOKEN}]
  batch_size: 40{hub_extra}
logging:
  level: error
""")
    hub = {"proc": None}

    def start_hub():
        hub["proc"] = subprocess.Popen([args.bin, "serve", "--config", hub_cfg], stdout=subprocess.PIPE,
                                       stderr=subprocess.DEVNULL, text=True)
        hub["proc"].stdout.readline()  # "listening on …"

    def kill_hub():
        if hub["proc"] and hub["proc"].poll() is None:
            hub["proc"].send_signal(signal.SIGKILL)
            hub["proc"].wait()

    loop = asyncio.new_event_loop()
    threading.Thread(target=loop.run_forever, daemon=True).start()
    proxies, peers = [], []
    stats = {"writes": 0, "kills": 0, "hub_kills": 0, "partitions": 0, "severs": 0, "ddl": 0}
    added = [0]  # columns added so far (c1, c2, …)
    violations = None  # a run that does not end clean keeps its directory (peer logs) for a post-mortem
    acked_inserts = {}
    try:
        start_hub()
        for i in range(args.peers):
            port = free_port()
            p = Proxy(loop, port, hub_port, rng)
            asyncio.run_coroutine_threadsafe(p.start(), loop).result()
            proxies.append(p)
            peers.append(Peer(args, root, i, port))
        for p in peers:
            p.start()
        next_id = [1000]
        end = time.time() + args.seconds
        while time.time() < end:
            r = rng.random()
            i = rng.randrange(len(peers))
            peer, proxy = peers[i], proxies[i]
            if r < 0.55:
                if not peer.alive():
                    peer.start()
                    continue
                kind = rng.random()
                if args.ddl and rng.random() < 0.03:
                    # A column added on one peer while others write (schema replication under
                    # the same faults: concurrent adds all survive, in birth order).
                    added[0] += 1
                    if peer.run(f"alter table t add column c{added[0]} integer null") is not None:
                        stats["ddl"] += 1
                    continue
                if args.ddl and added[0] and rng.random() < 0.15:
                    col = "c%d" % rng.randrange(1, added[0] + 1)
                    hot = rng.randrange(1, 20)
                    # (A peer that has not the column yet refuses it: not counted.)
                    out = peer.run(f"update t set {col} = {rng.randrange(1000)} where id = {hot}; select 'upd-ok'")
                    if out is not None and "upd-ok" in out:
                        stats["writes"] += 1
                    continue
                if kind < 0.6:
                    next_id[0] += 1
                    rid = next_id[0]
                    # Acknowledged only when the row is there after the statement: a refused
                    # write (BUSY while the peer takes a snapshot) reports on stderr.
                    out = peer.run(f"insert into t (id, v, n) values ({rid}, 'p{i}', {rng.randrange(1000)}); "
                                   f"select 'ins-' || count(*) from t where id = {rid}")
                    if out is not None and "ins-1" in out:
                        acked_inserts[rid] = i
                        stats["writes"] += 1
                elif kind < 0.9:
                    hot = rng.randrange(1, 20)
                    if peer.run(f"insert into t (id, v, n) values ({hot}, 'hot{i}', {rng.randrange(1000)}) "
                                f"on conflict (id) do update set v = excluded.v, n = excluded.n") is not None:
                        stats["writes"] += 1
                else:
                    hot = rng.randrange(1, 20)
                    if peer.run(f"delete from t where id = {hot}") is not None:
                        stats["writes"] += 1
            elif r < 0.65:
                loop.call_soon_threadsafe(proxy.sever)
                stats["severs"] += 1
            elif r < 0.72:
                proxy.partitioned = not proxy.partitioned
                if proxy.partitioned:
                    loop.call_soon_threadsafe(proxy.sever)
                    stats["partitions"] += 1
            elif r < 0.78:
                proxy.delay = rng.choice([0.0, 0.0, 0.01, 0.05])
            elif r < 0.86:
                peer.kill()
                stats["kills"] += 1
            elif r < 0.89:
                kill_hub()
                stats["hub_kills"] += 1
                time.sleep(rng.random() * 0.3)
                start_hub()
            else:
                time.sleep(rng.random() * 0.1)
        # Heal: everyone up, no partitions, no delay.
        if hub["proc"].poll() is not None:
            start_hub()
        for p, x in zip(peers, proxies):
            x.partitioned = False
            x.delay = 0.0
            if not p.alive():
                p.start()
        healed = time.time()
        deadline = healed + args.converge_seconds
        agreed, contents = False, []
        while time.time() < deadline:
            time.sleep(0.5)
            contents = [p.content() for p in peers]
            if all(c is not None for c in contents) and all(c == contents[0] for c in contents):
                time.sleep(1.0)  # stable?
                again = [p.content() for p in peers]
                if again == contents:
                    agreed = True
                    stats["converge_s"] = time.time() - healed
                    break
        violations = []
        if not agreed:
            hashes = [hashlib.sha256("\n".join(c or []).encode()).hexdigest()[:12] for c in contents]
            violations.append("did not converge within %ds: %s" % (args.converge_seconds, hashes))
            # What differs, for the post-mortem: each peer against the most common content,
            # then the tail of that peer's log (CI keeps only what is printed).
            common = max(contents, key=lambda c: sum(1 for d in contents if d == c)) if contents else None
            for k, c in enumerate(contents):
                if c == common:
                    continue
                if c and common and c[0] != common[0]:
                    # Another set of columns changes every row's line: say so first.
                    print("  peer%d columns: %s (the others: %s)" % (k, c[0], common[0]), flush=True)
                mine, theirs = set(c or []), set(common or [])
                print("  peer%d only: %s" % (k, sorted(mine - theirs)[:10]), flush=True)
                print("  peer%d lacks: %s" % (k, sorted(theirs - mine)[:10]), flush=True)
                try:
                    with open(peers[k].log, errors="replace") as f:
                        for line in f.readlines()[-15:]:
                            print("  peer%d log: %s" % (k, line.rstrip()), flush=True)
                except OSError:
                    pass
        else:
            header = contents[0][0].split(",")
            at = header.index("id")
            present = {int(line.split(",")[at]) for line in contents[0][1:]}
            lost = sorted(set(acked_inserts) - present)
            if lost:
                violations.append("acknowledged inserts lost: %s" % lost[:20])
        digest = hashlib.sha256("\n".join(contents[0] if contents and contents[0] else []).encode()).hexdigest()[:12]
        print("run seed=%d: %s%s writes=%d kills=%d hub_kills=%d partitions=%d severs=%d%s rows=%d hash=%s%s" % (
            seed, "converged" if agreed else "DIVERGED",
            (" in %.1fs" % stats["converge_s"]) if agreed else "", stats["writes"], stats["kills"], stats["hub_kills"],
            stats["partitions"], stats["severs"], (" ddl=%d" % stats["ddl"]) if args.ddl else "",
            len(contents[0]) - 1 if contents and contents[0] else 0, digest,
            "" if not violations else " VIOLATIONS: " + "; ".join(violations)), flush=True)
        return stats, violations
    finally:
        for p in peers:
            p.kill()
        kill_hub()
        loop.call_soon_threadsafe(loop.stop)
        if args.keep or violations is None or violations:
            print("run seed=%d: kept %s (peerN.log, hub data, peer databases)" % (seed, root), flush=True)
        else:
            shutil.rmtree(root, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--plugin-dir", required=True)
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--peers", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=8)
    ap.add_argument("--converge-seconds", type=int, default=60)
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--log-level", default="error", help="the peers' log level (their logs: peerN.log in the run's directory)")
    ap.add_argument("--ddl", action="store_true",
                    help="also add columns on random peers (ALTER TABLE … ADD COLUMN) and write them")
    ap.add_argument("--horizon-ms", type=int, default=0,
                    help="tombstone horizon (hub and peers) with maintenance at half of it: peers kept away "
                         "longer fall behind and take snapshots (0: the default, an hour)")
    args = ap.parse_args()
    args.bin = os.path.abspath(args.bin)
    args.plugin_dir = os.path.abspath(args.plugin_dir)
    base = args.seed if args.seed is not None else int(time.time())
    total = {"writes": 0, "kills": 0, "hub_kills": 0, "violations": 0}
    for r in range(args.runs):
        stats, violations = one_run(args, base + r)
        total["writes"] += stats["writes"]
        total["kills"] += stats["kills"]
        total["hub_kills"] += stats["hub_kills"]
        total["violations"] += len(violations)
    print("summary: runs=%d peers=%d writes_acknowledged=%d peer_kills=%d hub_kills=%d violations=%d" % (
        args.runs, args.peers, total["writes"], total["kills"], total["hub_kills"], total["violations"]))
    return 1 if total["violations"] else 0


if __name__ == "__main__":
    sys.exit(main())
