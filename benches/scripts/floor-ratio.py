#!/usr/bin/env python3
"""A default-mode read as a ratio to the bare stat floor, measured in the same run.

    floor-ratio.py --pm target/release/pm --floor target/release/pm-stat-floor \
        --workspace DIR [--runs 40] -- list --status open --limit 20

DIR is a workspace (the folder holding `.agents/pm`). The script lists the item files once
(`pm-stat-floor list`), warms both, then alternates cold processes of the pm command and of
`pm-stat-floor stat` (the order flips every pair), with the clock pinned and stdout to
/dev/null. It prints the wall-time medians and minimums of both, CPU medians, and the ratio
of the medians (pm / floor) plus the median of the per-pair ratios.
"""
import argparse
import os
import statistics
import sys
import tempfile
import time


def spawn(argv, env):
    start = time.perf_counter()
    actions = [(os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0)]
    pid = os.posix_spawn(argv[0], argv, env, file_actions=actions)
    _, status, usage = os.wait4(pid, 0)
    if status != 0:
        sys.exit(f"{' '.join(argv)} exited with status {status}")
    return (time.perf_counter() - start) * 1000, (usage.ru_utime + usage.ru_stime) * 1000


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--pm", required=True)
    parser.add_argument("--floor", required=True)
    parser.add_argument("--workspace", required=True)
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("args", nargs=argparse.REMAINDER)
    opts = parser.parse_args()
    args = opts.args[1:] if opts.args[:1] == ["--"] else opts.args
    env = dict(os.environ, PM_CLOCK="2026-01-01T00:00:00Z", PM_SEED="1")
    pm = [os.path.abspath(opts.pm)]
    floor = os.path.abspath(opts.floor)
    os.chdir(opts.workspace)
    with tempfile.NamedTemporaryFile(suffix=".list") as listing:
        spawn([floor, "list", ".agents/pm", listing.name], env)
        commands = {"pm": pm + args, "floor": [floor, "stat", ".agents/pm", listing.name]}
        for argv in commands.values():
            spawn(argv, env)
            spawn(argv, env)
        runs = {name: [] for name in commands}
        for run in range(opts.runs):
            order = list(commands) if run % 2 == 0 else list(commands)[::-1]
            for name in order:
                runs[name].append(spawn(commands[name], env))
    for name, samples in runs.items():
        wall = [w for w, _ in samples]
        cpu = [c for _, c in samples]
        print(
            f"{name:5}: wall median {statistics.median(wall):.2f} ms, min {min(wall):.2f} ms, "
            f"cpu median {statistics.median(cpu):.2f} ms"
        )
    pm_wall = [w for w, _ in runs["pm"]]
    floor_wall = [w for w, _ in runs["floor"]]
    ratio = statistics.median(pm_wall) / statistics.median(floor_wall)
    paired = statistics.median(p / f for p, f in zip(pm_wall, floor_wall))
    print(f"ratio of medians {ratio:.2f}x, median of paired ratios {paired:.2f}x ({opts.runs} pairs)")


if __name__ == "__main__":
    main()
