//! The merge swarm (issue 23): four real `git clone`s of one tracker each make 50 seeded random
//! mutations on overlapping items (create, title/priority/status, tags, comments, claim/release,
//! close, deps), committing every few, and merge round-robin through `main` (each clone
//! `git pull`s main, resolves what git stops on the way docs/collaboration.md says, runs
//! `pm merge reconcile`, then main pulls the clone, a fast-forward). At the end main holds every
//! comment exactly once, every field only one clone touched at that clone's last value, every
//! driver conflict decided for the clone's own side (`--prefer ours`, the installed default),
//! and every chain verifies.

use std::collections::{BTreeMap, BTreeSet};
use std::error::Error;

use serde_json::Value;

use crate::common::git_repo::{GitRepo, ok};

type TestResult = Result<(), Box<dyn Error>>;

const CLONES: usize = 4;
const MUTATIONS: usize = 50;
const ROUNDS: usize = 5;
const COMMIT_EVERY: usize = 3;
const SEEDS: usize = 6;
const STATUSES: [&str; 3] = ["open", "in_progress", "blocked"];

/// A tiny deterministic xorshift64 generator.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

/// What the clones did, as far as the final state must show it.
#[derive(Default)]
struct Model {
    /// (item, field) → clone → every value that clone set, in order.
    fields: BTreeMap<(String, String), BTreeMap<usize, Vec<Value>>>,
    /// (item, tag) → clone → whether its last action added the tag.
    tags: BTreeMap<(String, String), BTreeMap<usize, bool>>,
    /// (item, dependency) pairs added anywhere.
    deps: BTreeSet<(String, String)>,
    /// (item, text) of every comment added anywhere (texts are unique).
    comments: Vec<(String, String)>,
    /// Items in creation order (seeds first); a dependency only points to an earlier item.
    items: Vec<String>,
}

impl Model {
    fn set(&mut self, clone: usize, item: &str, field: &str, value: Value) {
        let key = (item.to_string(), field.to_string());
        let by_clone = self.fields.entry(key).or_default();
        by_clone.entry(clone).or_default().push(value);
    }
}

/// The counts the swarm prints.
#[derive(Debug, Default)]
struct Counts {
    mutations: usize,
    refused: usize,
    /// `<command>:<error code>` → how many mutations pm refused so (claims of another's item…).
    refusals: BTreeMap<String, usize>,
    commits: usize,
    merges: usize,
    stopped_merges: usize,
    driver_conflicts: usize,
    reconciles: usize,
    annotations_checked: usize,
    fields_checked: usize,
    conflicting_fields_checked: usize,
    tags_checked: usize,
    deps_checked: usize,
    chains_verified: usize,
}

/// One clone of the swarm.
struct Peer {
    repo: GitRepo,
    index: usize,
    author: String,
    /// Items this clone has (seeds, its own and everything it pulled), in model order.
    known: Vec<String>,
    created: usize,
    receipts_seen: BTreeSet<String>,
}

/// Records one mutation's effect in the model; run only when pm accepted it (exit 0).
type Record = Box<dyn FnOnce(&mut Model)>;

/// Returns the argv of one random mutation of `peer` and how to record it.
fn plan(peer: &mut Peer, rng: &mut Rng, step: usize) -> (Vec<String>, Record) {
    let c = peer.index;
    let visible = &peer.known;
    let pick = rng.below(visible.len());
    let item = visible[pick].clone();
    let text = format!("c{c} m{step}");
    let s = |v: &str| v.to_string();
    match rng.below(11) {
        0 => {
            peer.created += 1;
            let id = format!("pm-c{c}n{}", peer.created);
            let priority = rng.below(5);
            let argv = vec![
                s("create"),
                s("task"),
                text.clone(),
                s("--id"),
                id.clone(),
                s("--priority"),
                priority.to_string(),
            ];
            let record: Record = Box::new(move |m: &mut Model| {
                m.items.push(id.clone());
                m.set(c, &id, "title", Value::from(text));
                m.set(c, &id, "priority", Value::from(priority));
            });
            (argv, record)
        }
        1 => update(c, item, "title", "--title", Value::from(text)),
        2 => update(c, item, "priority", "--priority", Value::from(rng.below(5))),
        3 => {
            let status = STATUSES[rng.below(STATUSES.len())];
            update(c, item, "status", "--status", Value::from(status))
        }
        4 | 5 => {
            let (tag, add) = (format!("t{}", rng.below(6)), rng.below(2) == 0);
            let flag = if add { "--add-tags" } else { "--remove-tags" };
            let argv = vec![s("update"), item.clone(), s(flag), tag.clone()];
            let record: Record = Box::new(move |m: &mut Model| {
                m.tags.entry((item, tag)).or_default().insert(c, add);
            });
            (argv, record)
        }
        6 | 7 => {
            let argv = vec![s("comments"), item.clone(), s("--add"), text.clone()];
            (
                argv,
                Box::new(move |m: &mut Model| m.comments.push((item, text))),
            )
        }
        8 => {
            let author = Value::from(peer.author.clone());
            let argv = vec![s("claim"), item.clone()];
            (
                argv,
                Box::new(move |m: &mut Model| m.set(c, &item, "assignee", author)),
            )
        }
        9 => {
            let argv = vec![s("release"), item.clone()];
            (
                argv,
                Box::new(move |m: &mut Model| m.set(c, &item, "assignee", Value::Null)),
            )
        }
        _ if pick > 0 && rng.below(2) == 0 => {
            let dep = visible[rng.below(pick)].clone();
            let argv = vec![s("deps"), item.clone(), s("--add"), dep.clone()];
            (
                argv,
                Box::new(move |m: &mut Model| {
                    m.deps.insert((item, dep));
                }),
            )
        }
        _ => {
            let argv = vec![s("close"), item.clone(), text];
            (
                argv,
                // Closing also releases the item (pm clears `assignee`).
                Box::new(move |m: &mut Model| {
                    m.set(c, &item, "status", Value::from("closed"));
                    m.set(c, &item, "assignee", Value::Null);
                }),
            )
        }
    }
}

fn update(
    c: usize,
    item: String,
    field: &'static str,
    flag: &str,
    value: Value,
) -> (Vec<String>, Record) {
    let shown = value
        .as_str()
        .map_or_else(|| value.to_string(), String::from);
    let argv = vec!["update".into(), item.clone(), flag.into(), shown];
    (
        argv,
        Box::new(move |m: &mut Model| m.set(c, &item, field, value)),
    )
}

/// Runs `peer`'s mutations `steps`, committing every `COMMIT_EVERY` and at the end.
fn mutate(
    peer: &mut Peer,
    model: &mut Model,
    rng: &mut Rng,
    steps: std::ops::Range<usize>,
    counts: &mut Counts,
) -> TestResult {
    for (n, step) in steps.enumerate() {
        let (argv, record) = plan(peer, rng, step);
        let args: Vec<&str> = argv.iter().map(String::as_str).collect();
        let out = peer.repo.pm(&args)?;
        counts.mutations += 1;
        if out.code == 0 {
            record(model);
            if argv[0] == "create" {
                peer.known.push(argv[4].clone());
            }
        } else {
            counts.refused += 1;
            let code = out.stderr.split(['[', ']']).nth(1).unwrap_or("?");
            *counts
                .refusals
                .entry(format!("{}:{code}", argv[0]))
                .or_default() += 1;
        }
        if (n + 1) % COMMIT_EVERY == 0 {
            commit_if_dirty(&peer.repo, &format!("c{} mutations", peer.index), counts)?;
        }
    }
    commit_if_dirty(&peer.repo, &format!("c{} mutations", peer.index), counts)
}

/// Commits everything when the worktree has changes.
fn commit_if_dirty(repo: &GitRepo, message: &str, counts: &mut Counts) -> TestResult {
    if repo
        .git(&["status", "--porcelain"])?
        .stdout
        .trim()
        .is_empty()
    {
        return Ok(());
    }
    repo.commit(message)?;
    counts.commits += 1;
    Ok(())
}

/// `peer` pulls main and finishes the merge the way docs/collaboration.md says: on a stop,
/// `git add` the driver's result and commit, then `pm merge reconcile --force`; otherwise
/// `pm merge reconcile`; the reconcile is committed. Each new clone-local receipt's decisions
/// must have kept the clone's own value (`--prefer ours`).
fn pull(peer: &mut Peer, model: &Model, counts: &mut Counts) -> TestResult {
    let repo = &peer.repo;
    let merge = repo.git(&["pull", "--no-rebase", "--no-edit", "origin", "main"])?;
    counts.merges += 1;
    let stopped = merge.code != 0;
    if stopped {
        let unmerged = repo.unmerged()?;
        assert!(
            !unmerged.is_empty(),
            "pull failed without a conflict: {merge:?}"
        );
        for path in &unmerged {
            let text = repo.read(path)?;
            assert!(
                !text.contains("<<<<<<<"),
                "{path} holds conflict markers:\n{text}"
            );
        }
        counts.stopped_merges += 1;
        ok(&repo.git(&["add", "-A"])?)?;
        ok(&repo.git(&["commit", "-q", "--no-edit"])?)?;
    }
    let reconcile: &[&str] = if stopped {
        &["merge", "reconcile", "--force"]
    } else {
        &["merge", "reconcile"]
    };
    let out = repo.pm(reconcile)?;
    assert_eq!(out.code, 0, "{reconcile:?} after {merge:?}: {out:?}");
    counts.reconciles += 1;
    commit_if_dirty(repo, "reconcile merge", counts)?;
    let report: Value = serde_json::from_str(&repo.pm(&["merge", "report", "--json"])?.stdout)?;
    assert_eq!(report["count"], 0, "receipts left pending: {report}");
    check_receipts(peer, counts)?;
    let drift = peer.repo.pm(&[
        "validate",
        "--check-history-drift",
        "--strict-exit",
        "--json",
    ])?;
    assert_eq!(
        drift.code, 0,
        "drift after c{}'s merge: {}",
        peer.index, drift.stdout
    );
    peer.known = model
        .items
        .iter()
        .filter(|id| {
            peer.known.contains(id)
                || peer
                    .repo
                    .root
                    .join(format!(".agents/pm/tasks/{id}.toon"))
                    .exists()
        })
        .cloned()
        .collect();
    Ok(())
}

/// Checks every receipt the clone has not seen yet: each decided conflict kept ours.
fn check_receipts(peer: &mut Peer, counts: &mut Counts) -> TestResult {
    let dir = peer.repo.root.join(".git/pm-merge-receipts");
    if !dir.exists() {
        return Ok(());
    }
    for entry in std::fs::read_dir(&dir)? {
        let path = entry?.path();
        let name = path.display().to_string();
        if !peer.receipts_seen.insert(name) {
            continue;
        }
        let receipt: Value = serde_json::from_str(&std::fs::read_to_string(&path)?)?;
        for decision in receipt["decisions"].as_array().into_iter().flatten() {
            counts.driver_conflicts += 1;
            assert_eq!(receipt["requested_preference"], "ours", "{receipt}");
            assert_eq!(decision["retained"], decision["ours"], "{receipt}");
        }
    }
    Ok(())
}

/// main pulls the clone (a fast-forward after the clone merged main).
fn publish(main: &GitRepo, peer: &Peer, counts: &mut Counts) -> TestResult {
    let src = peer.repo.root.display().to_string();
    ok(&main.git(&["pull", "--no-rebase", "--no-edit", &src, "main"])?)?;
    counts.merges += 1;
    Ok(())
}

/// `pm get`'s value of `field` (absent → null).
fn field(item: &Value, name: &str) -> Value {
    item.get(name).cloned().unwrap_or(Value::Null)
}

/// Every comment text of `id` on `repo`.
fn comment_texts(repo: &GitRepo, id: &str) -> Result<Vec<String>, Box<dyn Error>> {
    let args = ["comments", id, "--full-history", "--json"];
    let out = repo.pm(&args)?;
    ok(&out)?;
    let doc: Value = serde_json::from_str(&out.stdout)?;
    assert_eq!(doc["has_more"], false, "{doc}");
    let texts = doc["comments"].as_array().into_iter().flatten();
    Ok(texts
        .filter_map(|c| c["text"].as_str().map(String::from))
        .collect())
}

fn check_fields(
    main: &GitRepo,
    model: &Model,
    items: &BTreeMap<String, Value>,
    counts: &mut Counts,
) {
    for ((id, name), by_clone) in &model.fields {
        let fin = field(&items[id], name);
        if let [(clone, values)] = by_clone.iter().collect::<Vec<_>>()[..] {
            if Some(&fin) != values.last() {
                let history = main.pm(&["history", id, "--json"]).map(|o| o.stdout);
                panic!("{id}.{name} = {fin}, set only by c{clone} to {values:?}\n{history:?}");
            }
            counts.fields_checked += 1;
        } else {
            let any: Vec<&Value> = by_clone.values().flatten().collect();
            assert!(
                any.contains(&&fin),
                "{id}.{name} = {fin} is no value a clone set: {any:?}"
            );
            counts.conflicting_fields_checked += 1;
        }
    }
    for ((id, tag), by_clone) in &model.tags {
        if let [(clone, add)] = by_clone.iter().collect::<Vec<_>>()[..] {
            let tags = items[id]["tags"].as_array().cloned().unwrap_or_default();
            let present = tags.contains(&Value::from(tag.as_str()));
            assert_eq!(present, *add, "{id} tag {tag} touched only by c{clone}");
            counts.tags_checked += 1;
        }
    }
    for (id, dep) in &model.deps {
        let deps = items[id]["dependencies"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        assert!(
            deps.iter().any(|d| d["id"] == dep.as_str()),
            "{id} lost dependency {dep}"
        );
        counts.deps_checked += 1;
    }
}

/// The end state on main: every comment once, field and tag values, deps, chains, validate.
fn check_main(main: &GitRepo, model: &Model, counts: &mut Counts) -> TestResult {
    let mut items = BTreeMap::new();
    for id in &model.items {
        items.insert(id.clone(), main.item(id)?);
        let mut texts = comment_texts(main, id)?;
        texts.sort();
        let mut expected: Vec<String> = model
            .comments
            .iter()
            .filter(|(i, _)| i == id)
            .map(|(_, t)| t.clone())
            .collect();
        expected.sort();
        assert_eq!(texts, expected, "comments of {id}");
        counts.annotations_checked += expected.len();
        let out = main.pm(&["history", id, "--verify", "--json"])?;
        let doc: Value = serde_json::from_str(&out.stdout)?;
        assert_eq!(doc["verification"]["ok"], true, "{id}: {doc}");
        assert_eq!(
            doc["verification"]["current_matches_latest"], true,
            "{id}: {doc}"
        );
        counts.chains_verified += 1;
    }
    check_fields(main, model, &items, counts);
    let drift = main.pm(&[
        "validate",
        "--check-history-drift",
        "--strict-exit",
        "--json",
    ])?;
    assert_eq!(drift.code, 0, "{}", drift.stdout);
    let validate = main.pm(&["validate", "--json"])?;
    let doc: Value = serde_json::from_str(&validate.stdout)?;
    assert_eq!(doc["ok"], true, "{doc}");
    Ok(())
}

/// main with `SEEDS` committed items and the fence, and `CLONES` clones with their drivers.
fn swarm() -> Result<(GitRepo, Vec<Peer>, Model), Box<dyn Error>> {
    let main = GitRepo::new()?;
    let mut model = Model::default();
    for k in 0..SEEDS {
        let id = format!("pm-s{k}");
        ok(&main.pm(&[
            "create",
            "task",
            &format!("Seed {k}"),
            "--id",
            &id,
            "--priority",
            "2",
        ])?)?;
        model.items.push(id);
    }
    main.commit("seed items")?;
    let mut peers = Vec::new();
    for index in 0..CLONES {
        let author = format!("agent-{index}");
        let repo = main.clone_as(&format!("clone-{index}"), &author)?;
        repo.install()?;
        let known = model.items.clone();
        peers.push(Peer {
            repo,
            index,
            author,
            known,
            created: 0,
            receipts_seen: BTreeSet::new(),
        });
    }
    Ok((main, peers, model))
}

#[test]
fn four_clones_fifty_mutations_each_merge_round_robin_without_loss() -> TestResult {
    let started = std::time::Instant::now();
    let (main, mut peers, mut model) = swarm()?;
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut counts = Counts::default();
    let per_round = MUTATIONS / ROUNDS;
    for round in 0..ROUNDS {
        for peer in &mut peers {
            let steps = round * per_round..(round + 1) * per_round;
            mutate(peer, &mut model, &mut rng, steps, &mut counts)?;
            pull(peer, &model, &mut counts)?;
            publish(&main, peer, &mut counts)?;
        }
    }
    check_main(&main, &model, &mut counts)?;
    eprintln!(
        "merge swarm: {counts:?} in {:.1}s",
        started.elapsed().as_secs_f64()
    );
    assert_eq!(counts.mutations, CLONES * MUTATIONS);
    Ok(())
}
