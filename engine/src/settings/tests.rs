//! Unit tests of the settings reader, accessors and writers.

use super::*;
use serde_json::json;

/// Returns pm's `settings.json` from the transcript golden's `00-init` snapshot.
fn golden_init_settings() -> &'static str {
    static TEXT: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    TEXT.get_or_init(|| {
        let golden = pm_testkit::shared_file("golden/mutation-transcript.tar.gz");
        let dir = pm_testkit::extract_tar_gz(&golden).expect("extract the transcript golden");
        let path = dir
            .path()
            .join("mutation-transcript/snapshots/00-init/.agents/pm/settings.json");
        std::fs::read_to_string(path).expect("golden settings.json")
    })
}

fn sparse_doc() -> Value {
    json!({
        "version": 1, "id_prefix": "pm-", "ids": {"token_length": 6}, "author_default": "",
        "item_format": "toon", "locks": {"ttl_seconds": 1800}, "output": {"default_format": "toon"},
        "extensions": {"enabled": [], "disabled": []},
        "search": {"score_threshold": 0, "max_results": 50, "embedding_model": "", "embedding_batch_size": 32, "scanner_max_batch_retries": 3},
        "providers": {"openai": {"base_url": "", "api_key": "", "model": ""}, "ollama": {"base_url": "http://localhost:11434", "model": "m"}},
        "vector_store": {"qdrant": {"url": "", "api_key": ""}, "lancedb": {"path": "x"}}
    })
}

#[test]
fn init_settings_match_golden_bytes() {
    let settings = Settings::for_init("pm", "golden-author", GovernancePreset::Minimal);
    assert_eq!(settings.to_full_json(), golden_init_settings());
}

#[test]
fn golden_file_round_trips_through_read() {
    let (settings, notices) = Settings::from_text(golden_init_settings(), &SettingsEnv::default());
    assert!(notices.is_empty(), "{notices:?}");
    assert_eq!(settings.governance().preset, GovernancePreset::Minimal);
    assert_eq!(settings.author_default(), "golden-author");
    assert_eq!(settings.to_full_json(), golden_init_settings());
    assert_eq!(settings.to_sparse_json(), golden_init_settings());
}

#[test]
fn unparseable_files_read_as_defaults_and_refuse_writes() {
    let env = SettingsEnv::default();
    let (s, n) = Settings::from_text("{not json", &env);
    assert_eq!(n[0].code, "settings_read_invalid_json");
    assert_eq!(s.governance().preset, GovernancePreset::Minimal);
    assert_eq!(s.issues()[0].key, "settings.json");
    assert_eq!(
        s.check_writable().map_err(|e| e.code()),
        Err(crate::error::ErrorCode::SettingsInvalid)
    );
}

#[test]
fn every_key_is_read_on_its_own() {
    let env = SettingsEnv::default();
    // A sparse file (pm ignores it whole for its missing required keys) keeps its own keys.
    let (s, n) = Settings::from_text(
        r#"{"version":1,"id_prefix":"zz-","author_default":"ann"}"#,
        &env,
    );
    assert!(n.is_empty(), "{n:?}");
    assert_eq!(s.id_prefix(), "zz-");
    assert_eq!(s.author_default(), "ann");
    assert!(s.check_writable().is_ok());
    // One bad key never changes how the others are read.
    let (s, n) = Settings::from_text(
        r#"{"id_prefix":"zq-","author_default":"ann","ids":{"token_length":20},
            "governance":{"duplicate_detection_mode":"advisory","preset":"strict"}}"#,
        &env,
    );
    assert_eq!(n.len(), 1, "{n:?}");
    assert_eq!(n[0].code, "settings_invalid");
    assert!(
        n[0].message.contains("ids.token_length = 20"),
        "{}",
        n[0].message
    );
    assert_eq!(s.id_prefix(), "zq-");
    assert_eq!(s.author_default(), "ann");
    assert_eq!(s.token_length(), 4);
    assert_eq!(s.governance().preset, GovernancePreset::Strict);
    assert_eq!(s.governance().duplicate_detection_mode, "advisory");
    let Err(Error::SettingsInvalid {
        key,
        value,
        domain,
        origin,
    }) = s.check_writable()
    else {
        panic!("writes must refuse an invalid token length");
    };
    assert_eq!(
        (
            key.as_str(),
            value.as_str(),
            domain.as_str(),
            origin.as_str()
        ),
        (
            "ids.token_length",
            "20",
            "an integer from 4 to 12",
            "settings.json"
        )
    );
}

#[test]
fn lock_ranges_are_key_domains() {
    let env = SettingsEnv::default();
    let (s, n) = Settings::from_text(
        r#"{"locks":{"ttl_seconds":0,"wait_ms":3000},"limits":{"item_max_bytes":10}}"#,
        &env,
    );
    assert_eq!(n.len(), 2, "{n:?}");
    assert_eq!(s.lock_ttl_seconds(), 1800);
    assert_eq!(s.item_max_bytes(), ITEM_MAX_BYTES_DEFAULT);
    assert!(s.checked_lock_ttl_seconds().is_err());
    assert!(s.checked_item_max_bytes().is_err());
    assert_eq!(s.checked_lock_wait_ms().ok(), Some(3000));
}

#[test]
fn sparse_file_merges_over_defaults() {
    let env = SettingsEnv {
        lock_wait_ms: Some(0),
        ..SettingsEnv::default()
    };
    let (s, notices) = Settings::from_document(&sparse_doc(), &env);
    assert!(notices.is_empty());
    assert_eq!(s.token_length(), 6);
    assert_eq!(s.governance().preset, GovernancePreset::Default);
    assert!(s.governance().force_required_for_stale_lock);
    assert_eq!(
        s.governance().ownership_enforcement,
        OwnershipEnforcement::Warn
    );
    assert!(s.governance().require_close_reason);
    assert_eq!(s.lock_ttl_seconds(), 1800);
    assert_eq!(s.lock_wait_ms(), 0);
    assert_eq!(s.effective()["providers"]["ollama"]["model"], json!("m"));
    assert_eq!(
        s.effective()["vector_store"]["collection_name"],
        json!("pm_items")
    );
    assert_eq!(
        s.effective()["validation"]["parent_reference"],
        json!("strict_error")
    );
    assert_eq!(s.output_format(), OutputFormat::Toon);
    assert_eq!(s.missing_stream(), MissingStreamPolicy::AutoCreate);
    assert_eq!(s.item_format(), ItemFormat::Toon);
    assert!(s.has_explicit_item_format());
    assert_eq!(s.search_max_results(), 50);
    assert_eq!(s.context().activity_limit, 10);
    assert_eq!(s.context().sections.len(), 10);
}

#[test]
fn legacy_and_markdown_item_formats() {
    let env = SettingsEnv::default();
    let mut doc = sparse_doc();
    doc["item_format"] = json!("json_markdown");
    let (s, notices) = Settings::from_document(&doc, &env);
    assert!(notices.is_empty());
    assert_eq!(s.item_format(), ItemFormat::Markdown);
    // Any other value is invalid: reads warn and write toon, writes refuse.
    doc["item_format"] = json!("markdown");
    let (s, notices) = Settings::from_document(&doc, &env);
    assert_eq!(notices.len(), 1);
    assert_eq!(s.item_format(), ItemFormat::Toon);
    assert!(s.check_writable().is_err());
}

#[test]
fn sparse_rewrite_keeps_only_user_keys() -> Result<()> {
    let mut doc = sparse_doc();
    doc["zz_unknown"] = json!(1);
    let (mut s, _) = Settings::from_document(&doc, &SettingsEnv::default());
    s.set(&["output", "default_format"], json!("json"))?;
    s.set(&["governance", "preset"], json!("strict"))?;
    assert_eq!(s.output_format(), OutputFormat::Json);
    assert_eq!(s.governance().preset, GovernancePreset::Strict);
    let text = s.to_sparse_json();
    let reparsed: Value =
        serde_json::from_str(&text).map_err(|e| Error::internal(e.to_string()))?;
    let keys: Vec<_> = reparsed
        .as_object()
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default();
    assert_eq!(
        keys,
        [
            "version",
            "id_prefix",
            "ids",
            "author_default",
            "item_format",
            "locks",
            "output",
            "governance",
            "extensions",
            "search",
            "providers",
            "vector_store",
            "zz_unknown"
        ]
    );
    assert_eq!(reparsed["governance"], json!({"preset": "strict"}));
    assert!(s.set(&["output", "default_format"], json!("yaml")).is_err());
    assert_eq!(s.output_format(), OutputFormat::Json);
    Ok(())
}

#[test]
fn setting_on_defaults_writes_the_full_tree() -> Result<()> {
    let mut s = Settings::defaults();
    s.set(&["id_prefix"], json!("acme-"))?;
    assert_eq!(s.id_prefix(), "acme-");
    let text = s.to_sparse_json();
    assert!(text.contains("\"vector_store\""));
    assert!(text.contains("\"preset\": \"minimal\""));
    Ok(())
}

#[test]
fn lock_wait_env_parsing() {
    assert_eq!(parse_lock_wait_ms(" 250 "), Some(250));
    assert_eq!(parse_lock_wait_ms("0"), Some(0));
    assert_eq!(parse_lock_wait_ms("-1"), None);
    assert_eq!(parse_lock_wait_ms("1e3"), None);
    assert_eq!(parse_lock_wait_ms(""), None);
}

#[test]
fn a_repeated_parse_answers_for_its_own_text_and_env_only() {
    let json_text = r#"{"output":{"default_format":"json"},"locks":{"wait_ms":250}}"#;
    let toon_text = r#"{"output":{"default_format":"toon"}}"#;
    let env = SettingsEnv::default();
    let first = Settings::from_text(json_text, &env).0;
    assert_eq!(first.output_format(), OutputFormat::Json);
    assert_eq!(
        Settings::from_text(toon_text, &env).0.output_format(),
        OutputFormat::Toon
    );
    let again = Settings::from_text(json_text, &env).0;
    assert_eq!(again.output_format(), OutputFormat::Json);
    assert_eq!(again.lock_wait_ms(), 250);
    let overridden = SettingsEnv {
        lock_wait_ms: Some(9),
        ..SettingsEnv::default()
    };
    assert_eq!(
        Settings::from_text(json_text, &overridden).0.lock_wait_ms(),
        9
    );
    assert_eq!(Settings::from_text(json_text, &env).0.lock_wait_ms(), 250);
}
