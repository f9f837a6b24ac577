//! Property test of the settings reader (issue 21): random settings.json files, each key absent,
//! legal or outside its domain, never make a read fall back silently (every legal value is
//! read as written whatever its neighbours hold, every illegal one is named by a notice) and
//! always make the write gate refuse an illegal one. Any text at all (damaged JSON, other
//! roots, sections of the wrong type) reads without a panic, and a clean file re-reads clean
//! from the text pm writes.

use pm_engine::Error;
use pm_engine::history::patch::json_equal;
use pm_engine::lock::LockOptions;
use pm_engine::schema::SchemaSection;
use pm_engine::settings::{GovernancePreset, Settings, SettingsEnv, defaults_tree};
use proptest::sample::{Index, select};

use crate::history_fuzz::config;
use proptest::prelude::*;
use serde_json::{Map, Value, json};
use std::collections::BTreeSet;

/// A key under test, its legal values and its illegal ones.
struct Key {
    path: &'static [&'static str],
    legal: fn() -> Vec<Value>,
    illegal: fn() -> Vec<Value>,
}

const KEYS: &[Key] = &[
    Key {
        path: &["id_prefix"],
        legal: || vec![json!("zq-"), json!("acme-"), json!("pm-")],
        illegal: || vec![json!(5), json!(null), json!(true), json!([])],
    },
    Key {
        path: &["author_default"],
        legal: || vec![json!("ann"), json!("")],
        illegal: || vec![json!(7), json!(false), json!({})],
    },
    Key {
        path: &["ids", "token_length"],
        legal: || (4..=12).map(|n| json!(n)).collect(),
        illegal: || {
            vec![
                json!(0),
                json!(3),
                json!(13),
                json!(20),
                json!(4.5),
                json!("6"),
            ]
        },
    },
    Key {
        path: &["locks", "ttl_seconds"],
        legal: || vec![json!(1), json!(1800), json!(2_592_000)],
        illegal: || vec![json!(0), json!(-1), json!(2_592_001), json!("1800")],
    },
    Key {
        path: &["locks", "wait_ms"],
        legal: || vec![json!(0), json!(3000), json!(600_000)],
        illegal: || vec![json!(600_001), json!(-1), json!(1.5), json!(1e15)],
    },
    Key {
        path: &["limits", "item_max_bytes"],
        legal: || vec![json!(4096), json!(8_388_608), json!(1_073_741_824)],
        illegal: || vec![json!(0), json!(10), json!(4095), json!("big")],
    },
    Key {
        path: &["output", "default_format"],
        legal: || vec![json!("toon"), json!("json")],
        illegal: || vec![json!("yaml"), json!(1)],
    },
    Key {
        path: &["item_format"],
        legal: || vec![json!("toon"), json!("json_markdown")],
        illegal: || vec![json!("markdown"), json!(null)],
    },
    Key {
        path: &["history", "missing_stream"],
        legal: || vec![json!("auto_create"), json!("strict_error")],
        illegal: || vec![json!("ignore"), json!(0)],
    },
    Key {
        path: &["governance", "preset"],
        legal: || {
            vec![
                json!("minimal"),
                json!("default"),
                json!("strict"),
                json!("custom"),
            ]
        },
        illegal: || vec![json!("loose"), json!(2)],
    },
    Key {
        path: &["governance", "duplicate_detection_mode"],
        legal: || vec![json!("off"), json!("advisory"), json!("strict")],
        illegal: || vec![json!("warn"), json!(""), json!(3)],
    },
];

/// What one key holds in a generated file.
#[derive(Clone, Debug)]
enum Slot {
    Absent,
    Legal(Value),
    Illegal(Value),
}

fn slot(key: &Key) -> BoxedStrategy<Slot> {
    prop_oneof![
        Just(Slot::Absent),
        proptest::sample::select((key.legal)()).prop_map(Slot::Legal),
        proptest::sample::select((key.illegal)()).prop_map(Slot::Illegal),
    ]
    .boxed()
}

fn insert(doc: &mut Map<String, Value>, path: &[&str], value: Value) {
    match path {
        [last] => {
            doc.insert((*last).to_string(), value);
        }
        [first, rest @ ..] => {
            let slot = doc
                .entry((*first).to_string())
                .or_insert_with(|| Value::Object(Map::new()));
            if let Value::Object(inner) = slot {
                insert(inner, rest, value);
            }
        }
        [] => {}
    }
}

/// Returns what the reader made of `path`: the governance knobs resolved, every other key from
/// the effective tree.
fn read_back(settings: &Settings, path: &[&str]) -> Option<Value> {
    match path {
        ["governance", "preset"] => Some(json!(settings.governance().preset.as_str())),
        ["governance", "duplicate_detection_mode"] => {
            Some(json!(settings.governance().duplicate_detection_mode))
        }
        _ => {
            let mut current = settings.effective().get(path[0])?;
            for key in &path[1..] {
                current = current.get(*key)?;
            }
            Some(current.clone())
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn every_key_is_read_alone_and_writes_refuse_illegal_ones(
        slots in KEYS.iter().map(slot).collect::<Vec<_>>(),
        unparseable in proptest::bool::weighted(0.1),
    ) {
        let mut doc = Map::new();
        let mut illegal = BTreeSet::new();
        for (key, slot) in KEYS.iter().zip(&slots) {
            match slot {
                Slot::Absent => {}
                Slot::Legal(v) => insert(&mut doc, key.path, v.clone()),
                Slot::Illegal(v) => {
                    insert(&mut doc, key.path, v.clone());
                    illegal.insert(key.path.join("."));
                }
            }
        }
        let mut text = serde_json::to_string_pretty(&Value::Object(doc)).unwrap_or_default();
        if unparseable {
            text.truncate(text.len() / 2);
            text.push(',');
            illegal = BTreeSet::from(["settings.json".to_string()]);
        }
        let (settings, notices) = Settings::from_text(&text, &SettingsEnv::default());

        // Exactly the illegal keys are issues, and each one reaches the reader's notices.
        let issues: BTreeSet<String> =
            settings.issues().iter().map(|i| i.key.clone()).collect();
        prop_assert_eq!(&issues, &illegal);
        for key in &illegal {
            prop_assert!(
                notices.iter().any(|n| n.message.contains(key.as_str())),
                "no notice names {}: {:?}", key, notices
            );
        }
        prop_assert_eq!(illegal.is_empty(), notices.is_empty(), "{:?}", notices);

        // Every legal value is read as written, whatever the other keys hold.
        if !unparseable {
            for (key, slot) in KEYS.iter().zip(&slots) {
                if let Slot::Legal(v) = slot {
                    prop_assert_eq!(read_back(&settings, key.path), Some(v.clone()), "{}", key.path.join("."));
                }
            }
        }

        // The write gate refuses exactly when something is illegal, naming one of the keys.
        match LockOptions::from_settings(&settings, "writer") {
            Ok(_) => prop_assert!(illegal.is_empty(), "write allowed with {:?}", illegal),
            Err(Error::SettingsInvalid { key, .. }) => {
                prop_assert!(illegal.contains(&key), "refused for {} not in {:?}", key, illegal);
            }
            Err(other) => prop_assert!(false, "unexpected error {other:?}"),
        }
    }
}

/// A settings document from pm's defaults with some sections, or keys inside them, replaced by
/// any JSON value (a wrong type included), printed as pm-style JSON.
fn damaged_document() -> BoxedStrategy<String> {
    let preset = select(vec![
        GovernancePreset::Minimal,
        GovernancePreset::Default,
        GovernancePreset::Strict,
        GovernancePreset::Custom,
    ]);
    let edit = (
        any::<Index>(),
        any::<Index>(),
        any::<bool>(),
        crate::history_fuzz::json_value(),
    );
    (preset, proptest::collection::vec(edit, 0..4))
        .prop_map(|(preset, edits)| {
            let mut doc = defaults_tree(preset);
            for (section, key, whole, value) in edits {
                let names: Vec<String> = doc.keys().cloned().collect();
                let name = &names[section.index(names.len())];
                match doc.get_mut(name) {
                    Some(Value::Object(inner)) if !whole && !inner.is_empty() => {
                        let keys: Vec<String> = inner.keys().cloned().collect();
                        inner.insert(keys[key.index(keys.len())].clone(), value);
                    }
                    _ => {
                        doc.insert(name.clone(), value);
                    }
                }
            }
            serde_json::to_string_pretty(&Value::Object(doc)).unwrap_or_default()
        })
        .boxed()
}

/// Any settings.json text: damaged documents, cut or spliced at any character, other JSON
/// roots, JSON-ish fragments and arbitrary Unicode.
fn settings_text() -> BoxedStrategy<String> {
    let splice = (
        damaged_document(),
        any::<Index>(),
        0u8..3,
        "[\\{}\\[\\]\",:0-9a-z \n]{0,4}",
    )
        .prop_map(|(text, at, how, snippet)| {
            let bounds: Vec<usize> = text
                .char_indices()
                .map(|(i, _)| i)
                .chain([text.len()])
                .collect();
            let at = bounds[at.index(bounds.len())];
            match how {
                0 => text[..at].to_string(),
                1 => format!("{}{snippet}{}", &text[..at], &text[at..]),
                _ => text,
            }
        });
    prop_oneof![
        4 => splice,
        1 => crate::history_fuzz::json_value().prop_map(|v| v.to_string()),
        1 => select(vec![
            "", "null", "[]", "{}", "\u{feff}{}", "{\"locks\": []}", "{\"a\":1,\"a\":2}",
            "{\"governance\": {\"preset\": {}}}", "{\"schema\": 5, \"item_types\": \"x\"}",
            "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]",
        ])
        .prop_map(str::to_string),
        1 => any::<String>(),
    ]
    .boxed()
}

/// Calls every typed accessor (none may panic, whatever the tree holds).
fn read_everything(settings: &Settings) {
    let _ = (
        settings.id_prefix(),
        settings.token_length(),
        settings.author_default(),
    );
    let _ = (
        settings.lock_ttl_seconds(),
        settings.lock_wait_ms(),
        settings.item_max_bytes(),
    );
    let _ = (
        settings.checked_lock_ttl_seconds(),
        settings.checked_lock_wait_ms(),
    );
    let _ = (
        settings.checked_item_max_bytes(),
        settings.output_format(),
        settings.missing_stream(),
    );
    let _ = (
        settings.governance(),
        settings.item_format(),
        settings.has_explicit_item_format(),
    );
    let _ = (
        settings.search_score_threshold(),
        settings.search_max_results(),
        settings.context(),
    );
    let _ = (
        settings.secret_guard(),
        settings.record_test_results(),
        settings.definition_of_done(),
    );
    let _ = (settings.schema_block(), settings.item_type_definitions());
    for section in SchemaSection::ALL {
        let _ = settings.schema_file(section);
    }
}

proptest! {
    #![proptest_config(config(256, "proptest-regressions/test_settings_props.txt"))]

    /// Any text reads without a panic: every accessor answers, an issue always comes with a
    /// notice and blocks writes, and a file without issues re-reads without issues from both
    /// texts pm writes for it: the sparse one to the same effective settings, the full one
    /// (normalized) to a fixed point.
    #[test]
    fn any_settings_text_reads(text in settings_text()) {
        let env = SettingsEnv::default();
        let (settings, notices) = Settings::from_text(&text, &env);
        read_everything(&settings);
        prop_assert_eq!(settings.issues().is_empty(), notices.is_empty(), "{:?}", notices);
        prop_assert_eq!(settings.check_writable().is_ok(), settings.issues().is_empty());
        if settings.issues().is_empty() {
            let sparse = settings.to_sparse_json();
            let (again, notices) = Settings::from_text(&sparse, &env);
            prop_assert!(notices.is_empty(), "{:?}\n{}", notices, sparse);
            // Equal as JavaScript values: pm writes `1.0` as `1`.
            let same = json_equal(
                &Value::Object(again.effective().clone()),
                &Value::Object(settings.effective().clone()),
            );
            prop_assert!(same, "{}", sparse);
            let full = settings.to_full_json();
            let (again, notices) = Settings::from_text(&full, &env);
            prop_assert!(notices.is_empty(), "{:?}\n{}", notices, full);
            prop_assert_eq!(again.to_full_json(), full);
        }
    }
}
