#!/usr/bin/env python3
"""Cold-process timings of `pm merge driver item` (what git runs once per conflicting item file).

Usage: merge-driver.py --pm PM [--runs 50] [--warmup 5]

Builds a scratch git repository with a tracker (`pm init`, the merge fence installed) and one
item, makes three versions of it (base; ours: priority, a tag and a comment; theirs: the title
and a second comment), then runs the driver as a fresh process per run with `--output` to a
scratch file (the inputs stay untouched), and prints min/p50/p90/mean wall time in
milliseconds. A second series makes both sides change the title (a decided conflict: exit 1,
receipt written). Not part of CI; results go to docs/PERFORMANCE.md.
"""
import argparse, os, shutil, statistics, subprocess, sys, tempfile, time


def sh(args, cwd, env, ok=(0,)):
    p = subprocess.run(args, cwd=cwd, env=env, capture_output=True)
    if p.returncode not in ok:
        sys.exit(f"{args}: exit {p.returncode}: {p.stderr.decode()[:400]}")
    return p


def series(pm, work, env, versions, runs, warmup, ok):
    base, ours, theirs = versions
    args = [pm, "merge", "driver", "item", base, ours, theirs,
            "--item-path", ".agents/pm/tasks/pm-bench.toon", "--output", "merged.toon"]
    times = []
    for i in range(warmup + runs):
        start = time.perf_counter()
        p = subprocess.run(args, cwd=work, env=env, capture_output=True)
        ms = (time.perf_counter() - start) * 1000
        if p.returncode not in ok:
            sys.exit(f"driver exit {p.returncode}: {p.stderr.decode()[:400]}")
        if i >= warmup:
            times.append(ms)
    times.sort()
    return {
        "min": times[0],
        "p50": statistics.median(times),
        "p90": times[int(len(times) * 0.9) - 1],
        "mean": statistics.fmean(times),
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pm", required=True)
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--warmup", type=int, default=5)
    a = ap.parse_args()
    pm = os.path.abspath(a.pm)
    tmp = tempfile.mkdtemp(prefix="pm-merge-bench-")
    try:
        work = os.path.join(tmp, "work")
        os.makedirs(work)
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": tmp,
               "PM_AUTHOR": "bench", "GIT_CONFIG_NOSYSTEM": "1"}
        sh(["git", "init", "-q", "-b", "main"], work, env)
        sh([pm, "init", "--defaults"], work, env)
        item = os.path.join(work, ".agents/pm/tasks/pm-bench.toon")
        sh([pm, "create", "task", "Bench item", "--id", "pm-bench", "--tags", "a,b",
            "--description", "An item the merge driver benchmark edits on two sides"], work, env)
        saved = {}

        def keep(name):
            saved[name] = os.path.join(tmp, name + ".toon")
            shutil.copy(item, saved[name])

        keep("base")
        sh([pm, "update", "pm-bench", "--priority", "0", "--add-tags", "c"], work, env)
        sh([pm, "comments", "pm-bench", "--add", "from ours"], work, env)
        keep("ours")
        shutil.copy(saved["base"], item)
        sh([pm, "update", "pm-bench", "--title", "Renamed on theirs"], work, env)
        sh([pm, "comments", "pm-bench", "--add", "from theirs"], work, env)
        keep("theirs")
        shutil.copy(saved["base"], item)
        sh([pm, "update", "pm-bench", "--title", "Renamed on ours"], work, env)
        keep("ours_title")
        clean = series(pm, work, env, [saved["base"], saved["ours"], saved["theirs"]],
                       a.runs, a.warmup, (0,))
        conflict = series(pm, work, env, [saved["base"], saved["ours_title"], saved["theirs"]],
                          a.runs, a.warmup, (1,))
        for name, s in (("clean (fields from both sides)", clean),
                        ("decided conflict (title on both)", conflict)):
            print(f"{name}: min {s['min']:.2f} ms, p50 {s['p50']:.2f} ms, "
                  f"p90 {s['p90']:.2f} ms, mean {s['mean']:.2f} ms ({a.runs} runs)")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
