//! Property test of the settings reader (issue 21): random settings.json files, each key absent,
//! legal or outside its domain, never make a read fall back silently (every legal value is
//! read as written whatever its neighbours hold, every illegal one is named by a notice) and
//! always make the write gate refuse an illegal one.

use pm_engine::Error;
use pm_engine::lock::LockOptions;
use pm_engine::settings::{Settings, SettingsEnv};
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
