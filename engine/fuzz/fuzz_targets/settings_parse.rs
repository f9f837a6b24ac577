//! Fuzz target: any settings.json text reads without a panic; an issue always comes with a
//! notice and blocks writes, and a clean file re-reads clean from the text pm writes for it.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pm_engine::settings::{Settings, SettingsEnv};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let env = SettingsEnv::default();
    let (settings, notices) = Settings::from_text(text, &env);
    let _ = (settings.token_length(), settings.lock_wait_ms(), settings.context());
    let _ = (settings.governance(), settings.item_format(), settings.definition_of_done());
    assert_eq!(settings.issues().is_empty(), notices.is_empty());
    assert_eq!(settings.check_writable().is_ok(), settings.issues().is_empty());
    if settings.issues().is_empty() {
        for written in [settings.to_sparse_json(), settings.to_full_json()] {
            let (_, notices) = Settings::from_text(&written, &env);
            assert!(notices.is_empty(), "{notices:?}\n{written}");
        }
    }
});
