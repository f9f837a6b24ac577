#!/usr/bin/env python3
"""Paired cold-process mutation timings of two `pm` builds on one generated tracker.

Usage: pair-mutations.py --old OLD_PM --new NEW_PM --items N [--rounds 15] [--dir DIR]

Generates a scratch tracker of N items with NEW_PM (`pm bench generate`), builds its index,
then runs, per round and alternating which build goes first, each build's `comments <id> --add`,
`update <id> --priority`, `claim <id>` + `release <id>` and `create` as fresh processes on
distinct open items, and prints the p50/p90 wall time per build and command (milliseconds).
Not part of CI; results go to docs/PERFORMANCE.md.
"""
import argparse, json, os, shutil, statistics, subprocess, sys, tempfile, time


def run(pm, args, cwd, env):
    start = time.perf_counter()
    p = subprocess.run([pm, *args], cwd=cwd, env=env, capture_output=True)
    ms = (time.perf_counter() - start) * 1000
    if p.returncode != 0:
        sys.exit(f"{pm} {args}: exit {p.returncode}: {p.stderr.decode()[:400]}")
    return ms


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--old", required=True)
    ap.add_argument("--new", required=True)
    ap.add_argument("--items", type=int, required=True)
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--dir")
    a = ap.parse_args()
    base = a.dir or tempfile.mkdtemp(prefix="pm-pair-")
    ws = os.path.join(base, f"t{a.items}")
    home = os.path.join(base, "home")
    os.makedirs(home, exist_ok=True)
    if not os.path.exists(ws):
        subprocess.run([a.new, "bench", "generate", "--items", str(a.items), "--out", ws],
                       check=True, capture_output=True)
    env = {"PATH": "/usr/bin:/bin", "HOME": home, "PM_GLOBAL_PATH": home,
           "PM_AUTHOR": "bench", "PM_LOCK_WAIT_MS": "10000"}
    run(a.new, ["reindex"], ws, env)
    manifest = json.load(open(os.path.join(ws, ".pm-scale-fixture.json")))
    ids = manifest["sample_ids"]["open"]
    need = a.rounds * 2 * 2
    if len(ids) < need:
        sys.exit(f"{len(ids)} open sample ids, {need} needed; lower --rounds")
    times = {}
    builds = [("old", a.old), ("new", a.new)]
    k = 0
    for r in range(a.rounds):
        order = builds if r % 2 == 0 else builds[::-1]
        for name, pm in order:
            a_id, b_id = ids[k], ids[k + 1]
            k += 2
            cmds = {
                "comments --add": ["comments", a_id, "--add", f"round {r}"],
                "update --priority": ["update", a_id, "--priority", str(r % 5)],
                "claim": ["claim", b_id],
                "release": ["release", b_id],
                "create": ["create", "--type", "Task", "--title", f"bench {name} {r}"],
            }
            for label, args in cmds.items():
                times.setdefault((name, label), []).append(run(pm, args, ws, env))
    print(f"items={a.items} rounds={a.rounds} tracker={ws}")
    print(f"{'command':<20} {'old p50':>8} {'new p50':>8} {'old p90':>8} {'new p90':>8}")
    for label in ["comments --add", "update --priority", "claim", "release", "create"]:
        row = []
        for stat in (0.5, 0.9):
            for name in ("old", "new"):
                xs = sorted(times[(name, label)])
                row.append(xs[min(len(xs) - 1, int(stat * len(xs)))])
        print(f"{label:<20} {row[0]:8.1f} {row[1]:8.1f} {row[2]:8.1f} {row[3]:8.1f}")
    if not a.dir:
        shutil.rmtree(base)


if __name__ == "__main__":
    main()
